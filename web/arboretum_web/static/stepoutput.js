// Output per decision in the replay viewer, for the author of a seat's bot: what the bot printed
// during the step shown (GET /api/v1/matches/{id}/games/{g}/seats/{s}/output, owner-only), and
// a mark on each step of the step list that has output. It follows the viewer's step through
// #replay's data-pos (the number of steps shown done), without touching replay.js.
(function () {
  "use strict";
  const panel = document.getElementById("step-output");
  const root = document.getElementById("replay");
  if (!panel || !root) return;
  const base = panel.dataset.base;
  const seats = (panel.dataset.seats || "").split(",").filter((s) => s !== "").map(Number);
  const out = document.getElementById("step-output-lines");
  const head = document.getElementById("step-output-step");
  const byStep = new Map(); // step index -> [{seat, lines}]
  let loaded = false;

  function show() {
    const pos = Number(root.dataset.pos || "0");
    const step = pos - 1;
    if (step < 0) {
      head.textContent = "the deal";
      out.textContent = "(no step shown yet)";
      return;
    }
    head.textContent = "step " + step;
    if (!loaded) {
      out.textContent = "loading…";
      return;
    }
    const parts = byStep.get(step);
    if (!parts) {
      out.textContent = "(your bot printed nothing during this step)";
      return;
    }
    out.textContent = parts
      .map((p) => (seats.length > 1 ? "seat " + p.seat + ":\n" : "") + p.lines.join("\n"))
      .join("\n");
  }

  function markSteps() {
    const log = document.getElementById("step-log");
    if (!log) return;
    log.querySelectorAll("li[data-i]").forEach((li) => {
      const has = byStep.has(Number(li.dataset.i));
      if (li.classList.contains("has-output") !== has) li.classList.toggle("has-output", has);
    });
  }

  async function load() {
    for (const seat of seats) {
      try {
        const resp = await fetch(base + seat + "/output", { credentials: "same-origin" });
        if (!resp.ok) continue;
        const data = await resp.json();
        for (const entry of data.steps || []) {
          if (!byStep.has(entry.step)) byStep.set(entry.step, []);
          byStep.get(entry.step).push({ seat: seat, lines: entry.lines });
        }
      } catch (e) {
        // the panel says nothing was loaded
      }
    }
    loaded = true;
    panel.dataset.steps = String(byStep.size);
    show();
    markSteps();
  }

  new MutationObserver(show).observe(root, { attributes: true, attributeFilter: ["data-pos"] });
  const log = document.getElementById("step-log");
  if (log) new MutationObserver(markSteps).observe(log, { childList: true });
  show();
  load();
})();
