"""A ladder end to end: real redis-server, real `arena worker` processes (rq) running the
matches and the scheduler's ticks, sandboxed bots. A new version submitted while it runs enters
and gets games, the old one stops being scheduled, schedulers racing (ticks on the workers and
in this process at once) schedule no match twice, and pause, resume and close work."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from arboretum_worker import ratings, registry, store
from arboretum_worker.ladder import state
from arboretum_worker.ladder.scheduler import enqueue_tick, in_flight, tick
from arboretum_worker.league import builtin_bot_files
from arboretum_worker.settings import WorkerSettings

from .conftest import Arena
from .test_league import CLOCK, submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

DEPTH = 4


def _wait(arena: Arena, what: str, check: object, timeout: float = 150) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n" + arena.worker_logs())
        time.sleep(0.2)


def _finished(arena: Arena, version: str | None = None) -> int:
    """Finished matches of the ladder (in which ``version`` sits, if given)."""
    r = arena.r
    key = store.Keys.league_status("lad", store.MatchStatus.FINISHED)
    if version is None:
        return int(r.zcard(key))
    ids = [store.as_text(m) for m in r.zrange(key, 0, -1)]
    return sum(version in m.seats for m in store.get_matches(r, ids) if m is not None)


def test_a_ladder_runs_takes_new_versions_and_pauses_resumes_and_closes(
    arena: Arena, tmp_path: Path
) -> None:
    r = arena.r
    old = submit_builtin(arena, "random")
    submit_builtin(arena, "greedy")
    copy = tmp_path / "copy.py"
    copy.write_bytes(builtin_bot_files("greedy") + b"\n# another greedy\n")
    arena.run("bot", "submit", str(copy), "--name", "twin")
    arena.start_worker()
    arena.start_worker()
    arena.wait_workers(2)
    out = arena.run(
        "league", "create", "lad", "--ladder", "--bots", "random", "greedy", "twin",
        "--deals-per-series", "2", "--depth", str(DEPTH), "--new-games", "8", "--seed", "3",
        *CLOCK,
    ).stdout  # fmt: skip
    assert "ladder lad: 3 bots" in out and "4 matches in flight" in out, out

    # It runs: never more than the depth plus one unit in flight, and results come in.
    peak = 0

    def played(n: int) -> bool:
        nonlocal peak
        peak = max(peak, len(in_flight(r, "lad")))
        return _finished(arena) >= n

    _wait(arena, "6 finished matches", lambda: played(6))
    assert peak <= DEPTH + 1

    # A new version of random, submitted while it runs, enters by itself.
    newer_file = tmp_path / "random2.py"
    newer_file.write_bytes(builtin_bot_files("random") + b"\n# version 2\n")
    submitted = arena.run("bot", "submit", str(newer_file), "--name", "random").stdout
    assert "it enters ladder lad" in submitted, submitted
    newer = registry.latest(r, "random")
    assert newer != old
    _wait(arena, "the new version's entry", lambda: state.members(r, "lad")["random"] == newer)
    _wait(arena, "games of the new version", lambda: _finished(arena, newer) >= 2)
    joined = state.entries(r, "lad")[newer].joined
    assert state.entries(r, "lad")[old].retired is not None
    later = [
        m for m in store.get_matches(r, store.league_matches(r, "lad")) if m and m.created > joined
    ]
    assert later and all(old not in m.seats for m in later)
    assert any(newer in m.seats for m in later)
    # the old version's results stay
    standing = {row.version: row for row in ratings.standings(r, "lad")}
    assert standing[old].stats.games > 0 and standing[newer].stats.games > 0

    # Schedulers at once: ticks enqueued on the workers and ticks in this process, racing.
    settings = WorkerSettings(redis_url=arena.url)
    for _ in range(3):
        r.delete(store.Keys.ladder("lad", "queued"))
        enqueue_tick(r, "lad", settings)
    threads = [threading.Thread(target=tick, args=(arena.r, "lad", settings)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(in_flight(r, "lad")) <= DEPTH + 1

    status = arena.run("league", "status", "lad").stdout
    assert "league lad (running)" in status and "retired" in status and "scheduled" in status

    # Pause: what is queued is played, nothing new is scheduled.
    arena.run("league", "pause", "lad")
    again = arena.run("league", "pause", "lad", check=False)
    assert again.returncode == 1 and "paused already" in again.stderr
    _wait(arena, "the paused ladder to drain", lambda: not in_flight(r, "lad"))
    total = len(store.league_matches(r, "lad"))
    time.sleep(3)
    assert len(store.league_matches(r, "lad")) == total and not in_flight(r, "lad")
    assert "league lad (paused)" in arena.run("league", "status", "lad").stdout

    # Resume: it schedules again.
    arena.run("league", "resume", "lad")
    _wait(arena, "matches after resuming", lambda: len(store.league_matches(r, "lad")) > total)

    # Close: queued matches are cancelled, nothing is scheduled again, ever.
    closed = arena.run("league", "close", "lad").stdout
    assert "ladder lad: closed" in closed
    _wait(arena, "the closed ladder to drain", lambda: not in_flight(r, "lad"))
    total = len(store.league_matches(r, "lad"))
    assert tick(r, "lad", settings).status == "closed"
    time.sleep(2)
    assert len(store.league_matches(r, "lad")) == total
    twice = arena.run("league", "close", "lad", check=False)
    assert twice.returncode == 1 and "closed already" in twice.stderr
    resumed = arena.run("league", "resume", "lad", check=False)
    assert resumed.returncode == 1 and "closed" in resumed.stderr

    # No match was scheduled twice: each (seats, deal) once, each result recorded once.
    records = [m for m in store.get_matches(r, store.league_matches(r, "lad")) if m]
    assert len({m.id for m in records}) == len(records) == total
    games = Counter((m.seats, deal) for m in records for deal in m.deals)
    assert max(games.values()) == 1
    finished = [m for m in records if m.status is store.MatchStatus.FINISHED]
    assert r.zcard(store.Keys.elo_applied("lad")) == len(finished)
    assert all(m.status is not store.MatchStatus.FAILED for m in records), arena.worker_logs()
    # and the workers are idle: no tick left scheduling anything
    assert arena._jobs_idle() or not in_flight(r, "lad")
