"""``arena worker``: rq's forking worker with the league's settings.

Equivalent to ``rq worker arena --url $REDIS_URL --maintenance-interval 10``, plus:

- a shorter heartbeat margin, so that the match of a worker killed with ``kill -9`` is found and
  re-queued in about 30 s instead of rq's 100 s (see :mod:`arboretum_worker.settings`);
- an idle worker that waits for a job at most a maintenance interval at a time (rq waits up to
  405 s in one call, and looks for abandoned jobs only between calls), so that the match of a
  worker cut off from Redis is re-queued within those 30 s even when no match ends elsewhere;
- a Redis client that waits out an outage of any length (:mod:`arboretum_worker.outage`): the
  worker, its work horse and its pubsub thread pause and carry on once Redis answers, and the
  worker says so in one line when Redis goes and one when it is back. A worker started while
  Redis is unreachable waits for it the same way. After an outage the worker registers again if
  its registration expired meanwhile;
- a name unique to each start (:func:`default_name`: the host name, the pid and a random
  suffix), so that a worker restarted in its container (pid 1 again, the same host name) does not
  meet the registration of its previous life;
- every queue of :mod:`arboretum_worker.queues` (``ARENA_QUEUES``), ordered before each job so
  that leagues keep their share of worker time (``ARENA_LADDER_SHARE``), after the authors'
  units that may run now are released (:func:`arboretum_worker.units.dispatch`); the time of
  each job is counted to its queue;
- a stop that hands its match back (:class:`ArenaWorker`): on SIGTERM (or SIGINT) the worker
  takes no new job and gives the running match ``ARENA_STOP_DRAIN_S`` to finish; if it has not by
  then, or on a second SIGTERM, the work horse stops the match and puts its job back on the
  queue at the front, as a retry that uses up none of its retries; the worker then exits.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import logging
import os
import secrets
import signal
import socket
import threading
import time
from typing import Any

from rq import Queue, Worker

from .jobs import HAND_BACK_SIGNAL, WorkerStopping
from .outage import Outage, client, outage_of
from .settings import HEARTBEAT_MARGIN_S, RedisUnavailable, WorkerSettings, redact_url

__all__ = ["HAND_BACK_TIMEOUT_S", "ArenaWorker", "default_name", "run_worker"]

log = logging.getLogger(__name__)

HAND_BACK_TIMEOUT_S = 30
"""How long a work horse told to hand its match back gets before it is killed."""
STOPPING_REDIS_WAIT_S = 10
"""How long a stopping worker waits for an unreachable Redis to register its end."""


def default_name(hostname: str | None = None, pid: int | None = None) -> str:
    """``arena-<host>-<pid>-<6 random hex digits>``: readable, and new at every start."""
    host = hostname or socket.gethostname()
    return f"arena-{host}-{pid or os.getpid()}-{secrets.token_hex(3)}"


class ArenaWorker(Worker):  # type: ignore[misc]
    """rq's ``Worker`` (fork per job): short heartbeat margin, outage-proof, hands back on stop."""

    heartbeat_margin_s: int = HEARTBEAT_MARGIN_S
    drain_s: float = 180.0
    _drain_timer: threading.Timer | None = None
    _handed_back: bool = False
    _handing_back: bool = False  # in the work horse: the match is being handed back
    _outages_seen: int = 0
    settings: WorkerSettings | None = None
    """Where the work horses make their match directories (:meth:`execute_job` clears them)."""
    _horse: int = 0

    def get_heartbeat_ttl(self, job: Any, working_time: float = 0.0) -> int:
        interval = int(self.job_monitoring_interval)
        if job.timeout and job.timeout > 0:
            interval = int(min(job.timeout - working_time, interval))
        return max(interval, 1) + self.heartbeat_margin_s

    # ----------------------------------------------------------------- outages

    @property
    def outage(self) -> Outage | None:
        return outage_of(self.connection)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        outage = self.outage
        if outage is not None and outage.count != self._outages_seen and not self.is_horse:
            self._outages_seen = outage.count
            self._restore_registration()
        super().heartbeat(timeout, pipeline)

    def _restore_registration(self) -> None:
        """Register again if the outage outlived this worker's key (or a maintenance pass then
        dropped it from the worker sets); its birth and statistics are kept when it did not."""
        from rq import worker_registration

        if self.birth_date is None:  # not registered yet
            return
        if self.connection.hexists(self.key, "birth"):
            with self.connection.pipeline() as pipe:
                worker_registration.register(self, pipe)
                pipe.execute()
            return
        with self.connection.pipeline() as pipe:
            pipe.hset(self.key, mapping=self.serialize())
            pipe.hset(self.key, "state", self.get_state())
            worker_registration.register(self, pipe)
            pipe.expire(self.key, self.worker_ttl + 60)
            pipe.execute()
        self.log.info("Worker %s: registered again (it expired in the outage)", self.name)

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        # rq installs its SIGTERM and SIGINT handlers only after the bootstrap (registration,
        # pubsub), which waits for Redis: a stop signalled meanwhile killed the worker outright
        # (status -15) with its registration left behind. Installed first, a stop during the
        # bootstrap ends it, and the loop then stops at once and registers the end (teardown).
        from rq.exceptions import StopRequested

        self._install_signal_handlers()
        try:
            super().bootstrap(*args, **kwargs)
        except StopRequested:
            self._stop_requested = True

    def check_for_suspension(self, burst: bool) -> None:
        if not self._stop_requested:  # a stop during the bootstrap: no Redis call before it
            super().check_for_suspension(burst)

    def run_maintenance_tasks(self) -> None:
        if self._stop_requested:
            return
        # Right after an outage, the executions of the matches that ran through it look expired
        # (no heartbeat came); their workers heartbeat again within a monitoring interval. Until
        # then a maintenance pass would re-queue them as abandoned, though they are running.
        outage = self.outage
        if outage is not None and outage.ended is not None:
            settle = outage.ended + self.job_monitoring_interval + 1 - time.monotonic()
            if settle > 0:
                return  # not done: the next pass is due at once
        super().run_maintenance_tasks()

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> Any:
        self._order_queues()
        # rq waits for a job in one blocking call of up to worker_ttl - 15 s (405 s) and runs
        # maintenance only between calls, so idle workers looked for abandoned jobs minutes
        # apart: the match of a worker cut off from Redis waited for that, or for a busy worker
        # to finish its match. An idle worker wakes every maintenance interval instead.
        if timeout is not None:
            timeout = max(1, min(timeout, int(self.maintenance_interval)))
        return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)

    # ----------------------------------------------------------------- fair sharing

    base_queue: str = "arena"
    _last_dispatch: float = 0.0

    def _order_queues(self) -> None:
        """Release the authors' units that may run (units.dispatch, at most once a second)
        and order the queues for the next job (queues.queue_order: the ladder's share)."""
        from . import queues, units

        if self.outage is not None and self.outage.down:
            return
        try:
            if time.monotonic() - self._last_dispatch >= 1.0:
                self._last_dispatch = time.monotonic()
                units.dispatch(self.connection)
            by_kind = {queues.kind_of(q.name, self.base_queue): q for q in self.queues}
            kinds = [k for k in by_kind if k is not None]
            if len(kinds) > 1:
                # Counted without rq's cleanup, which re-queues the jobs whose executions look
                # expired: right after an outage that is every running match, until its worker's
                # next heartbeat (run_maintenance_tasks waits for it; the count must not act).
                running = {
                    k: q.started_job_registry.get_job_count(cleanup=False)
                    for k, q in by_kind.items()
                    if k
                }
                order = queues.queue_order(self.connection, kinds, running=running)
                self._ordered_queues = [by_kind[k] for k in order] + [
                    q for k, q in by_kind.items() if k is None
                ]
        except Exception as exc:  # the order is a preference: never stop the worker for it
            self.log.warning("Worker %s: could not order the queues: %s", self.name, exc)

    def fork_work_horse(self, job: Any, queue: Any) -> None:
        super().fork_work_horse(job, queue)
        self._horse = self.horse_pid  # (rq sets it to 0 once the horse has ended)

    def execute_job(self, job: Any, queue: Any) -> Any:
        from . import queues
        from .jobs import remove_match_dirs

        started = time.monotonic()
        try:
            return super().execute_job(job, queue)
        finally:
            kind = queues.kind_of(queue.name, self.base_queue)
            if kind is not None:
                with contextlib.suppress(Exception):
                    queues.record_usage(self.connection, kind, time.monotonic() - started)
            if self.settings is not None and self._horse:
                # a horse stopped (a league cancelled, a test cancelled) or killed before its
                # own finally leaves its match directory: bots' files, logs, the socket
                with contextlib.suppress(OSError):
                    left = remove_match_dirs(self.settings, self._horse)
                    if left:
                        self.log.info("Worker %s: removed %d match directories", self.name, left)
                self._horse = 0

    def teardown(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.cancel()
        outage = self.outage
        if outage is not None and not self.is_horse:
            outage.give_up_after(STOPPING_REDIS_WAIT_S)
        try:
            super().teardown()
        except Exception as exc:  # Redis still unreachable: the registration expires by itself
            self.log.warning(
                "Worker %s: could not register its end (%s); its registration expires by itself",
                self.name,
                " ".join(str(exc).split()) or type(exc).__name__,
            )

    # ----------------------------------------------------------------- stopping

    def request_stop(self, signum: int, frame: Any) -> None:
        from rq.worker import WorkerStatus

        if self.get_state() == WorkerStatus.BUSY:  # the timer first: the rest may wait on Redis
            self.log.info(
                "Worker %s: stopping: no new match; the running one has %d s to finish, "
                "then it is handed back to the queue",
                self.name,
                self.drain_s,
            )
            self._drain_timer = threading.Timer(self.drain_s, self._hand_back, args=("late",))
            self._drain_timer.daemon = True
            self._drain_timer.start()
        super().request_stop(signum, frame)  # idle: raises StopRequested, and the loop ends

    def set_shutdown_requested_date(self) -> None:
        outage = self.outage
        if outage is not None and outage.down:
            return  # for rq's dashboards only: not worth waiting for Redis in a signal handler
        super().set_shutdown_requested_date()

    def request_force_stop(self, signum: int, frame: Any) -> None:
        """A second SIGTERM or SIGINT: hand the running match back now (a third kills it)."""
        from datetime import timedelta

        from rq.utils import now

        since = self._shutdown_requested_date
        if since is not None and now() - since < timedelta(seconds=1):
            return  # the same stop, signalled twice (rq's rule)
        if self.horse_pid and not self._handed_back:
            if self._drain_timer is not None:
                self._drain_timer.cancel()
            self._hand_back("now")
            return
        super().request_force_stop(signum, frame)

    def _hand_back(self, why: str) -> None:
        pid = self.horse_pid
        if not pid or self._handed_back:
            return
        self._handed_back = True
        if why == "late":
            self.log.warning(
                "Worker %s: the match did not finish within %d s; handing it back",
                self.name,
                self.drain_s,
            )
        else:
            self.log.warning("Worker %s: handing the running match back", self.name)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, HAND_BACK_SIGNAL)
        killer = threading.Timer(HAND_BACK_TIMEOUT_S, self._kill_stuck_horse, args=(pid,))
        killer.daemon = True
        killer.start()

    def _kill_stuck_horse(self, pid: int) -> None:
        if self.horse_pid == pid:
            self.log.warning(
                "Worker %s: the work horse did not hand its match back in %d s; killing it",
                self.name,
                HAND_BACK_TIMEOUT_S,
            )
            self.kill_horse()

    # ----------------------------------------------------------------- in the work horse

    def setup_work_horse_signals(self) -> None:
        super().setup_work_horse_signals()
        signal.signal(HAND_BACK_SIGNAL, self._stop_match)

    def _stop_match(self, signum: int, frame: Any) -> None:
        from .play import stop_match

        signal.signal(HAND_BACK_SIGNAL, signal.SIG_IGN)  # once: the clean-up is not interrupted
        self._handing_back = True
        if not stop_match():  # no game being played: stop the job here
            raise WorkerStopping("the worker was stopped before the match started")

    def handle_exception(self, job: Any, *exc_info: Any) -> None:
        if self._handing_back:
            self.log.warning("Worker %s: match job %s handed back to the queue", self.name, job.id)
            return
        super().handle_exception(job, *exc_info)

    def handle_job_failure(self, job: Any, queue: Any, *args: Any, **kwargs: Any) -> None:
        if self._handing_back:
            # A hand back is not a failed attempt: put the job back first, with its retries.
            job.retries_left = (job.retries_left or 0) + 1
            job.enqueue_at_front_on_retry = True
        super().handle_job_failure(job, queue, *args, **kwargs)


