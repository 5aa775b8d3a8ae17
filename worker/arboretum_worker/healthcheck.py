"""``python -m arboretum_worker.healthcheck``: exit 0 when this host's league worker is alive.

Healthy means: Redis (``REDIS_URL``) answers, and a worker registered with rq on the first queue
the worker listens to (the league's queue ``ARENA_QUEUE``, or with ``ARENA_QUEUES`` the first kind
it names in priority order: ``arena-casual`` for a casual-only worker) runs on this host, its
process alive here (a container's hostname is its own, so this is the container's worker) and
registered since that process started. The last part tells a restarted container's worker from
its previous life: that one also had pid 1 and this hostname, and its registration outlives it
for minutes. Otherwise it exits 1 with one line on stderr saying which part is missing.
docker-compose.yml's healthcheck of the workers runs it.
"""

from __future__ import annotations

import os
import socket
import sys

__all__ = ["check", "main"]


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but another user's
        return True
    return True


def _started(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from /proc; None if unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
    except (OSError, StopIteration, ValueError):
        return None
    ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])  # field 22, starttime
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def _current(worker: object) -> bool:
    """Registered by the process that now has its pid (not by an earlier one with that pid)."""
    pid = getattr(worker, "pid", None)
    birth = getattr(worker, "birth_date", None)
    if not _alive(pid):
        return False
    started = _started(pid) if pid else None
    if started is None or birth is None:
        return True  # no /proc: the pid alone
    # The boot time is in whole seconds: allow for it.
    return bool(birth.timestamp() >= started - 2)


def check(redis_url: str, queue: str, hostname: str | None = None) -> str | None:
    """None when a live worker of ``hostname`` (this host) listens on ``queue``, else why not."""
    import redis
    from rq import Queue, Worker

    from .settings import redact_url

    host = hostname or socket.gethostname()
    client = redis.Redis.from_url(redis_url, socket_timeout=3, socket_connect_timeout=3)
    try:
        workers = Worker.all(queue=Queue(queue, connection=client))
    except redis.exceptions.RedisError as exc:
        return f"Redis at {redact_url(redis_url)} does not answer: {exc}"
    finally:
        client.close()
    mine = [w for w in workers if w.hostname == host]
    if not mine:
        return f"no worker of host {host} is registered on queue {queue!r}"
    if not any(_current(w) for w in mine):
        return f"the worker registered for host {host} is not running (pid {mine[0].pid})"
    return None


def main(argv: list[str] | None = None) -> int:
    from .queues import listened_kinds, queue_name
    from .settings import SettingsError, WorkerSettings

    try:
        settings = WorkerSettings.from_env()
        queue = queue_name(listened_kinds()[0], settings.queue)
    except SettingsError as exc:
        print(f"arena: {exc}", file=sys.stderr)
        return 1
    problem = check(settings.redis_url, queue)
    if problem is not None:
        print(f"arena: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
