"""The collusion audit's statistics (pure): pairs whose head-to-head results depart from the fit.

A bot that always loses to a friend lifts the friend's fitted rating: its games against the
friend say the friend is far stronger than the rest of the league says. The audit finds such
pairs by testing, pair by pair, the head-to-head results against what **the rest of the league**
predicts for them.

**Per pair.** For versions a and b that met in n games (any player count: under Plackett-Luce
the chance that a ranks above b in a game is the Bradley-Terry logistic of ``t_a - t_b``,
whoever else sits at the table), a's score S counts 1 for each game where a ranked above b and
1/2 for a tie. The batch fit of every game (:func:`arboretum_worker.fit.fit`) gives the
difference ``d`` and its variance ``v`` (``h' C h``, ``h = e_a - e_b``). The pair's own games are
then taken out of it by one Newton step (exact for 2-player games near the fit's maximum): with
``p = logistic(d)`` and ``r = S - n p`` (the pair's own gradient),

    d_rest = d - r v / (1 - n p (1 - p) v),   v_rest = v / (1 - n p (1 - p) v)

is what the other games say about the difference (and how surely).
The pair's games are then binomial, their chance p' logit-normal around the prediction
(``logistic(d_rest + sqrt(v_rest) x)``, x standard normal: the prediction's own uncertainty),
and the two-sided p-value is twice the smaller exact tail of a's wins under that mixture
(integrated over x by Gauss-Hermite; a tie counts against the tail tested, so that ties make
the test cautious, never bold). Exact tails matter: a pair 900 Elo apart whose weaker side wins 2
games in 70 is well within chance, and a normal approximation says otherwise.

A pair is tested only when both versions also met someone else (otherwise the rest of the league
says nothing about one of them but the prior).

**Many pairs.** The p-values of all the pairs tested are corrected together by
Benjamini-Hochberg (``scipy.stats.false_discovery_control``) at level ``alpha`` (5%). When every
pair is honest, any flag is a false one and Benjamini-Hochberg's false discovery rate is then the
chance of any flag: at most ``alpha`` per audit (``bench/collusion_audit.py`` measures it).

**Step by step.** A pair that colludes also shifts the fit of everything its members played, so
that their honest games can look odd against it. So the audit flags one pair at a time, the most
significant, takes its games out of the fit and tests the others again, until no pair is
significant.

**Far below its own level.** In a flagged pair, the side that scored less than predicted plays
below its level against that opponent by ``(d_pair - d_rest)`` Elo, ``d_pair`` the difference
that the pair's own games show (``logit((S + 1/2) / (n + 1))``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import binom, false_discovery_control

from ..fit import ELO_PER_NATURAL, Fit, FitError, Rankings, fit

__all__ = [
    "ALPHA",
    "Audit",
    "Below",
    "Game",
    "PairTest",
    "audit",
    "pair_key",
    "without_pairs",
]

ALPHA = 0.05
"""The audit's level: the chance that an audit of an honest league flags any pair."""
MAX_FLAGS = 20
"""The audit stops after flagging this many pairs (each costs a fit)."""
_NODES = 24
"""Gauss-Hermite nodes of the prediction's uncertainty."""

Game = tuple[Sequence[str], Sequence[int]]
"""One game: version ids in seat order and their ranks (1 best; equal ranks tie)."""


def pair_key(a: str, b: str) -> tuple[str, str]:
    """The pair's ids, sorted."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class PairTest:
    """The test of one pair's head-to-head results against the rest of the league's fit."""

    a: str
    b: str
    games: int
    score: float
    """a's score against b: 1 a game where a ranked above b, 1/2 a tie."""
    expected: float
    """a's score as the rest of the league predicts it."""
    elo_gap: float
    """a's rating minus b's in the fit without the pair's games (Elo)."""
    shown_gap: float
    """The same difference as the pair's own games show it (Elo)."""
    p_value: float
    adjusted: float
    """Benjamini-Hochberg's adjusted p-value, among the pairs tested with it."""

    @property
    def below(self) -> tuple[str, str, float]:
        """(the side that played below its level, its opponent, by how much in Elo)."""
        if self.score < self.expected:
            return self.a, self.b, self.elo_gap - self.shown_gap
        return self.b, self.a, self.shown_gap - self.elo_gap


@dataclass(frozen=True, slots=True)
class Below:
    """A version that played far below its own level against one opponent."""

    version: str
    opponent: str
    elo: float
    """How far below (Elo)."""
    test: PairTest


@dataclass(frozen=True)
class Audit:
    """An audit's result."""

    games: int
    pairs: int
    """Pairs that met. Those in which a version met no one else are not tested: the rest of the
    league says nothing of its level."""
    alpha: float
    flagged: list[PairTest]
    """Pairs whose results depart from the fit beyond chance, in the order they were found."""
    tests: list[PairTest]
    """Every pair's test in the last round (the flagged pairs as they were flagged)."""

    @property
    def below(self) -> list[Below]:
        """The side of each flagged pair that played below its level, the furthest first."""
        out = [Below(*t.below, test=t) for t in self.flagged]
        return sorted(out, key=lambda b: -b.elo)


