"""The league's rq jobs: plain module-level functions, enqueued by :mod:`arboretum_worker.league`.

:func:`run_match` plays one scheduled match. It is safe to run more than once for the same match
(a retry, or a worker presumed dead that was still running): everything keys on the match's
deterministic id, the result is recorded once (first writer wins, ``ratings.record_result``) and
Elo is applied with it, atomically and idempotently; a run that finds the result already recorded
does nothing. Replays and bot logs are stored by the run whose result was recorded.

:func:`on_match_failure` is the jobs' failure callback. rq calls it for every failed attempt:
an exception in the job, a job timeout, and an abandoned job (its worker was killed; found by
a worker's maintenance). It records the reason on the match, as a retry or as the final failure.

A stopping worker hands its running match back (:mod:`arboretum_worker.worker`): it sends the
work horse :data:`HAND_BACK_SIGNAL`, which stops the match (``play.stop_match``: the job raises
:class:`WorkerStopping`, after stopping the sandboxes and the referee), and the job goes back on
the queue without using up a retry. Once the games are over the signal waits: the
result, the replays and the logs are stored first, and a hand back that came meanwhile is dropped
(the job is about to end anyway).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk.bot import COMPUTE_ENV
from arboretum_sdk.output import OUTPUT_ENV

from . import botoutput, replays, store
from .live import LivePublisher
from .play import (
    SOCKET_NAME,
    MatchError,
    MatchPlan,
    OnCreated,
    PlayedMatch,
    SeatPlan,
    StartBot,
    WorkerStopping,
    capped_output,
    run_play_match,
)
from .sandbox.capture import MARKER_ROOM
from .settings import WorkerSettings, job_timeout, seat_thinking_s

if TYPE_CHECKING:
    import redis

__all__ = [
    "HAND_BACK_SIGNAL",
    "WorkerStopping",
    "job_connection",
    "match_plan",
    "new_match_dir",
    "on_match_failure",
    "play_planned",
    "remove_match_dirs",
    "run_match",
    "seat_names",
    "store_artifacts",
]

log = logging.getLogger(__name__)

_REASON_CAP = 500

HAND_BACK_SIGNAL = signal.SIGUSR1
"""What a stopping worker sends its work horse to have the match handed back."""
HANDED_BACK = "handed back: the worker stopped before the match finished"


@contextlib.contextmanager
def _finishing() -> Iterator[None]:
    """No hand back while the result and its artifacts are stored; one that came meanwhile is
    dropped (the job ends in a moment)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {HAND_BACK_SIGNAL})
    try:
        yield
    finally:
        if HAND_BACK_SIGNAL in signal.sigpending():
            handler = signal.signal(HAND_BACK_SIGNAL, signal.SIG_IGN)  # discards the pending one
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            signal.signal(HAND_BACK_SIGNAL, handler)
        else:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def job_connection(settings: WorkerSettings) -> Any:
    """The job's Redis connection: the worker's own when run by rq, else from the settings."""
    try:
        from rq import get_current_job

        job = get_current_job()
    except Exception:
        job = None
    if job is not None and job.connection is not None:
        return job.connection
    import redis

    return redis.Redis.from_url(settings.redis_url)


def _worker_name() -> str:
    return os.environ.get("RQ_WORKER_ID") or f"{socket.gethostname()}-{os.getpid()}"