# Imported by the worker before it forks, so that each work horse starts with them loaded (about
# 1.3 s of CPU per match otherwise). Only modules: no gRPC channel, server or asyncio loop is made
# before the fork; the job creates those itself, in the horse.
PRELOAD = (
    "grpc",
    "grpc.aio",
    "uvloop",  # the private referee's event loop (only the module: the loop is made in the horse)
    "openskill.models",  # the live rating (live_rating.py imports it where it rates)
    "arboretum_proto.v1.match_pb2_grpc",
    "arboretum_server",
    "arboretum_worker.jobs",
    "arboretum_worker.league",
    "arboretum_worker.play",
    "arboretum_worker.ratings",
    "arboretum_worker.registry",
    "arboretum_worker.sandbox",
    "arboretum_worker.sprt.jobs",
    # The rating fit (numpy, scipy: about 1 s of CPU to import), which the last match of a league
    # and every ladder tick run; and the other jobs' modules: authors' units, challenges,
    # webhooks, the output per decision.
    "arboretum_worker.board",
    "arboretum_worker.fit",
    "arboretum_worker.ladder.scheduler",
    "arboretum_worker.units",
    "arboretum_worker.challenges.jobs",
    "arboretum_worker.sprt.authors",
    "arboretum_worker.webhooks",
    "arboretum_worker.botoutput",
    "arboretum_worker.casual.job",
)


