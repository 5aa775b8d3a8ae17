"""The collusion audit (``arena league audit``) on results stored through the real rating path in
a real Redis: a planted pair is flagged, honest results are not, leaving a pair out changes the
fit and is recorded and shown, and bad input gets one clear line."""

from __future__ import annotations

import numpy as np
import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import ratings, registry, store
from arboretum_worker.audit import exclusions
from arboretum_worker.audit.stats import audit, without_pairs
from arboretum_worker.cliargs import redis_address
from arboretum_worker.fit import FitError, fit_from_games, games_of

BOTS = ("ash", "beech", "cedar", "dogwood", "elm", "fir")
GAP = 120.0
"""Elo between neighbours: ash is the weakest, fir the strongest."""


def _arena(url: str, *args: str) -> int:
    return main([*args, "--redis-url", url])


@pytest.fixture
def versions(r: redis.Redis) -> dict[str, str]:
    return {
        name: registry.add_version(
            r, name, f"from arboretum_sdk.bots.random_bot import RandomBot  # {name}\n".encode()
        )
        for name in BOTS
    }


def _league(
    r: redis.Redis,
    url: str,
    versions: dict[str, str],
    name: str,
    *,
    seed: int,
    thrower: tuple[str, str] | None = None,
) -> list[store.MatchResult]:
    """A round robin of 2-player matches of 10 games, outcomes drawn from the planted strengths
    (``thrower``: the first always loses to the second), recorded by ``record_result``."""
    assert _arena(url, "league", "create", name, "--bots", *BOTS, "--seed", "1") == 0
    rng = np.random.default_rng(seed)
    elo = {b: 1500.0 + GAP * (i - 2.5) for i, b in enumerate(BOTS)}
    results = []
    for rnd in range(6):
        for i, a in enumerate(BOTS):
            for b in BOTS[i + 1 :]:
                p = 1.0 / (1.0 + 10.0 ** ((elo[b] - elo[a]) / 400.0))
                games = []
                for _ in range(10):
                    if thrower is not None and {a, b} == set(thrower):
                        a_wins = a == thrower[1]
                    else:
                        a_wins = bool(rng.random() < p)
                    ranks = (1, 2) if a_wins else (2, 1)
                    games.append(store.GameOutcome(ranks, (0, 0), (0, 0)))
                result = store.MatchResult(
                    f"{name}-{rnd}-{a}-{b}", name, (versions[a], versions[b]), tuple(games)
                )
                ratings.record_result(r, result)
                results.append(result)
    return results