def run_match(match_id: str) -> dict[str, Any]:
    """Play league match ``match_id`` (stored by ``league run``) and record its result once."""
    from .progress import mark_finished_if_done
    from .ratings import record_result

    settings = WorkerSettings.from_env()
    r = job_connection(settings)
    record = store.get_match(r, match_id)
    if record is None:
        raise MatchError(f"no match {match_id!r} in the store")
    if store.get_result(r, match_id) is not None:
        log.info("match %s: result already recorded, nothing to do", match_id)
        return {"match_id": match_id, "recorded": False, "reason": "already recorded"}
    league = store.get_league(r, record.league)
    if league is None:
        raise MatchError(f"match {match_id}: no league {record.league!r}")
    if league.status in (store.LeagueStatus.CANCELLED, store.LeagueStatus.CLOSED):
        why = (
            "league cancelled" if league.status is store.LeagueStatus.CANCELLED else "ladder closed"
        )
        store.set_match_status(r, match_id, store.MatchStatus.CANCELLED, failure=why)
        return {"match_id": match_id, "recorded": False, "reason": why}
    if not store.start_match_attempt(r, match_id, _worker_name()):
        return {"match_id": match_id, "recorded": False, "reason": "already finished"}

    ls = league.settings
    tc = ls.time_control
    games = record.games  # a series: these deals in this one seating, the same bot processes
    plan = match_plan(r, record, ls)
    names = [seat.name for seat in plan.seats]
    deadline = job_timeout(ls.players, games, tc.per_decision_ms, tc.bank_ms) - 10
    match_dir = new_match_dir(settings, match_id)
    try:
        outcome = play_planned(
            r, settings, plan, record.seats, match_dir, deadline, compute=ls.compute
        )
        if outcome.status != "finished":
            raise MatchError(
                f"the referee ended the match as {outcome.status}: {outcome.reason or '-'}"
            )
        if [g.seed for g in outcome.games] != list(record.game_seeds):
            raise MatchError("the referee's games are not the series' deals (their seeds differ)")
        result = store.MatchResult(
            match_id=match_id,
            league=record.league,
            seats=record.seats,
            games=tuple(
                store.GameOutcome(ranks=g.result.ranks, totals=g.result.totals, faults=g.faults)
                for g in outcome.games
            ),
            finished=time.time(),
        )
        with _finishing():
            # Not applied now, yet stored exactly as this run made it (its finish time is this
            # run's): the script ran, and the connection broke before its answer came back.
            recorded = (
                record_result(r, result, ls.elo).applied or store.get_result(r, match_id) == result
            )
            if recorded:
                store_artifacts(r, match_id, outcome, settings.output_cap)
            mark_finished_if_done(r, record.league)
        if recorded:
            _notify_faults(r, result, outcome.replays)
        log.info(
            "match %s: %s in %.1f s (%s)",
            match_id,
            "recorded" if recorded else "already recorded by another run",
            outcome.seconds,
            " ".join(
                f"{n}:{'/'.join(str(g.result.ranks[seat]) for g in outcome.games)}"
                for seat, n in enumerate(names)
            ),
        )
        return {
            "match_id": match_id,
            "recorded": recorded,
            "seconds": round(outcome.seconds, 3),
            "ranks": [list(g.result.ranks) for g in outcome.games],
        }
    finally:
        shutil.rmtree(match_dir, ignore_errors=True)


def match_plan(r: redis.Redis, record: store.MatchRecord, ls: store.LeagueSettings) -> MatchPlan:
    """What the referee is asked to play for a stored league match (its job, and a re-run)."""
    tc, fp = ls.time_control, ls.fault_policy
    return MatchPlan(
        match_id=record.id,
        seed=record.seed,
        players=ls.players,
        games=record.games,
        per_decision_ms=tc.per_decision_ms,
        bank_ms=tc.bank_ms,
        faults_to_forfeit=fp.faults_to_forfeit,
        seats=tuple(SeatPlan(name=name) for name in seat_names(r, record.seats)),
        game_seeds=record.game_seeds,
    )


def seat_names(r: redis.Redis, versions: tuple[str, ...]) -> list[str]:
    names = []
    for vid in versions:
        version = store.get_version(r, vid)
        names.append(f"{version.name}@{vid[:8]}" if version else vid[:12])
    return names


# A unix socket path has at most 107 bytes on Linux (sun_path).
_MAX_SOCKET_PATH = 107


def new_match_dir(settings: WorkerSettings, match_id: str) -> Path:
    """A fresh directory for this attempt (a stale attempt of the same match may still run).

    Its name is short, because the referee's unix socket lives in it; when ``match_root`` is
    too long for that, a directory in the system's temporary directory is used (with a warning;
    the docker runner needs ``ARENA_MATCH_ROOT`` to be shared with the host, so set it short).
    It ends with this process's pid: a work horse stopped or killed before its ``finally`` leaves
    it, and its worker removes it (:func:`remove_match_dirs`).
    """
    name = f"{match_id[:12]}-{os.urandom(3).hex()}-{os.getpid():x}"
    root = _match_root(settings, name)
    if root != settings.match_root:
        log.warning(
            "ARENA_MATCH_ROOT %s is too long for a unix socket path; using %s",
            settings.match_root,
            root,
        )
    root.mkdir(parents=True, exist_ok=True)
    _prune_stale(root)
    path = root / name
    path.mkdir(mode=0o755)
    return path


