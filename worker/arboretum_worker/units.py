"""An author's units of work: one rq job each, held in the author's pending lists and released
round robin, at most ``ARENA_AUTHOR_SLOTS`` per author at a time (see :mod:`.queues`).

:func:`submit` stores units under the author's limits (all or none, in one script);
:func:`dispatch` releases what may run now (any number of processes may run it at once: each
author's claim is one script); :func:`run_unit` is the rq job that runs a unit's function,
charges its worker time to its author and releases the next units; :func:`on_unit_failure`
ends a unit whose retries are spent; :func:`cancel_units` drops or stops units.
"""

from __future__ import annotations

import importlib
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from . import store
from .queues import AUTHOR_KINDS, FairSettings, QueueKind, QuotaExceeded, queue_name, utc_day
from .settings import WorkerSettings

if TYPE_CHECKING:
    import redis

__all__ = [
    "Unit",
    "UnitSpec",
    "cancel_units",
    "dispatch",
    "end_unit",
    "get_unit",
    "on_unit_failure",
    "run_unit",
    "submit",
]

log = logging.getLogger(__name__)

RESULT_TTL_S = 7 * 24 * 3600
FAILURE_TTL_S = 30 * 24 * 3600
DAY_KEY_TTL_S = 2 * 24 * 3600


@dataclass(frozen=True)
class Unit:
    """One rq job of an author's work."""

    id: str
    author: str
    kind: QueueKind
    queue: str
    func: str
    """The dotted name of the job's function."""
    args: tuple[Any, ...]
    on_failure: str
    """The dotted name of the job's own failure callback, or ""."""
    matches: int
    timeout: int
    retries: int
    description: str
    state: str
    """``pending``, ``released``, ``done``, ``failed`` or ``cancelled``."""
    created: float
    released: float | None
    ended: float | None


def get_unit(r: redis.Redis, unit_id: str) -> Unit | None:
    raw = r.hgetall(store.Keys.fair_unit(unit_id))
    h = {store.as_text(k): store.as_text(v) for k, v in raw.items()}
    if not h:
        return None
    return Unit(
        id=unit_id,
        author=h["author"],
        kind=QueueKind(h["kind"]),
        queue=h["queue"],
        func=h["func"],
        args=tuple(json.loads(h["args"])),
        on_failure=h.get("on_failure", ""),
        matches=int(h["matches"]),
        timeout=int(h["timeout"]),
        retries=int(h.get("retries", "0")),
        description=h.get("description", ""),
        state=h["state"],
        created=float(h["created"]),
        released=float(h["released"]) if h.get("released") else None,
        ended=float(h["ended"]) if h.get("ended") else None,
    )


# KEYS: author hash, used today, authors zset, pending list, unit hashes...
# ARGV: max matches (0: none), budget (0: none), force (1/0), now, author, then per unit:
#       id, matches, fields (JSON object)
_SUBMIT = """
local n = #KEYS - 4
local total = 0
for i = 1, n do total = total + tonumber(ARGV[5 + 3 * (i - 1) + 2]) end
if ARGV[3] ~= '1' then
  local active = tonumber(redis.call('HGET', KEYS[1], 'active') or '0')
  local max = tonumber(ARGV[1])
  if max > 0 and active + total > max then return {-1, active} end
  local budget = tonumber(ARGV[2])
  local used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if budget > 0 and used >= budget then return {-2, math.floor(used)} end
end
local added = 0
local matches = 0
for i = 1, n do
  local key = KEYS[4 + i]
  local state = redis.call('HGET', key, 'state')
  if not state or state == 'done' or state == 'failed' or state == 'cancelled' then
    local base = 5 + 3 * (i - 1)
    redis.call('DEL', key)
    local fields = cjson.decode(ARGV[base + 3])
    for k, v in pairs(fields) do redis.call('HSET', key, k, v) end
    redis.call('HSET', key, 'state', 'pending', 'created', ARGV[4])
    redis.call('RPUSH', KEYS[4], ARGV[base + 1])
    added = added + 1
    matches = matches + tonumber(ARGV[base + 2])
  end
end
if added > 0 then
  redis.call('HINCRBY', KEYS[1], 'active', matches)
  redis.call('ZADD', KEYS[3], 'NX', 0, ARGV[5])
end
return {added, 0}
"""


