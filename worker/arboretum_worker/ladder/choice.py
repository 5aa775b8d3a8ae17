"""What a ladder plays next: the pairings that teach the most under the current fit (pure).

The belief about the strengths is the batch fit's (:mod:`arboretum_worker.fit`): a mean and a
covariance in natural units (one unit = 400 / ln 10 = 173.7 Elo). A version without games has
the fit's prior: mean 0 and variance ``4 / prior`` (the prior is ``prior`` virtual games at even
odds, information ``prior / 4``), uncorrelated with the others.

**What a unit teaches.** A unit of pairing {a, b} is ``g`` games (its deals, each in both seat
orders). Near the fit, g games of a against b observe ``t_a - t_b`` with the information
``g q``, where ``q = p (1 - p)`` and ``p`` the chance that a wins; ``p`` is taken under the
belief (the logistic of the mean difference over ``sqrt(1 + pi V / 8)``, V the variance of the
difference: the usual probit approximation), so a pairing whose outcome is least certain, close
in strength or little known, has the largest ``q``. Playing it changes the covariance ``C`` by the
rank-one update of a linear observation (a Kalman step), ``C - C h h' C / (h' C h + 1 / (g q))``
with ``h = e_a - e_b``, so version k's variance falls by ``(C h)_k^2 / (h' C h + 1 / (g q))``.
The unit's **gain** is the weighted sum of these falls, ``sum_k w_k (C h)_k^2 / (...)``: the
ladder's aim is standings whose neighbours' intervals do not overlap, so a version counts while
its interval overlaps a neighbour's, in units of its own standard deviation (:func:`weights`):
the gain is then how much the overlaps shrink.

**The choice** (:func:`choose`): first the matches in flight are applied to the covariance as if
played (so a pairing already queued counts for what it will teach); then units are taken one at a
time, each the pairing with the largest gain, applied before the next. **New versions first**: a
pairing with a version that has fewer than ``new_games`` games (played, in flight or chosen)
comes before any other, the more such versions in it the sooner; among them the gain decides
too, so a new version meets the opponents closest to it under the belief. Ties go to the pairing
whose version ids sort first, so the choice is a function of its inputs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..fit import ELO_PER_NATURAL, Z95, Fit

__all__ = ["DEFAULT_PRIOR", "OVERLAP_FLOOR", "Belief", "choose", "gains", "half_width", "weights"]

DEFAULT_PRIOR = 2.0
"""The fit's prior (virtual games), as :func:`arboretum_worker.fit.fit` uses by default."""

Pair = tuple[str, str]


@dataclass
class Belief:
    """Means and covariance of the strengths of ``versions`` (natural units)."""

    versions: list[str]
    mean: np.ndarray
    cov: np.ndarray

    @classmethod
    def of(
        cls, versions: Iterable[str], fitted: Fit | None = None, *, prior: float = DEFAULT_PRIOR
    ) -> Belief:
        """The belief about ``versions``: the fit's for those it rated, the prior for others."""
        names = sorted(set(versions))
        n = len(names)
        mean = np.zeros(n)
        cov = np.eye(n) * (4.0 / prior)
        if fitted is not None:
            index = fitted.rankings.index
            known = [(k, index[v]) for k, v in enumerate(names) if v in index]
            if known:
                mine = np.array([k for k, _ in known])
                theirs = np.array([i for _, i in known])
                mean[mine] = fitted.strengths[theirs]
                cov[np.ix_(mine, mine)] = fitted.covariance[np.ix_(theirs, theirs)]
        return cls(names, mean, cov)

    def observe(self, a: str, b: str, games: int) -> None:
        """Apply ``games`` expected games of a against b to the covariance (the Kalman step)."""
        i, j = self.versions.index(a), self.versions.index(b)
        h = np.zeros(len(self.versions))
        h[i], h[j] = 1.0, -1.0
        ch = self.cov @ h
        v = float(h @ ch)
        q = _information(float(self.mean[i] - self.mean[j]), v)
        if q <= 0.0 or games <= 0:
            return
        self.cov = self.cov - np.outer(ch, ch) / (v + 1.0 / (games * q))


