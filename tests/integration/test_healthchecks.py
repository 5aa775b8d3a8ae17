"""The healthchecks docker-compose.yml runs, against real processes: the referee's
(``python -m arboretum_server.healthcheck``) and the workers' (``python -m
arboretum_worker.healthcheck``)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from .conftest import ARENA, Arena

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _probe(module: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.returncode, done.stderr.strip()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_referee_healthcheck(tmp_path) -> None:
    port = _free_port()
    address = f"127.0.0.1:{port}"
    assert _probe("arboretum_server.healthcheck", address) == (
        1,
        f"arena: the referee at {address} does not answer: UNAVAILABLE",
    )
    proc = subprocess.Popen(
        [*ARENA, "serve", "--listen", address, "--replay-dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while (code := _probe("arboretum_server.healthcheck", address)[0]) != 0:
            assert proc.poll() is None and time.monotonic() < deadline, "the referee did not serve"
            time.sleep(0.3)
        assert code == 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    assert _probe("arboretum_server.healthcheck", address)[0] == 1


def test_worker_healthcheck(arena: Arena) -> None:
    env = arena.env
    code, err = _probe("arboretum_worker.healthcheck", env=env)
    assert code == 1 and f"no worker of host {socket.gethostname()}" in err
    worker = arena.start_worker()
    arena.wait_workers(1)
    assert _probe("arboretum_worker.healthcheck", env=env) == (0, "")
    # Killed with -9: its registration outlives it, the check does not.
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(10)
    code, err = _probe("arboretum_worker.healthcheck", env=env)
    assert code == 1 and "is not running" in err, err
    # Redis gone: said in one line, with the password (if any) hidden.
    arena.redis_proc.kill()
    arena.redis_proc.wait(10)
    code, err = _probe("arboretum_worker.healthcheck", env=env)
    assert code == 1 and err.startswith("arena: Redis at") and "does not answer" in err, err


def test_a_casual_workers_healthcheck(arena: Arena) -> None:
    """A worker of the casual games only (ARENA_QUEUES=casual, as docker-compose.yml's casual
    service runs it) is healthy by its own queue."""
    env = dict(arena.env, ARENA_QUEUES="casual")
    arena.env = env
    code, err = _probe("arboretum_worker.healthcheck", env=env)
    assert code == 1 and "queue 'arena-casual'" in err, err
    arena.start_worker()
    deadline = time.monotonic() + 60
    while _probe("arboretum_worker.healthcheck", env=env) != (0, ""):
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.2)


def test_worker_healthcheck_tells_a_previous_life_of_the_pid_from_this_one() -> None:
    # A restarted container's worker has pid 1 again; the registration of its previous life
    # (same host, same pid, alive) is older than the process that now has the pid.
    from datetime import UTC, datetime, timedelta
    from types import SimpleNamespace

    from arboretum_worker.healthcheck import _current, _started

    started = _started(os.getpid())
    assert started is not None and started <= time.time()  # this process, from /proc
    now = datetime.now(UTC)
    assert _current(SimpleNamespace(pid=os.getpid(), birth_date=now))
    previous = now - timedelta(seconds=time.time() - started + 60)
    assert not _current(SimpleNamespace(pid=os.getpid(), birth_date=previous))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not _current(SimpleNamespace(pid=dead.pid, birth_date=now))