@dataclass(frozen=True)
class UnitSpec:
    """What :func:`submit` stores for one unit."""

    id: str
    func: str
    args: tuple[Any, ...]
    matches: int
    timeout: int
    description: str = ""
    on_failure: str = ""


def submit(
    r: redis.Redis,
    author: str,
    kind: QueueKind,
    units: Sequence[UnitSpec],
    worker_settings: WorkerSettings,
    settings: FairSettings | None = None,
    *,
    force: bool = False,
    now: float | None = None,
) -> int:
    """Store ``units`` in ``author``'s pending list of ``kind`` (all or none: the limits are
    checked in the same script, unless ``force``, for the units a running test hands on), then
    dispatch. A unit whose id is pending or released already is skipped. Returns how many were
    added; raises :class:`QuotaExceeded`."""
    s = settings or FairSettings.from_env()
    now = time.time() if now is None else now
    day, left = utc_day(now)
    queue = queue_name(kind, worker_settings.queue)
    keys = [
        store.Keys.fair_author(author),
        store.Keys.fair_used(author, day),
        store.Keys.FAIR_AUTHORS,
        store.Keys.fair_pending(author, kind.value),
        *(store.Keys.fair_unit(u.id) for u in units),
    ]
    args: list[Any] = [s.max_matches, s.daily_seconds, 1 if force else 0, repr(now), author]
    for u in units:
        fields = {
            "author": author,
            "kind": kind.value,
            "queue": queue,
            "func": u.func,
            "args": json.dumps(list(u.args)),
            "on_failure": u.on_failure,
            "matches": str(u.matches),
            "timeout": str(u.timeout),
            "retries": str(worker_settings.retries),
            "description": u.description,
        }
        args += [u.id, u.matches, json.dumps(fields)]
    added, value = (int(x) for x in r.register_script(_SUBMIT)(keys=keys, args=args))
    if added == -1:
        total = sum(u.matches for u in units)
        raise QuotaExceeded(
            f"author {author} has {value} matches queued or running (the limit is "
            f"{s.max_matches}); this needs {total} more",
            limit="matches",
            retry_after=60,
        )
    if added == -2:
        raise QuotaExceeded(
            f"author {author} used {value} s of worker time today (the budget is "
            f"{s.daily_seconds:.0f} s a UTC day)",
            limit="daily",
            retry_after=left,
        )
    if added:
        dispatch(r, s, now=now)
    return added


CLAIM_GRACE_S = 60.0
"""A unit claimed this long ago and still not handed to rq lost its dispatcher (a process killed
or a Redis outage between the claim and the release): the next dispatch releases it."""

# KEYS: running set, authors zset, used today, claimed zset, pending lists (in release order)...
# ARGV: slots, budget (0: none), now, author
_CLAIM = """
if redis.call('SCARD', KEYS[1]) >= tonumber(ARGV[1]) then return false end
local budget = tonumber(ARGV[2])
if budget > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= budget then return false end
for i = 5, #KEYS do
  local unit = redis.call('LPOP', KEYS[i])
  if unit then
    redis.call('SADD', KEYS[1], unit)
    redis.call('ZADD', KEYS[4], ARGV[3], unit)
    local left = 0
    for j = 5, #KEYS do left = left + redis.call('LLEN', KEYS[j]) end
    if left > 0 then redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
    else redis.call('ZREM', KEYS[2], ARGV[4]) end
    return unit
  end
end
redis.call('ZREM', KEYS[2], ARGV[4])
return false
"""


# KEYS: claimed zset; ARGV: unit id, cutoff, now. The claim of a stranded unit, taken again by
# one dispatcher only (its score moves to now: if that one dies too, the next takes it later).
_RETAKE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) > tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


