"""Fixtures of the league's end-to-end tests: a real redis-server, real `arena worker` processes
(rq), the real referee inside them and real bot processes in the sandbox.

Each test gets its own redis-server (AOF on, a free port, a temp dir), so workers of one test
never see another test's jobs. Workers use short maintenance and heartbeat intervals so that a
killed worker's match is found in seconds.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from redis_server import find_redis_server, start_redis_server, stop_redis_server

BOTS = Path(__file__).parent / "bots"
ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (by parent pid, so also those that left its process group)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(pid: int) -> None:
    for target in [pid, *children(pid)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(target, signal.SIGKILL)


@dataclass
class Arena:
    """One test's league installation: its Redis, its environment, its workers."""

    tmp: Path
    url: str
    port: int
    redis_proc: subprocess.Popen[bytes]
    env: dict[str, str]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def r(self) -> redis.Redis:
        return redis.Redis.from_url(self.url)

    def run(
        self, *args: str, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*ARENA, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"arena {' '.join(args)} exited {done.returncode}\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
            )
        return done

    def start_worker(self) -> subprocess.Popen[bytes]:
        index = len(self.workers)
        log = open(self.tmp / f"worker{index}.log", "wb")  # noqa: SIM115 - the process owns it
        proc = subprocess.Popen(
            [*ARENA, "worker", "--name", f"test-worker-{index}-{os.getpid()}"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        self.workers.append(proc)
        return proc

    def wait_workers(self, count: int, timeout: float = 60) -> None:
        """Wait until ``count`` workers listen on the queue."""
        from rq import Queue, Worker

        queue = Queue("arena", connection=self.r)
        deadline = time.monotonic() + timeout
        while len(Worker.all(queue=queue)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{count} workers did not start\n" + self.worker_logs())
            time.sleep(0.05)

    def worker_logs(self) -> str:
        parts = []
        for i in range(len(self.workers)):
            path = self.tmp / f"worker{i}.log"
            if path.exists():
                parts.append(f"--- worker{i}\n" + path.read_text(errors="replace")[-6000:])
        return "\n".join(parts)

    def wait_league(self, name: str, timeout: float) -> dict[str, int]:
        from arboretum_worker.league import league_progress

        deadline = time.monotonic() + timeout
        client = self.r
        while True:
            progress = league_progress(client, name)
            if progress.complete and self._jobs_idle():
                return dict(progress.counts)
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"league {name} not done after {timeout} s: {progress.summary()}\n"
                    + self.worker_logs()
                )
            time.sleep(0.2)

    def _jobs_idle(self) -> bool:
        """No job waiting or running: every job stored its replays and logs and returned."""
        from rq import Queue

        queue = Queue("arena", connection=self.r)
        # (counted without rq's cleanup, which would re-queue a match whose worker has not yet
        # sent its first heartbeat after an outage: an observer must not act)
        return queue.count == 0 and queue.started_job_registry.get_job_count(cleanup=False) == 0

    def restart_redis(self, *, hard: bool) -> None:
        """Stop Redis (kill -9 when ``hard``) and start it again on the same data and port."""
        if hard:
            self.redis_proc.kill()
            self.redis_proc.wait(10)
        else:
            stop_redis_server(self.redis_proc)
        url, self.redis_proc = start_redis_server(
            self.tmp / "redis", appendonly=True, port=self.port
        )
        assert url == self.url

    def stop(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 5
        for proc in self.workers:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
            kill_tree(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
        stop_redis_server(self.redis_proc)


@pytest.fixture
def arena(tmp_path: Path) -> Iterator[Arena]:
    if find_redis_server() is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    url, proc = start_redis_server(tmp_path / "redis", appendonly=True)
    # Short: the referee's unix socket lives in a directory under it.
    match_root = Path(tempfile.mkdtemp(prefix="am-"))
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    env = dict(os.environ)
    env.update(
        {
            "REDIS_URL": url,
            "ARENA_MATCH_ROOT": str(match_root),
            "ARENA_MAINTENANCE_INTERVAL_S": "1",
            "ARENA_MONITOR_INTERVAL_S": "1",
            "ARENA_HEARTBEAT_MARGIN_S": "3",
            "PYTHONUNBUFFERED": "1",
        }
    )
    installation = Arena(tmp=tmp_path, url=url, port=port, redis_proc=proc, env=env)
    try:
        yield installation
    finally:
        installation.stop()
        shutil.rmtree(match_root, ignore_errors=True)
