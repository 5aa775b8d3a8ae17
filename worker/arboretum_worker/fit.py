"""``arena ratings``: ratings fitted from all results at once (Plackett-Luce; Bradley-Terry for 2).

Unlike a live rating, the fit does not depend on the order of the games. It is a pure function of
the results (:func:`fit_ratings`, :func:`head_to_head`).

The model, ties and prior are :mod:`arboretum_worker.rankings`'s.

**Fit.** The log-posterior is concave; its maximum is found by Newton's method from the exact
gradient and Hessian, which :class:`Rankings` computes with numpy over all games at once (a game's
stages are vectorised by player count). Far from the maximum a step is halved until it raises the
log-posterior (a backtracking line search), and an information singular in floating point
(strengths far out) gets a ridge; the fit stops when the Newton decrement
``lambda^2 = g^T H^-1 g`` (g the gradient, H the negative Hessian) is below ``1e-10``, after
taking that last step. The decrement is the squared length of the remaining step measured in
standard errors (twice the log-posterior still to gain), so the test means the same at any size:
a thousand times the games multiply g and H by a thousand and leave it as it is. The former test,
scipy's ``trust-exact`` with an absolute gradient tolerance (1e-4), failed on large 3- and
4-player leagues (tens of thousands of games): the gradient's size grows with the games, and the
improvement its model predicted fell below the rounding of a log-posterior of that size.

Identical rankings are aggregated first (one row per distinct ordering with its total weight),
and a fit can start from an earlier one (``start``), so a fit re-run after a few new games takes
two or three Newton steps: :meth:`Rankings.add` and :func:`fit` are meant for incremental use (a
ladder, a sequential test).

**No finite answer.** The results alone have a finite maximum only if, for every split of the
versions into two groups, some version of each group ranked above some version of the other
(Hunter 2004): not if a version won every game it played (or lost every one), nor if the league
falls into groups that never met, directly or through others. The prior keeps these ratings
finite; :func:`unbounded` names what the prior decides (``Fit.unbounded``), and ``arena ratings``
says so under its table.

**Scale.** ``Elo_i = anchor + 400 / ln 10 * (t_i - mean t)``: the mean is anchored at 1500.

**Intervals.** 95%: ``Elo_i +- 1.96 * 400 / ln 10 * sd_i``, where ``sd_i^2`` is the variance of
``t_i - mean t`` under the inverse of the observed information (the negative Hessian of the
log-posterior at the maximum). The games of a league are independent rankings, so this is the
usual large-sample interval for every player count (checked in ``bench/rating_fit.py`` and
``tests/league/test_fit.py``).

**Why Newton's method.** The intervals need the Hessian at the maximum anyway, and with it Newton
converges quadratically: 4 to 8 steps from zero, 2 or 3 from an earlier fit. The MM algorithm
(Hunter 2004) and choix's ILSR are robust too but converge linearly, slowly when strengths are
far apart. **Why numpy and scipy, not a rating library.** ``choix`` fits Plackett-Luce rankings
but takes no weights (so no tie rule), no virtual-draw prior and gives no standard errors; its
ranking likelihood loops over the games in Python. ``openskill`` is an online update (the live
rating uses it, :mod:`arboretum_worker.live_rating`), not a maximum-likelihood fit. The model is a
few lines of array code; the linear algebra and the graph components are numpy's and scipy's.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, LinAlgWarning, solve
from scipy.sparse import coo_array
from scipy.sparse.csgraph import connected_components
from threadpoolctl import ThreadpoolController

from arboretum_worker.rankings import FitError, Game, Rankings, orderings
from arboretum_worker.store import MatchResult

__all__ = [
    "ELO_PER_NATURAL",
    "Z95",
    "Fit",
    "FitError",
    "FitRating",
    "Game",
    "HeadToHead",
    "Rankings",
    "Unbounded",
    "fit",
    "fit_from_games",
    "fit_ratings",
    "games_of",
    "head_to_head",
    "orderings",
    "unbounded",
]

ELO_PER_NATURAL = 400.0 / math.log(10.0)
Z95 = 1.959963984540054

DECREMENT_TOLERANCE = 1e-10
"""The fit stops when the Newton decrement (the squared length of the remaining step, measured in
standard errors) is below this."""
PURE_NEWTON = 1e-3
"""Below this decrement a Newton step is taken whole; above it, halved until it raises the
log-posterior (a comparison of log-posteriors that rounding cannot decide this close)."""
MAX_STEPS = 200


@dataclass(frozen=True, slots=True)
class FitRating:
    version: str
    elo: float
    lower: float
    upper: float
    """The 95% interval."""
    stderr: float
    """Standard error, Elo points."""
    games: int


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """Games in which ``a`` and ``b`` both played, and how ``a`` ranked against ``b``."""

    a: str
    b: str
    games: int
    wins: int
    draws: int
    losses: int


def games_of(results: Iterable[MatchResult]) -> list[Game]:
    return [(result.seats, game.ranks) for result in results for game in result.games]


def head_to_head(results: Iterable[MatchResult]) -> dict[tuple[str, str], HeadToHead]:
    """For each ordered pair of versions that met: games together and a's W/D/L against b."""
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for seats, ranks in games_of(results):
        for i, a in enumerate(seats):
            for j, b in enumerate(seats):
                if i != j:
                    t = tally[a, b]
                    t[0] += 1
                    t[1 if ranks[i] < ranks[j] else 2 if ranks[i] == ranks[j] else 3] += 1
    return {k: HeadToHead(k[0], k[1], *v) for k, v in sorted(tally.items())}


