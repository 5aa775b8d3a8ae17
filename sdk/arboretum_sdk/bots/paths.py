"""Shared pieces of the built-in bots: exact "what if" path scoring and the right-to-score model.

Cards are card ids (``Card.id``, read through the engine's ``ID_SPECIES`` and ``ID_VALUE``) and
cells are the engine's packed cells (:func:`arboretum.grid.pack`: neighbours differ by 1 and
``STRIDE``), so that a bot can score thousands of hypothetical placements per decision. This is
the one path table of the built-in bots (greedy, search, lookahead, expert and the planner).

:class:`PathTable` holds, for one arboretum and every species, the best chain going down and going
up in value from each placed card. Because values strictly increase along a path, the part of a
path below a new card and the part above it never share a cell, so the best path of a species
through a card placed on an empty cell is read off its placed neighbours exactly:
:meth:`PathTable.through`. The best path of every species after that placement is the larger of
the best path before and the best path through the new card.

:func:`right_chances` estimates, per species, the chance of holding the right to score with a given
hand, by a normal model of every opponent's hand total: the cards publicly known to be in that hand
plus a sample without replacement of the cards this seat cannot locate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from arboretum import ID_SPECIES, ID_VALUE, SeatView, card_id
from arboretum.grid import ORIGIN, STRIDE

__all__ = [
    "NEG",
    "OpponentModel",
    "PathTable",
    "normal_cdf",
    "opponent_chances",
    "right_chances",
]

NEG = -1000
"""Below any real path's points: 'no path'."""


