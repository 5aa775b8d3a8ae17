"""The games of a rating fit as weighted strict rankings, and their log-posterior (the model of
:mod:`arboretum_worker.fit`, which maximises it).

**Model** (Plackett-Luce). A game of P seats is one ranking. Its first place is chosen among all
seats with probability proportional to ``exp(t_i)``, the second among the others, and so on::

    P(o_1 > o_2 > ... > o_P) = prod over k < P of exp(t_(o_k)) / sum over m >= k of exp(t_(o_m))

The whole ranking counts once: a 3- or 4-player game is not split into pairwise outcomes. For 2
seats this is Bradley-Terry, ``P(i beats j) = 1 / (1 + exp(-(t_i - t_j)))``.

**Ties.** Seats of equal rank are a tied group. The game's log-likelihood is the average of the
log-likelihoods of the rankings that break its ties in every possible way (m! orders for a group of
m); equivalently the game is split into those strict rankings, each with weight 1 / prod(m!). For 2
players a draw is half a win and half a loss, as in Bradley-Terry fits before; a tie of several
seats is half-way between their orders in the same sense. A tied game carries as much weight as any
other game (one unit).

**Prior.** As BayesElo: ``prior`` virtual games (default 2, half won, half lost) of every version
against a virtual opponent fixed at t = 0. It keeps a version that always wins (or always loses)
finite and makes the maximum unique.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit

__all__ = ["FitError", "Game", "Rankings", "orderings"]

Game = tuple[Sequence[str], Sequence[int]]
"""One game: the version ids in seat order and their ranks (1 best; equal ranks tie)."""


_Group = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""One player count's orderings, weights and flat indexes (see Rankings._stage_indexes)."""


class FitError(ValueError):
    """The fit cannot be made (the message says why)."""