def dispatch(
    r: redis.Redis, settings: FairSettings | None = None, *, now: float | None = None
) -> list[str]:
    """Release the units that may go to rq now: round robin over the authors with pending
    units (least recently served first), at most ``slots`` released per author, none of an
    author over the day's budget. Safe to run in any number of processes at once. A unit
    claimed more than :data:`CLAIM_GRACE_S` ago and never handed to rq is released first (its
    dispatcher died between the two). Returns the ids released."""
    s = settings or FairSettings.from_env()
    now = time.time() if now is None else now
    day, _ = utc_day(now)
    script = r.register_script(_CLAIM)
    released: list[str] = []
    cutoff = now - CLAIM_GRACE_S
    retake = r.register_script(_RETAKE)
    for stranded in r.zrangebyscore(store.Keys.FAIR_CLAIMED, "-inf", cutoff):
        unit_id = store.as_text(stranded)
        if not retake(keys=[store.Keys.FAIR_CLAIMED], args=[unit_id, repr(cutoff), repr(now)]):
            continue  # another dispatcher took it first
        log.warning("unit %s: claimed but never released; releasing it now", unit_id)
        if _release(r, unit_id, now):
            released.append(unit_id)
    while True:
        authors = [store.as_text(a) for a in r.zrange(store.Keys.FAIR_AUTHORS, 0, -1)]
        progress = False
        for author in authors:
            keys = [
                store.Keys.fair_running(author),
                store.Keys.FAIR_AUTHORS,
                store.Keys.fair_used(author, day),
                store.Keys.FAIR_CLAIMED,
                *(store.Keys.fair_pending(author, k.value) for k in AUTHOR_KINDS),
            ]
            # Served in the same instant, authors keep their order: a strictly later score.
            now = max(now, time.time())
            claimed = script(keys=keys, args=[s.slots, s.daily_seconds, repr(now), author])
            if claimed is None:
                continue
            unit_id = store.as_text(claimed)
            if _release(r, unit_id, now):
                released.append(unit_id)
            progress = True
        if not progress:
            return released


def _release(r: redis.Redis, unit_id: str, now: float) -> bool:
    """Hand a claimed unit to rq (again, after a dispatcher that died: a unit ``released`` but
    with no live job gets one); the claim is then settled."""
    unit = get_unit(r, unit_id)
    if unit is None or unit.state not in ("pending", "released"):  # ended meanwhile
        if unit is not None:
            r.srem(store.Keys.fair_running(unit.author), unit_id)
        r.zrem(store.Keys.FAIR_CLAIMED, unit_id)
        return False
    if unit.state == "pending":
        r.hset(store.Keys.fair_unit(unit_id), mapping={"state": "released", "released": repr(now)})
    _enqueue(r, unit)
    r.zrem(store.Keys.FAIR_CLAIMED, unit_id)
    return True


def _enqueue(r: redis.Redis, unit: Unit) -> None:
    """The unit's rq job, unless one is queued or running already."""
    from rq import Callback, Queue, Retry
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    try:
        job = Job.fetch(unit.id, connection=r)
    except NoSuchJobError:
        job = None
    if job is not None:
        if job.get_status(refresh=True) in ("queued", "started", "scheduled", "deferred"):
            return
        job.delete()
    Queue(unit.queue, connection=r).enqueue(
        run_unit,
        unit.id,
        job_id=unit.id,
        job_timeout=unit.timeout,
        retry=Retry(max=unit.retries) if unit.retries else None,
        on_failure=Callback(on_unit_failure),
        result_ttl=RESULT_TTL_S,
        failure_ttl=FAILURE_TTL_S,
        description=unit.description or f"{unit.kind.value} of {unit.author}",
        meta={"author": unit.author, "kind": unit.kind.value},
    )


