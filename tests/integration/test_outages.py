"""Workers that ride out outages, with real processes: redis-server killed with -9 mid-league
and started again on its AOF, `arena worker` started against a Redis that is not there, a worker
killed with -9 and started again as the same pid on the same host, and SIGTERM mid-match."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from rq import Queue, Worker

from arboretum_worker import live_rating, ratings, store
from arboretum_worker.jobs import HANDED_BACK, fetch_job
from arboretum_worker.outage import BACKOFF_CAP_S
from arboretum_worker.worker import STOPPING_REDIS_WAIT_S
from redis_server import start_redis_server

from .conftest import ARENA, Arena, kill_tree
from .test_league import CLOCK, submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

LOST = re.compile(r"Redis at \S+ is unreachable \(.+\); retrying until it answers")
BACK = re.compile(r"Redis at \S+ answers again after ([\d.]+) s")


def _league(arena: Arena, name: str, *extra: str, bots: tuple[str, ...] = ()) -> None:
    for bot in bots or ("random", "greedy"):
        if bot != "slow":  # submitted by the test
            submit_builtin(arena, bot)
    arena.run(
        "league", "create", name, "--bots", *(bots or ("random", "greedy")), "--players", "2",
        "--seed", "5", *CLOCK, *extra,
    )  # fmt: skip


def _run(arena: Arena, name: str) -> list[str]:
    arena.run("league", "run", name)
    return store.league_matches(arena.r, name)


def _status(arena: Arena, match_ids: list[str]) -> dict[str, store.MatchStatus]:
    records = store.get_matches(arena.r, match_ids)
    return {m: rec.status for m, rec in zip(match_ids, records, strict=True) if rec is not None}


def _wait_running(arena: Arena, match_ids: list[str], *, finished: int = 0) -> str:
    """A match that is running while at least ``finished`` matches are finished."""
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, arena.worker_logs()
        status = _status(arena, match_ids)
        done = sum(s is store.MatchStatus.FINISHED for s in status.values())
        running = [m for m, s in status.items() if s is store.MatchStatus.RUNNING]
        if running and done >= finished:
            return running[0]
        time.sleep(0.02)


def _counted_once(arena: Arena, name: str, match_ids: list[str]) -> None:
    """Every match finished and counted once; live ratings and Elo equal a recompute."""
    r = arena.r
    assert all(s is store.MatchStatus.FINISHED for s in _status(arena, match_ids).values())
    assert r.zcard(store.Keys.elo_applied(name)) == len(match_ids)
    games = 0
    for m in match_ids:
        result = store.get_result(r, m)
        assert result is not None and len(result.games) == store.get_match(r, m).games
        games += len(result.games)
    board = ratings.standings(r, name)
    assert sum(row.stats.games for row in board) == 2 * games  # two seats a game
    results = ratings.results_in_order(r, name)
    assert sorted(res.match_id for res in results) == sorted(match_ids)
    assert live_rating.recompute(results) == ratings.live_ratings(r, name)
    elo = ratings.recompute(results, store.get_league(r, name).settings.elo)
    for vid, value in ratings.ratings(r, name).items():
        assert abs(elo[vid] - value) < 1e-9


def _worker_log(arena: Arena, index: int) -> str:
    return (arena.tmp / f"worker{index}.log").read_text(errors="replace")


@pytest.mark.parametrize("outage_s", [5, 30])
def test_workers_ride_out_a_redis_outage_mid_league(arena: Arena, outage_s: int) -> None:
    _league(arena, f"out{outage_s}", "--games-per-pairing", "6", "--deals-per-series", "2")
    arena.start_worker()
    arena.start_worker()
    arena.wait_workers(2)
    match_ids = _run(arena, f"out{outage_s}")
    assert len(match_ids) == 6

    running = _wait_running(arena, match_ids, finished=1)
    arena.redis_proc.kill()  # kill -9, mid-league, with a match in progress
    arena.redis_proc.wait(10)
    killed = time.monotonic()
    time.sleep(outage_s)
    assert all(w.poll() is None for w in arena.workers), arena.worker_logs()
    url, arena.redis_proc = start_redis_server(
        arena.tmp / "redis", appendonly=True, port=arena.port
    )
    assert url == arena.url
    restarted, restarted_at = time.monotonic(), time.time()

    arena.wait_league(f"out{outage_s}", timeout=180)
    _counted_once(arena, f"out{outage_s}", match_ids)
    assert len(Worker.all(queue=Queue("arena", connection=arena.r))) == 2  # still registered
    record = store.get_match(arena.r, running)
    if outage_s >= 30:
        # The match running at the kill played on through the outage (its games take a second
        # or two) and its work horse recorded it once Redis was back: the same attempt.
        assert record.attempts == 1, arena.worker_logs()
        assert store.get_result(arena.r, running).finished < restarted_at
    print(
        f"outage of {restarted - killed:.1f} s: the running match {running} finished after "
        f"{record.attempts} attempt(s); league done {time.monotonic() - restarted:.1f} s after "
        "the restart"
    )
    for index, worker in enumerate(arena.workers):
        assert worker.poll() is None, arena.worker_logs()  # never exits
        text = _worker_log(arena, index)
        # A worker whose retry was sleeping its backoff when Redis came back says so at its next
        # try, up to the backoff's cap later; the league may be done before that.
        deadline = time.monotonic() + BACKOFF_CAP_S + 5
        while not BACK.search(text) and time.monotonic() < deadline:
            time.sleep(0.1)
            text = _worker_log(arena, index)
        assert "Traceback" not in text and "quitting" not in text, text
        assert len(LOST.findall(text)) == 1, text  # one line when Redis goes ...
        backs = BACK.findall(text)
        assert len(backs) == 1, text  # ... and one when it is back
        # Back within the backoff's cap (2 s) of the restart (its AOF loads in milliseconds).
        waited = float(backs[0])
        print(
            f"worker{index}: Redis answered again after {waited} s, "
            f"{waited - (restarted - killed):.1f} s after the restart"
        )
        assert outage_s - 1.5 <= waited <= restarted - killed + 2 + 3, text


def test_a_worker_started_without_redis_says_so_once_and_waits(tmp_path: Path) -> None:
    from redis_server import _free_port

    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    env = dict(os.environ, REDIS_URL=url, PYTHONUNBUFFERED="1")
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*ARENA, "worker"], env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    redis_proc = None
    try:
        deadline = time.monotonic() + 60
        while not LOST.search(log.read_text(errors="replace")):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        time.sleep(4)  # retrying meanwhile, without a word
        text = log.read_text(errors="replace")
        assert proc.poll() is None, text
        lines = [line for line in text.splitlines() if "Redis" in line]
        assert len(lines) == 1 and LOST.search(lines[0]), text
        assert f"Redis at {url} is unreachable (Error 111 connecting to 127.0.0.1:{port}" in text
        assert "Traceback" not in text

        _, redis_proc = start_redis_server(tmp_path / "redis", appendonly=False, port=port)
        import redis

        queue = Queue("arena", connection=redis.Redis.from_url(url))
        while not Worker.all(queue=queue):
            assert proc.poll() is None and time.monotonic() < deadline + 30, log.read_text()
            time.sleep(0.1)
        assert BACK.search(log.read_text(errors="replace"))
    finally:
        kill_tree(proc.pid)
        proc.wait(10)
        if redis_proc is not None:
            redis_proc.kill()
            redis_proc.wait(10)


def test_sigterm_to_a_worker_still_waiting_for_redis_ends_it_cleanly(tmp_path: Path) -> None:
    # Before, a stop signalled while the worker waited for Redis to start (or during rq's
    # bootstrap, before rq installs its handlers) killed it outright: status -15.
    from redis_server import _free_port

    url = f"redis://127.0.0.1:{_free_port()}/0"
    env = dict(os.environ, REDIS_URL=url, PYTHONUNBUFFERED="1")
    log = tmp_path / "worker.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*ARENA, "worker"], env=env, stdin=subprocess.DEVNULL, stdout=out,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not LOST.search(log.read_text(errors="replace")):
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        proc.wait(15)
        text = log.read_text(errors="replace")
        assert proc.returncode == 0, text
        assert "worker stopped by SIGTERM before it started" in text, text
        assert "Traceback" not in text, text
    finally:
        kill_tree(proc.pid)
        proc.wait(10)


def _unshare_works() -> bool:
    try:
        done = subprocess.run(["unshare", "-Urpf", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def test_a_worker_killed_and_started_again_as_the_same_pid_registers_at_once(
    arena: Arena,
) -> None:
    # As in a restarted container: the same host name, pid 1 again (a pid namespace of its own),
    # and the killed worker's registration still there.
    if not _unshare_works():
        pytest.skip(
            "unshare -Urpf (a pid namespace) is not allowed here; the worker cannot be pid 1"
        )
    queue = Queue("arena", connection=arena.r)

    def start(index: int) -> subprocess.Popen[bytes]:
        with open(arena.tmp / f"worker{index}.log", "wb") as out:
            proc = subprocess.Popen(
                ["unshare", "-Urpf", *ARENA, "worker"], env=arena.env, stdin=subprocess.DEVNULL,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        arena.workers.append(proc)
        return proc

    def registered(exclude: set[str], timeout: float) -> Worker:
        deadline = time.monotonic() + timeout
        while True:
            found = [w for w in Worker.all(queue=queue) if w.name not in exclude]
            if found:
                return found[0]
            assert time.monotonic() < deadline, arena.worker_logs()
            time.sleep(0.05)

    first = start(0)
    old = registered(set(), 60)
    assert old.pid == 1 and old.hostname == os.uname().nodename
    kill_tree(first.pid)  # kill -9
    first.wait(10)
    assert old.name in {w.name for w in Worker.all(queue=queue)}  # its registration lives on

    began = time.monotonic()
    second = start(1)
    new = registered({old.name}, 60)
    took = time.monotonic() - began
    print(f"the restarted worker registered {took:.1f} s after its start (as {new.name})")
    assert new.pid == 1 and new.hostname == old.hostname and new.name != old.name
    assert second.poll() is None, arena.worker_logs()
    assert "There exists an active worker" not in _worker_log(arena, 1)
    assert took < 30  # the start itself (imports) is most of it; nothing waits for the old key


def test_sigterm_lets_the_running_match_finish_and_takes_no_new_one(arena: Arena) -> None:
    arena.run("bot", "submit", str(Path(__file__).parent / "bots" / "slow.py"), "--name", "slow")
    _league(arena, "term", "--games-per-pairing", "1", bots=("greedy", "slow"))
    worker = arena.start_worker()
    arena.wait_workers(1)
    match_ids = _run(arena, "term")
    assert len(match_ids) == 2
    running = _wait_running(arena, match_ids)
    worker.send_signal(signal.SIGTERM)
    worker.wait(120)
    assert worker.returncode == 0, arena.worker_logs()
    status = _status(arena, match_ids)
    assert status[running] is store.MatchStatus.FINISHED, arena.worker_logs()
    (other,) = set(match_ids) - {running}
    assert status[other] is store.MatchStatus.QUEUED  # not taken
    assert Queue("arena", connection=arena.r).count == 1
    assert "stopping: no new match" in _worker_log(arena, 0)


@pytest.mark.parametrize("how", ["late", "twice"])
def test_sigterm_hands_a_long_match_back_and_another_worker_plays_it(
    arena: Arena, how: str
) -> None:
    # late: the drain time (1 s here) runs out; twice: a second SIGTERM hands it back at once.
    arena.run("bot", "submit", str(Path(__file__).parent / "bots" / "slow.py"), "--name", "slow")
    _league(
        arena, "back", "--games-per-pairing", "2", "--deals-per-series", "2",
        bots=("greedy", "slow"),
    )  # fmt: skip
    arena.env["ARENA_STOP_DRAIN_S"] = "1" if how == "late" else "180"
    worker = arena.start_worker()
    arena.wait_workers(1)
    match_ids = _run(arena, "back")
    running = _wait_running(arena, match_ids)
    stopped = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    if how == "twice":
        time.sleep(1.5)  # rq takes two signals within a second for one
        worker.send_signal(signal.SIGTERM)
    worker.wait(60)
    took = time.monotonic() - stopped
    print(f"SIGTERM ({how}) to exit, the match handed back: {took:.1f} s")
    assert worker.returncode == 0, arena.worker_logs()
    record = store.get_match(arena.r, running)
    assert record.status is store.MatchStatus.QUEUED and record.failure == HANDED_BACK
    assert store.get_result(arena.r, running) is None
    job = fetch_job(arena.r, running)
    assert job.get_status(refresh=True) == "queued" and job.retries_left == 2  # none used up
    queue = Queue("arena", connection=arena.r)
    assert queue.job_ids[0] == job.id  # back at the front
    text = _worker_log(arena, 0)
    said = "handing it back" if how == "late" else "handing the running match back"
    assert said in text and "handed back to the queue" in text, text
    # One line, no traceback of the job (the referee may log a bot's stream that broke).
    assert "WorkerStopping" not in text and "exception raised while executing" not in text, text

    arena.env["ARENA_STOP_DRAIN_S"] = "180"
    arena.start_worker()
    arena.wait_league("back", timeout=180)
    _counted_once(arena, "back", match_ids)
    assert store.get_match(arena.r, running).attempts == 2


def test_sigterm_while_redis_is_gone_ends_an_idle_worker_soon(arena: Arena) -> None:
    arena.env["PYTHONFAULTHANDLER"] = "1"  # a worker that hangs prints its threads' stacks
    worker = arena.start_worker()
    arena.wait_workers(1)
    arena.redis_proc.kill()
    arena.redis_proc.wait(10)
    deadline = time.monotonic() + 30
    while not LOST.search(_worker_log(arena, 0)):
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.1)
    stopped = time.monotonic()
    worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(60)
    except subprocess.TimeoutExpired:
        worker.send_signal(signal.SIGABRT)  # the fault handler writes where it waits
        worker.wait(10)
        raise AssertionError("the worker did not end:\n" + _worker_log(arena, 0)) from None
    took = time.monotonic() - stopped
    print(f"SIGTERM to exit without Redis: {took:.1f} s")
    text = _worker_log(arena, 0)
    assert worker.returncode == 0, text
    assert "could not register its end" in text and "Traceback" not in text, text
    assert took < STOPPING_REDIS_WAIT_S + 10