def _information(diff: float | np.ndarray, var: float | np.ndarray) -> float | np.ndarray:
    p = 1.0 / (1.0 + np.exp(-diff / np.sqrt(1.0 + math.pi * var / 8.0)))
    return p * (1.0 - p)


OVERLAP_FLOOR = 0.05
"""The weight of a neighbour pair whose intervals no longer overlap, against 1 for one whose do
(the settled part of the standings still counts a little)."""


def weights(belief: Belief) -> np.ndarray:
    """How much each version's variance counts in a gain: for each neighbour in the belief's
    order whose 95% interval overlaps its own, 1 (else :data:`OVERLAP_FLOOR`), over its standard
    deviation. A fall of the variance by dv shrinks the half-width by about 1.96 dv / (2 sd), so
    the weighted sum of the falls is how much the overlapping intervals shrink."""
    n = len(belief.versions)
    sd = np.sqrt(np.clip(np.diag(belief.cov), 1e-12, None))
    order = np.argsort(-belief.mean, kind="stable")
    w = np.zeros(n)
    for hi, lo in itertools.pairwise(order):
        apart = belief.mean[hi] - belief.mean[lo] > Z95 * (sd[hi] + sd[lo])
        f = OVERLAP_FLOOR if apart else 1.0
        w[hi] += f / sd[hi]
        w[lo] += f / sd[lo]
    return w if n > 1 else np.ones(n)


def gains(belief: Belief, games: int) -> np.ndarray:
    """The gain of a unit of ``games`` games of every ordered pair (i, j), as an n x n matrix
    (the diagonal is 0): how much the weighted sum of all variances falls (:func:`weights`)."""
    c = belief.cov
    d = np.diag(c)
    var = d[:, None] + d[None, :] - 2.0 * c
    g = c @ (weights(belief)[:, None] * c)
    gd = np.diag(g)
    spread = gd[:, None] + gd[None, :] - 2.0 * g  # |C h|^2
    diff = belief.mean[:, None] - belief.mean[None, :]
    q = _information(diff, np.clip(var, 0.0, None))
    with np.errstate(divide="ignore"):
        noise = np.where(q > 0, 1.0 / (games * np.maximum(q, 1e-300)), np.inf)
    out = spread / (var + noise)
    np.fill_diagonal(out, 0.0)
    return np.asarray(np.clip(out, 0.0, None))


def half_width(variance: float) -> float:
    """The half-width (Elo) of the 95% interval of a strength of this variance."""
    return Z95 * ELO_PER_NATURAL * math.sqrt(max(variance, 0.0))


def choose(
    belief: Belief,
    active: Sequence[str],
    *,
    count: int,
    unit_games: int,
    in_flight: Iterable[tuple[str, str, int]] = (),
    played: Mapping[str, int] | None = None,
    new_games: int = 0,
) -> list[Pair]:
    """The next ``count`` units to play among the ``active`` versions, best first.

    ``belief`` covers every version of ``active`` and of ``in_flight`` (its covariance is
    changed: pass a copy to keep it); ``in_flight`` are the matches already scheduled, (a, b,
    games); ``played`` the games each version has played; a version with fewer than
    ``new_games`` games (played, in flight or chosen here) is new. Each pair is returned with
    its version ids sorted.
    """
    if count <= 0:
        return []
    names = sorted(set(active))
    if len(names) < 2:
        return []
    games = {v: (played or {}).get(v, 0) for v in belief.versions}
    for a, b, g in in_flight:
        belief.observe(a, b, g)
        games[a] = games.get(a, 0) + g
        games[b] = games.get(b, 0) + g
    rows = np.array([belief.versions.index(v) for v in names])
    upper_i, upper_j = np.triu_indices(len(names), 1)
    chosen: list[Pair] = []
    for _ in range(count):
        gain = gains(belief, unit_games)[np.ix_(rows, rows)][upper_i, upper_j]
        new = np.array([games[v] < new_games for v in names], dtype=int)
        tier = new[upper_i] + new[upper_j]
        # best first: the most new versions, then the largest gain, then the first ids
        k = int(np.lexsort((upper_j, upper_i, -gain, -tier))[0])
        a, b = names[upper_i[k]], names[upper_j[k]]
        chosen.append((a, b))
        belief.observe(a, b, unit_games)
        games[a] += unit_games
        games[b] += unit_games
    return chosen
