"""The league's messages with a count say "1 bot", never "1 bots" (``clitools.plural``)."""

from __future__ import annotations

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import league, registry, schedule


def test_one_bot_cannot_fill_two_seats(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    registry.add_version(r, "random", league.builtin_bot_files("random"))
    args = ["league", "create", "solo", "--bots", "random", "--players", "2"]
    assert main([*args, "--redis-url", redis_url]) == 1
    assert capsys.readouterr().err == "arena: 1 bot cannot fill 2 seats\n"


def test_the_schedule_counts_one_bot_as_one() -> None:
    with pytest.raises(schedule.ScheduleError, match=r"^cannot seat 2 players from 1 bot$"):
        schedule.design(1, 2)
    with pytest.raises(schedule.ScheduleError, match=r"^cannot seat 3 players from 2 bots$"):
        schedule.design(2, 3)