@dataclass(frozen=True, slots=True)
class Unbounded:
    """What the results alone leave unbounded, so that the prior decides it (empty: nothing).

    The results bound every rating when the graph "ranked above in some game" (a tie both ways)
    is strongly connected (Hunter 2004). Otherwise they cannot tell how far apart its parts are.
    """

    apart: tuple[tuple[str, ...], ...] = ()
    """The groups of versions that never met, directly or through others (none or 2 or more)."""
    never_below: tuple[tuple[str, ...], ...] = ()
    """Groups whose versions were never ranked below a version outside the group that they met
    (one version: it won, or shared first place in, every game it played)."""
    never_above: tuple[tuple[str, ...], ...] = ()
    """Groups whose versions were never ranked above a version outside the group that they met."""

    def __bool__(self) -> bool:
        return bool(self.apart or self.never_below or self.never_above)


def unbounded(rankings: Rankings) -> Unbounded:
    """Which parts of the results have no finite maximum without the prior (see the module doc):
    the weakly connected parts of the "ranked above" graph when there are several, and in each
    part its strongly connected groups that no other group ranked above (or below)."""
    n = len(rankings.versions)
    above: list[np.ndarray] = []
    below: list[np.ndarray] = []
    for orders, _w in rankings.arrays().values():
        for k in range(orders.shape[1] - 1):  # consecutive places: the rest follows by transitivity
            above.append(orders[:, k])
            below.append(orders[:, k + 1])
    if n < 2 or not above:
        return Unbounded()
    keys = np.concatenate(above) * n + np.concatenate(below)
    if n * n <= 1 << 22:  # each edge once: by counting when the matrix is small, else by sorting
        edges = np.flatnonzero(np.bincount(keys, minlength=n * n))
    else:
        edges = np.unique(keys)
    rows, cols = np.divmod(edges, n)
    graph = coo_array((np.ones(len(rows)), (rows, cols)), shape=(n, n)).tocsr()
    _count, part = connected_components(graph, directed=True, connection="weak")
    count, group = connected_components(graph, directed=True, connection="strong")
    if count == 1:
        return Unbounded()
    between = group[rows] != group[cols]
    beaten = np.zeros(count, dtype=bool)  # some other group ranked above it
    beat = np.zeros(count, dtype=bool)  # it ranked above some other group
    beaten[group[cols[between]]] = True
    beat[group[rows[between]]] = True

    def names(members: np.ndarray) -> tuple[str, ...]:
        return tuple(sorted(rankings.versions[i] for i in members))

    members = [np.flatnonzero(group == g) for g in range(count)]
    parts = [np.flatnonzero(part == q) for q in range(int(part.max()) + 1)]
    return Unbounded(
        apart=tuple(sorted(names(m) for m in parts)) if len(parts) > 1 else (),
        never_below=tuple(
            sorted(names(members[g]) for g in range(count) if beat[g] and not beaten[g])
        ),
        never_above=tuple(
            sorted(names(members[g]) for g in range(count) if beaten[g] and not beat[g])
        ),
    )


