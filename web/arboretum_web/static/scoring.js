// Arboretum Arena: cards, arboretums and the final scoring explained, drawn the same way by the
// replay viewer (replay.js) and the casual game's table (play.js). Exposes window.arenaScoring.
"use strict";

(function () {
  const SPECIES = {
    BS: { name: "Blue Spruce", colour: "#3f6f95" },
    CA: { name: "Cassia", colour: "#d8b21f" },
    CB: { name: "Cherry Blossom", colour: "#e58aae" },
    DO: { name: "Dogwood", colour: "#d9d2bd" },
    JA: { name: "Jacaranda", colour: "#7a5bb8" },
    MA: { name: "Maple", colour: "#c4432c" },
    OA: { name: "Oak", colour: "#7a5230" },
    RP: { name: "Royal Poinciana", colour: "#ea7a2c" },
    TP: { name: "Tulip Poplar", colour: "#68a846" },
    WI: { name: "Willow", colour: "#3e9f9b" },
  };
  const CODE_OF = {
    BLUE_SPRUCE: "BS", CASSIA: "CA", CHERRY_BLOSSOM: "CB", DOGWOOD: "DO", JACARANDA: "JA",
    MAPLE: "MA", OAK: "OA", ROYAL_POINCIANA: "RP", TULIP_POPLAR: "TP", WILLOW: "WI",
  };
  // species whose cards take dark ink (white would fall under the 4.5:1 contrast of WCAG AA)
  const LIGHT = new Set(["DO", "CA", "CB", "RP", "TP", "WI"]);
  const SVGNS = "http://www.w3.org/2000/svg";

  function cardText(c) {
    return c ? SPECIES[c.slice(0, 2)].name + " " + c.slice(2) : "a card";
  }

  function el(tag, attrs, text) {
    // (colours go through the CSSOM: the page's CSP allows no style attribute)
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "background") e.style.background = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function cardEl(c, extra) {
    if (!c) return el("span", { class: "card-chip back", title: "hidden card" }, "");
    const code = c.slice(0, 2);
    const e = el("span", {
      class: "card-chip" + (LIGHT.has(code) ? " light" : "") + (extra ? " " + extra : ""),
      title: cardText(c),
      background: SPECIES[code].colour,
    });
    e.append(el("b", {}, c.slice(2)), el("small", {}, code));
    return e;
  }

  const CW = 40, CH = 52, GAP = 5;

  function arboretumSvg(cards, paths, lastStep) {
    if (!cards.length) {
      const empty = el("div", { class: "arb-empty" }, "no trees yet");
      return empty;
    }
    const xs = cards.map((c) => c.x), ys = cards.map((c) => c.y);
    const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
    const w = (maxX - minX + 1) * (CW + GAP) + GAP, h = (maxY - minY + 1) * (CH + GAP) + GAP;
    const px = (x) => GAP + (x - minX) * (CW + GAP);
    const py = (y) => GAP + (maxY - y) * (CH + GAP);
    const root = svg("svg", { class: "arb", viewBox: "0 0 " + w + " " + h, width: w, height: h });
    const onPath = new Set();
    (paths || []).forEach((p) => p.cells.forEach((c) => onPath.add(c[0] + "," + c[1])));
    const trees = cards.map((c) => {
      const code = c.card.slice(0, 2);
      const g = svg("g", { class: "tree" + (c.step === lastStep ? " fresh" : "") + (onPath.has(c.x + "," + c.y) ? " on-path" : "") });
      g.append(svg("rect", { x: px(c.x), y: py(c.y), width: CW, height: CH, rx: 6, fill: SPECIES[code].colour }));
      g.append(svg("title", {}, cardText(c.card) + " at (" + c.x + ", " + c.y + ")"));
      root.append(g);
      return { c, code, g };
    });
    // the counted paths go over the cards, through the band between a card's number and its
    // species code, so neither is covered
    const PATH_Y = 30;
    (paths || []).forEach((p) => {
      const pts = p.cells.map((c) => (px(c[0]) + CW / 2) + "," + (py(c[1]) + PATH_Y)).join(" ");
      const g = svg("g", { class: "path", "data-species": p.code });
      g.append(svg("polyline", { points: pts, class: "path-halo" }));
      g.append(svg("polyline", { points: pts, class: "path-line", stroke: SPECIES[p.code].colour }));
      p.cells.forEach((c, k) => {
        const end = k === 0 || k === p.cells.length - 1;
        g.append(svg("circle", {
          cx: px(c[0]) + CW / 2, cy: py(c[1]) + PATH_Y, r: end ? 5 : 3,
          class: "path-dot" + (end ? " end" : ""), fill: SPECIES[p.code].colour,
        }));
      });
      g.append(svg("title", {}, SPECIES[p.code].name + " path: " + p.points + " points"));
      root.append(g);
    });
    trees.forEach(({ c, code }) => {
      const ink = LIGHT.has(code) ? "#1d1d1d" : "#fff";
      const dim = paths && !onPath.has(c.x + "," + c.y) ? " off-path" : "";
      root.append(svg("text", { x: px(c.x) + CW / 2, y: py(c.y) + 20, "text-anchor": "middle", class: "v" + dim, fill: ink }, c.card.slice(2)));
      root.append(svg("text", { x: px(c.x) + CW / 2, y: py(c.y) + 46, "text-anchor": "middle", class: "c" + dim, fill: ink }, code));
    });
    return root;
  }

  // The paths that scored for one seat's result (a seat of the replay format's "result").
  function scoredPaths(seatResult) {
    return seatResult.species.filter((sp) => sp.path).map((sp) => ({
      code: CODE_OF[sp.species], cells: sp.path.cells, points: sp.path.points,
    }));
  }

  // The final scoring explained: a table per seat and species (docs/replay-format.md, "Result"),
  // drawn into `box`; `seatName(i)` names a seat.
  function renderScoring(box, res, seatName) {
    box.replaceChildren();
    box.append(el("h2", {}, "Final scoring"));
    const table = el("table", { class: "board compact scoring-table stack", id: "scoring-table" });
    const head = el("tr", {});
    ["Seat", "Species", "In hand", "Right", "Path", "Points"].forEach((h) => head.append(el("th", {}, h)));
    const thead = el("thead", {});
    thead.append(head);
    table.append(thead);
    const body = el("tbody", {});
    res.seats.forEach((r) => {
      const speciesRows = r.species.filter((sp) => sp.has_right || sp.hand_total || sp.path);
      const first = el("tr", { class: "seat-total" + (r.rank === 1 ? " winner" : "") });
      first.append(el("td", {}, seatName(r.seat) + (r.forfeited ? " (forfeited)" : "")));
      first.append(el("td", { colspan: 4, class: "muted" }, "rank " + r.rank + " · " + r.species_in_arboretum + " species in the arboretum"));
      first.append(el("td", { class: "num total", id: "score-total-" + r.seat, "data-testid": "score-total" }, String(r.total)));
      body.append(first);
      speciesRows.forEach((sp) => {
        const code = CODE_OF[sp.species];
        const tr = el("tr", { class: "species-row", "data-seat": r.seat, "data-species": code });
        tr.append(el("td", {}));
        const name = el("td", {});
        name.append(el("span", { class: "dot", background: SPECIES[code].colour }), document.createTextNode(" " + SPECIES[code].name));
        tr.append(name, el("td", { class: "num" }, String(sp.hand_total)), el("td", {}, sp.has_right ? "yes" : "no"));
        const path = el("td", { class: "path-cell" });
        if (sp.path) {
          sp.path.cards.forEach((c) => path.append(cardEl(c, "mini")));
          const bits = [sp.path.cards.length + (sp.path.doubled ? " × 2" : "")];
          if (sp.path.start_bonus) bits.push("+" + sp.path.start_bonus + " starts with 1");
          if (sp.path.end_bonus) bits.push("+" + sp.path.end_bonus + " ends with 8");
          path.append(el("span", { class: "muted" }, " " + bits.join(", ")));
        } else {
          path.append(el("span", { class: "muted" }, sp.has_right ? "no path" : "—"));
        }
        tr.append(path, el("td", { class: "num points" }, String(sp.points)));
        tr.addEventListener("mouseenter", () => focusPath(r.seat, code));
        tr.addEventListener("mouseleave", () => focusPath(null, null));
        body.append(tr);
      });
    });
    table.append(body);
    const scroll = el("div", { class: "table-scroll" });
    scroll.append(table);
    box.append(scroll);
    if (window.arenaTables) { window.arenaTables.labelTables(box); window.arenaTables.hintScrolls(box); }
    const w = res.winners.map(seatName).join(" and ");
    box.append(el("p", { class: "winner-line", id: "winners" }, (res.winners.length > 1 ? "Shared win: " : "Winner: ") + w));
    box.hidden = false;
  }

  function focusPath(seat, code) {
    document.querySelectorAll(".seat").forEach((panel) => {
      panel.querySelectorAll("g.path").forEach((g) => {
        const on = seat === null || (Number(panel.dataset.seat) === seat && g.dataset.species === code);
        g.classList.toggle("dim", !on);
      });
    });
  }

  window.arenaScoring = {
    SPECIES, CODE_OF, LIGHT, el, svg, cardText, cardEl, arboretumSvg, scoredPaths, renderScoring, focusPath,
  };
})();
