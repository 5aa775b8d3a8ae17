"""``arena sprt NEW OLD --league``: the sequential test played by the league's workers.

A test is a record in Redis (keys: :meth:`arboretum_worker.store.Keys.sprt`) and a chain of rq
jobs on the league's queue, one per batch (:mod:`.pairs`), :func:`.jobs.run_sprt_batch`. Nothing
lives in the process that started it: a test goes on when that process stops, and survives any
worker's death.

**Batches are handed out once.** ``window`` batches are enqueued when the test starts. A batch's
job, when it is done, *claims its successor* in one Lua script: the next batch index from a
counter, written against its own index (``successor``), so a job that runs again (a retry, or a
worker presumed dead that was still running) finds the successor it already claimed instead of
taking another. The job of a batch that is recorded, failed or already waiting is not enqueued
again. So ``window`` batches are in play until the test ends, however many workers there are.

**A batch is recorded once.** Its pairs are written with ``HSETNX`` and its index pushed on the
``order`` list in the same script: a batch played twice is counted once, by the first writer.

**The verdict is a function of the order list.** The test is the pairs of the recorded batches,
in the order they were recorded, fed to :class:`.stats.SprtState` until it ends; the pairs after
that are stored but not counted. Any process may take the test further (:func:`advance`: the
batches recorded since the last check, written with a compare-and-set on the number of batches
checked); two that race compute the same thing and one of them writes it. So a process that dies
between recording a batch and checking it loses nothing: the next one checks it.

**Failures.** A batch whose job fails is retried (``Retry``, as league matches are); when its
retries are spent it is marked failed, the chain goes on with its successor, and the test fails
when :data:`MAX_FAILED_BATCHES` batches have failed. League tests keep no replays.
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, cast

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS

from .. import store
from ..settings import WorkerSettings, job_timeout
from .stats import SprtSettings, SprtState, Verdict

if TYPE_CHECKING:
    import redis

__all__ = [
    "JOB_PREFIX",
    "MAX_FAILED_BATCHES",
    "LeagueTest",
    "TestStatus",
    "advance",
    "batch_job_id",
    "cancel_test",
    "claim_successor",
    "create_test",
    "enqueue_batch",
    "get_test",
    "list_tests",
    "llr_history",
    "record_batch",
    "record_failure",
    "test_state",
]

log = logging.getLogger(__name__)

JOB_PREFIX = "arena-sprt-"
MAX_FAILED_BATCHES = 3
"""A test fails when this many of its batches failed for good (their retries spent)."""
RESULT_TTL_S = 7 * 24 * 3600
FAILURE_TTL_S = 30 * 24 * 3600


class TestStatus(StrEnum):
    RUNNING = "running"
    FINISHED = "finished"
    """Ended with a verdict (H0, H1, or inconclusive at the cap)."""
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True)
class LeagueTest:
    id: str
    new: str
    """NEW's version id."""
    old: str
    settings: SprtSettings
    seed: int
    batch: int
    """Pairs per batch (games per match)."""
    window: int
    """Batches in play at once."""
    time_control: store.TimeControl
    fault_policy: store.FaultPolicy
    status: TestStatus
    verdict: Verdict | None
    reason: str
    created: float
    finished: float | None
    author: str = ""
    """The author who made the test (its batches go to the tests queue as the author's units,
    :mod:`.authors`); "" for the operator's (the league queue)."""

    @property
    def batches(self) -> int | None:
        """How many batches the test has at most (None without a cap)."""
        cap = self.settings.max_pairs
        return None if cap is None else -(-cap // self.batch)

    def batch_pairs(self, batch: int) -> int:
        from .pairs import batch_pairs

        return batch_pairs(batch, self.batch, self.settings.max_pairs)


def _config_json(test: LeagueTest) -> str:
    s = test.settings
    return json.dumps(
        {
            "elo0": s.elo0,
            "elo1": s.elo1,
            "alpha": s.alpha,
            "beta": s.beta,
            "max_pairs": s.max_pairs,
            "seed": test.seed,
            "batch": test.batch,
            "window": test.window,
            "per_decision_ms": test.time_control.per_decision_ms,
            "bank_ms": test.time_control.bank_ms,
            "faults_to_forfeit": test.fault_policy.faults_to_forfeit,
        },
        sort_keys=True,
    )


_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'new', ARGV[2], 'old', ARGV[3], 'config', ARGV[4],
           'status', 'running', 'created', ARGV[5])
