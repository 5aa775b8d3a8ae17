"""Bradley-Terry fit (arboretum_worker.fit) on simulated results of known strength."""

from __future__ import annotations

import math
import random

import pytest

from arboretum_worker.fit import ELO_PER_NATURAL, fit_from_games, fit_ratings, head_to_head
from arboretum_worker.store import GameOutcome, MatchResult

TRUE = {f"b{i}": 1500.0 + 80.0 * (i - 2.5) for i in range(6)}  # mean 1500


def simulate(n_games: int, players: int, seed: int) -> list[tuple[list[str], list[int]]]:
    """Games whose pairwise outcomes follow the model: a seat's performance is its strength
    plus Gumbel noise (so in a 2-player game P(i beats j) is the logistic of the gap)."""
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


def test_intervals_cover_the_truth_in_most_runs() -> None:
    covered = total = 0
    for run in range(25):
        for f in fit_from_games(simulate(600, 2, seed=100 + run)):
            total += 1
            covered += f.lower <= TRUE[f.version] <= f.upper
    assert covered / total >= 0.85, covered / total  # nominal 95%


def test_a_bot_that_always_wins_stays_finite() -> None:
    games = [(["champ", "x"], [1, 2]), (["y", "champ"], [2, 1]), (["x", "y"], [1, 2])] * 30
    fitted = {f.version: f for f in fit_from_games(games)}
    champ = fitted["champ"]
    assert math.isfinite(champ.elo) and math.isfinite(champ.upper)
    assert champ.elo > fitted["x"].elo > fitted["y"].elo
    assert champ.elo < 3000


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