def preload() -> None:
    """Import :data:`PRELOAD`, then freeze what is alive into the garbage collector's permanent
    generation: the collections of the worker and of each work horse then never walk the
    imported modules' objects (about 100,000 with numpy and scipy: a full collection took about
    40 ms of CPU, and in a horse it copied every page it touched). They live as long as the
    process anyway; what the worker and its jobs allocate later is collected as before."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as exc:  # the job will report it properly
            log.warning("preloading %s failed: %s", name, exc)
    gc.collect()
    gc.freeze()


class StoppedBeforeStart(Exception):
    """SIGTERM or SIGINT came while the worker was still starting (waiting for Redis)."""


def _stop_before_start(signum: int, frame: Any) -> None:
    raise StoppedBeforeStart(signal.Signals(signum).name)


def run_worker(
    settings: WorkerSettings,
    *,
    burst: bool = False,
    name: str | None = None,
    with_scheduler: bool = False,
) -> bool:
    """Run a worker on the league queue until stopped (or, with ``burst``, until it is empty).

    It never exits on a lost Redis: it waits for it (at start-up too). A stop signalled while it
    starts ends it at once, cleanly: rq's own handlers take over at its bootstrap."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _stop_before_start)
    try:
        worker = _start_worker(settings, name)
        return bool(worker.work(burst=burst, with_scheduler=with_scheduler, logging_level="INFO"))
    except StoppedBeforeStart as stop:
        log.info("worker stopped by %s before it started (Redis had not answered)", stop)
        return False