redis.call('HSET', KEYS[3], 'checked', 0, 'snapshot', '')
redis.call('SET', KEYS[4], ARGV[6])
redis.call('ZADD', KEYS[2], ARGV[5], ARGV[1])
return 1
"""


def create_test(
    r: redis.Redis,
    new: str,
    old: str,
    settings: SprtSettings,
    worker_settings: WorkerSettings,
    *,
    seed: int | None = None,
    batch: int = 8,
    window: int = 4,
    per_decision_ms: int = DEFAULT_PER_DECISION_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    faults_to_forfeit: int = DEFAULT_FAULTS_TO_FORFEIT,
    author: str = "",
) -> LeagueTest:
    """Store a test of versions ``new`` against ``old`` (names, ``NAME@PREFIX`` or ids) and
    enqueue its first ``window`` batches. Raises :class:`~arboretum_worker.league.LeagueError`
    (an unknown bot, the same version twice) before anything is stored."""
    from ..league import LeagueError, resolve_version

    new_id, old_id = resolve_version(r, new), resolve_version(r, old)
    if new_id == old_id:
        raise LeagueError(
            f"NEW and OLD are the same version ({new} is {old_id[:12]}): "
            "a test compares two versions"
        )
    if batch < 1 or window < 1:
        raise LeagueError("batch and window are whole numbers of at least 1")
    test = LeagueTest(
        id=secrets.token_hex(6),
        new=new_id,
        old=old_id,
        settings=settings,
        seed=secrets.randbits(64) if seed is None else seed,
        batch=batch,
        window=window,
        time_control=store.TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
        fault_policy=store.FaultPolicy(faults_to_forfeit=faults_to_forfeit),
        status=TestStatus.RUNNING,
        verdict=None,
        reason="",
        created=time.time(),
        finished=None,
        author=author,
    )
    first = window if test.batches is None else min(window, test.batches)
    keys = [
        store.Keys.sprt(test.id),
        store.Keys.SPRTS,
        store.Keys.sprt(test.id, "state"),
        store.Keys.sprt(test.id, "next"),
    ]
    args: list[str | int] = [test.id, new_id, old_id, _config_json(test), repr(test.created), first]
    if not int(r.register_script(_CREATE)(keys=keys, args=args)):
        raise LeagueError(f"a test {test.id} exists already")  # 48 random bits: never
    if author:
        r.hset(store.Keys.sprt(test.id), "author", author)
        r.zadd(store.Keys.author_tests(author), {test.id: test.created})
    for index in range(first):
        enqueue_batch(r, test, index, worker_settings)
    return test


def get_test(r: redis.Redis, test_id: str) -> LeagueTest | None:
    try:
        h = r.hgetall(store.Keys.sprt(test_id))
    except store.StoreError:
        return None
    if not h:
        return None

    def text(name: str) -> str:
        value = h.get(name.encode())
        return store.as_text(value) if value is not None else ""

    config = json.loads(text("config"))
    verdict = text("verdict")
    finished = text("finished")
    return LeagueTest(
        id=text("id"),
        new=text("new"),
        old=text("old"),
        settings=SprtSettings(
            elo0=config["elo0"],
            elo1=config["elo1"],
            alpha=config["alpha"],
            beta=config["beta"],
            max_pairs=config["max_pairs"],
        ),
        seed=int(config["seed"]),
        batch=int(config["batch"]),
        window=int(config["window"]),
        time_control=store.TimeControl(
            per_decision_ms=int(config["per_decision_ms"]), bank_ms=int(config["bank_ms"])
        ),
        fault_policy=store.FaultPolicy(faults_to_forfeit=int(config["faults_to_forfeit"])),
        status=TestStatus(text("status")),
        verdict=Verdict(verdict) if verdict else None,
        reason=text("reason"),
        created=float(text("created")),
        finished=float(finished) if finished else None,
        author=text("author"),
    )


def list_tests(r: redis.Redis) -> list[str]:
    """Test ids, newest first."""
    return [store.as_text(t) for t in r.zrevrange(store.Keys.SPRTS, 0, -1)]


def batch_job_id(test_id: str, batch: int) -> str:
    return f"{JOB_PREFIX}{test_id}-{int(batch)}"


def enqueue_batch(r: redis.Redis, test: LeagueTest, batch: int, settings: WorkerSettings) -> bool:
    """Enqueue the job of ``batch`` unless the batch is recorded, failed, or its job is waiting
    or running already. Whether a job was enqueued."""
    from rq import Callback, Queue, Retry
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    index = str(int(batch))
    if r.hexists(store.Keys.sprt(test.id, "batches"), index) or r.hexists(
        store.Keys.sprt(test.id, "failed"), index
    ):
        return False
    job_id = batch_job_id(test.id, batch)
    try:
        job = Job.fetch(job_id, connection=r)
    except NoSuchJobError:
        job = None
    if job is not None:
        if job.get_status(refresh=True) in ("queued", "started", "scheduled", "deferred"):
            return False
        job.delete()
    tc = test.time_control
    # Two matches of ``batch`` games each, one after the other.
    timeout = 2 * job_timeout(2, test.batch_pairs(batch), tc.per_decision_ms, tc.bank_ms)
    if test.author:  # the author's unit, released in turn with every other author's
        from ..queues import QueueKind
        from ..units import UnitSpec, submit

        unit = UnitSpec(
            id=job_id,
            func=f"{__package__}.jobs.run_sprt_batch",
            args=(test.id, int(batch)),
            matches=2,
            timeout=timeout,
            description=f"sprt {test.id}: batch {batch}",
            on_failure=f"{__package__}.jobs.on_sprt_failure",
        )
        return submit(r, test.author, QueueKind.TESTS, [unit], settings, force=True) > 0
    # By name: the job module imports this one.
    Queue(settings.queue, connection=r).enqueue(
        f"{__package__}.jobs.run_sprt_batch",
        test.id,
        int(batch),
        job_id=job_id,
        job_timeout=timeout,
        retry=Retry(max=settings.retries),
        on_failure=Callback(f"{__package__}.jobs.on_sprt_failure"),
        result_ttl=RESULT_TTL_S,
        failure_ttl=FAILURE_TTL_S,
        description=f"sprt {test.id}: batch {batch}",
    )
    return True


_RECORD = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  return 1
end
return 0
"""


