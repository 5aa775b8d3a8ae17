"""The sequential test's statistics (pure): the GSPRT log-likelihood ratio of the pentanomial
model checked against hand-derived cases, the constrained maximum-likelihood estimate against its
defining conditions, the bounds, the Elo estimate and the test's state machine."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arboretum_worker.sprt.stats import (
    PAIR_VALUES,
    REGULARISATION,
    SprtError,
    SprtSettings,
    SprtState,
    Verdict,
    constrained_mle,
    elo_estimate,
    elo_of_score,
    game_score,
    llr,
    pair_outcome,
    score_of_elo,
    wald_bounds,
)


def test_wald_bounds_are_the_published_ones() -> None:
    # fishtest shows "LLR: ... (-2.94,2.94)" for alpha = beta = 0.05.
    lower, upper = wald_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944, abs=5e-4) and upper == pytest.approx(2.944, abs=5e-4)
    assert wald_bounds(0.05, 0.1) == pytest.approx((math.log(0.1 / 0.95), math.log(0.9 / 0.05)))


def test_logistic_elo_round_trip() -> None:
    assert score_of_elo(0) == 0.5
    assert score_of_elo(400) == pytest.approx(10 / 11)
    for elo in (-350.0, -20.0, 0.0, 5.0, 123.4):
        assert elo_of_score(score_of_elo(elo)) == pytest.approx(elo)
    assert elo_of_score(0.0) == -math.inf and elo_of_score(1.0) == math.inf


def test_two_point_case_is_the_binomial_sprt() -> None:
    """On two values the constrained MLE is fixed by the mean alone, so the GSPRT is Wald's
    binomial SPRT: LLR = w log(s1/s0) + l log((1-s1)/(1-s0))."""
    s0, s1 = score_of_elo(0), score_of_elo(20)
    for wins, losses in ((30, 20), (5, 9), (400, 391)):
        expected = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
        got = llr([losses, wins], 0, 20, values=(0.0, 1.0))
        assert got == pytest.approx(expected, rel=1e-12)
        p = constrained_mle([losses, wins], s1, values=(0.0, 1.0))
        assert p == pytest.approx([1 - s1, s1], rel=1e-12)


def _trinomial_mle(counts: list[float], s: float) -> list[float]:
    """Hand-derived: on values 0, 1/2, 1 with b_i = a_i - s the condition
    Σ p_i b_i / (1 + x b_i) = 0 times Π (1 + x b_j) is the quadratic
    x² (p0 b0 b1 b2 + p1 b0 b1 b2 + p2 b0 b1 b2) + x (p0 b0 (b1 + b2) + p1 b1 (b0 + b2)
    + p2 b2 (b0 + b1)) + Σ p_i b_i = 0, i.e. A x² + B x + C = 0 with A = b0 b1 b2 (its root
    in the allowed interval is the one that keeps every 1 + x b_i positive; at s = 1/2, b1 = 0
    and the equation is linear)."""
    n = sum(counts)
    p = [c / n for c in counts]
    b = [0.0 - s, 0.5 - s, 1.0 - s]
    a_ = b[0] * b[1] * b[2]
    b_ = p[0] * b[0] * (b[1] + b[2]) + p[1] * b[1] * (b[0] + b[2]) + p[2] * b[2] * (b[0] + b[1])
    c_ = sum(pi * bi for pi, bi in zip(p, b, strict=True))
    if a_ == 0:
        roots = [-c_ / b_]
    else:
        disc = math.sqrt(b_ * b_ - 4 * a_ * c_)
        roots = [(-b_ + disc) / (2 * a_), (-b_ - disc) / (2 * a_)]
    (x,) = [x for x in roots if all(1 + x * bi > 0 for bi in b)]
    return [pi / (1 + x * bi) for pi, bi in zip(p, b, strict=True)]


@pytest.mark.parametrize("counts", [[10, 5, 12], [100, 3, 80], [1, 1, 1], [7, 40, 9]])
@pytest.mark.parametrize("elos", [(0, 5), (-10, 10), (0, 50)])
def test_three_point_case_matches_the_hand_derived_quadratic(
    counts: list[float], elos: tuple[float, float]
) -> None:
    values = (0.0, 0.5, 1.0)
    elo0, elo1 = elos
    p0 = _trinomial_mle(counts, score_of_elo(elo0))
    p1 = _trinomial_mle(counts, score_of_elo(elo1))
    assert constrained_mle(counts, score_of_elo(elo1), values) == pytest.approx(p1, rel=1e-9)
    expected = sum(n * math.log(q1 / q0) for n, q0, q1 in zip(counts, p0, p1, strict=True))
    assert llr(counts, elo0, elo1, values) == pytest.approx(expected, rel=1e-9, abs=1e-12)


counts_strategy = st.lists(st.integers(0, 500), min_size=5, max_size=5).filter(lambda c: sum(c) > 0)


@settings(max_examples=200, deadline=None)
@given(counts=counts_strategy, elo=st.floats(-300, 300))
def test_constrained_mle_is_the_maximum_under_its_constraint(counts: list[int], elo: float) -> None:
    """The estimate is a distribution with the asked mean, and no other distribution with that
    mean (moved along the constraint's null directions) has a higher likelihood."""
    s = score_of_elo(elo)
    p = constrained_mle(counts, s)
    assert all(q > 0 for q in p)
    assert sum(p) == pytest.approx(1.0, abs=1e-9)
    assert sum(q * a for q, a in zip(p, PAIR_VALUES, strict=True)) == pytest.approx(s, abs=1e-9)
    weights = [c if c > 0 else REGULARISATION for c in counts]

    def loglik(q: list[float]) -> float:
        return sum(w * math.log(x) for w, x in zip(weights, q, strict=True))

    best = loglik(p)
    rng = random.Random(sum(counts) * 7919 + int(elo * 1000))
    for _ in range(20):
        # a direction d with Σ d = 0 and Σ d a = 0 keeps both constraints
        d = [rng.gauss(0, 1) for _ in range(5)]
        for basis in ([1.0] * 5, [a - 0.5 for a in PAIR_VALUES]):
            # Gram-Schmidt against the two constraint vectors (orthogonal to each other)
            dot = sum(x * y for x, y in zip(d, basis, strict=True))
            norm = sum(y * y for y in basis)
            d = [x - dot / norm * y for x, y in zip(d, basis, strict=True)]
        step = 1e-4 * min(p) / max(abs(x) for x in d)
        for sign in (1, -1):
            q = [x + sign * step * y for x, y in zip(p, d, strict=True)]
            assert loglik(q) <= best + 1e-9


@settings(max_examples=200, deadline=None)
@given(counts=counts_strategy)
def test_llr_is_antisymmetric_and_zero_for_equal_hypotheses(counts: list[int]) -> None:
    assert llr(counts, 0, 5) == pytest.approx(-llr(counts, 5, 0), abs=1e-9)
    assert llr(counts, 3, 3) == pytest.approx(0.0, abs=1e-12)


def test_llr_is_close_to_fishtests_brownian_approximation_for_small_differences() -> None:
    """fishtest's LLR_alt2: N (s1 - s0)(2 mu - s0 - s1) / (2 var), accurate when elo0 and elo1
    are close to the observed score (a published second-order approximation)."""
    for counts in ([10, 60, 120, 70, 12], [200, 900, 2000, 1100, 180], [3, 20, 50, 25, 2]):
        n = sum(counts)
        mu = sum(c * a for c, a in zip(counts, PAIR_VALUES, strict=True)) / n
        var = sum(c * (a - mu) ** 2 for c, a in zip(counts, PAIR_VALUES, strict=True)) / n
        s0, s1 = score_of_elo(0), score_of_elo(5)
        approx = n * (s1 - s0) * (2 * mu - s0 - s1) / var / 2
        assert llr(counts, 0, 5) == pytest.approx(approx, rel=0.02, abs=0.01)


def test_llr_grows_with_evidence_for_h1_and_falls_with_evidence_for_h0() -> None:
    strong = [5, 20, 40, 30, 15]  # clearly above 1/2
    weak = [15, 30, 40, 20, 5]
    assert llr(strong, 0, 5) > 0 > llr(weak, 0, 5)
    assert llr([c * 4 for c in strong], 0, 5) > 3 * llr(strong, 0, 5)


def test_pentanomial_outcome_and_game_score() -> None:
    assert [pair_outcome(a, b) for a, b in ((0, 0), (0.5, 0), (1, 0), (0.5, 0.5), (1, 0.5))] == [
        0,
        1,
        2,
        2,
        3,
    ]
    assert pair_outcome(1, 1) == 4
    with pytest.raises(ValueError):
        pair_outcome(1, 0.3)
    assert game_score(1, (1, 2)) == 1.0
    assert game_score(2, (1, 2)) == 0.0
    assert game_score(1, (1, 1)) == 0.5


def test_elo_estimate_interval() -> None:
    est = elo_estimate([0, 0, 100, 0, 0])  # every pair one win and one loss
    assert est.elo == pytest.approx(0.0) and est.low == pytest.approx(0.0)
    est = elo_estimate([10, 20, 40, 20, 10])
    assert est.elo == pytest.approx(0.0, abs=1e-9) and est.low < 0 < est.high
    assert est.high == pytest.approx(-est.low)
    # mean 0.6: sd of the pair mean sqrt(var / n)
    counts = [0, 0, 40, 0, 10]
    est = elo_estimate(counts)
    assert est.score == pytest.approx(0.6)
    assert est.elo == pytest.approx(elo_of_score(0.6))
    half = 1.959963984540054 * math.sqrt((40 * 0.1**2 + 10 * 0.4**2) / 50 / 50)
    assert est.low == pytest.approx(elo_of_score(0.6 - half))
    assert "Elo +70.4 ±" in est.format()
    assert elo_estimate([0] * 5).format() == "Elo -"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "elo0 must be below elo1"),
        ({"elo0": 10, "elo1": 0}, "elo0 must be below elo1"),
        ({"alpha": 0}, "alpha must be between 0 and 0.5"),
        ({"alpha": 0.5}, "alpha must be between 0 and 0.5"),
        ({"beta": -0.1}, "beta must be between 0 and 0.5"),
        ({"beta": 0.7}, "beta must be between 0 and 0.5"),
        ({"alpha": math.nan}, "alpha must be a finite number"),
        ({"max_pairs": 0}, "max_pairs must be a whole number of at least 1"),
    ],
)
def test_bad_settings_are_refused_naming_the_setting(
    kwargs: dict[str, float], message: str
) -> None:
    with pytest.raises(SprtError, match=message):
        SprtSettings(**kwargs)  # type: ignore[arg-type]


