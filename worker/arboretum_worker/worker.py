"""``arena worker``: rq's forking worker with the league's settings.

Equivalent to ``rq worker arena --url $REDIS_URL --maintenance-interval 10``, plus a shorter
heartbeat margin so that the match of a worker killed with ``kill -9`` is found and re-queued in
about 30 s instead of rq's 100 s (see :mod:`arboretum_worker.settings`).
"""

from __future__ import annotations

import importlib
import logging
import os
import socket
from typing import Any

from rq import Queue, Worker

from .settings import HEARTBEAT_MARGIN_S, WorkerSettings

__all__ = ["ArenaWorker", "run_worker"]

log = logging.getLogger(__name__)


class ArenaWorker(Worker):  # type: ignore[misc]
    """rq's ``Worker`` (fork per job) whose executions expire soon after the last heartbeat."""

    heartbeat_margin_s: int = HEARTBEAT_MARGIN_S

    def get_heartbeat_ttl(self, job: Any, working_time: float = 0.0) -> int:
        interval = int(self.job_monitoring_interval)
        if job.timeout and job.timeout > 0:
            interval = int(min(job.timeout - working_time, interval))
        return max(interval, 1) + self.heartbeat_margin_s


# Imported by the worker before it forks, so that each work horse starts with them loaded (about
# 1.3 s of CPU per match otherwise). Only modules: no gRPC channel, server or asyncio loop is made
# before the fork; the job creates those itself, in the horse.
PRELOAD = (
    "grpc",
    "grpc.aio",
    "arboretum_proto.v1.match_pb2_grpc",
    "arboretum_server",
    "arboretum_worker.jobs",
    "arboretum_worker.league",
    "arboretum_worker.play",
    "arboretum_worker.ratings",
    "arboretum_worker.referee",
    "arboretum_worker.registry",
    "arboretum_worker.sandbox",
    "arboretum_worker.sprt.jobs",
)


def preload() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # the job will report it properly
            log.warning("preloading %s failed: %s", name, exc)


def run_worker(
    settings: WorkerSettings,
    *,
    burst: bool = False,
    name: str | None = None,
    with_scheduler: bool = False,
) -> bool:
    """Run a worker on the league queue until stopped (or, with ``burst``, until it is empty)."""
    from redis import Redis

    preload()
    connection = Redis.from_url(settings.redis_url)
    queue = Queue(settings.queue, connection=connection)
    worker = ArenaWorker(
        [queue],
        connection=connection,
        name=name or f"arena-{socket.gethostname()}-{os.getpid()}",
        maintenance_interval=settings.maintenance_interval_s,
        job_monitoring_interval=settings.monitor_interval_s,
    )
    worker.heartbeat_margin_s = settings.heartbeat_margin_s
    from .progress import prepare_store

    prepare_store(connection)  # index matches stored before the match indexes (once)
    log.info(
        "worker %s on queue %r at %s (maintenance every %d s)",
        worker.name,
        settings.queue,
        _safe_url(settings.redis_url),
        settings.maintenance_interval_s,
    )
    return bool(worker.work(burst=burst, with_scheduler=with_scheduler, logging_level="INFO"))


def _safe_url(url: str) -> str:
    """The URL without its password, for logs."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
