"""The ``lookahead`` bot: a one-ply heuristic with exact path scoring (milliseconds a decision).

It values a position as what it expects to score minus what it expects its opponents to score:
for every seat and species, (the chance of that seat holding the right to score) x (the points of
the best path of that species in the seat's arboretum), exact or modelled as follows:

- **Paths.** Every placement of every card on every legal cell is scored exactly: the best path of
  every species after it (:class:`~arboretum_sdk.bots.paths.PathTable`).
- **The right to score.** Each opponent's hand total of a species is modelled as a normal
  variable: the cards publicly known to be in that hand, plus a sample without replacement of the
  cards this seat cannot locate (:func:`~arboretum_sdk.bots.paths.right_chances`, the 8/1 rule in
  expectation). Its chance of the right is the chance that every opponent's total is at most this
  hand's; an opponent's chance, that its total is at least this hand's. So a card held in a species
  where an opponent has a long path is worth what it takes from that opponent (defence).
- **Play.** Each (card, cell) is valued with the card gone from the hand; the best six are tried
  with every discard, valued with the discard gone too, minus half of what the discard would be
  worth to the next player (the best path growth it gives them, weighted by their chance of the
  right with it in hand: they can take it from the pile).
- **Draw.** A discard pile's top card is worth the value it adds to the position (hand strength
  and its best placement); the deck is worth the mean of that over the cards it may hold. The best
  source is taken, the deck on a tie.

It looks one decision ahead and no further: no sampling, no search, deterministic. Written with the
public SDK only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from arboretum import ALL_CARDS, DECK, Decision, DecisionKind, Draw, Play, SeatView
from arboretum.grid import pack, unpack
from arboretum_sdk import Bot

from .paths import OpponentModel, PathTable, opponent_chances, right_chances

__all__ = ["LookaheadBot"]

PLACEMENTS = 6
"""Placements tried with every discard."""
DENY_WEIGHT = 0.5
OPP_WEIGHT = 1.0


def view_cells(view: SeatView, seat: int) -> dict[int, int]:
    """A seat's arboretum as packed cell -> card id."""
    return {pack(cell.x, cell.y): card.id for cell, card in view.arboretums[seat].items()}


def position_value(table: PathTable, chances: Sequence[float]) -> float:
    best = table.best
    return sum(chances[s] * best[s] for s in table.species)


def defence_value(hand: Sequence[int], model: OpponentModel, others: dict[int, PathTable]) -> float:
    """What the opponents are expected to score against ``hand``, their paths as they are now."""
    total = 0.0
    for o, table in others.items():
        total += position_value(table, opponent_chances(hand, model, o))
    return OPP_WEIGHT * total


def card_value(
    table: PathTable,
    hand: list[int],
    card: int,
    model: OpponentModel,
    base: float,
    others: dict[int, PathTable] | None = None,
) -> float:
    """What holding ``card`` besides ``hand`` adds to the position worth ``base``: the stronger
    hand, and the best placement the card allows."""
    held = [*hand, card]
    chances = right_chances(held, model)
    gain, _ = table.best_gain(card, chances)
    value = position_value(table, chances) + gain - base
    if others:
        value -= defence_value(held, model, others)
    return value