# KEYS: unit hash, running set, author hash, pending list; ARGV: state, now, unit id
_END = """
local st = redis.call('HGET', KEYS[1], 'state')
if st ~= 'pending' and st ~= 'released' then return 0 end
redis.call('LREM', KEYS[4], 0, ARGV[3])
redis.call('SREM', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'ended', ARGV[2])
redis.call('HINCRBY', KEYS[3], 'active', -tonumber(redis.call('HGET', KEYS[1], 'matches') or '0'))
redis.call('HINCRBY', KEYS[3], 'units', 1)
return 1
"""


def end_unit(r: redis.Redis, unit: Unit, state: str) -> bool:
    """End ``unit`` (once): its slot and its matches are the author's again."""
    keys = [
        store.Keys.fair_unit(unit.id),
        store.Keys.fair_running(unit.author),
        store.Keys.fair_author(unit.author),
        store.Keys.fair_pending(unit.author, unit.kind.value),
    ]
    return bool(int(r.register_script(_END)(keys=keys, args=[state, repr(time.time()), unit.id])))


def cancel_units(
    r: redis.Redis, unit_ids: Sequence[str], settings: FairSettings | None = None
) -> int:
    """Cancel these units: pending ones are dropped, released ones' jobs cancelled or stopped.
    Returns how many were ended now."""
    from rq.command import send_stop_job_command
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    count = 0
    for unit_id in unit_ids:
        unit = get_unit(r, unit_id)
        if unit is None or not end_unit(r, unit, "cancelled"):
            continue
        count += 1
        if unit.state != "released":
            continue
        try:
            job = Job.fetch(unit_id, connection=r)
            status = job.get_status(refresh=True)
            if status == "started":
                send_stop_job_command(r, job.id)
            elif status in ("queued", "scheduled", "deferred"):
                job.cancel()
        except NoSuchJobError:
            continue
        except Exception as exc:  # it may have ended meanwhile
            log.info("unit %s: could not stop its job: %s", unit_id, exc)
    if count:
        dispatch(r, settings)
    return count


def _charge(r: redis.Redis, unit: Unit, seconds: float) -> None:
    day, _ = utc_day()
    used = store.Keys.fair_used(unit.author, day)
    pipe = r.pipeline()
    pipe.incrbyfloat(used, seconds)
    pipe.expire(used, DAY_KEY_TTL_S)
    pipe.hincrbyfloat(store.Keys.fair_author(unit.author), "seconds", seconds)
    pipe.hincrbyfloat(store.Keys.fair_unit(unit.id), "seconds", seconds)
    pipe.execute()


def _call(dotted: str, *args: Any) -> Any:
    module, _, name = dotted.rpartition(".")
    return getattr(importlib.import_module(module), name)(*args)


def run_unit(unit_id: str) -> Any:
    """The rq job of a unit: run its function, charge its time to its author, end it, and
    release the next units."""
    from .jobs import job_connection

    r = job_connection(WorkerSettings.from_env())
    unit = get_unit(r, unit_id)
    if unit is None or unit.state not in ("released", "pending"):
        return {"unit": unit_id, "ran": False, "state": unit.state if unit else "gone"}
    started = time.monotonic()
    try:
        result = _call(unit.func, *unit.args)
    finally:
        _charge(r, unit, time.monotonic() - started)
    end_unit(r, unit, "done")
    dispatch(r)
    return result


def on_unit_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """rq failure callback: the unit's own callback first; a unit whose retries are spent (or
    that was stopped) ends, and the author's next units are released."""
    unit_id = job.args[0] if job.args else None
    unit = get_unit(connection, unit_id) if unit_id else None
    if unit is None:
        return
    if unit.on_failure:
        shim = SimpleNamespace(args=unit.args, retries_left=job.retries_left, id=job.id)
        try:
            _call(unit.on_failure, shim, connection, exc_type, exc, tb)
        except Exception:
            log.exception("unit %s: its failure callback failed", unit_id)
    name = exc_type.__name__ if exc_type is not None else ""
    if name == "WorkerStopping" or (job.retries_left and name != "StopRequested"):
        return  # back on the queue: the slot stays taken
    end_unit(connection, unit, "failed")
    dispatch(connection)