def test_state_stops_at_the_upper_bound_and_refuses_more_pairs() -> None:
    state = SprtState(SprtSettings(elo0=0, elo1=50))
    verdict = None
    pairs = 0
    while verdict is None:
        verdict = state.add(1.0, 1.0 if pairs % 2 else 0.0)  # scores 1.5 per pair on average
        pairs += 1
    assert verdict is Verdict.H1 and state.llr >= state.settings.bounds[1]
    assert state.pairs == pairs and state.wins + state.losses == 2 * pairs
    with pytest.raises(ValueError, match="ended"):
        state.add(1, 1)
    assert "H1 accepted: new is stronger than old" in state.conclusion("new", "old")


def test_state_stops_at_the_lower_bound_or_the_cap() -> None:
    state = SprtState(SprtSettings(elo0=0, elo1=50))
    assert state.add_all([(0.0, 1.0)] * 10_000) is Verdict.H0
    assert state.llr <= state.settings.bounds[0] and state.pairs < 10_000
    capped = SprtState(SprtSettings(elo0=0, elo1=5, max_pairs=7))
    assert capped.add_all([(0.0, 1.0)] * 100) is Verdict.INCONCLUSIVE
    assert capped.pairs == 7 and "cap of 7 pairs" in capped.conclusion("a", "b")


def test_progress_line_has_llr_bounds_pairs_wdl_and_elo() -> None:
    state = SprtState(SprtSettings())
    state.add_all([(1.0, 0.0), (1.0, 1.0), (0.5, 0.0)])
    line = state.line()
    assert line.startswith(f"LLR {state.llr:+.2f} (-2.94, +2.94)")
    assert "3 pairs" in line and "W 3 D 1 L 2" in line and "Elo +" in line
    data = state.to_json()
    assert data["pentanomial"] == [0, 1, 1, 0, 1] and data["verdict"] is None


def test_the_running_state_computes_the_same_llr_as_from_scratch() -> None:
    """The state starts each root search from the last pair's roots; the LLR is the same."""
    rng = random.Random(5)
    state = SprtState(SprtSettings(elo0=-3, elo1=7))
    for _ in range(300):
        state.add(rng.choice((0.0, 0.5, 1.0, 1.0)), rng.choice((0.0, 1.0)))
        assert state.llr == pytest.approx(llr(state.counts, -3, 7), rel=1e-9, abs=1e-12)
        if state.verdict is not None:
            break
