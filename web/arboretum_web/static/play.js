// Arboretum Arena: a casual game's table, a person's seat against bots (docs/web.md, "Play").
// The page reads the seat's feed: the line protocol's messages (docs/stdio-protocol.md) that the
// game's relay writes, first all of them from /state (a reload resumes), then the new ones from
// the event stream (a lost connection resumes from the last id). The person answers each
// request with the buttons: a draw source, or a card, a highlighted cell and a discard, then a
// confirmation. The server checks every decision with the engine; its refusal is shown in words.
// This file keeps the game's state, its feed, the decision's steps, the clock and resigning;
// static/playtable.js (loaded before it) draws the table from that state.
"use strict";

(function () {
  const root = document.getElementById("play");
  if (!root || !window.arenaScoring || !window.arenaPlayTable) return;
  const $ = (id) => document.getElementById(id);
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.getAttribute("content") : "";
  const me = Number(root.dataset.seat);
  const players = Number(root.dataset.players);
  const names = []; // the seats' names, "you" for the person's (changed in place: the table reads it)
  try { names.push(...JSON.parse(root.dataset.names || "[]")); } catch (e) { names.length = 0; }

  const game = {
    lastId: null, // the last feed message's stream id applied
    status: root.dataset.status || "queued",
    match: null, // match_start
    base: null, // the last view the relay sent (game_start or request)
    view: null, // what is shown: base, plus the person's own accepted decision
    request: null, // the request waiting for the person's answer
    received: 0, // performance.now() when the request arrived
    events: [], // the public events so far
    result: null, finalHands: null, finalArbs: null,
    replay: root.dataset.replay || "", analysis: root.dataset.analysis || "",
    ended: false,
    sending: false, // a decision is on its way
  };
  const pick = { source: null, card: null, cell: null, discard: null, confirming: false };
  let source = null; // the EventSource
  let ticker = null;

  // ------------------------------------------------------------------ the table

  // The drawing (static/playtable.js) reads the state above and calls back for the choices.
  const table = window.arenaPlayTable({ root, game, pick, names, me, players, stage, answerNow, choose, back, confirm, tick });
  const { render, describe, decisionText, winnerText } = table;

  // ------------------------------------------------------------------ status and announcements

  function setStatus(text) {
    $("play-status").textContent = text;
  }

  function setError(text) {
    const box = $("play-error");
    box.textContent = text || "";
    box.hidden = !text;
  }

  // ------------------------------------------------------------------ the model

  function setNames(list) {
    names.splice(0, names.length, ...list.map((n, i) => (i === me ? "you" : n)));
  }

  function cloneView(v) {
    return JSON.parse(JSON.stringify(v));
  }

  function removeOne(list, card) {
    const i = list.indexOf(card);
    if (i >= 0) list.splice(i, 1);
  }

  // Applies one public event to a view (the end's board, the person's own accepted decision).
  function applyEvent(v, ev) {
    if (ev.kind === "draw") {
      v.hand_sizes[ev.seat] += 1;
      if (ev.source === "deck") v.deck_size -= 1;
      else {
        const card = v.discard_piles[ev.pile].pop();
        if (ev.seat === me && card) v.hand.push(card);
        else if (card) v.known_cards[ev.seat].push(card);
      }
      if (ev.seat === me && ev.source === "deck" && ev.card) v.hand.push(ev.card);
    } else if (ev.kind === "play") {
      v.hand_sizes[ev.seat] -= ev.discard ? 2 : 1;
      [ev.card, ev.discard].forEach((c) => {
        if (!c) return;
        if (ev.seat === me) removeOne(v.hand, c);
        removeOne(v.known_cards[ev.seat], c);
      });
      v.arboretums[ev.seat].push({ card: ev.card, cell: ev.cell });
      if (ev.discard) v.discard_piles[ev.seat].push(ev.discard);
    } else if (ev.kind === "forfeit") {
      v.forfeited[ev.seat] = true;
    }
  }

  function compareIds(a, b) {
    const [am, as] = String(a).split("-").map(Number);
    const [bm, bs] = String(b).split("-").map(Number);
    return am !== bm ? am - bm : (as || 0) - (bs || 0);
  }

  // One feed message, once: `id` is its stream id (messages at or before the last are skipped).
  function receive(id, msg, live) {
    if (game.lastId !== null && compareIds(id, game.lastId) <= 0) return;
    game.lastId = id;
    const handler = HANDLERS[msg.type];
    if (handler) handler(msg, live, id);
    root.dataset.messages = String(Number(root.dataset.messages || 0) + 1);
    root.dataset.lastType = msg.type;
  }

  const HANDLERS = {
    queued() {
      game.status = "queued";
      setStatus("Waiting for a free table: the game starts when a worker is free.");
    },
    started() {
      game.status = "playing";
      setStatus("The table is ready: the bots are starting.");
    },
    match_start(m) {
      game.status = "playing";
      game.match = m;
      if (m.names) setNames(m.names);
    },
    game_start(m) {
      game.base = m.view;
      game.view = cloneView(m.view);
      setStatus("The cards are dealt.");
    },
    request(m, live, id) {
      (m.events || []).forEach((ev) => game.events.push(ev));
      game.base = m.view;
      game.view = cloneView(m.view);
      game.request = m;
      // the clock runs from when the relay wrote the request (its stream id's time), so a
      // reload shows the time really left (clocks a little apart: the time since receipt)
      const age = Date.now() - Number(String(id).split("-")[0]);
      const limit = m.clock ? m.clock.limit_ms : 0;
      const spent = age > 0 && age < limit ? age : 0;
      game.received = performance.now() - spent - ((m.clock && m.clock.elapsed_ms) || 0);
      resetPick();
      setError("");
      const asked = m.kind === "play" ? "play a card, then discard" : (m.kind === "first-draw" ? "draw your first card" : "draw your second card");
      // the status is the page's live region: what the bots did since, and what is asked
      const theirs = live ? (m.events || []).filter((ev) => ev.seat !== me).map(describe) : [];
      setStatus((theirs.length ? theirs.slice(-6).join(". ") + ". " : "") + "Your turn: " + asked + ".");
    },
    accepted(m) {
      if (!game.request || game.request.id !== m.id) return;
      const answer = game.lastAnswer && game.lastAnswer.id === m.id ? game.lastAnswer : null;
      if (answer) applyOwn(answer);
      game.request = null;
      const next = game.view ? nextSeatText() : "";
      setStatus("Decision taken." + next);
    },
    rejected(m) {
      if (game.request && game.request.id === m.id) {
        game.answered = null;
        setError("The game refused that decision: " + m.reason + ". Choose again.");
        resetPick();
      }
    },
    fault(m) {
      if (game.request && game.request.id === m.id) game.request = null;
      const limit = game.match ? game.match.faults_to_forfeit : null;
      const why = m.kind === "timeout" ? "Your time for a decision ran out" : "Your decision could not be taken (" + m.reason + ")";
      let text = why + ": the referee played for you (" + decisionText(m.fallback) + ").";
      text += m.forfeited
        ? " You forfeited this game: the bots play it to its end."
        : (limit ? " " + m.faults + " of " + limit + " faults: at " + limit + " you forfeit." : "");
      setError(text);
      if (m.forfeited) game.resigned = true; // nothing more to give up
      game.events.push({ note: text, seat: me, kind: "fault" }); // kept in the moves' list
    },
    game_end(m) {
      (m.events || []).forEach((ev) => game.events.push(ev));
      game.request = null;
      game.result = m.result;
      game.finalHands = m.final_hands;
      if (m.events && game.base) {
        const v = cloneView(game.base);
        m.events.forEach((ev) => applyEvent(v, ev));
        game.view = v;
        game.finalArbs = v.arboretums;
      }
      setStatus(winnerText(m.result));
    },
    match_end(m) {
      game.status = "over";
      game.ended = true;
      if (m.replay) game.replay = m.replay;
      if (m.status !== "finished") setError("The game ended early (" + m.status + (m.reason ? ": " + m.reason : "") + ").");
      closeFeed();
      showAfter();
    },
    error(m) {
      game.status = "failed";
      game.ended = true;
      setStatus("The game could not be played.");
      setError("The game could not be played: " + (m.reason || "an error") + ".");
      closeFeed();
    },
  };

  function nextSeatText() {
    return game.request ? "" : " The bots play their turns.";
  }

  // The person's own decision, taken: shown at once (the next request brings the true view).
  function applyOwn(answer) {
    const v = game.view;
    if (answer.draw !== undefined) {
      if (answer.draw === "deck") {
        v.deck_size -= 1;
        v.hand_sizes[me] += 1;
        game.drawnUnseen = (game.drawnUnseen || 0) + 1;
      } else applyEvent(v, { kind: "draw", seat: me, source: "pile", pile: answer.draw });
    } else {
      applyEvent(v, { kind: "play", seat: me, card: answer.play, cell: answer.cell, discard: answer.discard || null });
    }
  }

  // ------------------------------------------------------------------ choosing

  function resetPick() {
    Object.assign(pick, { source: null, card: null, cell: null, discard: null, confirming: false });
    game.drawnUnseen = 0;
  }

  // The step of the person's decision now: source | card | cell | discard | confirm | wait
  function stage() {
    const q = game.request;
    if (!q || game.sending || q.id === game.answered) return "wait";
    if (pick.confirming) return "confirm";
    if (q.kind !== "play") return "source";
    if (!pick.card) return "card";
    if (!pick.cell) return "cell";
    if (q.discard_required && !pick.discard) return "discard";
    return "confirm";
  }

  function answerNow() {
    const q = game.request;
    if (q.kind !== "play") return { id: q.id, draw: pick.source };
    const a = { id: q.id, play: pick.card, cell: pick.cell };
    if (q.discard_required) a.discard = pick.discard;
    return a;
  }

  // A choice by click, tap or key. A hand card is the card to play until a cell is chosen, then
  // the discard; the chosen card again starts the play over.
  function choose(what, value) {
    const q = game.request;
    if (stage() === "wait") return;
    setError("");
    if (what === "source") {
      pick.source = value;
      pick.confirming = true;
    } else if (what === "cell") {
      pick.cell = value;
      pick.confirming = !q.discard_required || !!pick.discard;
    } else if (what === "card") {
      if (value === pick.card) {
        resetPick();
      } else if (!pick.cell || !q.discard_required) {
        pick.card = value;
        if (pick.cell && !q.discard_required) pick.confirming = true;
      } else {
        pick.discard = value;
        pick.confirming = true;
      }
    }
    render(true);
  }

  function back() {
    resetPick();
    render(true);
  }

  async function post(url, body) {
    const resp = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await resp.json(); } catch (e) { data = {}; }
    return { status: resp.status, data };
  }

  // A refusal's message: {"error": {"status": N, "message": "..."}}, as the API answers.
  function refusal(data) {
    return (data && data.error && data.error.message) || "";
  }

  async function confirm() {
    if (stage() !== "confirm") return;
    const answer = answerNow();
    game.sending = true;
    game.lastAnswer = answer;
    render(false);
    setStatus("Sending your decision…");
    try {
      const { status, data } = await post(root.dataset.decision, answer);
      if (status === 202) {
        // the feed says "accepted"; until it does the table waits
        game.answered = answer.id;
        if (game.request && game.request.id === answer.id) setStatus("Decision sent.");
      } else if (status === 409 || status === 410) {
        setError((refusal(data) || "This page is behind the game") + ". The table is brought up to date.");
        resume().catch(() => retry());
      } else {
        setError("That decision is refused: " + (refusal(data) || "status " + status) + ".");
        resetPick();
      }
    } catch (e) {
      setError("Your decision did not reach the server (" + (e.message || e) + "). Try again.");
    } finally {
      game.sending = false;
      render(true);
    }
  }

  // ------------------------------------------------------------------ the clock

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function tick() {
    const box = $("play-clock");
    const q = game.request;
    if (!box || !q || !q.clock) return;
    const used = performance.now() - game.received;
    const free = q.clock.per_decision_ms - used;
    const left = q.clock.limit_ms - used + (q.clock.elapsed_ms || 0);
    const bank = Math.min(q.clock.bank_left_ms, Math.max(0, left));
    box.textContent = free > 0
      ? "Time: " + clockText(free) + " for this decision, then your bank of " + clockText(q.clock.bank_left_ms)
      : "Time: on your bank, " + clockText(bank) + " left";
    box.classList.toggle("low", free <= 0);
  }

  // ------------------------------------------------------------------ the end

  function showAfter() {
    render(false);
    const after = $("play-after");
    if (!after) return;
    const link = $("play-replay-link");
    if (link && game.replay) link.href = game.replay;
    const an = $("play-analysis-link");
    if (an && game.analysis) { an.href = game.analysis; an.hidden = false; }
    after.hidden = false;
    if (game.result && !game.finalArbs) loadFinalBoard();
  }

  // Without the end's events the final arboretums come from the stored replay (public at the end).
  function loadFinalBoard() {
    const url = root.dataset.replayJson;
    if (!url || !game.view) return;
    fetch(url, { credentials: "same-origin" })
      .then((resp) => (resp.ok ? resp.json() : null))
      .then((doc) => {
        if (!doc || !doc.steps) return;
        const arbs = game.view.arboretums.map(() => []);
        doc.steps.forEach((s) => { if (s.kind === "play") arbs[s.seat].push({ card: s.card, cell: s.cell }); });
        game.view.arboretums = arbs;
        game.finalArbs = arbs;
        render(false);
      })
      .catch(() => {});
  }

  // ------------------------------------------------------------------ the feed

  const LOST = "The connection to the game was lost: reconnecting…";

  // The connection is back: its notice goes (another error stays).
  function clearLost() {
    if ($("play-error").textContent === LOST) setError("");
  }

  function closeFeed() {
    if (source) { source.close(); source = null; }
  }

  const TYPES = ["queued", "started", "match_start", "game_start", "request", "accepted", "rejected", "fault", "game_end", "match_end", "error"];

  function openFeed() {
    closeFeed();
    if (game.ended) return;
    const url = root.dataset.feed + (game.lastId ? "?after=" + encodeURIComponent(game.lastId) : "");
    const es = new EventSource(url);
    source = es;
    TYPES.forEach((type) => es.addEventListener(type, (e) => {
      if (!e.data) return; // (a connection error is an "error" event without data)
      let msg;
      try { msg = JSON.parse(e.data); } catch (err) { return; }
      receive(e.lastEventId, msg, true);
      render(msg.type === "request");
    }));
    es.addEventListener("open", () => { root.dataset.feedOpen = "1"; clearLost(); });
    es.addEventListener("error", (e) => {
      if (e.data) return;
      if (es.readyState === EventSource.CONNECTING) {
        setError(LOST);
      } else if (es.readyState === EventSource.CLOSED && source === es && !game.ended) {
        source = null;
        setError(LOST);
        retry();
      }
    });
  }

  // Until the server answers again: every few seconds, then the whole feed is read again.
  function retry() {
    if (game.retrying || game.ended) return;
    game.retrying = true;
    setTimeout(() => {
      game.retrying = false;
      resume().catch(() => {
        setError(LOST);
        retry();
      });
    }, 3000);
  }

  // Reads the whole feed so far (a reload, a stale page), then follows it live.
  async function resume() {
    const resp = await fetch(root.dataset.state, { credentials: "same-origin" });
    if (resp.status >= 500) throw new Error("status " + resp.status);
    let data = {};
    try { data = await resp.json(); } catch (e) { data = {}; }
    if (!resp.ok) {
      setError(refusal(data) || "The game cannot be read (status " + resp.status + ").");
      return;
    }
    if (data.game) {
      if (data.game.names) setNames(data.game.names);
      if (data.game.replay_url) game.replay = data.game.replay_url;
      if (data.game.analysis_url) game.analysis = data.game.analysis_url;
      game.status = data.game.status || game.status;
    }
    (data.messages || []).forEach(([id, msg]) => receive(id, msg, false));
    clearLost();
    if (game.status === "queued" && !game.base) setStatus("Waiting for a free table: the game starts when a worker is free.");
    if (game.ended) showAfter();
    render(!!game.request);
    if (!game.ended && !source) openFeed();
  }

  // ------------------------------------------------------------------ resign

  function setupResign() {
    const b = $("play-resign");
    const ask = $("play-resign-confirm");
    if (!b || !ask) return;
    b.addEventListener("click", () => {
      ask.hidden = false;
      $("play-resign-yes").focus();
    });
    $("play-resign-no").addEventListener("click", () => { ask.hidden = true; b.focus(); });
    $("play-resign-yes").addEventListener("click", async () => {
      ask.hidden = true;
      const { status, data } = await post(root.dataset.resign, {});
      if (status === 202) {
        setStatus("You resigned: you rank last, and the bots play the game to its end.");
        game.request = null;
        game.resigned = true;
        render(false);
      } else setError("The game could not be resigned: " + (refusal(data) || "status " + status) + ".");
    });
  }

  // ------------------------------------------------------------------ start

  if (root.dataset.seated !== "1") {
    setStatus("You are not seated in this game: only the browser that started it plays it.");
    if (root.dataset.status === "over" && $("play-after")) {
      $("play-replay-link").href = root.dataset.replay;
      $("play-after").hidden = false;
    }
    return;
  }
  setupResign();
  ticker = setInterval(tick, 1000);
  window.addEventListener("pagehide", () => { clearInterval(ticker); closeFeed(); });
  resume().catch((e) => {
    setError("The game cannot be read (" + (e.message || e) + "): trying again…");
    retry();
  });
})();
