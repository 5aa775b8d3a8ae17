"""The batch fit (arboretum_worker.fit): Plackett-Luce over whole rankings, Bradley-Terry for
2 players, on simulated results of known strength (``planted.py``)."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import redis
from scipy.optimize import minimize

from arboretum_sdk.cli import main
from arboretum_worker import league, ratings, registry
from arboretum_worker.fit import (
    ELO_PER_NATURAL,
    Fit,
    FitError,
    Rankings,
    Unbounded,
    fit,
    fit_from_games,
    fit_ratings,
    head_to_head,
    orderings,
    unbounded,
)
from arboretum_worker.rating_report import prior_note
from arboretum_worker.report import version_label
from arboretum_worker.store import GameOutcome, MatchResult

from .planted import calibration, planted_games, random_games, spread

TRUE = {f"b{i}": 1500.0 + 80.0 * (i - 2.5) for i in range(6)}  # mean 1500


def simulate(n_games: int, players: int, seed: int) -> list[tuple[list[str], list[int]]]:
    """Games whose rankings follow the model: a seat's performance is its strength plus Gumbel
    noise (so in a 2-player game P(i beats j) is the logistic of the gap)."""
    rng = random.Random(seed)
    names = sorted(TRUE)
    games = []
    for _ in range(n_games):
        seats = rng.sample(names, players)
        perf = [TRUE[s] / ELO_PER_NATURAL - math.log(-math.log(rng.random())) for s in seats]
        ranks = [1 + sum(1 for q in perf if q > p) for p in perf]
        games.append((seats, ranks))
    return games


@pytest.mark.parametrize("players", [2, 3, 4])
def test_recovers_the_ordering(players: int) -> None:
    fitted = fit_from_games(simulate(3000, players, seed=players))
    assert [f.version for f in fitted] == sorted(TRUE, key=TRUE.__getitem__, reverse=True)
    assert sum(f.elo for f in fitted) / len(fitted) == pytest.approx(1500.0, abs=1e-6)
    for f in fitted:
        assert f.lower < f.elo < f.upper


def test_intervals_shrink_with_more_games() -> None:
    small = {f.version: f.upper - f.lower for f in fit_from_games(simulate(250, 2, seed=1))}
    large = {f.version: f.upper - f.lower for f in fit_from_games(simulate(4000, 2, seed=1))}
    for v in TRUE:
        assert large[v] < small[v] / 3  # 16x the games: about 1/4 of the width


@pytest.mark.parametrize("players", [2, 3, 4])
def test_intervals_are_calibrated(players: int) -> None:
    """150 leagues of 8 planted versions (60 Elo apart), 600 games each through the league
    schedule: the 95% intervals hold the truth 93-97% of the time and the reported standard
    errors are within 10% of the estimates' real spread. (The former pairwise split of 3- and
    4-player games gave 99.0% and 99.1% here, its errors 1.27 and 1.35 times too large.)"""
    result = calibration(fit_from_games, players, spread(8, 60.0), 600, 150, seed=players)
    assert result.intervals == 1200
    assert 0.93 <= result.coverage <= 0.97, result
    assert 0.9 <= result.se_ratio <= 1.1, result


def _bradley_terry(games: list[tuple[list[str], list[int]]], prior: float) -> dict[str, float]:
    """A plain Bradley-Terry maximum (draws half a win, the virtual-draw prior), by BFGS."""
    names = sorted({v for seats, _ in games for v in seats})
    index = {v: i for i, v in enumerate(names)}

    def loss(t: np.ndarray) -> float:
        total = 0.0
        for (a, b), (ra, rb) in games:
            d = t[index[a]] - t[index[b]]
            s = 1.0 if ra < rb else 0.5 if ra == rb else 0.0
            total += s * math.log1p(math.exp(-d)) + (1 - s) * math.log1p(math.exp(d))
        total += prior / 2 * sum(math.log1p(math.exp(-x)) + math.log1p(math.exp(x)) for x in t)
        return total

    t = minimize(loss, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-9}).x
    return {v: 1500 + ELO_PER_NATURAL * (t[i] - t.mean()) for v, i in index.items()}


def test_two_players_is_bradley_terry_with_draws_as_halves() -> None:
    rng = random.Random(5)
    games = []
    for _ in range(300):
        seats = rng.sample("abcd", 2)
        u = rng.random()
        games.append((seats, [1, 2] if u < 0.5 else [2, 1] if u < 0.85 else [1, 1]))
    plain = _bradley_terry(games, prior=2.0)
    for f in fit_from_games(games):
        assert f.elo == pytest.approx(plain[f.version], abs=1e-3)


def test_ties_break_every_way_with_equal_weight() -> None:
    assert orderings([1, 2, 3]) == [((0, 1, 2), 1.0)]
    assert orderings([2, 1, 3]) == [((1, 0, 2), 1.0)]
    assert sorted(orderings([1, 1, 3])) == [((0, 1, 2), 0.5), ((1, 0, 2), 0.5)]
    three = orderings([1, 1, 1])
    assert len(three) == 6 and {w for _, w in three} == {1 / 6}
    assert sorted(orderings([1, 3, 1, 3])) == [
        ((0, 2, 1, 3), 0.25), ((0, 2, 3, 1), 0.25), ((2, 0, 1, 3), 0.25), ((2, 0, 3, 1), 0.25)
    ]  # fmt: skip
    # A tied first place between a and b: they stay level, both above c.
    fitted = {f.version: f.elo for f in fit_from_games([(["a", "b", "c"], [1, 1, 3])] * 20)}
    assert fitted["a"] == pytest.approx(fitted["b"], abs=1e-9)
    assert fitted["a"] > fitted["c"]
    # A game where all tie moves nobody.
    level = fit_from_games([(["a", "b", "c"], [1, 1, 1])] * 5)
    assert all(f.elo == pytest.approx(1500.0, abs=1e-9) for f in level)


def test_ties_keep_the_fit_calibrated_enough_to_recover_the_order() -> None:
    true = spread(5, 120.0)
    games = planted_games(true, 3, 3000, seed=4, tie=0.2)
    assert sum(1 for _, ranks in games if len(set(ranks)) < 3) > 400
    fitted = fit_from_games(games)
    assert [f.version for f in fitted] == sorted(true, key=true.__getitem__, reverse=True)
    covered = sum(f.lower <= true[f.version] <= f.upper for f in fitted)
    assert covered >= 3  # ties pull the ratings together a little; the order stays


def test_an_incremental_fit_equals_a_fresh_one() -> None:
    games = planted_games(spread(6, 50.0), 4, 1200, seed=9)
    rankings = Rankings().extend(games[:900])
    first = fit(rankings)
    rankings.extend(games[900:])
    again = fit(rankings, start=first)
    fresh = fit(Rankings().extend(games))
    assert again.iterations <= fresh.iterations
    for a, b in zip(again.ratings(), fresh.ratings(), strict=True):
        assert a.version == b.version
        assert a.elo == pytest.approx(b.elo, abs=1e-4)  # both converged (gradient < 1e-8)
        assert a.stderr == pytest.approx(b.stderr, rel=1e-5)


def test_bad_input_is_named() -> None:
    with pytest.raises(FitError, match="no results yet"):
        fit(Rankings())
    with pytest.raises(FitError, match="one seat"):
        Rankings().add(["a", "a"], [1, 2])
    with pytest.raises(FitError, match="2 or more seats"):
        Rankings().add(["a"], [1])
    with pytest.raises(FitError, match="prior"):
        fit_from_games([(["a", "b"], [1, 2])], prior=0)
    with pytest.raises(FitError, match="prior"):
        fit_from_games([(["a", "b"], [1, 2])], prior=math.nan)
    with pytest.raises(FitError, match="weight is a positive number, not -1"):
        Rankings().add(["a", "b"], [1, 2], weight=-1.0)
    with pytest.raises(FitError, match="weight is a positive number, not nan"):
        Rankings().add(["a", "b"], [1, 2], weight=math.nan)
    # Many at once: the same errors, and a bad game adds none of its batch.
    rankings = Rankings().extend([(["a", "b"], [1, 2])])
    with pytest.raises(FitError, match=r"one seat of a game: \('c', 'c'\)"):
        rankings.extend([(["a", "d"], [1, 2]), (("c", "c"), (1, 2))])
    with pytest.raises(FitError, match="2 or more seats"):
        rankings.extend([(["a", "d"], [1, 2]), (["e"], [1])])
    assert rankings.versions == ["a", "b"] and rankings.index == {"a": 0, "b": 1}
    assert rankings.games == [1, 1]


def test_a_fit_of_one_version_is_refused() -> None:
    """A rating says how a version compares with others: one version alone has none (it would
    come out as 1500 +- 0, a rating that looks certain and means nothing)."""
    alone = Rankings(index={"solo": 0}, versions=["solo"], games=[0])
    with pytest.raises(FitError, match=r"^a fit rates versions against each other: only solo$"):
        fit(alone)


def test_a_bot_that_always_wins_stays_finite() -> None:
    games = [(["champ", "x"], [1, 2]), (["y", "champ"], [2, 1]), (["x", "y"], [1, 2])] * 30
    fitted = {f.version: f for f in fit_from_games(games)}
    champ = fitted["champ"]
    assert math.isfinite(champ.elo) and math.isfinite(champ.upper)
    assert champ.elo > fitted["x"].elo > fitted["y"].elo
    assert champ.elo < 3000


def test_what_the_prior_decides_is_named() -> None:
    """Results with no finite maximum: the prior keeps the fit finite, and the fit says which
    versions the results alone leave unbounded."""
    mixed = [(["a", "b"], [1, 2]), (["b", "a"], [1, 2]), (["b", "c"], [1, 2]), (["c", "a"], [1, 2])]
    assert fit(Rankings().extend(mixed * 5)).unbounded == Unbounded()
    # A version that won every game (the others never ranked above it); dud lost every game
    # but one draw, which counts both ways.
    champ = [*mixed, (["champ", "a"], [1, 2]), (["b", "champ", "c"], [2, 1, 2])]
    champ += [(["a", "dud"], [1, 2]), (["dud", "c"], [2, 1]), (["b", "dud"], [1, 1])]
    fitted = fit(Rankings().extend(champ * 10))
    assert fitted.unbounded == Unbounded(
        never_below=(("champ",),), never_above=(("a", "b", "c", "dud"),)
    )
    ratings = {f.version: f for f in fitted.ratings()}
    assert math.isfinite(ratings["champ"].upper) and ratings["champ"].elo < 3000
    # A league in two halves that never met: each half's order is known, the gap between them
    # only from the prior (both halves centred on it).
    halves = [*mixed, (["x", "y"], [1, 2]), (["y", "x"], [1, 2]), (["y", "z"], [1, 2])]
    halves += [(["z", "x"], [1, 2])]
    fitted = fit(Rankings().extend(halves * 10))
    assert fitted.unbounded == Unbounded(apart=(("a", "b", "c"), ("x", "y", "z")))
    ratings = {f.version: f for f in fitted.ratings()}
    assert all(math.isfinite(f.lower) and math.isfinite(f.upper) for f in ratings.values())
    # A group that was never ranked below anyone outside it, and one never above; a version
    # that lost every game.
    layered = [*mixed, (["a", "x", "y"], [1, 2, 3]), (["x", "y"], [1, 2]), (["y", "x"], [1, 2])]
    fitted = fit(Rankings().extend(layered * 10))
    assert fitted.unbounded == Unbounded(never_below=(("a", "b", "c"),), never_above=(("x", "y"),))
    fitted = fit(Rankings().extend([*mixed, (["c", "dud"], [1, 2])] * 10))
    assert fitted.unbounded == Unbounded(never_below=(("a", "b", "c"),), never_above=(("dud",),))


def test_draws_count_half_and_symmetry() -> None:
    fitted = {f.version: f for f in fit_from_games([(["a", "b"], [1, 1])] * 10)}
    assert fitted["a"].elo == pytest.approx(1500.0, abs=1e-9)
    assert fitted["b"].elo == pytest.approx(1500.0, abs=1e-9)
    assert fit_from_games([]) == []


def _result(mid: str, seats: tuple[str, ...], *ranks: tuple[int, ...]) -> MatchResult:
    games = tuple(GameOutcome(r, (0,) * len(r), (0,) * len(r)) for r in ranks)
    return MatchResult(mid, "l", seats, games)


def test_head_to_head_and_fit_from_results() -> None:
    results = [
        _result("m1", ("a", "b", "c"), (1, 2, 2), (3, 1, 2)),
        _result("m2", ("b", "a"), (1, 2)),
    ]
    table = head_to_head(results)
    ab, ba, bc = table["a", "b"], table["b", "a"], table["b", "c"]
    assert (ab.games, ab.wins, ab.draws, ab.losses) == (3, 1, 0, 2)
    assert (ba.games, ba.wins, ba.draws, ba.losses) == (3, 2, 0, 1)
    assert (bc.games, bc.wins, bc.draws, bc.losses) == (2, 1, 1, 0)
    assert ("a", "a") not in table
    fitted = fit_ratings(results)
    assert {f.version: f.games for f in fitted} == {"a": 3, "b": 3, "c": 2}


# ------------------------------------------------------------------ convergence at any size

FORMER = {
    # The ratings (Elo, standard error) the former fit (scipy's trust-exact, gradient below 1e-4)
    # gave for planted_games(spread(5, 80.0), players, 300, seed=players).
    2: {
        "v4": (1670.728116, 30.726344),
        "v3": (1618.128359, 28.996395),
        "v2": (1500.345916, 27.473442),
        "v1": (1393.589585, 28.745544),
        "v0": (1317.208024, 31.297277),
    },
    3: {
        "v4": (1650.060839, 18.664668),
        "v3": (1576.511238, 17.327112),
        "v2": (1509.682799, 17.261339),
        "v1": (1406.084351, 18.037361),
        "v0": (1357.660773, 19.168978),
    },
    4: {
        "v4": (1638.373983, 13.876161),
        "v3": (1576.146834, 13.568393),
        "v2": (1530.887949, 13.461185),
        "v1": (1427.690207, 13.726847),
        "v0": (1326.901027, 15.713396),
    },
}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_fit_gives_what_the_former_fit_gave(players: int) -> None:
    fitted = fit_from_games(planted_games(spread(5, 80.0), players, 300, seed=players))
    assert [f.version for f in fitted] == list(FORMER[players])
    for f in fitted:
        elo, stderr = FORMER[players][f.version]
        assert f.elo == pytest.approx(elo, abs=1e-5)
        assert f.stderr == pytest.approx(stderr, abs=1e-5)
        assert f.upper - f.elo == pytest.approx(1.959963984540054 * stderr, abs=1e-4)


def _decrement(rankings: Rankings, fitted: Fit, prior: float = 2.0) -> float:
    """The Newton decrement at the fit's maximum: the squared length, in standard errors, of the
    step still to take (0 at the exact maximum)."""
    _value, grad, info = rankings.log_posterior(fitted.maximum, prior)
    return float(grad @ np.linalg.solve(info, grad))


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("scale", [1e3, 1e6, 1e10])
def test_the_fit_converges_at_any_scale(players: int, scale: float) -> None:
    """Every game and the prior weighed ``scale`` times over (as if each game had been played
    that often, a thousand to ten billion times): the log-posterior is ``scale`` times the
    original, so the maximum is the same and the covariance ``1 / scale`` of it. The former fit,
    with an absolute gradient tolerance, failed here from a scale of 1,000 (3 and 4 players) or
    10,000 (2 players)."""
    games = planted_games(spread(6, 80.0), players, 600, seed=players)
    base = fit(Rankings().extend(games))
    heavy = Rankings()
    for seats, ranks in games:
        heavy.add(seats, ranks, weight=scale)
    scaled = fit(heavy, prior=2.0 * scale)
    assert np.abs(scaled.strengths - base.strengths).max() < 1e-9
    assert scaled.covariance * scale == pytest.approx(base.covariance, rel=1e-6)
    assert _decrement(heavy, scaled, 2.0 * scale) < 1e-10


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("far", [5.0, 50.0, 1000.0])
def test_a_fit_started_far_away_finds_the_same_maximum(far: float) -> None:
    """From strengths far out (every probability 0 or 1 there, the information singular in
    floating point) the fit reaches the maximum it reaches from zero: a ridge makes the first
    steps, and the line search keeps each one uphill."""
    rankings = Rankings().extend(planted_games(spread(6, 80.0), 3, 600, seed=3))
    base = fit(rankings)
    t = np.array([far, -far] * 3)
    again = fit(rankings, start=Fit(rankings, t, np.zeros((6, 6)), t, 0))
    assert np.abs(again.strengths - base.strengths).max() < 1e-9
    assert again.covariance == pytest.approx(base.covariance, rel=1e-6)


def _league_of_20(
    players: int, games: int, seed: int
) -> list[tuple[tuple[str, ...], tuple[int, ...]]]:
    """Plackett-Luce games of 20 versions of normal strengths (sd 50 Elo), seats at random. On
    these the former fit raised 'the fit did not converge' for 3 players with seed 0, at 50,000
    and at 100,000 games."""
    rng = np.random.default_rng(seed)
    true = {f"b{i:02d}": 1500.0 + x for i, x in enumerate(rng.normal(0.0, 50.0, 20))}
    return random_games(true, players, games, rng)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("players", "games"), [(3, 50_000), (3, 100_000), (4, 20_000), (4, 50_000)]
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_large_leagues_converge(players: int, games: int, seed: int) -> None:
    """20 versions and tens of thousands of 3- and 4-player games: the fit converges (the Newton
    decrement at its maximum is below 1e-10) and is the maximum the former fit found where that
    converged (the exact log-posterior's maximum: the decrement says how far it is)."""
    rankings = Rankings().extend(_league_of_20(players, games, seed))
    fitted = fit(rankings)
    assert fitted.iterations <= 10
    assert _decrement(rankings, fitted) < 1e-10
    assert not fitted.unbounded
    ratings = fitted.ratings()
    assert len(ratings) == 20
    assert sum(f.elo for f in ratings) / 20 == pytest.approx(1500.0, abs=1e-6)
    assert all(0 < f.stderr < 5 for f in ratings)  # thousands of games each: a few Elo


# ------------------------------------------------------------------ what arena ratings says


def test_what_the_prior_decides_in_a_league_of_thousands() -> None:
    """2,100 versions (past the size where the edges are counted in an n x n array): a cycle of
    wins bounds every rating; the same games without the last one leave the first version
    never ranked below anyone and the last never above."""
    names = [f"v{i:04d}" for i in range(2100)]
    chain = [((a, b), (1, 2)) for a, b in itertools.pairwise(names)]
    assert unbounded(Rankings().extend([*chain, ((names[-1], names[0]), (1, 2))])) == Unbounded()
    assert unbounded(Rankings().extend(chain)) == Unbounded(
        never_below=((names[0],),), never_above=((names[-1],),)
    )


def test_arena_ratings_says_what_the_prior_holds(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A league whose champion won every game: ``arena ratings`` notes that the prior holds its
    rating; a league where every rating is bounded by the results has no note."""
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    registry.add_version(r, "third", b"from arboretum_sdk.bots.random_bot import RandomBot\n")
    vids = [registry.latest(r, name) for name in ("random", "greedy", "third")]
    for name, ranks in (("swept", [(1, 2, 3), (1, 3, 2)]), ("even", [(1, 2, 3), (3, 1, 2)])):
        assert main(["league", "create", name, "--bots", "random", "greedy", "third",
                     "--players", "3", "--redis-url", redis_url]) == 0  # fmt: skip
        for i, rank in enumerate(ranks * 3):
            outcome = GameOutcome(rank, (0,) * 3, (0,) * 3)
            ratings.record_result(r, MatchResult(f"{name}{i}", name, tuple(vids), (outcome,)))
    capsys.readouterr()
    assert main(["ratings", "--league", "swept", "--redis-url", redis_url]) == 0
    out = capsys.readouterr().out
    assert "note: only the prior (2 virtual draws of each version against 1500) keeps" in out
    label = version_label(r, vids[0])
    assert f"\n  {label} ranked first (alone or tied) in every game it played\n" in out
    assert out.index("note:") < out.index("head to head")
    assert main(["ratings", "--league", "even", "--redis-url", redis_url]) == 0
    assert "note:" not in capsys.readouterr().out


def test_the_prior_note_names_every_case() -> None:
    assert prior_note(Unbounded(), str) == []
    note = prior_note(
        Unbounded(
            apart=(("a", "b"), ("x", "y")),
            never_below=(("champ",), ("p", "q")),
            never_above=(("dud",), tuple(f"z{i}" for i in range(10))),
        ),
        str.upper,
    )
    assert note == [
        "note: only the prior (2 virtual draws of each version against 1500) keeps these "
        "ratings finite:",
        "  CHAMP ranked first (alone or tied) in every game it played",
        "  P, Q: never ranked below a version outside them",
        "  DUD ranked last (alone or tied) in every game it played",
        "  Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7 and 2 more: never ranked above a version outside them",
        "  2 groups never met, directly or through others: A, B | X, Y (the prior puts each "
        "group's mean near 1500)",
    ]