def test_a_planted_pair_is_flagged_with_the_bot_below_its_level(
    r: redis.Redis, redis_url: str, versions: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _league(r, redis_url, versions, "bought", seed=3, thrower=("fir", "ash"))
    capsys.readouterr()
    assert _arena(redis_url, "league", "audit", "bought") == 0
    out = capsys.readouterr().out
    assert "audit of league bought: 900 games, 15 pairs that met" in out
    flagged = out.split("pairs whose results depart from the fit beyond chance:\n")[1]
    first = flagged.splitlines()[0]
    assert first.startswith(f"  fir@{versions['fir'][:8]} vs ash@{versions['ash'][:8]}: ")
    assert (
        f"fir@{versions['fir'][:8]} scored 0 of 60 games, the rest of the league predicts" in first
    )
    below = out.split("bots far below their own level against one opponent:\n")[1]
    assert below.splitlines()[0].startswith(f"  fir@{versions['fir'][:8]} against ash@")


def test_honest_results_give_no_flag(
    r: redis.Redis, redis_url: str, versions: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _league(r, redis_url, versions, "honest", seed=4)
    capsys.readouterr()
    assert _arena(redis_url, "league", "audit", "honest") == 0
    out = capsys.readouterr().out
    assert "no pair departs from the fit beyond chance" in out
    assert "below their own level" not in out


def test_leaving_a_pair_out_changes_the_fit_and_is_recorded_and_shown(
    r: redis.Redis, redis_url: str, versions: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    results = _league(r, redis_url, versions, "bought", seed=3, thrower=("fir", "ash"))
    ash, fir = versions["ash"], versions["fir"]
    lab = {vid: f"{name}@{vid[:8]}" for name, vid in versions.items()}
    pair = " and ".join(lab[v] for v in sorted((ash, fir)))  # sorted by version id
    before = {f.version: f.elo for f in fit_from_games(games_of(results))}
    capsys.readouterr()
    assert (
        _arena(redis_url, "league", "audit", "bought", "--exclude", "fir", "ash", "--by", "kim")
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith(f"league bought: the games of {pair} are left out of the fit (by kim, ")
    # the pair's games are out of the audit: nothing is flagged, the exclusion is listed
    assert "no pair departs from the fit beyond chance" in out
    assert f"left out of the fit:\n  the games of {pair} are left out" in out
    (record,) = exclusions.excluded(r, "bought")
    assert (record.a, record.b, record.by) == (*sorted((ash, fir)), "kim")
    assert r.hexists(store.Keys.league_excluded("bought"), "/".join(sorted((ash, fir))))

    after = {
        f.version: f.elo for f in fit_from_games(games_of(without_pairs_results(results, ash, fir)))
    }
    assert before[ash] - after[ash] > 100  # the bought rating is gone
    assert _arena(redis_url, "ratings", "--league", "bought") == 0
    text = capsys.readouterr().out
    assert "Plackett-Luce fit of the results of 84 matches" in text  # 90 less the pair's 6
    ash_row = next(line for line in text.splitlines() if line.split()[1:2] == [f"ash@{ash[:8]}"])
    assert ash_row.split()[2] == f"{after[ash]:.1f}"
    assert f"note: the games of {pair} are left out of the fit (by kim," in text
    assert _arena(redis_url, "leaderboard", "--league", "bought") == 0
    assert f"note: the games of {pair} are left out" in capsys.readouterr().out

    assert _arena(redis_url, "league", "audit", "bought", "--include", "ash", "fir") == 0
    assert "count in the fit again" in capsys.readouterr().out
    assert exclusions.excluded(r, "bought") == []
    assert _arena(redis_url, "ratings", "--league", "bought") == 0
    assert "Plackett-Luce fit of the results of 90 matches" in capsys.readouterr().out


def without_pairs_results(
    results: list[store.MatchResult], a: str, b: str
) -> list[store.MatchResult]:
    return [res for res in results if set(res.seats) != {a, b}]


def test_bad_input_gets_one_clear_line(
    r: redis.Redis, redis_url: str, versions: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "audit", "nope") == 1
    assert capsys.readouterr().err == (
        f"arena: no league named 'nope' in the Redis at {redis_address(r)} "
        "(arena league list shows them)\n"
    )
    assert _arena(redis_url, "league", "create", "empty", "--bots", *BOTS[:2]) == 0
    capsys.readouterr()
    assert _arena(redis_url, "league", "audit", "empty") == 1
    assert capsys.readouterr().err == "arena: league empty has no results to audit yet\n"
    _league(r, redis_url, versions, "played", seed=5)
    registry.add_version(r, "outsider", b"# never played\n")
    capsys.readouterr()
    for pair, message in (
        (("ash", "outsider"), "arena: 'outsider' has no results in league played\n"),
        (("ash", "ash"), "arena: a pair is two different versions\n"),
        (("ash", "nobody"), "arena: no bot named 'nobody'"),
    ):
        assert _arena(redis_url, "league", "audit", "played", "--exclude", *pair) == 1
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1
    assert exclusions.excluded(r, "played") == []
    # a bot's newer version that did not play: its name means the version that did
    newer = registry.add_version(r, "ash", b"# ash, a version after the league\n")
    assert _arena(redis_url, "league", "audit", "played", "--exclude", "ash", "beech") == 0
    capsys.readouterr()
    [pair] = exclusions.excluded(r, "played")
    assert {pair.a, pair.b} == {versions["ash"], versions["beech"]}
    assert (
        _arena(redis_url, "league", "audit", "played", "--exclude", f"ash@{newer[:8]}", "beech")
        == 1
    )
    assert capsys.readouterr().err.startswith(f"arena: 'ash@{newer[:8]}' has no results")
    with pytest.raises(SystemExit) as exc:
        _arena(redis_url, "league", "audit", "played", "--level", "2")
    assert exc.value.code == 2
    assert "a level is between 0 and 1, not 2" in capsys.readouterr().err


def test_the_audit_is_a_function_of_the_games() -> None:
    with pytest.raises(FitError, match="no results to audit"):
        audit([])
    games = [(("a", "b"), (1, 2))] * 30 + [(("b", "c"), (1, 2)), (("c", "b"), (1, 2))] * 15
    games += [(("c", "d"), (1, 2)), (("d", "b"), (1, 2))] * 10
    first, again = audit(games), audit(list(reversed(games)))
    # a met no one but b: the rest of the league says nothing of its level, so a-b is not tested
    assert first.pairs == 4
    assert sorted((t.a, t.b) for t in first.tests) == [("b", "c"), ("b", "d"), ("c", "d")]
    assert [(t.a, t.b) for t in first.flagged] == [(t.a, t.b) for t in again.flagged]
    for one, other in zip(first.tests, again.tests, strict=True):
        assert (one.a, one.b) == (other.a, other.b)
        assert one.p_value == pytest.approx(other.p_value)
    assert without_pairs(games, [("b", "a")]) == games[30:]
