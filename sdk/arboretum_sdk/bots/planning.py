"""Turn planning on a determinized state: a fast policy that plays on from a candidate.

:mod:`~arboretum_sdk.bots.expert` values its endgame candidates on determinizations of the hidden
cards. Scored at once, "as if the game ended now", a draw is worth only what the card adds to the
hand's right to score (its placement is never made), and a play leaves out what the opponents do
next (take its discard, grow their paths, change who holds the right). A :class:`TurnPlanner`
plays on from the candidate with a cheap deterministic policy before the state is scored
(:meth:`TurnPlanner.margin`):

- **Finishing the turn** (``finish``, or any ``replies``): after a draw, the rest of the deciding
  seat's turn (the second draw, then a play and a discard) is made by the policy, so a draw is
  valued by the play it leads to.
- **Replies** (``replies``): then that many more turns (any seat's, in turn order; a negative
  number: to the end of the game) are played by the same policy, unless the game is over first.
  ``ExpertBot(playout_deck=N)`` plays to the end from N deck cards down.

The policy, for the seat to move, with the hands of the determinization known exactly:

- a draw takes the discard pile's top card worth the most (its best placement on the seat's paths,
  weighted by the right to score it would then hold, plus the right it gains) when that is at least
  ``take`` points, else the deck (else the best pile);
- a play puts the card on the cell that makes the best margin: for every species, the seat's best
  path after it if it holds the right without the card, minus each other seat's best path where
  that seat holds the right; the discard is the card whose loss costs the least by the same measure
  in its species (the lower card on a tie).

Paths are read from :class:`~arboretum_sdk.bots.paths.PathTable`: built once per decision from the
view, and rebuilt for a seat once its arboretum has changed and another move is to follow, so every
table the policy reads is exact. Deterministic: the same state gives the same moves.
"""

from __future__ import annotations

from collections.abc import Callable

from arboretum import (
    ALL_CARDS,
    DECK,
    ID_SPECIES,
    ID_VALUE,
    Decision,
    DecisionKind,
    Draw,
    GameState,
    Play,
    SeatView,
)
from arboretum.grid import pack, unpack
from arboretum.scoring import final_totals, hand_totals

from .lookahead import view_cells
from .paths import PathTable

__all__ = ["TurnPlanner"]

_PLAY = DecisionKind.PLAY


