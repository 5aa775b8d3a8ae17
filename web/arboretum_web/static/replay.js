// Arboretum Arena replay viewer: re-plays a replay document (docs/replay-format.md) step by step.
// Cards the server hid (a game not over, or a per-seat document) are null and drawn face down.
// The states after each step come from static/replaymodel.js, the analysis's chart from
// static/evalchart.js (both loaded before this file).
"use strict";

(function () {
  const { SPECIES, el, svg, cardText, cardEl, arboretumSvg } = window.arenaScoring;
  const { applyStep, build } = window.arenaReplayModel;
  const drawEvalChart = window.arenaEvalChart.draw;
  const HAND_SIZE = 7;

  const root = document.getElementById("replay");
  if (!root) return;
  const $ = (id) => document.getElementById(id);

  let doc = null; // the document as served
  let snaps = []; // snaps[p]: the state after p steps
  let pos = 0;
  let perspective = "all"; // "all" | "public" | seat number
  let timer = null;
  let analysis = null; // the game's analysis (docs/analysis.md), when one exists
  const BASE_MS = 450; // one step at speed 1

  // ------------------------------------------------------------------ text

  function seatName(i) {
    const seat = doc.seats[i];
    return seat ? seat.bot : "seat " + i;
  }


  function visibleTo(step) {
    // Whether the card of this step is shown in the current perspective.
    if (step.kind !== "draw" || step.source !== "deck") return true;
    if (perspective === "all") return true;
    return perspective === step.seat;
  }

  // The replay's own numbers (docs/replay-format.md): steps and turns count from 0, as in the
  // faults JSON, the analysis, `arena match logs --step` and the URL (#step=N shows step N done).
  function stepLabel(i) {
    return "step " + i + " · turn " + doc.steps[i].turn;
  }

  function msText(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }

  // Each seat's clock after the first p steps (the time control of docs/referee.md: L free per
  // decision, the rest from the seat's bank, refilled at the game's start): the seat's own
  // (seat_time_controls, a casual game's) or the match's.
  function clocks(p) {
    const isClock = (c) => c && typeof c === "object" ? c : null;
    const tc = isClock(doc.time_control);
    const own = Array.isArray(doc.seat_time_controls) ? doc.seat_time_controls : [];
    const out = [];
    for (let i = 0; i < doc.players; i++) {
      const seatTc = isClock(own[i]) || tc;
      out.push({ used: 0, last: null, tc: seatTc, bank: seatTc ? seatTc.bank_ms : null });
    }
    for (let k = 0; k < p; k++) {
      const step = doc.steps[k];
      if (typeof step.ms !== "number" || !out[step.seat]) continue;
      const c = out[step.seat];
      c.used += step.ms;
      c.last = step.ms;
      if (c.tc) c.bank = Math.max(0, c.bank - Math.max(0, step.ms - c.tc.per_decision_ms));
    }
    return out;
  }

  // Whether the seat had forfeited before this step: its moves are the referee's fallback.
  function byFallback(i) {
    const step = doc.steps[i];
    return step.kind !== "forfeit" && snaps[i].forfeited[step.seat];
  }

  function describe(step) {
    const who = seatName(step.seat);
    if (step.kind === "draw") {
      const card = step.card && visibleTo(step) ? cardText(step.card) : "a card";
      const from = step.source === "deck" ? "the deck" : "the discard pile of " + seatName(step.pile);
      return who + " draws " + card + " from " + from;
    }
    if (step.kind === "play") {
      const tail = step.discard ? ", discards " + cardText(step.discard) : ", no discard";
      return who + " plays " + cardText(step.card) + " at (" + step.cell.join(", ") + ")" + tail;
    }
    if (step.kind === "forfeit") return who + " forfeits" + (step.reason ? ": " + step.reason : "");
    return who + ": " + step.kind + (step.reason ? " (" + step.reason + ")" : "");
  }

  // ------------------------------------------------------------------ drawing (cards, arboretums and the scoring: scoring.js)

  function handFor(s, seat, atEnd) {
    if (atEnd && doc.final_hands) return { cards: doc.final_hands[seat], hidden: 0 };
    const hand = s.hands[seat];
    if (perspective === "all" || perspective === seat) {
      return { cards: hand.filter((c) => c), hidden: hand.filter((c) => !c).length };
    }
    const known = s.known[seat].filter((c) => c);
    return { cards: known, hidden: Math.max(0, hand.length - known.length) };
  }

  function scoredPaths(seat) {
    return window.arenaScoring.scoredPaths(doc.result.seats[seat]);
  }

  function renderSeats(s, atEnd) {
    const box = $("seats");
    box.replaceChildren();
    const lastStep = s.last === null ? -1 : s.last;
    const current = pos < doc.steps.length ? doc.steps[pos].seat : null;
    const clock = clocks(pos);
    for (let i = 0; i < doc.players; i++) {
      const panel = el("section", { class: "seat card" + (current === i ? " due" : "") + (perspective === i ? " me" : ""), "data-seat": i });
      const head = el("header", {});
      head.append(el("h3", {}, seatName(i)), el("span", { class: "muted" }, "seat " + i));
      if (atEnd && doc.result) {
        const r = doc.result.seats[i];
        head.append(el("span", { class: "score-badge rank" + r.rank, "data-testid": "seat-total-" + i }, r.total + " pts · #" + r.rank));
      }
      if (s.forfeited[i]) head.append(el("span", { class: "tag bad" }, "forfeited"));
      panel.append(head);
      const c = clock[i];
      if (c.last !== null || c.bank !== null) {
        const bits = ["thinking time " + msText(c.used)];
        if (c.last !== null) bits.push("last decision " + msText(c.last));
        if (c.bank !== null) bits.push("bank left " + msText(c.bank));
        panel.append(el("p", { class: "clock", "data-testid": "clock-" + i }, bits.join(" · ")));
      }

      const row = el("div", { class: "seat-row" });
      const hand = handFor(s, i, atEnd);
      const handBox = el("div", { class: "hand" });
      handBox.append(el("div", { class: "label" }, atEnd ? "final hand" : "hand (" + (hand.cards.length + hand.hidden) + ")"));
      const chips = el("div", { class: "chips" });
      hand.cards.slice().sort().forEach((c) => chips.append(cardEl(c, s.known[i].includes(c) && !atEnd ? "known" : "")));
      for (let k = 0; k < hand.hidden; k++) chips.append(cardEl(null));
      handBox.append(chips);
      const pileBox = el("div", { class: "pile" });
      pileBox.append(el("div", { class: "label" }, "discard pile (" + s.piles[i].length + ")"));
      const pile = el("div", { class: "chips stacked" });
      s.piles[i].forEach((c) => pile.append(cardEl(c)));
      pileBox.append(pile);
      row.append(handBox, pileBox);
      panel.append(row);

      const arb = el("div", { class: "arb-box" });
      arb.append(arboretumSvg(s.arbs[i], atEnd && doc.result ? scoredPaths(i) : null, lastStep));
      panel.append(arb);
      box.append(panel);
    }
  }

  function renderScoring() {
    window.arenaScoring.renderScoring($("scoring"), doc.result, seatName);
  }

  const MARKS = { inaccuracy: "?!", mistake: "?", blunder: "??" };

  // The tags after a step: its fault (kind; the reason only reaches the seat's author, the
  // server strips it for everyone else), its time, its analysis mark.
  function stepTags(step, i) {
    const tags = [];
    if (byFallback(i)) {
      tags.push(el("span", { class: "tag bad", title: "the seat has forfeited: the referee's fallback plays its turns" }, "forfeited: fallback"));
    } else if (step.fault) {
      tags.push(el("span", { class: "tag bad fault-kind" }, step.fault.kind));
      if (step.fault.reason) tags.push(el("span", { class: "fault-reason" }, step.fault.reason));
    }
    if (typeof step.ms === "number") tags.push(el("span", { class: "ms" }, msText(step.ms)));
    const a = analysis && analysis.byStep[i];
    if (a && a.mark) {
      tags.push(el("span", {
        class: "tag mark " + a.mark,
        title: a.mark + ": loses " + a.loss.toFixed(1) + " points of expected margin; best: " + a.best_text,
      }, MARKS[a.mark] + " " + a.mark));
    }
    return tags;
  }

  function renderLog() {
    const log = $("step-log");
    if (log.childElementCount !== doc.steps.length) {
      log.replaceChildren();
      doc.steps.forEach((step, i) => {
        const li = el("li", { "data-i": i, class: "step " + step.kind });
        // a button: reachable with Tab, pressed with Enter or Space
        const b = el("button", { type: "button", class: "step-go" });
        b.addEventListener("click", () => go(i + 1));
        li.append(b, el("span", { class: "tags" }));
        log.append(li);
      });
    }
    log.querySelectorAll("li").forEach((li, i) => {
      const step = doc.steps[i];
      li.firstChild.textContent = stepLabel(i) + ": " + describe(step);
      li.classList.toggle("fallback", byFallback(i));
      li.lastChild.replaceChildren(...stepTags(step, i));
      li.classList.toggle("done", i < pos);
      li.classList.toggle("current", i === pos - 1);
      if (i === pos - 1) li.firstChild.setAttribute("aria-current", "step");
      else li.firstChild.removeAttribute("aria-current");
    });
    const cur = log.querySelector("li.current");
    if (cur) log.scrollTop = Math.max(0, cur.offsetTop - log.clientHeight / 2);
  }

  function render() {
    const n = doc.steps.length;
    const s = snaps[pos];
    const atEnd = pos === n && !!doc.result;
    $("deck-size").textContent = String(s.deck);
    const last = s.last === null ? null : doc.steps[s.last];
    $("last-action").textContent = last
      ? describe(last) + (byFallback(s.last) ? " (the fallback's move: this seat has forfeited)" : "")
      : "The cards are dealt.";
    // the step just shown (the replay's numbers), not the one to come
    const where = last ? stepLabel(s.last) : "the deal";
    $("position").textContent = where + " · " + pos + " / " + n + " steps" + (atEnd ? " · game over" : "");
    $("scrub").value = String(pos);
    renderSeats(s, atEnd);
    if (atEnd) renderScoring(); else $("scoring").hidden = true;
    renderLog();
    root.dataset.pos = String(pos);
    root.dataset.atEnd = atEnd ? "1" : "0";
    drawEval();
    // the URL follows the step (a stored replay: a live one follows the game)
    if (!root.dataset.live) {
      const url = location.pathname + location.search + (pos ? "#step=" + (pos - 1) : "");
      if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
    }
  }

  // ------------------------------------------------------------------ analysis

  // The evaluation over the game and its marks (static/evalchart.js), with a line at the step shown.
  function drawEval() {
    const box = $("eval");
    if (!box || !analysis || !analysis.decisions.length) return;
    drawEvalChart(box, analysis, { steps: doc.steps.length, pos, seatName, stepLabel, go });
  }

  function loadAnalysis(url) {
    fetch(url, { credentials: "same-origin" })
      .then((resp) => (resp.ok ? resp.json() : null))
      .then((body) => {
        if (!body || body.status !== "done" || !body.analysis) return;
        const a = body.analysis;
        a.byStep = {};
        (a.decisions || []).forEach((d) => { a.byStep[d.step] = d; });
        analysis = a;
        root.dataset.analysed = "1";
        render();
      })
      .catch(() => {}); // no analysis: the viewer works without one
  }

  // ------------------------------------------------------------------ navigation

  function go(p) {
    pos = Math.max(0, Math.min(doc.steps.length, p));
    render();
  }

  const actions = {
    first: () => go(0),
    last: () => go(doc.steps.length),
    prev: () => go(pos - 1),
    next: () => go(pos + 1),
    nextTurn: () => {
      const steps = doc.steps;
      if (pos >= steps.length) return;
      const t = steps[pos].turn;
      let q = pos;
      while (q < steps.length && steps[q].turn === t) q++;
      go(q);
    },
    prevTurn: () => {
      const steps = doc.steps;
      if (pos === 0) return;
      const t = steps[pos - 1].turn;
      let q = pos - 1;
      while (q > 0 && steps[q - 1].turn === t) q--;
      go(q);
    },
    play: () => {
      if (timer) {
        clearInterval(timer);
        timer = null;
      } else {
        if (pos >= doc.steps.length) go(0);
        timer = setInterval(() => {
          if (pos >= doc.steps.length) actions.play();
          else go(pos + 1);
        }, BASE_MS / Number($("speed").value || 1));
      }
      $("play").classList.toggle("on", !!timer);
      $("play").textContent = timer ? "pause" : "play";
    },
  };

  root.querySelectorAll("[data-act]").forEach((b) => b.addEventListener("click", () => doc && actions[b.dataset.act]()));
  $("scrub").addEventListener("input", (e) => doc && go(Number(e.target.value)));
  $("speed").addEventListener("change", () => {
    if (timer) { actions.play(); actions.play(); } // restart at the new pace
  });
  document.addEventListener("keydown", (e) => {
    if (!doc || e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
    const key = e.key;
    // Space and Enter press the focused button or link, as everywhere else
    if ((key === " " || key === "Enter") && e.target.closest && e.target.closest("button, a, summary, [role=button]")) return;
    let act = null;
    if (key === "ArrowRight") act = e.shiftKey ? "nextTurn" : "next";
    else if (key === "ArrowLeft") act = e.shiftKey ? "prevTurn" : "prev";
    else if (key === "ArrowDown" || key === "PageDown") act = "nextTurn";
    else if (key === "ArrowUp" || key === "PageUp") act = "prevTurn";
    else if (key === "Home") act = "first";
    else if (key === "End") act = "last";
    else if (key === " ") act = "play";
    if (act) {
      e.preventDefault();
      actions[act]();
    }
  });

  // ------------------------------------------------------------------ loading

  function setNotice(text) {
    const n = $("notice");
    n.textContent = text || "";
    n.hidden = !text;
  }

  function fillPerspectives() {
    const sel = $("perspective");
    sel.replaceChildren();
    const view = doc.view || {};
    const full = !view.hidden;
    if (full || view.seat === null || view.seat === undefined) {
      if (full) sel.append(el("option", { value: "all" }, "All cards"));
      sel.append(el("option", { value: "public" }, "Public"));
    } else {
      sel.append(el("option", { value: "public" }, "Public"));
    }
    for (let i = 0; i < doc.players; i++) {
      const owned = (view.owned_seats || []).includes(i);
      if (full || owned || view.seat === i) sel.append(el("option", { value: String(i) }, "Seat " + i + ": " + seatName(i)));
    }
    sel.value = typeof perspective === "number" ? String(perspective) : perspective;
  }

  async function load(seat) {
    const url = root.dataset.src + (seat === null || seat === undefined ? "" : "?seat=" + seat);
    const resp = await fetch(url, { credentials: "same-origin" });
    const body = await resp.json();
    if (!resp.ok) throw new Error(body.error ? body.error.message : resp.statusText);
    return body;
  }

  async function choose(value) {
    const seat = value === "all" || value === "public" ? null : Number(value);
    const keep = pos;
    if (doc.view && doc.view.hidden && seat !== null && doc.view.seat !== seat) {
      doc = await load(seat); // the game is not over: the server filters
      snaps = build(doc);
    } else if (doc.view && doc.view.hidden && seat === null && doc.view.seat !== null) {
      doc = await load(null);
      snaps = build(doc);
    }
    perspective = seat === null ? value : seat;
    fillPerspectives();
    go(keep);
  }

  $("perspective").addEventListener("change", (e) => {
    choose(e.target.value).catch((err) => setNotice(String(err.message || err)));
  });

  // ------------------------------------------------------------------ live

  // A running match: its games as they are played, from the server's event stream (public
  // information only; see arboretum_web/live.py). The viewer follows the newest step unless the
  // reader stepped back.
  function startLive(url) {
    let games = {};
    let shown = null;
    let moved = false;
    const select = $("live-game");
    const status = $("live-status");

    function liveDoc(ev) {
      return {
        players: ev.players, seats: ev.seats, species: ev.species,
        hands: ev.seats.map(() => new Array(HAND_SIZE).fill(null)),
        deck: null, deck_size: ev.deck_size, steps: [],
        view: { seat: null, hidden: true, revealed: false, owned_seats: [] },
      };
    }

    function show(game, atEnd) {
      shown = game;
      doc = games[game];
      snaps = build(doc);
      $("scrub").max = String(doc.steps.length);
      fillPerspectives();
      select.value = String(game);
      go(atEnd ? doc.steps.length : Math.min(pos, doc.steps.length));
      root.classList.add("ready");
    }

    function following() {
      return !doc || pos === doc.steps.length;
    }

    // The match page's own facts (status, attempts, start) follow the match too, from its JSON,
    // so the page never says "queued" while the board plays.
    const matchUrl = url.replace(/\/live$/, "");
    let totalGames = null;
    function fmtWhen(ts) {
      return ts ? new Date(ts * 1000).toISOString().slice(0, 16).replace("T", " ") : "-";
    }
    function refreshFacts() {
      fetch(matchUrl, { credentials: "same-origin" })
        .then((resp) => (resp.ok ? resp.json() : null))
        .then((m) => {
          if (!m) return;
          const pill = $("match-status");
          if (pill) { pill.textContent = m.status; pill.className = "status " + m.status; }
          if ($("match-attempts")) $("match-attempts").textContent = String(m.attempts);
          if ($("match-started")) $("match-started").textContent = fmtWhen(m.started);
          if ($("no-replay") && m.status === "running") {
            $("no-replay").textContent = "No replay yet: the match is running (the replays are stored once it is over).";
          }
          if ($("live-note") && m.status === "running") $("live-note").textContent = "the game as it is played, public information only";
          root.dataset.facts = m.status;
        })
        .catch(() => {});
    }
    function gameNote() {
      const note = $("live-game-no");
      if (!note || shown === null) return;
      note.textContent = "Playing game " + shown + (totalGames ? " (games 0 to " + (totalGames - 1) + ")" : "");
      note.hidden = false;
    }

    select.addEventListener("change", () => { show(Number(select.value), true); gameNote(); });
    perspective = "public";
    setNotice("Live: the game as it is played, public information only.");
    const source = new EventSource(url);
    source.addEventListener("message", (msg) => {
      const ev = JSON.parse(msg.data);
      if (ev.type === "start") {
        totalGames = ev.games || null;
        refreshFacts();
      } else if (ev.type === "game") {
        const follow = following();
        games[ev.game] = liveDoc(ev);
        select.append(el("option", { value: String(ev.game) }, "Game " + ev.game));
        select.hidden = select.options.length < 2;
        if (shown === null || (follow && ev.game > shown)) show(ev.game, true);
        gameNote();
        refreshFacts();
      } else if (ev.type === "step") {
        const d = games[ev.game];
        if (!d) return;
        const follow = following();
        d.steps.push(ev.step);
        if (!moved) {
          moved = true; // the badge says LIVE from the first move on, not before
          status.textContent = "live";
          status.classList.add("on");
          root.dataset.started = "1";
        }
        if (ev.game !== shown) return;
        snaps.push(applyStep(snaps[snaps.length - 1], ev.step, d.steps.length - 1));
        $("scrub").max = String(d.steps.length);
        go(follow ? d.steps.length : pos);
      } else if (ev.type === "game_end") {
        const d = games[ev.game];
        if (!d) return;
        d.final_hands = ev.final_hands;
        d.result = ev.result;
        if (ev.game === shown) go(following() ? d.steps.length : pos);
      } else if (ev.type === "end") {
        status.textContent = "over";
        status.classList.remove("on");
        setNotice("The match is over (" + ev.status + "); its result is being recorded.");
      }
      root.dataset.events = String(Number(root.dataset.events || 0) + 1);
    });
    source.addEventListener("reset", () => {
      games = {};
      moved = false;
      status.textContent = "waiting for the first move";
      status.classList.remove("on");
      shown = null;
      select.replaceChildren();
      select.hidden = true;
      setNotice("The match started over: showing its new attempt.");
    });
    source.addEventListener("over", (msg) => {
      source.close();
      const over = JSON.parse(msg.data).status;
      status.textContent = over;
      status.classList.remove("on");
      root.dataset.over = over;
      if (over === "finished") {
        setNotice("The match is over: loading its replays.");
        setTimeout(() => location.reload(), 1500);
      } else {
        setNotice("The match is " + over + ".");
      }
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CONNECTING) status.textContent = "reconnecting";
    });
    source.addEventListener("open", () => { status.textContent = moved ? "live" : "waiting for the first move"; });
  }

  if (root.dataset.live) {
    startLive(root.dataset.live);
    return;
  }

  window.addEventListener("hashchange", () => {
    const m = /step=(\d+)/.exec(location.hash);
    if (doc && m) go(Number(m[1]) + 1);
  });

  const initialSeat = root.dataset.seat === "" ? null : Number(root.dataset.seat);
  load(initialSeat)
    .then((d) => {
      doc = d;
      snaps = build(doc);
      perspective = initialSeat === null ? (doc.view && doc.view.hidden ? "public" : "all") : initialSeat;
      $("scrub").max = String(doc.steps.length);
      fillPerspectives();
      if (doc.view && doc.view.hidden && !doc.view.revealed) {
        setNotice(doc.result
          ? "Public view: the hands, the deck and the seed appear once every seat rotation of this deal is over."
          : "This game is not over: only public information is shown.");
      }
      const m = /step=(\d+)/.exec(location.hash);
      go(m ? Number(m[1]) + 1 : 0);
      root.classList.add("ready");
      if (root.dataset.analysis) loadAnalysis(root.dataset.analysis);
    })
    .catch((err) => {
      $("position").textContent = "";
      setNotice("Cannot load the replay: " + (err.message || err));
    });
})();
