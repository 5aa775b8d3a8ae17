"""The statistics of ``arena sprt``: a sequential probability ratio test on pairs of games. Pure
(no I/O), so the local runner, the league's jobs and the web page share it.

**The model.** A *pair* is two games on the same deal with the seats swapped. NEW scores 1 for a
game it wins, 1/2 for a shared first place and 0 for a loss, so a pair scores 0, 1/2, 1, 3/2 or 2
points: the five outcomes of the *pentanomial* model (LL, LD, LW or DD, DW, WW). Pairs are
independent of each other; the two games of a pair are not (they share the luck of the deal),
which is why the pair and not the game is the unit: a model of independent games (trinomial)
would overstate the variance and make the test slower than it needs to be.

**The hypotheses**, in logistic Elo: NEW's expected score per game is ``s = 1 / (1 + 10^(-elo /
400))``; H0 is ``elo = elo0``, H1 is ``elo = elo1``. This is the Elo of the league's leaderboard
and of the planted strengths in the benchmarks.

**The log-likelihood ratio** is the generalized SPRT (GSPRT) of the pentanomial model, the one
fishtest introduced for pairs: the distribution of the five outcomes is an unknown nuisance; under
each hypothesis it is replaced by its maximum-likelihood estimate among the distributions whose
mean score is ``s0`` (``s1``). With ``a_i`` the pair's mean score per game (0, 1/4, 1/2, 3/4, 1) and
``p̂_i`` the observed frequencies, that estimate is ``p_i = p̂_i / (1 + x (a_i - s))`` where ``x``
is the root of ``Σ p̂_i (a_i - s) / (1 + x (a_i - s)) = 0`` (a Lagrange multiplier; the function is
decreasing, so the root is unique and found by safeguarded Newton steps). Then::

    LLR = Σ n_i log(p1_i / p0_i) = Σ n_i [log(1 + x0 (a_i - s0)) - log(1 + x1 (a_i - s1))]

An outcome not seen yet counts as 0.001 pairs (the regularisation fishtest uses), so that both
estimates exist from the first pair on.

**The bounds** are Wald's: accept H1 when ``LLR >= log((1 - beta) / alpha)``, accept H0 when
``LLR <= log(beta / (1 - alpha))``; with alpha = beta = 0.05 both are ±2.944. A test that reaches
its cap of pairs first ends without a verdict.

**Why logistic Elo and not fishtest's normalized Elo.** Fishtest moved its bounds to normalized Elo
(the mean score's distance from 1/2 in units of its standard deviation) because in chess the draw
rate, and so the variance of a game, changes a lot with the time control, and normalized bounds
keep the cost of a test independent of it. Arboretum has almost no draws and its variance is set
by the deal, not by a time control, so that reason does not apply here; logistic Elo keeps the
test on the scale every other number in the arena uses (``--elo1 5`` means 5 points on the
leaderboard), and the GSPRT with the pentanomial model keeps what makes fishtest's test efficient:
the correlation within a pair is estimated, not assumed away.

**The Elo estimate** shown with the test is the pairs' mean score per game, with a 95% interval
from the pairs' variance (normal approximation), on the logistic Elo scale. After a sequential
stop that estimate is biased away from zero (a test stops early when its luck ran one way); the
verdict is what the test answers, the estimate only describes the pairs played.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "OUTCOMES",
    "PAIR_VALUES",
    "REGULARISATION",
    "EloEstimate",
    "SprtError",
    "SprtSettings",
    "SprtState",
    "Verdict",
    "constrained_mle",
    "elo_estimate",
    "elo_of_score",
    "game_score",
    "llr",
    "pair_outcome",
    "score_of_elo",
    "wald_bounds",
]

PAIR_VALUES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""NEW's mean score per game in a pair, for each pentanomial outcome (index = half-points)."""
OUTCOMES = len(PAIR_VALUES)
REGULARISATION = 1e-3
"""The count given to an outcome not observed yet (as fishtest does)."""
Z95 = 1.959963984540054
_ROOT_TOLERANCE = 1e-15
_MAX_STEPS = 200