class PathTable:
    """Per species, the best chains through one arboretum (``cells``: packed cell -> card id).

    ``down[s][p]``: the best (cards + start bonus) of a path going down in value from the card at
    ``p`` to a card of species ``s`` (``NEG`` when there is none); ``up[s][p]``: the same going up,
    with the end bonus. ``run_down``/``run_up``: the same along cards of ``s`` only, as
    (length, bonus). ``best[s]``: the points of the best path of ``s`` now (0 when there is none).
    ``free``: the legal cells for the next card, sorted.
    """

    __slots__ = (
        "_useful",
        "best",
        "cells",
        "down",
        "free",
        "run_down",
        "run_up",
        "species",
        "up",
    )

    def __init__(self, cells: Mapping[int, int], species: Iterable[int]) -> None:
        self.cells = cells
        self.species = tuple(species)
        self._useful: dict[int, list[tuple[int, list[tuple[int, int]]]]] = {}
        if cells:
            self.free = sorted(
                {q for p in cells for q in (p + 1, p - 1, p + STRIDE, p - STRIDE) if q not in cells}
            )
        else:
            self.free = [ORIGIN]
        self.best = [0] * 10
        self.down: list[dict[int, int]] = [{} for _ in range(10)]
        self.up: list[dict[int, int]] = [{} for _ in range(10)]
        self.run_down: list[dict[int, tuple[int, int]]] = [{} for _ in range(10)]
        self.run_up: list[dict[int, tuple[int, int]]] = [{} for _ in range(10)]
        value_of, species_of = ID_VALUE, ID_SPECIES
        order = sorted(cells, key=lambda p: value_of[cells[p]])
        get = cells.get
        for s in self.species:
            down: dict[int, int] = {}
            rdown: dict[int, tuple[int, int]] = {}
            for p in order:
                c = cells[p]
                v = value_of[c]
                own = species_of[c] == s
                best = (2 if v == 1 else 1) if own else NEG
                run = (1, 1 if v == 1 else 0) if own else (0, 0)
                for q in (p + 1, p - 1, p + STRIDE, p - STRIDE):
                    cq = get(q)
                    if cq is not None and value_of[cq] < v:
                        if down[q] + 1 > best:
                            best = down[q] + 1
                        if own and species_of[cq] == s:
                            ln, bn = rdown[q]
                            if 2 * (ln + 1) + bn > 2 * run[0] + run[1]:
                                run = (ln + 1, bn)
                down[p] = best
                rdown[p] = run
            up: dict[int, int] = {}
            rup: dict[int, tuple[int, int]] = {}
            top = 0
            for p in reversed(order):
                c = cells[p]
                v = value_of[c]
                own = species_of[c] == s
                best = (3 if v == 8 else 1) if own else NEG
                run = (1, 2 if v == 8 else 0) if own else (0, 0)
                for q in (p + 1, p - 1, p + STRIDE, p - STRIDE):
                    cq = get(q)
                    if cq is not None and value_of[cq] > v:
                        if up[q] + 1 > best:
                            best = up[q] + 1
                        if own:
                            if species_of[cq] == s:
                                ln, bn = rup[q]
                                if 2 * (ln + 1) + bn > 2 * run[0] + run[1]:
                                    run = (ln + 1, bn)
                            if up[q] > 0 and up[q] + 1 + (v == 1) > top:  # a path from p up
                                top = up[q] + 1 + (v == 1)
                up[p] = best
                rup[p] = run
                if own and run[0] >= 4 and 2 * run[0] + run[1] + (v == 1) > top:
                    top = 2 * run[0] + run[1] + (v == 1)
            self.down[s], self.up[s], self.run_down[s], self.run_up[s] = down, up, rdown, rup
            self.best[s] = top

    def through(self, cell: int, card: int, s: int) -> int:
        """The best path of species ``s`` through ``card`` placed on the empty ``cell`` (``NEG``
        when it makes none)."""
        value_of, species_of = ID_VALUE, ID_SPECIES
        v = value_of[card]
        own = species_of[card] == s
        down, up = self.down[s], self.up[s]
        low = high = NEG
        rlow, blow = 0, 1 if v == 1 else 0
        rhigh, bhigh = 0, 2 if v == 8 else 0
        get = self.cells.get
        for q in (cell + 1, cell - 1, cell + STRIDE, cell - STRIDE):
            cq = get(q)
            if cq is None:
                continue
            vq = value_of[cq]
            if vq < v:
                if down[q] > low:
                    low = down[q]
                if own and species_of[cq] == s:
                    ln, bn = self.run_down[s][q]
                    if 2 * ln + bn > 2 * rlow + blow:
                        rlow, blow = ln, bn
            elif vq > v:
                if up[q] > high:
                    high = up[q]
                if own and species_of[cq] == s:
                    ln, bn = self.run_up[s][q]
                    if 2 * ln + bn > 2 * rhigh + bhigh:
                        rhigh, bhigh = ln, bn
        best = 1 + low + high if low > 0 and high > 0 else NEG
        if own:
            if high > 0 and 1 + (v == 1) + high > best:
                best = 1 + (v == 1) + high
            if low > 0 and 1 + low + 2 * (v == 8) > best:
                best = 1 + low + 2 * (v == 8)
            length = 1 + rlow + rhigh
            if length >= 4 and 2 * length + blow + bhigh > best:
                best = 2 * length + blow + bhigh
        return best

    def gains(self, cell: int, card: int) -> list[tuple[int, int]]:
        """(species, points gained) for every species whose best path grows when ``card`` goes to
        the empty ``cell``."""
        get = self.cells.get
        placed = 0
        for q in (cell + 1, cell - 1, cell + STRIDE, cell - STRIDE):
            if get(q) is not None:
                placed += 1
        if not placed:
            return []
        own = ID_SPECIES[card]
        # A path of another species passes through the card: it needs two placed neighbours.
        candidates = self.species if placed >= 2 else (own,)
        out = []
        best = self.best
        for s in candidates:
            g = self.through(cell, card, s) - best[s]
            if g > 0:
                out.append((s, g))
        return out

    def gain(self, cell: int, card: int, weights: Sequence[float] | Mapping[int, float]) -> float:
        """The growth of the best paths when ``card`` goes to the empty ``cell``, each species'
        weighted (``weights[species index]``)."""
        total = 0.0
        for s, g in self.gains(cell, card):
            total += weights[s] * g
        return total

    def useful_cells(self, card: int) -> list[tuple[int, list[tuple[int, int]]]]:
        """The free cells where ``card`` grows a best path, each with its :meth:`gains` (in the
        order of :attr:`free`; computed once per card)."""
        found = self._useful.get(card)
        if found is None:
            found = []
            for cell in self.free:
                gains = self.gains(cell, card)
                if gains:
                    found.append((cell, gains))
            self._useful[card] = found
        return found

    def best_gain(
        self, card: int, weights: Sequence[float] | Mapping[int, float]
    ) -> tuple[float, int]:
        """The largest weighted growth of the best paths ``card`` can make on one free cell, and
        that cell (the first free cell when it makes none)."""
        top, where = 0.0, self.free[0]
        for cell, gains in self.useful_cells(card):
            value = 0.0
            for s, g in gains:
                value += weights[s] * g
            if value > top:
                top, where = value, cell
        return top, where


