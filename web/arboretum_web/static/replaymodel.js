// Arboretum Arena: a replay document's states (docs/replay-format.md), for the replay viewer
// (static/replay.js, loaded after this file): the hands, the cards known to be in them, the
// discard piles, the arboretums, the deck's size and the forfeits after each step. No page here:
// the same functions re-play a stored replay and a running match's steps as they come.
"use strict";

window.arenaReplayModel = (function () {
  function removeCard(list, card) {
    let i = list.indexOf(card);
    if (i < 0) i = list.indexOf(null);
    if (i >= 0) list.splice(i, 1);
    return i >= 0;
  }

  function clone(s) {
    return {
      hands: s.hands.map((h) => h.slice()),
      known: s.known.map((h) => h.slice()),
      piles: s.piles.map((p) => p.slice()),
      arbs: s.arbs.map((a) => a.slice()),
      deck: s.deck,
      forfeited: s.forfeited.slice(),
      last: null,
    };
  }

  // The state after step i, from the state before it (a copy: snapshots are kept).
  function applyStep(prev, step, i) {
    const s = clone(prev);
    const seat = step.seat;
    if (step.kind === "draw") {
      let card = step.card === undefined ? null : step.card;
      if (step.source === "deck") {
        s.deck -= 1;
      } else {
        const top = s.piles[step.pile].pop();
        card = card || top || null;
        if (card) s.known[seat].push(card);
      }
      s.hands[seat].push(card);
    } else if (step.kind === "play") {
      removeCard(s.hands[seat], step.card);
      const k = s.known[seat].indexOf(step.card);
      if (k >= 0) s.known[seat].splice(k, 1);
      s.arbs[seat].push({ x: step.cell[0], y: step.cell[1], card: step.card, step: i });
      if (step.discard) {
        removeCard(s.hands[seat], step.discard);
        const j = s.known[seat].indexOf(step.discard);
        if (j >= 0) s.known[seat].splice(j, 1);
        s.piles[seat].push(step.discard);
      }
    } else if (step.kind === "forfeit") {
      s.forfeited[seat] = true;
    }
    s.last = i;
    return s;
  }

  function build(d) {
    const n = d.players;
    const hands = d.hands.map((h) => h.slice());
    const dealt = hands.reduce((a, h) => a + h.length, 0);
    const deck = d.deck ? d.deck.length - dealt : d.deck_size;
    const out = [{
      hands,
      known: hands.map(() => []),
      piles: hands.map(() => []),
      arbs: hands.map(() => []),
      deck,
      forfeited: new Array(n).fill(false),
      last: null,
    }];
    d.steps.forEach((step, i) => out.push(applyStep(out[i], step, i)));
    return out;
  }

  return { applyStep, build };
})();