@dataclass(frozen=True)
class Fit:
    """A fit's result: strengths (natural units, mean 0), their covariance, and the data."""

    rankings: Rankings
    strengths: np.ndarray
    """``t - mean t`` per version index."""
    covariance: np.ndarray
    """Of the centred strengths ``t - mean t``."""
    maximum: np.ndarray
    """The maximum ``t`` itself (where a later fit of more games starts)."""
    iterations: int
    """Newton steps taken."""
    unbounded: Unbounded = Unbounded()
    """What the results alone leave unbounded and the prior decides (:func:`unbounded`)."""

    def ratings(self, anchor: float = 1500.0) -> list[FitRating]:
        """Every version's rating, best first."""
        out = []
        sd = np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))
        for v, i in self.rankings.index.items():
            elo = anchor + ELO_PER_NATURAL * float(self.strengths[i])
            se = ELO_PER_NATURAL * float(sd[i])
            out.append(
                FitRating(v, elo, elo - Z95 * se, elo + Z95 * se, se, self.rankings.games[i])
            )
        out.sort(key=lambda f: (-f.elo, f.version))
        return out


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def fit(rankings: Rankings, *, prior: float = 2.0, start: Fit | None = None) -> Fit:
    """Maximise the log-posterior of ``rankings``; ``start`` (an earlier fit) warms it up.

    Newton's method, with a backtracking line search while the Newton decrement is above
    :data:`PURE_NEWTON`, until it is below :data:`DECREMENT_TOLERANCE` (see the module doc).
    The linear algebra runs on one BLAS thread: its matrices are small (versions x versions),
    and BLAS threads that wait for busy cores made each solve take a third of a second."""
    with _blas().limit(limits=1, user_api="blas"):
        return _fit(rankings, prior, start)


def _fit(rankings: Rankings, prior: float, start: Fit | None) -> Fit:
    if not (math.isfinite(prior) and prior > 0):
        raise FitError("prior must be positive (it keeps the fit finite)")
    n = len(rankings.versions)
    if n == 0:
        raise FitError("no results yet")
    if n == 1:
        raise FitError(f"a fit rates versions against each other: only {rankings.versions[0]}")
    t = np.zeros(n)
    if start is not None:
        known = min(n, len(start.maximum))
        t[:known] = start.maximum[:known]
    steps = 0
    value, grad, info = rankings.log_posterior(t, prior)
    while True:
        step = _newton_step(info, grad)
        decrement = float(grad @ step)
        if not math.isfinite(decrement):
            raise FitError("the fit did not converge: the posterior is not finite")
        if decrement < DECREMENT_TOLERANCE:
            t = t + step
            steps += 1
            break
        if steps >= MAX_STEPS:
            raise FitError(f"the fit did not converge in {MAX_STEPS} Newton steps")
        # The whole step first: the next step needs the gradient and Hessian there anyway.
        ahead = t + step
        evaluated = rankings.log_posterior(ahead, prior)
        if decrement > PURE_NEWTON and not evaluated[0] >= value + 0.25 * decrement:
            scale = 0.5
            while not rankings.value(t + scale * step, prior) >= value + 0.25 * scale * decrement:
                scale /= 2.0
                if scale < 1e-12:
                    raise FitError("the fit did not converge: no step raises the posterior")
            ahead = t + scale * step
            evaluated = rankings.log_posterior(ahead, prior)
        t = ahead
        value, grad, info = evaluated
        steps += 1
    cov = np.linalg.inv(info)
    centre = np.eye(n) - 1.0 / n  # t - mean t = centre @ t
    return Fit(
        rankings=rankings,
        strengths=t - t.mean(),
        covariance=centre @ cov @ centre,
        maximum=t,
        iterations=steps,
        unbounded=unbounded(rankings),
    )


def _newton_step(info: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The solution of ``info @ step = grad``. Far from the maximum (strengths so far out that
    every probability is 0 or 1) the information can be singular in floating point: then a ridge
    is added, growing until it is not, which makes the step one between Newton's and the
    gradient's (the line search takes it from there)."""
    ridge = 0.0
    size = float(np.abs(np.diag(info)).max()) or 1.0
    for _ in range(20):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", LinAlgWarning)
                return solve(info + ridge * np.eye(len(info)), grad, assume_a="pos")
        except (LinAlgError, LinAlgWarning, ValueError):
            ridge = size * 1e-12 if ridge == 0.0 else ridge * 10.0
    raise FitError("the fit did not converge: the information is singular")


def fit_ratings(
    results: Iterable[MatchResult], *, prior: float = 2.0, anchor: float = 1500.0
) -> list[FitRating]:
    """Plackett-Luce ratings of every version in ``results``, best first (see the module doc)."""
    return fit_from_games(games_of(results), prior=prior, anchor=anchor)


def fit_from_games(
    games: Iterable[Game], *, prior: float = 2.0, anchor: float = 1500.0
) -> list[FitRating]:
    """As :func:`fit_ratings`, from (seats, ranks) pairs; no games give no ratings."""
    if not (math.isfinite(prior) and prior > 0):
        raise FitError("prior must be positive (it keeps the fit finite)")
    rankings = Rankings().extend(games)
    if not rankings.versions:
        return []
    return fit(rankings, prior=prior).ratings(anchor)
