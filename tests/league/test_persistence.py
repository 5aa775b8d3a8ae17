"""A Redis restart with the AOF on loses no finished result (its own redis-server)."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from arboretum_worker import ratings, registry, replays
from arboretum_worker.store import GameOutcome, MatchResult
from redis_server import start_redis_server, stop_redis_server

from .test_ratings import random_results

LEAGUE = "spring"


def _state(r: redis.Redis) -> dict[Any, Any]:
    return {k: r.dump(k) for k in sorted(r.keys("*"))}


def _fill(r: redis.Redis) -> None:
    registry.add_version(r, "alpha", b"print('a')\n")
    for res in random_results(60, seed=5):
        ratings.record_result(r, res)
    replays.save_replay(r, "m5x0", 0, b"{}")


@pytest.mark.parametrize(
    ("appendfsync", "stop"),
    [("always", "kill"), ("everysec", "shutdown")],
)
def test_restart_keeps_every_result(tmp_path: Path, appendfsync: str, stop: str) -> None:
    """``always`` survives a crash (SIGKILL); ``everysec`` (production) survives a clean
    shutdown, and on a crash loses at most the last second of writes."""
    url, proc = start_redis_server(tmp_path, appendonly=True, appendfsync=appendfsync)
    r = redis.Redis.from_url(url)
    try:
        _fill(r)
        before = _state(r)
        live = ratings.ratings(r, LEAGUE)
        r.close()
        if stop == "kill":
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        else:
            stop_redis_server(proc)  # SIGTERM: redis flushes the AOF and exits
    finally:
        stop_redis_server(proc)
    # the AOF is on disk: a directory since Redis 7, one file before
    assert (tmp_path / "appendonlydir").is_dir() or (tmp_path / "appendonly.aof").is_file()

    url2, proc2 = start_redis_server(tmp_path, appendonly=True, appendfsync=appendfsync)
    r2 = redis.Redis.from_url(url2)
    try:
        assert _state(r2) == before
        assert ratings.ratings(r2, LEAGUE) == live
        assert ratings.recompute(ratings.results_in_order(r2, LEAGUE)).keys() == live.keys()
        # the sequence continues after the restart; the old results stay recorded once
        again = random_results(60, seed=5)[0]
        assert ratings.record_result(r2, again) == ratings.Applied(False, 1)
        new = MatchResult("after", LEAGUE, ("v0", "v1"), (GameOutcome((1, 2), (3, 1), (0, 0)),))
        assert ratings.record_result(r2, new).seq == 61
    finally:
        r2.close()
        stop_redis_server(proc2)


def test_everysec_after_a_second_survives_a_crash(tmp_path: Path) -> None:
    url, proc = start_redis_server(tmp_path, appendonly=True, appendfsync="everysec")
    r = redis.Redis.from_url(url)
    try:
        _fill(r)
        before = _state(r)
        r.close()
        time.sleep(1.5)  # everysec: the AOF is fsynced at least once a second
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        stop_redis_server(proc)
    url2, proc2 = start_redis_server(tmp_path, appendonly=True)
    r2 = redis.Redis.from_url(url2)
    try:
        assert _state(r2) == before
    finally:
        r2.close()
        stop_redis_server(proc2)
