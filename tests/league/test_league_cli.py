"""``arena league create``, ``arena ratings`` and ``arena leaderboard`` against a real Redis,
in-process: what they print, and their clear errors on bad input."""

from __future__ import annotations

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import league, ratings, registry, store


def _arena(url: str, *args: str) -> int:
    return main([*args, "--redis-url", url])


@pytest.fixture
def bots(r: redis.Redis) -> list[str]:
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    registry.add_version(r, "third", b"from arboretum_sdk.bots.random_bot import RandomBot\n")
    return ["random", "greedy", "third"]


def test_create_says_when_seat_orders_are_not_balanced(
    redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--bots", *bots, "--players", "3", "--seed", "1"]
    assert _arena(redis_url, "league", "create", "odd", *common, "--games-per-pairing", "3") == 0
    out = capsys.readouterr().out
    assert "note: 3-player seat orders are balanced over blocks of 2 deals; with 3 deals per" in out
    assert _arena(redis_url, "league", "create", "even", *common, "--games-per-pairing", "4") == 0
    assert "note:" not in capsys.readouterr().out


def test_bad_leagues_are_refused_clearly(
    redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "create", "x", "--bots", "random", "--players", "2") == 1
    assert "cannot fill 2 seats" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _arena(redis_url, "league", "create", "x", "--bots", *bots, "--games-per-pairing", "0")
    assert exc.value.code == 2
    assert "--games-per-pairing" in capsys.readouterr().err
    for command in ("ratings", "leaderboard"):
        assert _arena(redis_url, command, "--league", "nope") == 1
        assert "arena: no league named 'nope'" in capsys.readouterr().err
    assert _arena(redis_url, "league", "create", "empty", "--bots", *bots[:2]) == 0
    capsys.readouterr()
    assert _arena(redis_url, "ratings", "--league", "empty") == 0
    assert "league empty: no results yet" in capsys.readouterr().out


def test_leaderboard_leads_with_the_live_rating_and_its_interval(
    r: redis.Redis, redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "create", "lb", "--bots", *bots, "--players", "3") == 0
    vids = [registry.latest(r, b) for b in bots]
    results = [
        store.MatchResult(
            f"m{i}", "lb", tuple(vids), (store.GameOutcome(ranks, (0,) * 3, (0,) * 3),)
        )
        for i, ranks in enumerate([(1, 2, 3), (1, 3, 2), (2, 1, 3), (1, 2, 3)])
    ]
    for result in results:
        ratings.record_result(r, result)
    capsys.readouterr()
    assert _arena(redis_url, "leaderboard", "--league", "lb") == 0
    out = capsys.readouterr().out
    assert "live rating with its 95% interval" in out
    lines = out.splitlines()
    header = lines[1].split()
    assert header[:6] == ["#", "bot", "version", "rating", "±", "95%"]
    rows = [line.split() for line in lines[3:]]
    board = ratings.standings(r, "lb")
    assert [row[1] for row in rows] == ["random", "greedy", "third"]  # random won 3 of 4
    for row, standing in zip(rows, board, strict=True):
        assert row[2] == standing.version[:12]
        assert row[3] == f"{standing.live.mu:.0f}" and row[5] == f"{standing.live.half_width:.0f}"
        assert row[6] == f"{standing.elo:.1f}"