class LookaheadBot(Bot):
    """A one-ply heuristic with exact path scoring; see the module's documentation."""

    name = "lookahead"

    def choose(self, view: SeatView) -> Decision:
        legal = view.legal_decisions()
        if len(legal) == 1:
            return legal[0]
        if view.kind is DecisionKind.PLAY:
            return self._play(view)
        return self._draw(view, legal.sources)

    def _draw(self, view: SeatView, sources: Sequence[int]) -> Draw:
        value_of, model = card_values(view)
        best_source, best_value = sources[0], float("-inf")
        for source in sources:
            if source == DECK:
                unseen = model.unseen_ids
                value = sum(value_of(c) for c in unseen) / len(unseen) if unseen else 0.0
            else:
                value = value_of(view.discard_piles[source][-1].id)
            if value > best_value + 1e-9:
                best_source, best_value = source, value
        return Draw(best_source)

    def _play(self, view: SeatView) -> Play:
        species = [s.index for s in view.species]
        model = OpponentModel(view)
        table = PathTable(view_cells(view, view.seat), species)
        hand = sorted(c.id for c in view.hand)
        others = {o: PathTable(view_cells(view, o), species) for o in model.seats}
        placements = ranked_placements(table, hand, model, others)
        if not view.discard_required:
            _, card, cell = placements[0]
            return Play(ALL_CARDS[card], unpack(cell), None)
        nxt = (view.seat + 1) % view.players
        next_table = others.get(nxt) or PathTable(view_cells(view, nxt), species)
        next_model = OpponentModel(seen_by(view, nxt))
        next_hand_known = [c.id for c in view.known_cards[nxt]]
        deny: dict[int, float] = {}
        best: tuple[float, int, int, int] | None = None
        for _, card, cell in placements[:PLACEMENTS]:
            cells = dict(table.cells)
            cells[cell] = card
            after = PathTable(cells, species)
            rest = [c for c in hand if c != card]
            for discard in rest:
                kept = [c for c in rest if c != discard]
                value = position_value(after, right_chances(kept, model)) - defence_value(
                    kept, model, others
                )
                if discard not in deny:
                    deny[discard] = card_value(
                        next_table,
                        next_hand_known,
                        discard,
                        next_model,
                        position_value(next_table, right_chances(next_hand_known, next_model)),
                    )
                total = value - DENY_WEIGHT * max(0.0, deny[discard])
                if best is None or total > best[0] + 1e-9:
                    best = (total, card, cell, discard)
        assert best is not None
        _, card, cell, discard = best
        return Play(ALL_CARDS[card], unpack(cell), ALL_CARDS[discard])


def card_values(view: SeatView) -> tuple[Callable[[int], float], OpponentModel]:
    """What drawing each card (an id) is worth to the seat of ``view`` before its play
    (:func:`card_value` against the position as it is), and the model of the opponents' hands."""
    species = [s.index for s in view.species]
    model = OpponentModel(view)
    table = PathTable(view_cells(view, view.seat), species)
    hand = [c.id for c in view.hand]
    others = {o: PathTable(view_cells(view, o), species) for o in model.seats}
    base = position_value(table, right_chances(hand, model)) - defence_value(hand, model, others)

    def value_of(card: int) -> float:
        return card_value(table, hand, card, model, base, others)

    return value_of, model


def ranked_placements(
    table: PathTable,
    hand: Sequence[int],
    model: OpponentModel,
    others: dict[int, PathTable],
    over: Callable[[], bool] | None = None,
) -> list[tuple[float, int, int]]:
    """Every placement (value, card id, packed cell) of a card of ``hand`` in ``table``, best
    first: the exact gain of the card on its paths, the rest of the hand valued by the right to
    score and what it gives the opponents. ``over``: asked before each card after the first, true
    to stop with the cards rated so far."""
    placements: list[tuple[float, int, int]] = []
    for card in hand:
        if placements and over is not None and over():
            break
        rest = [c for c in hand if c != card]
        chances = right_chances(rest, model)
        base = position_value(table, chances) - defence_value(rest, model, others)
        for cell in table.free:
            gain = sum(chances[s] * g for s, g in table.gains(cell, card))
            placements.append((base + gain, card, cell))
    placements.sort(key=lambda t: -t[0])
    return placements


def seen_by(view: SeatView, seat: int) -> SeatView:
    """The public part of ``view`` as if ``seat`` were looking (its hand: the cards known to be in
    it): enough to model what ``seat`` thinks of its opponents' hands."""
    return replace(view, seat=seat, hand=view.known_cards[seat])
