"""``arena league create``, ``arena ratings`` and ``arena leaderboard`` against a real Redis,
in-process: what they print, and their clear errors on bad input."""

from __future__ import annotations

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import league, registry


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
