// Arboretum Arena: a game's analysis drawn as a chart (docs/analysis.md), for the replay viewer
// (static/replay.js, loaded after this file): each analysed seat's expected final margin after its
// decisions, as lichess draws it, with the marks, a line at the step shown and one line per seat
// of accuracy and expected loss. Exposes window.arenaEvalChart.
"use strict";

window.arenaEvalChart = (function () {
  const { el, svg } = window.arenaScoring;
  const SEAT_INK = ["#1f5f8b", "#a33b20", "#5b3f99", "#2f6f3e", "#8a5a00"];

  function count(n, one, many) {
    return n + " " + (n === 1 ? one : many);
  }

  // Fills box (#eval: its .eval-plot and .eval-legend-box) and shows it. steps: the game's
  // number of steps; pos: the steps done at the position shown; seatName(seat) and
  // stepLabel(step) as the viewer writes them; go(pos) when the chart is clicked.
  function draw(box, analysis, { steps, pos, seatName, stepLabel, go }) {
    const W = 600, H = 120, PAD = 6;
    const n = Math.max(1, steps);
    const vals = analysis.decisions.map((d) => d.value_taken);
    const top = Math.max(1, ...vals.map(Math.abs));
    const x = (i) => PAD + (i / n) * (W - 2 * PAD);
    const y = (v) => H / 2 - (v / top) * (H / 2 - PAD);
    const g = svg("svg", { viewBox: "0 0 " + W + " " + H, class: "eval-svg", role: "img",
      "aria-label": "expected final margin after each analysed decision" });
    g.append(svg("line", { x1: 0, x2: W, y1: H / 2, y2: H / 2, class: "eval-zero" }));
    analysis.seats.forEach((st, k) => {
      const ds = analysis.decisions.filter((d) => d.seat === st.seat);
      const ink = SEAT_INK[k % SEAT_INK.length];
      g.append(svg("polyline", { points: ds.map((d) => x(d.step + 1) + "," + y(d.value_taken)).join(" "), fill: "none", stroke: ink, "stroke-width": 2 }));
      ds.filter((d) => d.mark).forEach((d) => {
        const dot = svg("circle", { cx: x(d.step + 1), cy: y(d.value_taken), r: d.mark === "blunder" ? 5 : 4, class: "eval-mark " + d.mark });
        dot.append(svg("title", {}, stepLabel(d.step) + ": " + d.mark + " (" + d.loss.toFixed(1) + ")"));
        g.append(dot);
      });
    });
    g.append(svg("line", { x1: x(pos), x2: x(pos), y1: 0, y2: H, class: "eval-now" }));
    g.addEventListener("click", (e) => {
      const r = g.getBoundingClientRect();
      go(Math.round(((e.clientX - r.left) / r.width * W - PAD) / (W - 2 * PAD) * n));
    });
    const legend = el("p", { class: "eval-legend" });
    analysis.seats.forEach((st, k) => {
      const key = el("span", { class: "eval-key" });
      key.append(el("span", { class: "dot", background: SEAT_INK[k % SEAT_INK.length] }),
        document.createTextNode(" " + seatName(st.seat) + ": accuracy " + st.accuracy.toFixed(1) + "%, expected loss " +
          st.total_loss.toFixed(1) + " points (" + count(st.inaccuracies, "inaccuracy", "inaccuracies") + ", " +
          count(st.mistakes, "mistake", "mistakes") + ", " + count(st.blunders, "blunder", "blunders") + ")"));
      legend.append(key);
    });
    box.querySelector(".eval-plot").replaceChildren(g);
    box.querySelector(".eval-legend-box").replaceChildren(legend);
    box.hidden = false;
  }

  return { draw };
})();
