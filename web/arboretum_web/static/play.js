// Arboretum Arena: a casual game's table, a person's seat against bots (docs/web.md, "Play").
// The page reads the seat's feed: the line protocol's messages (docs/stdio-protocol.md) that the
// game's relay writes, first all of them from /state (a reload resumes), then the new ones from
// the event stream (a lost connection resumes from the last id). The person answers each
// request with the buttons: a draw source, or a card, a highlighted cell and a discard, then a
// confirmation. The server checks every decision with the engine; its refusal is shown in words.
"use strict";

(function () {
  const root = document.getElementById("play");
  if (!root || !window.arenaScoring) return;
  const A = window.arenaScoring;
  const el = A.el;
  const $ = (id) => document.getElementById(id);
  const meta = document.querySelector('meta[name="csrf-token"]');
  const csrf = meta ? meta.getAttribute("content") : "";
  const me = Number(root.dataset.seat);
  const players = Number(root.dataset.players);
  let names = [];
  try { names = JSON.parse(root.dataset.names || "[]"); } catch (e) { names = []; }

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
  };
  let pick = { source: null, card: null, cell: null, discard: null, confirming: false };
  let sending = false;
  let source = null; // the EventSource
  let ticker = null;

  // ------------------------------------------------------------------ words

  function seatName(i) {
    if (i === me) return "you";
    return names[i] || "seat " + i;
  }

  function possessive(i) {
    return i === me ? "your" : seatName(i) + "'s";
  }

  function clockText(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function sourceText(src) {
    if (src === "deck") return "the deck";
    const pile = game.view.discard_piles[src];
    return "the top of " + possessive(src) + " discard pile (" + A.cardText(pile[pile.length - 1]) + ")";
  }

  // One public event (a replay step) in words.
  function describe(ev) {
    if (ev.note) return ev.note;
    const who = seatName(ev.seat);
    const verb = (v) => (ev.seat === me ? v : v + "s");
    if (ev.kind === "draw") {
      if (ev.source === "deck") {
        return who + " " + verb("draw") + (ev.card ? " " + A.cardText(ev.card) : " a card") + " from the deck";
      }
      return who + " " + verb("take") + (ev.card ? " " + A.cardText(ev.card) : " the top card") + " from " +
        possessive(ev.pile) + " discard pile";
    }
    if (ev.kind === "play") {
      return who + " " + verb("play") + " " + A.cardText(ev.card) + " at (" + ev.cell.join(", ") + ")" +
        (ev.discard ? " and " + verb("discard") + " " + A.cardText(ev.discard) : ", no discard");
    }
    if (ev.kind === "forfeit") return who + " " + (ev.seat === me ? "forfeit" : "forfeits") + (ev.reason ? " (" + ev.reason + ")" : "");
    return who + ": " + ev.kind;
  }

  function decisionText(d) {
    if (d.draw !== undefined) return "draw from " + (d.draw === "deck" ? "the deck" : possessive(d.draw) + " discard pile");
    return "play " + A.cardText(d.play) + " at (" + d.cell.join(", ") + ")" + (d.discard ? ", discard " + A.cardText(d.discard) : "");
  }

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
      if (m.names) names = m.names.map((n, i) => (i === me ? "you" : n));
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

  function winnerText(res) {
    const mine = res.seats[me];
    const w = res.winners.map(seatName).join(" and ");
    return "The game is over: you scored " + mine.total + " and ranked " + mine.rank + " of " + players + ". " +
      (res.winners.length > 1 ? "Shared win: " : "Winner: ") + w + ".";
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
    pick = { source: null, card: null, cell: null, discard: null, confirming: false };
    game.drawnUnseen = 0;
  }

  // The step of the person's decision now: source | card | cell | discard | confirm | wait
  function stage() {
    const q = game.request;
    if (!q || sending || q.id === game.answered) return "wait";
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
    sending = true;
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
      sending = false;
      render(true);
    }
  }

  // ------------------------------------------------------------------ drawing

  function button(text, attrs, onClick) {
    const b = el("button", Object.assign({ type: "button" }, attrs || {}), text);
    b.addEventListener("click", onClick);
    return b;
  }

  function cardButton(card, attrs, onClick) {
    const b = el("button", Object.assign({ type: "button", class: "play-card", "aria-label": A.cardText(card) }, attrs || {}));
    b.append(A.cardEl(card));
    b.addEventListener("click", onClick);
    return b;
  }

  // The person's arboretum: a grid of cards and, while a cell is to be chosen, buttons on
  // the legal cells.
  function myGrid(v, cells) {
    const placed = v.arboretums[me];
    const all = placed.map((p) => p.cell).concat(cells);
    if (!all.length) return el("div", { class: "arb-empty" }, "no trees yet");
    const xs = all.map((c) => c[0]), ys = all.map((c) => c[1]);
    const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
    const grid = el("div", { class: "my-grid", role: "group", "aria-label": "your arboretum" });
    grid.style.gridTemplateColumns = "repeat(" + (maxX - minX + 1) + ", var(--cell-w))";
    grid.style.gridTemplateRows = "repeat(" + (maxY - minY + 1) + ", var(--cell-h))";
    const place = (node, c) => {
      node.style.gridColumn = String(c[0] - minX + 1);
      node.style.gridRow = String(maxY - c[1] + 1);
      grid.append(node);
    };
    placed.forEach((p) => {
      const chip = A.cardEl(p.card, "tree-card");
      chip.setAttribute("role", "img");
      chip.setAttribute("aria-label", A.cardText(p.card) + " at (" + p.cell.join(", ") + ")");
      place(chip, p.cell);
    });
    cells.forEach((c) => {
      const chosen = pick.cell && pick.cell[0] === c[0] && pick.cell[1] === c[1];
      const b = button(chosen ? A.cardText(pick.card).split(" ").pop() : "+", {
        class: "cell-target" + (chosen ? " chosen" : ""),
        "aria-label": "place " + A.cardText(pick.card) + " at (" + c.join(", ") + ")",
        "aria-pressed": chosen ? "true" : "false",
        "data-cell": c.join(","),
      }, () => choose("cell", c));
      place(b, c);
    });
    return grid;
  }

  function pileBox(v, seat, drawable) {
    const pile = v.discard_piles[seat];
    const box = el("div", { class: "pile" });
    box.append(el("div", { class: "label" }, "discard pile (" + pile.length + ")"));
    const chips = el("div", { class: "chips stacked" });
    pile.forEach((c, k) => {
      if (drawable && k === pile.length - 1) {
        chips.append(cardButton(c, { "aria-label": "draw " + A.cardText(c) + " from " + possessive(seat) + " discard pile", "data-source": String(seat) }, () => choose("source", seat)));
      } else chips.append(A.cardEl(c));
    });
    box.append(chips);
    return box;
  }

  function seatHeader(seat, v) {
    const head = el("header", {});
    const order = ["1st", "2nd", "3rd", "4th"][seat];
    head.append(el("h3", {}, seat === me ? "You" : seatName(seat)), el("span", { class: "muted" }, "plays " + order));
    if (game.result) {
      const r = game.result.seats[seat];
      head.append(el("span", { class: "score-badge rank" + r.rank }, r.total + " pts · #" + r.rank));
    }
    if (v.forfeited[seat]) head.append(el("span", { class: "tag bad" }, "forfeited"));
    return head;
  }

  function paths(seat) {
    return game.result ? A.scoredPaths(game.result.seats[seat]) : null;
  }

  function asTrees(arb) {
    return arb.map((p) => ({ x: p.cell[0], y: p.cell[1], card: p.card }));
  }

  function otherSeat(v, seat, sources) {
    const due = game.request === null && v.current_seat === seat && !game.result;
    const panel = el("section", { class: "seat card" + (due ? " due" : ""), "data-seat": seat, "aria-label": seatName(seat) });
    panel.append(seatHeader(seat, v));
    const row = el("div", { class: "seat-row" });
    const hand = el("div", { class: "hand" });
    if (game.finalHands) {
      hand.append(el("div", { class: "label" }, "final hand"));
      const chips = el("div", { class: "chips" });
      game.finalHands[seat].forEach((c) => chips.append(A.cardEl(c)));
      hand.append(chips);
    } else {
      const known = v.known_cards[seat];
      hand.append(el("div", { class: "label" }, "hand (" + v.hand_sizes[seat] + ")"));
      const chips = el("div", { class: "chips" });
      known.forEach((c) => chips.append(A.cardEl(c, "known")));
      for (let k = known.length; k < v.hand_sizes[seat]; k++) chips.append(A.cardEl(null));
      hand.append(chips);
    }
    row.append(hand, pileBox(v, seat, sources.includes(seat)));
    panel.append(row);
    const arb = el("div", { class: "arb-box" });
    arb.append(A.arboretumSvg(asTrees(v.arboretums[seat]), paths(seat), -1));
    panel.append(arb);
    return panel;
  }

  function mySeat(v, st, sources) {
    const panel = el("section", { class: "seat card me" + (game.request ? " due" : ""), "data-seat": me, id: "play-me", "aria-label": "your seat" });
    panel.append(seatHeader(me, v));
    const row = el("div", { class: "seat-row" });
    const hand = el("div", { class: "hand" });
    const pickingCard = st === "card" || st === "cell" || st === "discard" || (st === "confirm" && game.request && game.request.kind === "play");
    const cards = game.finalHands ? game.finalHands[me] : v.hand;
    hand.append(el("div", { class: "label", id: "play-hand-label" }, (game.finalHands ? "final hand" : "your hand") + " (" + cards.length + (game.drawnUnseen ? " + " + game.drawnUnseen + " drawn" : "") + ")"));
    const chips = el("div", { class: "chips hand-cards", role: "group", "aria-labelledby": "play-hand-label" });
    cards.forEach((c) => {
      if (pickingCard) {
        const isCard = pick.card === c, isDiscard = pick.discard === c;
        const verb = st === "discard" || (st === "confirm" && pick.cell) ? "discard " : "play ";
        chips.append(cardButton(c, {
          class: "play-card" + (isCard ? " chosen" : "") + (isDiscard ? " discarding" : ""),
          "aria-pressed": isCard || isDiscard ? "true" : "false",
          "aria-label": (isCard ? "chosen to play: " : isDiscard ? "chosen to discard: " : verb) + A.cardText(c),
          "data-card": c,
        }, () => choose("card", c)));
      } else chips.append(A.cardEl(c, v.known_cards[me].includes(c) ? "known" : ""));
    });
    for (let k = 0; k < (game.drawnUnseen || 0); k++) chips.append(A.cardEl(null));
    hand.append(chips);
    row.append(hand, pileBox(v, me, sources.includes(me)));
    panel.append(row);
    const arb = el("div", { class: "arb-box" });
    if (game.result) arb.append(A.arboretumSvg(asTrees(v.arboretums[me]), paths(me), -1));
    else arb.append(myGrid(v, st === "cell" || (st === "confirm" && pick.cell) ? game.request.legal_cells : []));
    panel.append(arb);
    return panel;
  }

  // What is asked now, with its buttons.
  function prompt(st) {
    const box = el("div", { class: "play-prompt card", id: "play-prompt" });
    const q = game.request;
    const add = (text) => box.append(el("p", { class: "play-ask", id: "play-ask" }, text));
    const row = el("div", { class: "play-actions" });
    if (st === "source") {
      add(q.kind === "first-draw" ? "Draw your first card:" : "Draw your second card:");
      q.legal_sources.forEach((src) => {
        row.append(button(src === "deck" ? "From the deck (" + game.view.deck_size + ")" : "Take " + A.cardText(game.view.discard_piles[src].slice(-1)[0]) + " from " + possessive(src) + " pile", { class: "primary", "data-source": String(src) }, () => choose("source", src)));
      });
    } else if (st === "card") add("Choose a card of your hand to play.");
    else if (st === "cell") add("Choose a highlighted cell for " + A.cardText(pick.card) + " (or another card).");
    else if (st === "discard") add("Choose a card to discard onto your pile.");
    else if (st === "confirm") {
      add("Confirm: " + decisionText(answerNow()) + "?");
      row.append(button("Confirm", { class: "primary", id: "play-confirm" }, confirm));
      row.append(button("Change", { id: "play-back" }, back));
    } else if (game.ended || game.result) {
      add(game.result ? winnerText(game.result) : "The game is over.");
    } else {
      add(sending ? "Sending your decision…" : (game.base ? "Waiting for the others…" : "Waiting for the game to start…"));
    }
    if ((st === "cell" || st === "discard") && q) row.append(button("Start over", { id: "play-back" }, back));
    box.append(row);
    if (q && !game.result) box.append(el("p", { class: "play-clock", id: "play-clock", role: "timer", "aria-live": "off" }, ""));
    return box;
  }

  function tableInfo(v) {
    const bar = el("div", { class: "play-bar" });
    bar.append(el("span", { class: "deck-count", id: "play-deck" }, v.deck_size + " cards in the deck"));
    bar.append(el("span", { class: "muted" }, "turn " + v.turn + (v.last_turn ? " · last turn" : "")));
    return bar;
  }

  function renderLog() {
    const log = $("play-log");
    if (!log) return;
    while (log.childElementCount < game.events.length) {
      const ev = game.events[log.childElementCount];
      log.append(el("li", { class: "step " + ev.kind + (ev.seat === me ? " mine" : "") }, describe(ev)));
    }
    log.scrollTop = log.scrollHeight;
  }

  function render(moveFocus) {
    root.dataset.stage = stage();
    root.dataset.gameStatus = game.status;
    root.dataset.ended = game.ended ? "1" : "0";
    renderLog();
    const board = $("play-board");
    const v = game.view;
    const resign = $("play-resign");
    if (resign) resign.hidden = !v || !!game.result || game.ended || !!game.resigned;
    if (!v) { board.replaceChildren(); return; }
    const had = document.activeElement && board.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = had ? (had.id || had.dataset.card || had.dataset.cell || had.dataset.source) : null;
    const st = stage();
    const sources = st === "source" ? game.request.legal_sources : [];
    const others = el("div", { class: "seats play-others" });
    for (let i = 0; i < players; i++) if (i !== me) others.append(otherSeat(v, i, sources));
    const parts = game.result ? [tableInfo(v)] : [tableInfo(v), prompt(st)];
    board.replaceChildren(...parts, mySeat(v, st, sources), others);
    tick();
    if (game.result) {
      A.renderScoring($("play-scoring"), game.result, (i) => (i === me ? "you" : seatName(i)));
    }
    if (moveFocus) focusFor(st);
    else if (focusKey) restoreFocus(focusKey);
  }

  function restoreFocus(key) {
    const found = $(key) || document.querySelector('#play-board [data-card="' + key + '"], #play-board [data-cell="' + key + '"], #play-board [data-source="' + key + '"]');
    if (found) found.focus();
  }

  // After each choice the focus goes to the next one to make (keyboard and screen readers).
  function focusFor(st) {
    let target = null;
    if (st === "source") target = document.querySelector("#play-prompt [data-source]");
    else if (st === "card") target = document.querySelector("#play-me .hand-cards button");
    else if (st === "cell") target = document.querySelector("#play-me .cell-target");
    else if (st === "discard") target = document.querySelector("#play-me .hand-cards button:not(.chosen)");
    else if (st === "confirm") target = $("play-confirm");
    if (target) target.focus({ preventScroll: false });
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
      if (data.game.names) names = data.game.names.map((n, i) => (i === me ? "you" : n));
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
