// Arboretum Arena: drawing a casual game's table (static/play.js keeps the game's state, its feed
// and the person's decision, and calls this to draw them): the table's words for seats, moves and
// decisions; the other seats, the person's hand and arboretum grid with its legal cells, the
// discard piles, the prompt with its buttons, the table's bar and the moves' list. Loaded after
// static/scoring.js and before static/play.js.
"use strict";

// `t`: the game's state, read as it changes ({root, game, pick, names, me, players}), and the
// play's calls ({stage, answerNow, choose, back, confirm, tick}). Returns the drawing and the words.
window.arenaPlayTable = function (t) {
  const A = window.arenaScoring;
  const el = A.el;
  const $ = (id) => document.getElementById(id);
  const { root, game, pick, names, me, players } = t;
  const { stage, answerNow, choose, back, confirm, tick } = t;

  // ------------------------------------------------------------------ words

  function seatName(i) {
    if (i === me) return "you";
    return names[i] || "seat " + i;
  }

  function possessive(i) {
    return i === me ? "your" : seatName(i) + "'s";
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

  function winnerText(res) {
    const mine = res.seats[me];
    const w = res.winners.map(seatName).join(" and ");
    return "The game is over: you scored " + mine.total + " and ranked " + mine.rank + " of " + players + ". " +
      (res.winners.length > 1 ? "Shared win: " : "Winner: ") + w + ".";
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
      add(game.sending ? "Sending your decision…" : (game.base ? "Waiting for the others…" : "Waiting for the game to start…"));
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

  return { render, describe, decisionText, winnerText };
};