class TurnPlanner:
    """Plays on from a candidate on a determinized state and scores the margin; see the module's
    documentation. Built once per decision from the deciding seat's ``view``."""

    __slots__ = ("finish", "live", "players", "replies", "seat", "species", "tables", "take")

    def __init__(
        self, view: SeatView, *, finish: bool = True, replies: int = 1, take: float = 2.0
    ) -> None:
        self.seat = view.seat
        self.players = view.players
        self.species = tuple(s.index for s in view.species)
        self.tables = [PathTable(view_cells(view, s), self.species) for s in range(view.players)]
        """Each seat's paths as in the view."""
        self.live = self.tables
        """Each seat's paths in the state being played on."""
        self.finish = finish
        """Whether the policy finishes the deciding seat's turn after a draw."""
        self.replies = replies
        """Turns the policy plays after the deciding seat's turn (a negative number: to the end)."""
        self.take = take
        """The points a pile's top card must be worth for the policy to draw it."""

    def margin(self, det: GameState, decision: Decision) -> float:
        """The deciding seat's total minus the best other total once ``decision`` is made on a copy
        of ``det``, the turn finished and answered by the policy as configured."""
        sim = det.copy()
        sim.push(decision)
        self.play_on(sim, sim.push)
        totals = final_totals(sim)
        seat = self.seat
        return totals[seat] - max(t for s, t in enumerate(totals) if s != seat)

    def play_on(self, sim: GameState, move: Callable[[Decision], object]) -> None:
        """Play the policy's moves on ``sim`` (the deciding seat's candidate made) through ``move``
        (``sim.push``; ``sim.apply`` validates): the rest of that turn, then ``replies`` turns."""
        seat = self.seat
        self.live = live = self.tables[:]
        if self.finish or self.replies:
            while not sim.is_over and sim.current_seat == seat:
                move(self.policy(sim))
        turns = self.replies
        if turns and not sim.is_over:
            live[seat] = self._table(sim, seat)
        while turns and not sim.is_over:
            mover = sim.current_seat
            while not sim.is_over and sim.current_seat == mover:
                move(self.policy(sim))
            turns -= 1
            if turns:
                live[mover] = self._table(sim, mover)

    def _table(self, state: GameState, seat: int) -> PathTable:
        """``seat``'s paths in ``state``."""
        cells = {pack(cell.x, cell.y): card.id for cell, card in state.arboretum(seat).items()}
        return PathTable(cells, self.species)

    # ------------------------------------------------------------------ the policy

    def policy(self, state: GameState) -> Decision:
        """The policy's decision for the seat to move in ``state``, every seat's paths read from
        :attr:`live` (which must match ``state``'s arboretums)."""
        if state.decision_kind is _PLAY:
            return self._play(state)
        return self._draw(state)

    def _value(self, totals: list[int], seat: int, s: int, own: float) -> float:
        """Species ``s``'s part of the margin, its hand totals (after the 8/1 rule) by seat being
        ``totals``: ``own`` (the seat's best path) if the seat has the right, minus every other
        seat's best path where that seat has the right."""
        top = max(totals)
        value = own if totals[seat] == top else 0.0
        tables = self.live
        for o, t in enumerate(totals):
            if o != seat and t == top:
                value -= tables[o].best[s]
        return value

    def _draw(self, state: GameState) -> Draw:
        seat = state.current_seat
        sources = state.draw_sources()
        table = self.live[seat]
        hands = [state.hand_ids(s) for s in range(self.players)]
        totals = {s: hand_totals(hands, s) for s in self.species}
        held = [0.0] * 10
        for t, tot in totals.items():
            held[t] = 1.0 if tot[seat] == max(tot) else 0.0
        best_source, best_value = -2, float("-inf")
        for source in sources:
            if source == DECK:
                continue
            card = state.discard_pile(source)[-1].id
            s = ID_SPECIES[card]
            before = self._value(totals[s], seat, s, table.best[s])
            with_card = [[*h, card] if o == seat else h for o, h in enumerate(hands)]
            after = hand_totals(with_card, s)
            weights = held[:]
            weights[s] = 1.0 if after[seat] == max(after) else 0.0
            gain, _ = table.best_gain(card, weights)
            value = gain + self._value(after, seat, s, table.best[s]) - before
            if value > best_value:
                best_source, best_value = source, value
        if sources[0] == DECK and (best_source == -2 or best_value < self.take):
            return Draw(DECK)
        return Draw(best_source)

    def _play(self, state: GameState) -> Play:
        seat = state.current_seat
        table = self.live[seat]
        best_paths = table.best
        hands = [state.hand_ids(s) for s in range(self.players)]
        hand = hands[seat]
        totals = {s: hand_totals(hands, s) for s in self.species}
        full = {s: self._value(tot, seat, s, best_paths[s]) for s, tot in totals.items()}
        base_total = sum(full.values())
        held = [0.0] * 10
        for t, tot in totals.items():
            held[t] = 1.0 if tot[seat] == max(tot) else 0.0
        choice: tuple[float, int, int] | None = None
        for card in hand:
            s = ID_SPECIES[card]
            rest = [c for c in hand if c != card]
            without = hand_totals([rest if o == seat else h for o, h in enumerate(hands)], s)
            weights = held[:]
            weights[s] = 1.0 if without[seat] == max(without) else 0.0
            base = base_total - full[s] + self._value(without, seat, s, best_paths[s])
            gain, cell = table.best_gain(card, weights)
            value = base + gain
            if choice is None or value > choice[0] + 1e-9:
                choice = (value, card, cell)
        assert choice is not None
        _, card, cell = choice
        if not state.discard_required:
            return Play(ALL_CARDS[card], unpack(cell), None)
        after = list(best_paths)
        for s, g in table.gains(cell, card):
            after[s] += g
        rest = [c for c in hand if c != card]
        played = [rest if o == seat else h for o, h in enumerate(hands)]
        before: dict[int, float] = {}
        best_discard, best_value = rest[0], float("-inf")
        for discard in sorted(rest, key=lambda c: (ID_VALUE[c], c)):  # the lower card on a tie
            kept = [c for c in rest if c != discard]
            s = ID_SPECIES[discard]
            if s not in before:
                before[s] = self._value(hand_totals(played, s), seat, s, after[s])
            # What losing the discard costs in its species (every other species is unchanged).
            lost = hand_totals([kept if o == seat else h for o, h in enumerate(hands)], s)
            value = self._value(lost, seat, s, after[s]) - before[s]
            if value > best_value + 1e-9:
                best_discard, best_value = discard, value
        return Play(ALL_CARDS[card], unpack(cell), ALL_CARDS[best_discard])