def orderings(ranks: Sequence[int]) -> list[tuple[tuple[int, ...], float]]:
    """The strict orders (seat indexes, best first) that break the ties of ``ranks``, each with
    its weight: every way of ordering each tied group, weight 1 / prod(m!) (they sum to 1)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for seat, rank in enumerate(ranks):
        groups[rank].append(seat)
    parts = [groups[rank] for rank in sorted(groups)]
    options = [list(itertools.permutations(part)) for part in parts]
    weight = 1.0 / math.prod(len(o) for o in options)
    return [
        (tuple(seat for part in choice for seat in part), weight)
        for choice in itertools.product(*options)
    ]


@dataclass
class Rankings:
    """The games of a fit as weighted strict rankings over version indexes, aggregated.

    :meth:`add` takes one game at a time (so a store of results can be followed incrementally),
    :meth:`extend` many at once (as arrays per player count); the games wait until the next fit,
    which turns them into arrays per player count (vectorised: a game without ties is its seats
    sorted by rank), breaks the ties of the few that have them (:func:`orderings`) and merges
    identical orderings into one row.
    """

    index: dict[str, int] = field(default_factory=dict)
    versions: list[str] = field(default_factory=list)
    games: list[int] = field(default_factory=list)
    """Games played, per version index."""
    _pending: dict[int, list[tuple[tuple[int, ...], tuple[int, ...], float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _chunks: dict[int, list[tuple[np.ndarray, np.ndarray]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    _arrays: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    _stages: tuple[np.ndarray, list[_Group]] | None = None

    def _id(self, version: str) -> int:
        i = self.index.get(version)
        if i is None:
            i = self.index[version] = len(self.versions)
            self.versions.append(version)
            self.games.append(0)
        return i

    def add(self, seats: Sequence[str], ranks: Sequence[int], weight: float = 1.0) -> None:
        """One game: version ids in seat order and their ranks."""
        p = len(seats)
        if len(ranks) != p or p < 2:
            raise FitError(f"a game has 2 or more seats, each with a rank: {seats!r} {ranks!r}")
        if not (math.isfinite(weight) and weight > 0):
            raise FitError(f"a game's weight is a positive number, not {weight!r}")
        if len(set(seats)) != p:
            raise FitError(f"a version plays one seat of a game: {seats!r}")
        ids = tuple(self._id(v) for v in seats)
        for i in ids:
            self.games[i] += 1
        self._pending[p].append((ids, tuple(ranks), weight))

    def extend(self, games: Iterable[Game]) -> Rankings:
        """Many games, each as :meth:`add` with weight 1, converted to arrays at once (a million
        games in about a second). A bad game adds none of them."""
        listed = games if isinstance(games, list) else list(games)
        if not listed:
            return self
        seats_of = [g[0] for g in listed]
        ranks_of = [g[1] for g in listed]
        sizes = np.fromiter(map(len, seats_of), np.intp, len(listed))
        bad = (sizes < 2) | (sizes != np.fromiter(map(len, ranks_of), np.intp, len(listed)))
        if bad.any():
            seats, ranks = listed[int(bad.argmax())]
            raise FitError(f"a game has 2 or more seats, each with a rank: {seats!r} {ranks!r}")
        known = len(self.versions)
        numbering = _Numbering(self.index)  # numbers new versions in order of appearance
        total = int(sizes.sum())
        flat = itertools.chain.from_iterable(seats_of)
        ids = np.fromiter(map(numbering.__getitem__, flat), np.intp, total)
        ranks = np.fromiter(itertools.chain.from_iterable(ranks_of), np.intp, total)
        first = np.cumsum(sizes) - sizes
        chunks = []
        for p in np.unique(sizes).tolist():
            games_of_p = np.flatnonzero(sizes == p)
            at = first[games_of_p, None] + np.arange(p)
            chunk = ids[at]
            ordered = np.sort(chunk, axis=1)
            twice = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
            if twice.any():
                seats = seats_of[int(games_of_p[twice.argmax()])]
                raise FitError(f"a version plays one seat of a game: {seats!r}")
            chunks.append((p, chunk, ranks[at]))
        self.index.update(numbering)
        self.versions += list(numbering)[known:]
        self.games.extend([0] * (len(self.versions) - len(self.games)))
        played = np.bincount(ids, minlength=len(self.versions)).tolist()
        self.games[:] = [g + c for g, c in zip(self.games, played, strict=True)]
        for p, chunk, rank in chunks:
            self._chunks[p].append((chunk, rank))
        return self

    def arrays(self) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Per player count: (distinct orderings, one row each, best first; their weights)."""
        for p in set(self._pending) | set(self._chunks):
            rows, chunks = self._pending.get(p, []), self._chunks.get(p, [])
            if not rows and not chunks:
                continue
            ids = np.concatenate(
                [np.array([r[0] for r in rows], dtype=np.intp).reshape(-1, p)]
                + [c[0] for c in chunks]
            )
            ranks = np.concatenate(
                [np.array([r[1] for r in rows], dtype=np.intp).reshape(-1, p)]
                + [c[1] for c in chunks]
            )
            weight = np.concatenate(
                [np.array([r[2] for r in rows], dtype=float)] + [np.ones(len(c[0])) for c in chunks]
            )
            strict = (np.sort(ranks, axis=1) == np.arange(1, p + 1)).all(axis=1)
            orders = [np.take_along_axis(ids[strict], np.argsort(ranks[strict], axis=1), axis=1)]
            weights = [weight[strict]]
            tied_orders: list[list[int]] = []
            tied_weights: list[float] = []
            for row, rank, w in zip(ids[~strict], ranks[~strict], weight[~strict], strict=True):
                for order, part in orderings(rank.tolist()):
                    tied_orders.append([int(row[s]) for s in order])
                    tied_weights.append(float(w) * part)
            if tied_orders:
                orders.append(np.array(tied_orders, dtype=np.intp))
                weights.append(np.array(tied_weights, dtype=float))
            if p in self._arrays:
                orders.insert(0, self._arrays[p][0])
                weights.insert(0, self._arrays[p][1])
            unique, inverse = _unique_rows(np.concatenate(orders), len(self.versions))
            summed = np.bincount(inverse, np.concatenate(weights), minlength=len(unique))
            self._arrays[p] = (unique, summed)
            self._stages = None
            rows.clear()
            chunks.clear()
        return dict(sorted(self._arrays.items()))

    def _stage_indexes(self) -> tuple[np.ndarray, list[_Group]]:
        """What the log-posterior needs that does not depend on the strengths, kept between
        calls: the weight of every version's choices (the constant part of the gradient), and
        per player count the orderings (transposed: one row per place, contiguous), their
        weights, the places flattened, and for every pair of places (a, b), a < b, in the order
        (0, 1), (0, 2), ..., (1, 2), ..., the flat index of the pair of versions at them in the
        n x n matrix, flattened."""
        arrays = self.arrays()
        n = len(self.versions)
        if self._stages is None:
            chosen = np.zeros(n)
            groups: list[_Group] = []
            for p, (orders, w) in arrays.items():
                places = np.ascontiguousarray(orders.T)  # (p, rows)
                for k in range(p - 1):
                    chosen += np.bincount(places[k], w, minlength=n)
                a, b = _pairs(p)
                pairs = (places[a] * n + places[b]).ravel()
                groups.append((places, w, places.ravel(), pairs))
            self._stages = (chosen, groups)
        return self._stages

    def log_posterior(self, t: np.ndarray, prior: float) -> tuple[float, np.ndarray, np.ndarray]:
        """The log-posterior at ``t``, its gradient and the negative of its Hessian.

        Stage k of a ranking chooses place k among the places k..P-1 with the softmax of their
        strengths (prob): it adds ``t[chosen] - log sum exp`` to the log-likelihood, ``1 -
        prob`` to the chosen version's gradient and ``-prob`` to the others', and ``w
        (diag(prob) - prob prob^T)`` to the information. The stages are summed per place and
        per pair of places before they go to the versions (one ``bincount`` each), and the
        information's diagonal is minus the sum of its row (a shift of every strength changes
        no ranking's chance). Arrays are (places, rows), so the softmax works on whole rows (no
        BLAS call: it spins when cores are busy).
        """
        n = len(self.versions)
        chosen, groups = self._stage_indexes()
        value = 0.0
        spent = np.zeros(n)
        upper = np.zeros(n * n)
        for places, w, flat_places, flat_pairs in groups:
            p = len(places)
            strength = t[places]
            share = np.zeros(places.shape)
            together = np.zeros((p * (p - 1) // 2, places.shape[1]))
            for k in range(p - 1):
                rest = strength[k:]
                top = rest.max(axis=0)
                e = np.exp(rest - top)
                total = e.sum(axis=0)
                value += float((w * (rest[0] - top - np.log(total))).sum())
                prob = e / total
                wp = prob * w
                share[k:] += wp
                a, b = _pairs(p - k)
                together[len(together) - len(a) :] += wp[a] * prob[b]
            spent += np.bincount(flat_places, share.ravel(), minlength=n)
            upper += np.bincount(flat_pairs, together.ravel(), minlength=n * n)
        grad = chosen - spent
        square = upper.reshape(n, n)
        between = square + square.T
        info = -between
        info[np.diag_indices(n)] += between.sum(axis=1)
        if prior:
            half = prior / 2.0
            s = expit(t)
            value += float(half * (log_expit(t) + log_expit(-t)).sum())
            grad += half - prior * s
            info[np.diag_indices(n)] += prior * s * (1.0 - s)
        return value, grad, info

    def value(self, t: np.ndarray, prior: float) -> float:
        """The log-posterior at ``t`` alone (what a line search compares)."""
        _chosen, groups = self._stage_indexes()
        value = 0.0
        for places, w, _flat_places, _flat_pairs in groups:
            strength = t[places]
            for k in range(len(places) - 1):
                rest = strength[k:]
                top = rest.max(axis=0)
                total = np.exp(rest - top).sum(axis=0)
                value += float((w * (rest[0] - top - np.log(total))).sum())
        if prior:
            value += float(prior / 2.0 * (log_expit(t) + log_expit(-t)).sum())
        return value


class _Numbering(dict[str, int]):
    """Version ids to indexes; an id not seen yet gets the next index."""

    def __missing__(self, version: str) -> int:
        self[version] = i = len(self)
        return i


def _pairs(p: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of places (a, b), a < b, of ``p`` places: (0, 1), (0, 2), ..., (1, 2), ...; the
    pairs of the last q places are the last q (q - 1) / 2."""
    a, b = np.triu_indices(p, 1)
    return a, b


def _unique_rows(rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows (sorted) and each row's index among them. Rows of indexes below ``n``
    are packed into one int64 key each when they fit (much faster than a row-wise unique)."""
    p = rows.shape[1]
    if n**p < 2**62:
        keys = rows @ (n ** np.arange(p - 1, -1, -1, dtype=np.int64))
        _keys, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return rows[first], inverse.ravel()
    unique, inverse = np.unique(rows, axis=0, return_inverse=True)
    return unique, inverse.ravel()
