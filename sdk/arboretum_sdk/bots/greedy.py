"""The ``greedy`` bot: a one-move heuristic, fast (a few milliseconds per decision).

It values a position as the sum over species of (an estimate of the chance of holding the right to
score) x (the best path of that species in its arboretum). The chance comes from its own hand total
compared with what each opponent is likely to hold (cards publicly known in their hands plus their
share of the unseen cards). Paths are evaluated incrementally: for every card already placed it
computes, per species, the best chain going down and going up from it, so the best path through a
newly placed card is read off its neighbours in constant time (the built-in bots' one path
table, :class:`~arboretum_sdk.bots.paths.PathTable`).

- **Draw**: the top of a discard pile when taking it is worth enough (it extends one of its paths of
  a species it is likely to score, or strengthens its hand in one); otherwise the deck.
- **Play**: the card and cell that most increase the position's value, plus a small bonus for
  seeding paths in species it holds.
- **Discard**: the card whose loss hurts its own value least, minus what the card would be worth to
  the next player (who can take it from the pile).

Written with the public SDK only (``arboretum``, ``arboretum_sdk.Bot`` and the path table).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from arboretum import DECK, ID_SPECIES, Arboretum, Card, Draw, Play, SeatView, Species
from arboretum.grid import pack, unpack
from arboretum_sdk import Bot

from .paths import PathTable

NEG = -1000.0
TAKE_THRESHOLD = 1.5
"""Minimum value of a discard-pile card, in expected points, to prefer it over the deck."""
SEED_BONUS = 0.35
DENY_WEIGHT = 0.5


def _cells(arb: Arboretum) -> dict[int, int]:
    """An arboretum as the path table reads it: packed cell -> card id."""
    return {pack(cell.x, cell.y): card.id for cell, card in arb.items()}


def _table(arb: Arboretum, species: Iterable[Species]) -> PathTable:
    return PathTable(_cells(arb), [s.index for s in species])


def _free_cells(arb: Arboretum) -> list[int]:
    return [pack(c.x, c.y) for c in arb.legal_cells()]


class GreedyBot(Bot):
    """A one-move heuristic; see the module's documentation."""

    name = "greedy"

    # ------------------------------------------------------------------ estimates

    def _opponent_totals(self, view: SeatView) -> dict[int, float]:
        """Per species index, the largest expected hand total among the opponents."""
        unseen = view.unseen_cards()
        unseen_value = {s.index: 0 for s in view.species}
        for card in unseen:
            unseen_value[ID_SPECIES[card.id]] += card.value
        out = {s.index: 0.0 for s in view.species}
        for seat in range(view.players):
            if seat == view.seat:
                continue
            known = view.known_cards[seat]
            hidden = max(0, view.hand_sizes[seat] - len(known))
            share = hidden / len(unseen) if unseen else 0.0
            for s in out:
                expected = (
                    sum(c.value for c in known if ID_SPECIES[c.id] == s) + share * unseen_value[s]
                )
                out[s] = max(out[s], expected)
        return out

    @staticmethod
    def _weights(hand: Sequence[Card], opp: Mapping[int, float]) -> dict[int, float]:
        """Per species index, a rough chance of holding the right to score with this hand."""
        totals = dict.fromkeys(opp, 0)
        for card in hand:
            totals[ID_SPECIES[card.id]] += card.value
        return {s: 1 / (1 + math.exp(-(totals[s] - opp[s] + 0.5) / 2.5)) for s in opp}

    @staticmethod
    def _value(table: PathTable, weights: Mapping[int, float]) -> float:
        return sum(weights[s] * table.best[s] for s in table.species)

    # ------------------------------------------------------------------ decisions

    def choose_draw(self, view: SeatView) -> Draw:
        opp = self._opponent_totals(view)
        table = _table(view.arboretum, view.species)
        cells = _free_cells(view.arboretum)
        base = self._value(table, self._weights(view.hand, opp))
        best_source, best_value = DECK, TAKE_THRESHOLD if view.deck_size else NEG
        for seat, pile in enumerate(view.discard_piles):
            if not pile:
                continue
            top = pile[-1]
            weights = self._weights((*view.hand, top), opp)
            value = self._value(table, weights) - base
            value += max(
                (sum(weights[s] * g for s, g in table.gains(cell, top.id)) for cell in cells),
                default=0.0,
            )
            if value > best_value:
                best_source, best_value = seat, value
        return Draw(best_source)

    def choose_play(self, view: SeatView) -> Play:
        opp = self._opponent_totals(view)
        table = _table(view.arboretum, view.species)
        cells = _free_cells(view.arboretum)
        nxt = (view.seat + 1) % view.players
        next_table = _table(view.arboretums[nxt], view.species)
        next_cells = _free_cells(view.arboretums[nxt])
        hand = list(view.hand)
        candidates: list[tuple[float, Card, int]] = []
        for i, card in enumerate(hand):
            rest = hand[:i] + hand[i + 1 :]
            weights = self._weights(rest, opp)
            base = self._value(table, weights)
            seed = SEED_BONUS * weights[ID_SPECIES[card.id]]
            for cell in cells:
                gain = sum(weights[s] * g for s, g in table.gains(cell, card.id))
                candidates.append((base + gain + seed, card, cell))
        candidates.sort(key=lambda c: -c[0])
        if not view.discard_required:
            _, card, cell = candidates[0]
            return Play(card, unpack(cell), None)
        deny: dict[Card, float] = {}
        best: tuple[float, Card, int, Card] | None = None
        for score, card, cell in candidates[:6]:
            rest = [c for c in hand if c is not card]
            gain_here = score - self._value(table, self._weights(rest, opp))
            for d in rest:
                left = [c for c in rest if c is not d]
                kept = self._value(table, self._weights(left, opp)) + gain_here
                if d not in deny:
                    deny[d] = max(
                        (sum(g for _, g in next_table.gains(c, d.id)) for c in next_cells),
                        default=0.0,
                    )
                total = kept - DENY_WEIGHT * deny[d]
                if best is None or total > best[0]:
                    best = (total, card, cell, d)
        assert best is not None
        _, card, cell, discard = best
        return Play(card, unpack(cell), discard)