def without_pairs(games: Iterable[Game], pairs: Iterable[tuple[str, str]]) -> list[Game]:
    """The games in which no excluded pair sat together."""
    left = {pair_key(a, b) for a, b in pairs}
    if not left:
        return list(games)
    out = []
    for seats, ranks in games:
        if not any(pair_key(a, b) in left for i, a in enumerate(seats) for b in seats[i + 1 :]):
            out.append((seats, ranks))
    return out


def _tally(games: Sequence[Game]) -> dict[tuple[str, str], list[float]]:
    """Per sorted pair: [games together, the first's score against the second]."""
    tally: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0.0])
    for seats, ranks in games:
        for i, a in enumerate(seats):
            for j in range(i + 1, len(seats)):
                b = seats[j]
                won = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                key, score = ((a, b), won) if a <= b else ((b, a), 1.0 - won)
                t = tally[key]
                t[0] += 1
                t[1] += score
    return tally


def _tests(
    fitted: Fit, tally: dict[tuple[str, str], list[float]], pairs: Sequence[tuple[str, str]]
) -> list[PairTest]:
    if not pairs:
        return []
    index = fitted.rankings.index
    ia = np.array([index[a] for a, _ in pairs])
    ib = np.array([index[b] for _, b in pairs])
    n = np.array([tally[p][0] for p in pairs], dtype=float)
    s = np.array([tally[p][1] for p in pairs])
    cov = fitted.covariance
    d = fitted.strengths[ia] - fitted.strengths[ib]
    v = np.clip(cov[ia, ia] + cov[ib, ib] - 2.0 * cov[ia, ib], 1e-12, None)
    p = 1.0 / (1.0 + np.exp(-d))
    own = n * p * (1.0 - p) * v  # the share of the difference's information the pair gave
    keep = np.clip(1.0 - own, 1e-6, None)
    d_rest = d - (s - n * p) * v / keep
    v_rest = v / keep
    # a's wins under the prediction: binomial, its chance logit-normal (d_rest, v_rest),
    # integrated over the chance by Gauss-Hermite; a tie counts against the tail tested
    x, w = np.polynomial.hermite_e.hermegauss(_NODES)
    chance = 1.0 / (1.0 + np.exp(-(d_rest[:, None] + np.sqrt(v_rest)[:, None] * x[None, :])))
    w = w / w.sum()
    p_rest = chance @ w
    games = n[:, None]
    upper = binom.sf(np.floor(s)[:, None] - 1.0, games, chance) @ w  # P(wins >= floor(S))
    lower = binom.cdf(np.ceil(s)[:, None], games, chance) @ w  # P(wins <= ceil(S))
    p_values = np.clip(2.0 * np.minimum(upper, lower), 0.0, 1.0)
    adjusted = false_discovery_control(p_values, method="bh")
    shown = np.log((s + 0.5) / (n - s + 0.5))
    return [
        PairTest(
            a=a,
            b=b,
            games=int(n[k]),
            score=float(s[k]),
            expected=float(n[k] * p_rest[k]),
            elo_gap=float(d_rest[k] * ELO_PER_NATURAL),
            shown_gap=float(shown[k] * ELO_PER_NATURAL),
            p_value=float(p_values[k]),
            adjusted=float(adjusted[k]),
        )
        for k, (a, b) in enumerate(pairs)
    ]


def audit(games: Sequence[Game], *, alpha: float = ALPHA, prior: float = 2.0) -> Audit:
    """Test every pair that met (see the module doc); raises :class:`FitError` without games."""
    if not 0.0 < alpha < 1.0:
        raise FitError("the audit's level is between 0 and 1")
    games = list(games)
    if not games:
        raise FitError("no results to audit")
    tally = _tally(games)
    opponents: dict[str, int] = defaultdict(int)
    for a, b in tally:
        opponents[a] += 1
        opponents[b] += 1
    # a version that met no one else has no level of its own to depart from
    remaining = [(a, b) for a, b in sorted(tally) if opponents[a] > 1 and opponents[b] > 1]
    flagged: list[PairTest] = []
    fitted = fit(Rankings().extend(games), prior=prior)
    tests = _tests(fitted, tally, remaining)
    while tests and len(flagged) < MAX_FLAGS:
        worst = min(tests, key=lambda t: (t.adjusted, t.p_value, t.a, t.b))
        if worst.adjusted >= alpha:
            break
        flagged.append(worst)
        remaining.remove((worst.a, worst.b))
        kept = without_pairs(games, [(t.a, t.b) for t in flagged])
        if not kept:
            tests = []
            break
        rankings = Rankings().extend(kept)
        fitted = fit(rankings, prior=prior)
        tests = _tests(fitted, tally, [p for p in remaining if _both_in(p, rankings)])
    return Audit(len(games), len(tally), alpha, flagged, [*flagged, *tests])


def _both_in(pair: tuple[str, str], rankings: Rankings) -> bool:
    return pair[0] in rankings.index and pair[1] in rankings.index