_FALLBACK_ROOT = Path(tempfile.gettempdir()) / "arena-matches"
"""Where match directories go when a socket in ``match_root`` would be too long."""


def _match_root(settings: WorkerSettings, name: str) -> Path:
    """Where the match directory ``name`` goes: ``match_root``, unless its socket would be too
    long there."""
    root = settings.match_root
    if len(str(root / name / SOCKET_NAME).encode()) > _MAX_SOCKET_PATH:
        return _FALLBACK_ROOT
    return root


def remove_match_dirs(settings: WorkerSettings, pid: int) -> int:
    """Remove the match directories of the (ended) process ``pid``; how many there were."""
    found = 0
    for root in {settings.match_root, _FALLBACK_ROOT}:
        for path in root.glob(f"*-{pid:x}"):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
                found += 1
    return found


# A match directory older than this was left by a process that was killed and whose worker did
# not remove it (the worker itself died too); no match lives that long (settings.job_timeout).
STALE_DIR_S = 24 * 3600


def _prune_stale(root: Path) -> None:
    cutoff = time.time() - STALE_DIR_S
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir() and not entry.is_symlink() and entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


def play_planned(
    r: redis.Redis,
    settings: WorkerSettings,
    plan: MatchPlan,
    versions: tuple[str, ...],
    match_dir: Path,
    deadline_s: float,
    compute: str = "fixed",
    publish: bool = True,
    others: Mapping[int, StartBot] | None = None,
    on_created: OnCreated | None = None,
) -> PlayedMatch:
    """Play ``plan`` with each seat's version in its sandbox; ``compute`` is the bots'
    ``ARENA_COMPUTE`` (a league's compute mode; fixed by default). ``publish``: publish its
    public events as a live game (not for a re-run). ``others``: seats started by the function
    given instead (a casual game's person; their version is ``""``); ``on_created``: see
    :func:`.play.play_match`."""
    from .bots import bot_entry, sandbox_runner
    from .outage import without_retry
    from .registry import materialise
    from .sandbox import DEFAULT_LIMITS

    thinking = seat_thinking_s(plan.players, plan.games, plan.per_decision_ms, plan.bank_ms)
    runner = sandbox_runner(settings, DEFAULT_LIMITS.for_match(thinking))
    others = others or {}
    bot_dirs: list[Path | None] = []
    for seat, vid in enumerate(versions):
        path = None if seat in others else materialise(r, vid, match_dir / "bots" / f"seat{seat}")
        bot_dirs.append(None if path is None else bot_entry(path))
    nonces = [secrets.token_hex(8) for _ in versions]  # the output markers' (botoutput.py)

    def start_bot(
        seat: int, seat_plan: SeatPlan, socket_path: Path, token: str, log_path: Path
    ) -> Any:
        if seat in others:
            return others[seat](seat, seat_plan, socket_path, token, log_path)
        entry = bot_dirs[seat]
        assert entry is not None
        return runner.start(
            entry,
            socket_path=socket_path,
            token=token,
            log_path=log_path,
            name=f"{plan.match_id}-seat{seat}",
            env={COMPUTE_ENV: compute, OUTPUT_ENV: nonces[seat]},
        )

    played = run_play_match(
        plan,
        match_dir,
        start_bot,
        deadline_s=deadline_s,
        output_cap=settings.output_cap,
        # Live events are dropped in a Redis outage, never delayed or sent twice.
        live=LivePublisher(without_retry(r), plan.match_id) if publish else None,
        on_created=on_created,
    )
    played.output_nonces = nonces
    return played


def _notify_faults(r: redis.Redis, result: store.MatchResult, replay_docs: list[str]) -> None:
    """Tell the owners of the seats that faulted (their webhooks; never fails the match)."""
    from .webhooks import notify_faults

    try:
        notify_faults(r, result, replay_docs)
    except Exception:
        log.exception("match %s: fault notices not sent", result.match_id)