def _start_worker(settings: WorkerSettings, name: str | None) -> ArenaWorker:
    """The worker, registered to nothing yet; waits for Redis to name itself."""
    from .queues import listened_kinds, queue_name, worker_niceness

    kinds = listened_kinds()
    lower = worker_niceness(kinds)
    if lower:
        os.nice(lower)
        log.info("a worker of best-effort queues: CPU priority lowered by %d (nice)", lower)
    preload()
    if settings.sandbox in ("auto", "bwrap"):
        from .sandbox import bwrap_usable
        from .sandbox.forkserver import start_fork_server

        # Before the first fork, so that every work horse has them: whether bwrap works here
        # (probed once, not per match) and the bots' fork server.
        if bwrap_usable():
            start_fork_server([settings.match_root])
    try:
        connection = client(settings.redis_url)
    except ValueError as exc:
        shown = redact_url(settings.redis_url)
        raise RedisUnavailable(f"cannot use the Redis URL {shown!r}: {exc}") from None
    names = [queue_name(kind, settings.queue) for kind in kinds]
    worker = ArenaWorker(  # names itself to Redis (CLIENT SETNAME): waits for Redis
        [Queue(name, connection=connection) for name in names],
        connection=connection,
        name=name or default_name(),
        maintenance_interval=settings.maintenance_interval_s,
        job_monitoring_interval=settings.monitor_interval_s,
    )
    worker.base_queue = settings.queue
    worker.settings = settings
    worker.heartbeat_margin_s = settings.heartbeat_margin_s
    worker.drain_s = settings.stop_drain_s
    from .progress import prepare_store

    prepare_store(connection)  # index matches stored before the match indexes (once)
    log.info(
        "worker %s on queues %s at %s (maintenance every %d s)",
        worker.name,
        ", ".join(names),
        _safe_url(settings.redis_url),
        settings.maintenance_interval_s,
    )
    return worker


def _safe_url(url: str) -> str:
    """The URL without its password, for logs."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