def record_batch(
    r: redis.Redis, test_id: str, batch: int, scores: list[tuple[float, float]]
) -> bool:
    """Record a batch's pairs (NEW's two game scores each) once. Whether this call recorded it."""
    outcome = json.dumps({"scores": [[a, b] for a, b in scores]})
    keys = [store.Keys.sprt(test_id, "batches"), store.Keys.sprt(test_id, "order")]
    return bool(int(r.register_script(_RECORD)(keys=keys, args=[int(batch), outcome])))


_CLAIM = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return -1 end
local claimed = redis.call('HGET', KEYS[3], ARGV[1])
if claimed then return tonumber(claimed) end
local n = redis.call('INCR', KEYS[2]) - 1
local total = tonumber(ARGV[2])
if total >= 0 and n >= total then n = -1 end
redis.call('HSET', KEYS[3], ARGV[1], n)
return n
"""


def claim_successor(r: redis.Redis, test: LeagueTest, batch: int) -> int | None:
    """The batch that ``batch`` hands on to (the same one however often it is asked), or None
    when the test is over or every batch has been handed out."""
    keys = [
        store.Keys.sprt(test.id),
        store.Keys.sprt(test.id, "next"),
        store.Keys.sprt(test.id, "successor"),
    ]
    total = -1 if test.batches is None else test.batches
    claimed = int(r.register_script(_CLAIM)(keys=keys, args=[int(batch), total]))
    return None if claimed < 0 else claimed


def record_failure(r: redis.Redis, test: LeagueTest, batch: int, reason: str) -> None:
    """A batch failed for good: note it; fail the test after :data:`MAX_FAILED_BATCHES`."""
    failed = store.Keys.sprt(test.id, "failed")
    r.hsetnx(failed, str(int(batch)), reason[:500])
    count = int(r.hlen(failed))
    if count >= MAX_FAILED_BATCHES:
        _end(r, test.id, TestStatus.FAILED, None, f"{count} batches failed; the last: {reason}")


_END = """
if redis.call('HGET', KEYS[1], 'status') ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'verdict', ARGV[2], 'reason', ARGV[3],
           'finished', ARGV[4])