def store_artifacts(
    r: redis.Redis, match_id: str, outcome: PlayedMatch, cap: int = replays.BOT_LOG_CAP
) -> None:
    """Replays and bot output of the run whose result was recorded (stale ones replaced)."""
    replays.drop_replays(r, match_id)
    for game, replay in zip(outcome.games, outcome.replays, strict=False):
        replays.save_replay(r, match_id, game.game_index, replay)
    steps = botoutput.decision_steps([json.loads(doc) for doc in outcome.replays])
    for seat, text in enumerate(outcome.outputs):
        nonce = outcome.output_nonces[seat] if seat < len(outcome.output_nonces) else ""
        if nonce and seat < len(outcome.raw_outputs):
            split = botoutput.split_output(outcome.raw_outputs[seat], nonce, steps, seat)
            botoutput.save_output(r, match_id, seat, split.doc)
            text = capped_output(split.log, cap)
        # The output is capped already, with the truncation marker past the cap: keep it whole.
        replays.set_bot_log(r, match_id, seat, text.encode("utf-8"), cap=cap + MARKER_ROOM)


def failure_reason(exc_type: type[BaseException] | None, exc: BaseException | None) -> str:
    name = exc_type.__name__ if exc_type is not None else "error"
    if name == "AbandonedJobError":
        return "the worker running the match died (abandoned job, found by rq's maintenance)"
    if name == "WorkerStopping":
        return HANDED_BACK
    if name == "JobTimeoutException":
        return f"the match exceeded its job timeout ({exc})"
    text = str(exc) if exc is not None else ""
    reason = f"{name}: {text}" if text else name
    return reason[:_REASON_CAP]


def on_match_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """rq failure callback: record why the attempt failed, and whether it will be retried."""
    match_id = job.args[0] if job.args else None
    if not match_id:
        return
    reason = failure_reason(exc_type, exc)
    if reason == HANDED_BACK:  # not a failed attempt: back on the queue, its retries kept
        status = store.MatchStatus.QUEUED
    elif job.retries_left:
        status = store.MatchStatus.QUEUED
        left = job.retries_left
        reason = f"{reason} (retrying, {left} {'retry' if left == 1 else 'retries'} left)"
    else:
        status = store.MatchStatus.FAILED
    try:
        changed = store.set_match_status(connection, match_id, status, failure=reason)
    except store.StoreError:
        log.exception("match %s: could not record the failure %r", match_id, reason)
        return
    if changed:
        log.warning("match %s: attempt failed: %s", match_id, reason)
    if status is store.MatchStatus.FAILED:
        from .progress import mark_finished_if_done

        record = store.get_match(connection, match_id)
        if record is not None:
            mark_finished_if_done(connection, record.league)


# --------------------------------------------------------------------------- enqueueing

JOB_PREFIX = "arena-match-"
RESULT_TTL_S = 7 * 24 * 3600
FAILURE_TTL_S = 30 * 24 * 3600


def job_id(match_id: str) -> str:
    return JOB_PREFIX + match_id


def _queue(r: redis.Redis, settings: WorkerSettings) -> Any:
    from rq import Queue

    return Queue(settings.queue, connection=r)


def fetch_job(r: redis.Redis, match_id: str) -> Any:
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    try:
        return Job.fetch(job_id(match_id), connection=r)
    except NoSuchJobError:
        return None


def enqueue_matches(
    r: redis.Redis,
    league: store.League,
    match_ids: Iterable[str],
    settings: WorkerSettings,
    *,
    on_success: Any = None,
    on_failure: Any = None,
) -> int:
    """Enqueue these matches (one job each) unless a job for them is already waiting or running.

    ``on_success`` and ``on_failure`` are rq ``Callback``s (the failure one must record the
    failure as :func:`on_match_failure` does); by default none and :func:`on_match_failure`."""
    from rq import Callback, Retry

    queue = _queue(r, settings)
    ls = league.settings
    tc = ls.time_control
    timeout = job_timeout(ls.players, ls.deals_per_series, tc.per_decision_ms, tc.bank_ms)
    count = 0
    for match_id in match_ids:
        job = fetch_job(r, match_id)
        if job is not None:
            status = job.get_status(refresh=True)
            if status in ("queued", "started", "scheduled", "deferred"):
                continue
            job.delete()
        queue.enqueue(
            run_match,
            match_id,
            job_id=job_id(match_id),
            job_timeout=timeout,
            retry=Retry(max=settings.retries),
            on_failure=on_failure or Callback(on_match_failure),
            on_success=on_success,
            result_ttl=RESULT_TTL_S,
            failure_ttl=FAILURE_TTL_S,
            description=f"league {league.name}: match {match_id}",
        )
        count += 1
    return count