class SprtError(ValueError):
    """Invalid test settings (the message names the setting)."""


class Verdict(StrEnum):
    H0 = "H0"
    """NEW is not ``elo1`` stronger: the LLR reached the lower bound."""
    H1 = "H1"
    """NEW is ``elo1`` stronger, not ``elo0``: the LLR reached the upper bound."""
    INCONCLUSIVE = "inconclusive"
    """The cap of pairs was reached between the bounds."""


def score_of_elo(elo: float) -> float:
    """Expected score per game of a player ``elo`` points stronger (logistic Elo)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference with this expected score per game (±inf at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def wald_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper): accept H0 at or below ``lower``, H1 at or above ``upper``."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


@dataclass(frozen=True)
class SprtSettings:
    """What a test asks: H0 ``elo = elo0`` against H1 ``elo = elo1``, with error rates ``alpha``
    (accepting H1 when H0 holds) and ``beta`` (accepting H0 when H1 holds); at most ``max_pairs``
    pairs (None: no cap)."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    max_pairs: int | None = None

    def __post_init__(self) -> None:
        for name in ("elo0", "elo1", "alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise SprtError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise SprtError(f"{name} must be a finite number, got {value!r}")
        if self.elo0 >= self.elo1:
            raise SprtError(
                f"elo0 must be below elo1 (H0: elo = elo0 against H1: elo = elo1), "
                f"got elo0 {self.elo0:g} and elo1 {self.elo1:g}"
            )
        for name in ("elo0", "elo1"):
            if abs(getattr(self, name)) > 1000:
                raise SprtError(f"{name} must be between -1000 and 1000 Elo")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise SprtError(f"{name} must be between 0 and 0.5 (exclusive), got {value:g}")
        if self.max_pairs is not None and (
            isinstance(self.max_pairs, bool)
            or not isinstance(self.max_pairs, int)
            or self.max_pairs < 1
        ):
            raise SprtError(
                f"max_pairs must be a whole number of at least 1, got {self.max_pairs!r}"
            )

    @property
    def bounds(self) -> tuple[float, float]:
        return wald_bounds(self.alpha, self.beta)

    @property
    def scores(self) -> tuple[float, float]:
        """Expected score per game under H0 and H1."""
        return score_of_elo(self.elo0), score_of_elo(self.elo1)


def game_score(rank: int, ranks: Sequence[int]) -> float:
    """A seat's score in a game: 1 for first place alone, 1/2 for a shared first, else 0."""
    if rank != 1:
        return 0.0
    return 1.0 if sum(1 for r in ranks if r == 1) == 1 else 0.5


def pair_outcome(first: float, second: float) -> int:
    """The pentanomial outcome (0 to 4 half-points) of NEW's two game scores."""
    half_points = round(2 * (first + second))
    if not 0 <= half_points < OUTCOMES or not math.isclose(half_points, 2 * (first + second)):
        raise ValueError(f"game scores are 0, 1/2 or 1; got {first} and {second}")
    return half_points


def _regularised(counts: Sequence[float], values: Sequence[float]) -> list[float]:
    if len(counts) != len(values):
        raise ValueError(f"{len(values)} counts expected, got {len(counts)}")
    if any(c < 0 for c in counts):
        raise ValueError(f"counts cannot be negative: {list(counts)}")
    return [float(c) if c > 0 else REGULARISATION for c in counts]


def _secular_root(weights: Sequence[float], offsets: Sequence[float], start: float = 0.0) -> float:
    """The root x of ``f(x) = Σ w_i b_i / (1 + x b_i)``, with every w_i > 0 and
    min b < 0 < max b. f decreases from +inf to -inf on (-1/max b, -1/min b): Newton steps from
    ``start``, kept inside a bracket that shrinks with every evaluation (bisection when a step
    leaves it)."""
    low = -1.0 / max(offsets)
    high = -1.0 / min(offsets)
    x = start if low < start < high else 0.0
    pairs = tuple(zip(weights, offsets, strict=True))
    tolerance = _ROOT_TOLERANCE * sum(weights)
    for _ in range(_MAX_STEPS):
        value = 0.0
        slope = 0.0
        for w, b in pairs:
            q = b / (1.0 + x * b)
            value += w * q
            slope += w * q * q
        if value > 0:
            low = x
        else:
            high = x
        if -tolerance <= value <= tolerance:
            return x
        step = x + value / slope
        x = step if low < step < high else 0.5 * (low + high)
        if high - low <= 1e-15 * max(1.0, abs(x)):
            return x
    return x


def constrained_mle(
    counts: Sequence[float], score: float, values: Sequence[float] = PAIR_VALUES
) -> list[float]:
    """The maximum-likelihood distribution on ``values`` (the pentanomial's by default) whose
    mean is ``score``, given the observed ``counts`` (regularised):
    ``p_i = p̂_i / (1 + x (a_i - score))``."""
    if not min(values) < score < max(values):
        raise ValueError(f"the mean {score} is not strictly inside the values' range")
    weights = _regularised(counts, values)
    total = sum(weights)
    freqs = [w / total for w in weights]
    offsets = [a - score for a in values]
    x = _secular_root(freqs, offsets)
    return [p / (1.0 + x * b) for p, b in zip(freqs, offsets, strict=True)]


def llr(
    counts: Sequence[float], elo0: float, elo1: float, values: Sequence[float] = PAIR_VALUES
) -> float:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial
    ``counts`` (pairs per outcome, LL first): ``Σ n_i log(p1_i / p0_i)`` over regularised counts.
    ``values`` are the outcomes' mean scores per game (other models: tests, benchmarks)."""
    offsets = [tuple(a - score_of_elo(elo) for a in values) for elo in (elo0, elo1)]
    return _llr(counts, values, offsets[0], offsets[1])[0]


def _llr(
    counts: Sequence[float],
    values: Sequence[float],
    offsets0: Sequence[float],
    offsets1: Sequence[float],
    start0: float = 0.0,
    start1: float = 0.0,
) -> tuple[float, float, float]:
    """(LLR, x0, x1), the roots found from the given starts (a test passes its last ones)."""
    weights = _regularised(counts, values)
    total = sum(weights)
    freqs = [w / total for w in weights]
    x0 = _secular_root(freqs, offsets0, start0)
    x1 = _secular_root(freqs, offsets1, start1)
    out = 0.0
    for n, u, v in zip(weights, offsets0, offsets1, strict=True):
        out += n * (math.log1p(x0 * u) - math.log1p(x1 * v))
    return out, x0, x1


@dataclass(frozen=True)
class EloEstimate:
    """The pairs' mean score per game as Elo, with a 95% interval (normal approximation)."""

    pairs: int
    score: float
    elo: float
    low: float
    high: float

    def format(self) -> str:
        if self.pairs == 0:
            return "Elo -"
        if self.score >= 1.0:
            return "Elo +inf (every game won)"
        if self.score <= 0.0:
            return "Elo -inf (every game lost)"
        half = (self.high - self.low) / 2
        if math.isfinite(half):
            return f"Elo {_signed(self.elo)} ± {half:.1f}"
        return f"Elo {_signed(self.elo)} [{_signed(self.low)}, {_signed(self.high)}]"


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    return f"{value + 0.0:+.1f}"  # no "-0.0"


def elo_estimate(counts: Sequence[int]) -> EloEstimate:
    """Mean score per game over the pairs and its 95% interval, as logistic Elo."""
    pairs = int(sum(counts))
    if pairs == 0:
        return EloEstimate(0, math.nan, math.nan, -math.inf, math.inf)
    mean = sum(n * a for n, a in zip(counts, PAIR_VALUES, strict=True)) / pairs
    var = sum(n * (a - mean) ** 2 for n, a in zip(counts, PAIR_VALUES, strict=True)) / pairs
    half = Z95 * math.sqrt(var / pairs)
    return EloEstimate(
        pairs, mean, elo_of_score(mean), elo_of_score(mean - half), elo_of_score(mean + half)
    )


@dataclass
class SprtState:
    """A test in progress: feed it pairs with :meth:`add`; :attr:`verdict` is set when the LLR
    reaches a bound or the pairs reach the cap, and from then on :meth:`add` refuses."""

    settings: SprtSettings
    counts: list[int] = field(default_factory=lambda: [0] * OUTCOMES)
    wins: int = 0
    draws: int = 0
    losses: int = 0
    llr: float = 0.0
    verdict: Verdict | None = None
    _roots: tuple[float, float] = (0.0, 0.0)

    def __post_init__(self) -> None:
        s0, s1 = self.settings.scores
        self._offsets = (
            tuple(a - s0 for a in PAIR_VALUES),
            tuple(a - s1 for a in PAIR_VALUES),
        )

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def add(self, first: float, second: float) -> Verdict | None:
        """Count one pair from NEW's two game scores (1, 1/2 or 0 each); return the verdict if
        the test ends here."""
        if self.verdict is not None:
            raise ValueError(f"the test has ended ({self.verdict.value})")
        self.counts[pair_outcome(first, second)] += 1
        for score in (first, second):
            if score == 1.0:
                self.wins += 1
            elif score == 0.5:
                self.draws += 1
            else:
                self.losses += 1
        # The same computation as llr(), started from the last pair's roots (they move little).
        self.llr, *roots = _llr(self.counts, PAIR_VALUES, *self._offsets, *self._roots)
        self._roots = (roots[0], roots[1])
        lower, upper = self.settings.bounds
        if self.llr >= upper:
            self.verdict = Verdict.H1
        elif self.llr <= lower:
            self.verdict = Verdict.H0
        elif self.settings.max_pairs is not None and self.pairs >= self.settings.max_pairs:
            self.verdict = Verdict.INCONCLUSIVE
        return self.verdict

    def add_all(self, pairs: Iterable[tuple[float, float]]) -> Verdict | None:
        """Add pairs until the test ends; the pairs after the end are not counted."""
        for first, second in pairs:
            if self.add(first, second) is not None:
                break
        return self.verdict

    def estimate(self) -> EloEstimate:
        return elo_estimate(self.counts)

    def line(self) -> str:
        """The progress line: LLR and bounds, pairs, W/D/L, the Elo estimate."""
        lower, upper = self.settings.bounds
        return (
            f"LLR {self.llr:+.2f} ({lower:+.2f}, {upper:+.2f})  "
            f"{self.pairs} pair{'' if self.pairs == 1 else 's'}  "
            f"W {self.wins} D {self.draws} L {self.losses}  {self.estimate().format()}"
        )

    def conclusion(self, new: str, old: str) -> str:
        """One sentence: what the test found (or that it has not ended)."""
        s = self.settings
        hypotheses = f"H0: elo = {s.elo0:g}, H1: elo = {s.elo1:g}"
        after = f"after {self.pairs} pair{'' if self.pairs == 1 else 's'} ({self.games} games)"
        if self.verdict is Verdict.H1:
            return (
                f"H1 accepted: {new} is stronger than {old} ({hypotheses}, alpha {s.alpha:g}) "
                f"{after}"
            )
        if self.verdict is Verdict.H0:
            return (
                f"H0 accepted: {new} is not {s.elo1:g} Elo stronger than {old} ({hypotheses}, "
                f"beta {s.beta:g}) {after}"
            )
        if self.verdict is Verdict.INCONCLUSIVE:
            return f"no verdict: the cap of {s.max_pairs} pairs was reached between the bounds"
        return f"no verdict yet {after}"

    def to_json(self) -> dict[str, object]:
        est = self.estimate()
        lower, upper = self.settings.bounds
        return {
            "elo0": self.settings.elo0,
            "elo1": self.settings.elo1,
            "alpha": self.settings.alpha,
            "beta": self.settings.beta,
            "max_pairs": self.settings.max_pairs,
            "lower_bound": lower,
            "upper_bound": upper,
            "llr": self.llr,
            "verdict": self.verdict.value if self.verdict else None,
            "pairs": self.pairs,
            "pentanomial": list(self.counts),
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "elo": _finite(est.elo),
            "elo_low": _finite(est.low),
            "elo_high": _finite(est.high),
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None