return 1
"""


def _end(
    r: redis.Redis, test_id: str, status: TestStatus, verdict: Verdict | None, reason: str
) -> bool:
    args = [status.value, verdict.value if verdict else "", reason, f"{time.time():.6f}"]
    return bool(int(r.register_script(_END)(keys=[store.Keys.sprt(test_id)], args=args)))


def cancel_test(r: redis.Redis, test_id: str) -> bool:
    """Stop a running test: its waiting jobs are dropped, its running ones stopped."""
    from rq.command import send_stop_job_command
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    if not _end(r, test_id, TestStatus.CANCELLED, None, "cancelled"):
        return False
    handed_out = int(r.get(store.Keys.sprt(test_id, "next")) or 0)
    for batch in range(handed_out):
        try:
            job = Job.fetch(batch_job_id(test_id, batch), connection=r)
        except NoSuchJobError:
            continue
        try:
            status = job.get_status(refresh=True)
            if status == "started":
                send_stop_job_command(r, job.id)
            elif status in ("queued", "scheduled", "deferred"):
                job.cancel()
        except Exception as exc:  # it may have ended meanwhile
            log.info("sprt %s batch %d: could not stop its job: %s", test_id, batch, exc)
    return True


# --------------------------------------------------------------------------- the verdict


def _snapshot(state: SprtState) -> str:
    return json.dumps(
        {
            "counts": state.counts,
            "wins": state.wins,
            "draws": state.draws,
            "losses": state.losses,
            "llr": state.llr,
            "verdict": state.verdict.value if state.verdict else None,
        }
    )


def test_state(r: redis.Redis, test: LeagueTest) -> SprtState:
    """The test as last checked (counts, LLR, verdict)."""
    raw = r.hget(store.Keys.sprt(test.id, "state"), "snapshot")
    state = SprtState(test.settings)
    if raw:
        snap = json.loads(raw)
        state.counts = list(snap["counts"])
        state.wins, state.draws, state.losses = snap["wins"], snap["draws"], snap["losses"]
        state.llr = float(snap["llr"])
        state.verdict = Verdict(snap["verdict"]) if snap["verdict"] else None
    return state


def llr_history(r: redis.Redis, test_id: str) -> list[float]:
    """The LLR after each counted pair."""
    return [float(v) for v in r.lrange(store.Keys.sprt(test_id, "llr"), 0, -1)]


_ADVANCE = """
if tonumber(redis.call('HGET', KEYS[1], 'checked')) ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'checked', ARGV[2], 'snapshot', ARGV[3])
for i = 8, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[3], 'status') == 'running' then
  redis.call('HSET', KEYS[3], 'status', ARGV[4], 'verdict', ARGV[5], 'reason', ARGV[6],
             'finished', ARGV[7])
end
return 1
"""


def advance(r: redis.Redis, test_id: str) -> LeagueTest | None:
    """Take the test as far as its recorded batches go; end it at its verdict. Safe to call from
    any number of processes at once. Returns the test as it then is."""
    script = r.register_script(_ADVANCE)
    keys = [
        store.Keys.sprt(test_id, "state"),
        store.Keys.sprt(test_id, "llr"),
        store.Keys.sprt(test_id),
    ]
    for _ in range(20):
        test = get_test(r, test_id)
        if test is None or test.status is not TestStatus.RUNNING:
            return test
        checked = int(r.hget(keys[0], "checked") or 0)
        state = test_state(r, test)
        pending = [
            store.as_text(b) for b in r.lrange(store.Keys.sprt(test_id, "order"), checked, -1)
        ]
        llrs: list[str] = []
        if pending and state.verdict is None:
            outcomes = r.hmget(store.Keys.sprt(test_id, "batches"), pending)
            for raw in outcomes:
                for first, second in json.loads(cast(bytes, raw))["scores"]:
                    state.add(float(first), float(second))
                    llrs.append(repr(state.llr))
                    if state.verdict is not None:
                        break
                if state.verdict is not None:
                    break
        reason = ""
        if state.verdict is None and test.batches is not None:
            failed = r.hkeys(store.Keys.sprt(test_id, "failed"))
            recorded = r.hmget(store.Keys.sprt(test_id, "batches"), failed) if failed else []
            done = checked + len(pending) + sum(1 for x in recorded if x is None)
            if done >= test.batches:
                state.verdict = Verdict.INCONCLUSIVE
                reason = "every batch was played or failed before a bound was reached"
        if not pending and state.verdict is None:
            return test
        status = TestStatus.FINISHED.value if state.verdict is not None else ""
        args = [
            checked,
            checked + len(pending),
            _snapshot(state),
            status,
            state.verdict.value if state.verdict else "",
            reason,
            f"{time.time():.6f}",
            *llrs,
        ]
        if int(script(keys=keys, args=args)):
            return get_test(r, test_id)
    return get_test(r, test_id)
