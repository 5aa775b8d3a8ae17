"""The ``greedy`` bot: a one-move heuristic, fast (a few milliseconds per decision).

It values a position as the sum over species of (an estimate of the chance of holding the right to
score) x (the best path of that species in its arboretum). The chance comes from its own hand total
compared with what each opponent is likely to hold (cards publicly known in their hands plus their
share of the unseen cards). Paths are evaluated incrementally: for every card already placed it
computes, per species, the best chain going down and going up from it, so the best path through a
newly placed card is read off its neighbours in constant time.

- **Draw**: the top of a discard pile when taking it is worth enough (it extends one of its paths of
  a species it is likely to score, or strengthens its hand in one); otherwise the deck.
- **Play**: the card and cell that most increase the position's value, plus a small bonus for
  seeding paths in species it holds.
- **Discard**: the card whose loss hurts its own value least, minus what the card would be worth to
  the next player (who can take it from the pile).

Written with the public SDK only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from arboretum import DECK, Arboretum, Card, Cell, Draw, Play, SeatView, Species
from arboretum_sdk import Bot

NEG = -1000.0
TAKE_THRESHOLD = 1.5
"""Minimum value of a discard-pile card, in expected points, to prefer it over the deck."""
SEED_BONUS = 0.35
DENY_WEIGHT = 0.5

_DIRS = ((1, 0), (-1, 0), (0, 1), (0, -1))


class PathTable:
    """Per species, the best chains through one arboretum, for constant-time 'what if' plays.

    For a placed card q and species s: ``down[s][q]`` is the best (cards + start bonus) of a path
    going down in value from q to a card of s; ``up[s][q]`` the best (cards + end bonus) going up
    to a card of s. ``sdown``/``sup`` are the same for single-species chains, as (length, bonus).
    """

    def __init__(self, arb: Mapping[Cell, Card], species: Iterable[Species]) -> None:
        self.cards = {(c.x, c.y): (card.species, card.value) for c, card in arb.items()}
        self.species = tuple(species)
        self.down: dict[Species, dict[tuple[int, int], float]] = {}
        self.up: dict[Species, dict[tuple[int, int], float]] = {}
        self.sdown: dict[Species, dict[tuple[int, int], tuple[int, int]]] = {}
        self.sup: dict[Species, dict[tuple[int, int], tuple[int, int]]] = {}
        self.best: dict[Species, float] = {}
        self._nb: dict[tuple[int, int], list[tuple[tuple[int, int], Species, int]]] = {}
        order = sorted(self.cards, key=lambda p: self.cards[p][1])
        for s in self.species:
            down: dict[tuple[int, int], float] = {}
            sdown: dict[tuple[int, int], tuple[int, int]] = {}
            for p in order:  # increasing value: lower neighbours are done
                sp, v = self.cards[p]
                best = (1.0 + (1 if v == 1 else 0)) if sp is s else NEG
                sbest = (1, 1 if v == 1 else 0) if sp is s else (0, 0)
                for n in _neighbours(p):
                    hit = self.cards.get(n)
                    if hit is not None and hit[1] < v:
                        best = max(best, 1 + down[n])
                        if sp is s and hit[0] is s:
                            ln, bn = sdown[n]
                            if 2 * (ln + 1) + bn > 2 * sbest[0] + sbest[1]:
                                sbest = (ln + 1, bn)
                down[p] = best
                sdown[p] = sbest
            up: dict[tuple[int, int], float] = {}
            sup: dict[tuple[int, int], tuple[int, int]] = {}
            best_path = 0.0
            for p in reversed(order):
                sp, v = self.cards[p]
                best = (1.0 + (2 if v == 8 else 0)) if sp is s else NEG
                sbest = (1, 2 if v == 8 else 0) if sp is s else (0, 0)
                for n in _neighbours(p):
                    hit = self.cards.get(n)
                    if hit is not None and hit[1] > v:
                        best = max(best, 1 + up[n])
                        if sp is s and hit[0] is s:
                            ln, bn = sup[n]
                            if 2 * (ln + 1) + bn > 2 * sbest[0] + sbest[1]:
                                sbest = (ln + 1, bn)
                        if sp is s:  # a path starting at p, going up through n
                            best_path = max(best_path, 1 + (1 if v == 1 else 0) + up[n])
                up[p] = best
                sup[p] = sbest
                if sp is s and sbest[0] >= 4:
                    best_path = max(best_path, 2 * sbest[0] + sbest[1] + (1 if v == 1 else 0))
            self.down[s], self.up[s], self.sdown[s], self.sup[s] = down, up, sdown, sup
            self.best[s] = best_path

    def _placed_neighbours(
        self, cell: tuple[int, int]
    ) -> list[tuple[tuple[int, int], Species, int]]:
        found = self._nb.get(cell)
        if found is None:
            found = []
            for n in _neighbours(cell):
                hit = self.cards.get(n)
                if hit is not None:
                    found.append((n, hit[0], hit[1]))
            self._nb[cell] = found
        return found

    def through(self, cell: tuple[int, int], card: Card, s: Species) -> float:
        """The best path of species ``s`` through ``card`` placed at the empty ``cell``."""
        v, own = card.value, card.species is s
        down, up = self.down[s], self.up[s]
        low = high = NEG
        slow: tuple[int, int] = (0, 1 if v == 1 else 0)
        shigh: tuple[int, int] = (0, 2 if v == 8 else 0)
        for n, ns, nv in self._placed_neighbours(cell):
            if nv < v:
                low = max(low, down[n])
                if own and ns is s:
                    ln, bn = self.sdown[s][n]
                    if 2 * ln + bn > 2 * slow[0] + slow[1]:
                        slow = (ln, bn)
            elif nv > v:
                high = max(high, up[n])
                if own and ns is s:
                    ln, bn = self.sup[s][n]
                    if 2 * ln + bn > 2 * shigh[0] + shigh[1]:
                        shigh = (ln, bn)
        best = NEG
        if low > 0 and high > 0:
            best = 1 + low + high
        if own:
            if high > 0:
                best = max(best, 1 + (1 if v == 1 else 0) + high)
            if low > 0:
                best = max(best, 1 + low + (2 if v == 8 else 0))
            length = 1 + slow[0] + shigh[0]
            if length >= 4:
                best = max(best, 2 * length + slow[1] + shigh[1])
        return best

    def gains(self, cell: tuple[int, int], card: Card) -> dict[Species, float]:
        """Per species, how much the best path improves when ``card`` goes to ``cell``."""
        placed = self._placed_neighbours(cell)
        if not placed:
            return {}
        # a path of another species must pass through the card: it needs two placed neighbours
        if len(placed) >= 2:
            candidates: tuple[Species, ...] = self.species
        elif card.species in self.best:
            candidates = (card.species,)
        else:
            return {}
        out = {}
        for s in candidates:
            gain = self.through(cell, card, s) - self.best[s]
            if gain > 0:
                out[s] = gain
        return out


def _neighbours(p: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    x, y = p
    return ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1))


def _free_cells(arb: Arboretum) -> list[tuple[int, int]]:
    return [(c.x, c.y) for c in arb.legal_cells()]


class GreedyBot(Bot):
    """A one-move heuristic; see the module's documentation."""

    name = "greedy"

    # ------------------------------------------------------------------ estimates

    def _opponent_totals(self, view: SeatView) -> dict[Species, float]:
        """Per species, the largest expected hand total among the opponents."""
        unseen = view.unseen_cards()
        unseen_value = {s: 0 for s in view.species}
        for card in unseen:
            unseen_value[card.species] += card.value
        out = {s: 0.0 for s in view.species}
        for seat in range(view.players):
            if seat == view.seat:
                continue
            known = view.known_cards[seat]
            hidden = max(0, view.hand_sizes[seat] - len(known))
            share = hidden / len(unseen) if unseen else 0.0
            for s in view.species:
                expected = sum(c.value for c in known if c.species is s) + share * unseen_value[s]
                out[s] = max(out[s], expected)
        return out

    @staticmethod
    def _weights(hand: Sequence[Card], opp: Mapping[Species, float]) -> dict[Species, float]:
        """Per species, a rough chance of holding the right to score with this hand."""
        totals = dict.fromkeys(opp, 0)
        for card in hand:
            totals[card.species] += card.value
        return {s: 1 / (1 + math.exp(-(totals[s] - opp[s] + 0.5) / 2.5)) for s in opp}

    @staticmethod
    def _value(table: PathTable, weights: Mapping[Species, float]) -> float:
        return sum(weights[s] * table.best[s] for s in table.species)

    # ------------------------------------------------------------------ decisions

    def choose_draw(self, view: SeatView) -> Draw:
        opp = self._opponent_totals(view)
        table = PathTable(view.arboretum, view.species)
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
                (sum(weights[s] * g for s, g in table.gains(cell, top).items()) for cell in cells),
                default=0.0,
            )
            if value > best_value:
                best_source, best_value = seat, value
        return Draw(best_source)

    def choose_play(self, view: SeatView) -> Play:
        opp = self._opponent_totals(view)
        table = PathTable(view.arboretum, view.species)
        cells = _free_cells(view.arboretum)
        nxt = (view.seat + 1) % view.players
        next_table = PathTable(view.arboretums[nxt], view.species)
        next_cells = _free_cells(view.arboretums[nxt])
        hand = list(view.hand)
        candidates: list[tuple[float, Card, tuple[int, int]]] = []
        for i, card in enumerate(hand):
            rest = hand[:i] + hand[i + 1 :]
            weights = self._weights(rest, opp)
            base = self._value(table, weights)
            seed = SEED_BONUS * weights[card.species]
            for cell in cells:
                gain = sum(weights[s] * g for s, g in table.gains(cell, card).items())
                candidates.append((base + gain + seed, card, cell))
        candidates.sort(key=lambda c: -c[0])
        if not view.discard_required:
            _, card, cell = candidates[0]
            return Play(card, Cell(*cell), None)
        deny: dict[Card, float] = {}
        best: tuple[float, Card, tuple[int, int], Card] | None = None
        for score, card, cell in candidates[:6]:
            rest = [c for c in hand if c is not card]
            gain_here = score - self._value(table, self._weights(rest, opp))
            for d in rest:
                left = [c for c in rest if c is not d]
                kept = self._value(table, self._weights(left, opp)) + gain_here
                if d not in deny:
                    deny[d] = max(
                        (sum(next_table.gains(c, d).values()) for c in next_cells), default=0.0
                    )
                total = kept - DENY_WEIGHT * deny[d]
                if best is None or total > best[0]:
                    best = (total, card, cell, d)
        assert best is not None
        _, card, cell, discard = best
        return Play(card, Cell(*cell), discard)