def normal_cdf(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


class OpponentModel:
    """The opponents' hand totals per species as a seat sees them: for each opponent, the known
    cards' total plus a sample of its other cards from the unseen ones (mean and variance of a
    sample without replacement), and where each 1 and 8 is when it is known."""

    __slots__ = ("draw_share", "holder", "mean", "seats", "species", "unseen_ids", "var")

    def __init__(self, view: SeatView) -> None:
        unseen = [c.id for c in view.unseen_cards()]
        self.unseen_ids = frozenset(unseen)
        n = len(unseen)
        self.species = tuple(s.index for s in view.species)
        self.seats = tuple(o for o in range(view.players) if o != view.seat)
        pool_sum = [0.0] * 10
        pool_sq = [0.0] * 10
        for c in unseen:
            v, s = ID_VALUE[c], ID_SPECIES[c]
            pool_sum[s] += v
            pool_sq[s] += v * v
        self.holder: dict[int, int] = {}
        """Card id of a 1 or an 8 -> the opponent known to hold it."""
        self.draw_share: dict[int, float] = {}
        """Opponent -> the share of the unseen cards that are in its hand."""
        self.mean: dict[int, list[float]] = {}
        self.var: dict[int, list[float]] = {}
        for o in self.seats:
            known = [c.id for c in view.known_cards[o]]
            k = max(0, view.hand_sizes[o] - len(known))
            self.draw_share[o] = k / n if n else 0.0
            mean = [0.0] * 10
            var = [0.0] * 10
            for c in known:
                mean[ID_SPECIES[c]] += ID_VALUE[c]
                if ID_VALUE[c] in (1, 8):
                    self.holder[c] = o
            if n and k:
                fpc = (n - k) / (n - 1) if n > 1 else 0.0
                for s in self.species:
                    mu = pool_sum[s] / n
                    mean[s] += k * mu
                    var[s] = k * fpc * max(0.0, pool_sq[s] / n - mu * mu)
            self.mean[o] = mean
            self.var[o] = var

    def holds(self, card: int, seat: int) -> float:
        """The chance that opponent ``seat`` holds ``card``."""
        if card in self.unseen_ids:
            return self.draw_share[seat]
        return 1.0 if self.holder.get(card) == seat else 0.0


def right_chances(hand: Iterable[int], model: OpponentModel) -> list[float]:
    """Per species index, the chance that ``hand`` (card ids) holds the right to score against the
    opponents of ``model`` (ties keep the right)."""
    return _chances(hand, model, None)


def opponent_chances(hand: Iterable[int], model: OpponentModel, seat: int) -> list[float]:
    """Per species index, the chance that opponent ``seat`` holds the right to score against
    ``hand`` (ties keep it; the other opponents are left out)."""
    return _chances(hand, model, seat)


def _chances(hand: Iterable[int], model: OpponentModel, against: int | None) -> list[float]:
    """:func:`right_chances` (``against`` is None) or :func:`opponent_chances`, with the 8/1 rule
    in expectation: an 8 held without its 1 loses its value by the chance that an opponent holds
    that 1; an opponent's 8 counts nothing against a hand holding the 1."""
    totals = [0.0] * 10
    held = set(hand)
    for c in held:
        totals[ID_SPECIES[c]] += ID_VALUE[c]
    out = [1.0] * 10
    seats = model.seats if against is None else (against,)
    for s in model.species:
        one, eight = card_id(s, 1), card_id(s, 8)
        total = totals[s]
        if eight in held and one not in held:
            total -= 8 * sum(model.holds(one, o) for o in model.seats)
        chance = 1.0
        for o in seats:
            mu = model.mean[o][s]
            if one in held:
                mu -= 8 * model.holds(eight, o)
            var = model.var[o][s]
            if against is None:  # P(O <= total)
                if var <= 1e-9:
                    chance *= 1.0 if mu <= total + 1e-9 else 0.0
                else:
                    chance *= normal_cdf((total + 0.5 - mu) / math.sqrt(var))
            elif var <= 1e-9:  # P(O >= total)
                chance = 1.0 if mu >= total - 1e-9 else 0.0
            else:
                chance = 1.0 - normal_cdf((total - 0.5 - mu) / math.sqrt(var))
        out[s] = chance
    return out
