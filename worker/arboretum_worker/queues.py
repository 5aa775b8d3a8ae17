"""The workers' queues, their priorities, and the fair sharing of the workers among authors.

**Queues.** Six rq queues, named from the base ``ARENA_QUEUE`` (default ``arena``), highest
priority first: ``arena-webhooks`` (webhook deliveries, short), ``arena`` (leagues and
ladders), ``arena-challenges`` (authors' challenges), ``arena-tests`` (authors' sequential
tests), ``arena-casual`` (casual games of people against bots: :mod:`.casual`) and
``arena-analysis`` (analysis of stored games). ``arena worker`` listens to all of them
(``ARENA_QUEUES``: the kinds it listens to, comma-separated, in any order).

**The ladder's share.** Before each job a worker orders its queues (:func:`queue_order`): the
league queue first while leagues would hold less than ``ARENA_LADDER_SHARE`` of the busy
workers (the jobs running now, from rq's started registries); with no other worker busy, while
leagues have had less than that share of the worker time of the last ``ARENA_FAIR_WINDOW_S``
seconds (exponentially decayed, every worker's jobs counted: :func:`record_usage`). Past it,
the authors' queues first. So a busy ladder keeps its share and leaves the rest to the
authors, and an idle one leaves everything to them.

**Authors share fairly.** An author's work never goes straight to rq: it is cut into *units*
(one rq job each: a challenge's match, a test's batch) held in the author's own pending lists
(:mod:`.units`). A dispatcher (run on every submit, every unit's end, and by every worker
before it takes a job) releases at most ``ARENA_AUTHOR_SLOTS`` units per author
into rq at a time, serving the authors least recently served first, and an author's challenges
before their tests. An rq queue thus holds at most a few units of each author, in round-robin
order: one author's 10,000-pair test takes one slot, and every other author's next unit is
at most one unit per author behind.

**Limits.** An author has at most ``ARENA_AUTHOR_MAX_MATCHES`` matches admitted and not ended
(pending or released), and ``ARENA_AUTHOR_DAILY_S`` seconds of worker time a UTC day
(:func:`admit`, :class:`QuotaExceeded`: a message and a Retry-After). A unit of an author whose
day's budget is spent stays pending until the next UTC day. Worker time is recorded per author,
per day and in total (:func:`author_usage`).
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from . import store
from .settings import DEFAULT_QUEUE, SettingsError, numbers_from_env

if TYPE_CHECKING:
    import redis

__all__ = [
    "AUTHOR_KINDS",
    "BEST_EFFORT",
    "PRIORITY",
    "AuthorUsage",
    "FairSettings",
    "QueueKind",
    "QuotaExceeded",
    "admit",
    "author_usage",
    "listened_kinds",
    "queue_name",
    "queue_order",
    "record_usage",
    "worker_niceness",
]

log = logging.getLogger(__name__)


class QueueKind(StrEnum):
    WEBHOOKS = "webhooks"
    """Webhook deliveries (webhooks.py): short, first."""
    LEAGUE = "league"
    CHALLENGES = "challenges"
    TESTS = "tests"
    CASUAL = "casual"
    ANALYSIS = "analysis"


PRIORITY = tuple(QueueKind)
"""The queues' kinds, highest priority first."""
AUTHOR_KINDS = (QueueKind.CHALLENGES, QueueKind.TESTS)
"""The kinds of an author's units, in the order an author's own units are released."""

RESULT_TTL_S = 7 * 24 * 3600
FAILURE_TTL_S = 30 * 24 * 3600
DAY_KEY_TTL_S = 2 * 24 * 3600


def queue_name(kind: QueueKind | str, base: str = DEFAULT_QUEUE) -> str:
    """The rq queue of ``kind``: the base itself for leagues, ``BASE-KIND`` for the others."""
    kind = QueueKind(kind)
    return base if kind is QueueKind.LEAGUE else f"{base}-{kind.value}"


def kind_of(queue: str, base: str = DEFAULT_QUEUE) -> QueueKind | None:
    for kind in QueueKind:
        if queue_name(kind, base) == queue:
            return kind
    return None


def listened_kinds(env: Mapping[str, str] | None = None) -> tuple[QueueKind, ...]:
    """The kinds ``arena worker`` listens to (``ARENA_QUEUES``), in priority order."""
    env = os.environ if env is None else env
    raw = env.get("ARENA_QUEUES", "").strip()
    if not raw:
        return PRIORITY
    wanted = {part.strip() for part in raw.split(",") if part.strip()}
    unknown = sorted(wanted - {k.value for k in QueueKind})
    if unknown:
        raise SettingsError(
            f"ARENA_QUEUES: no queue kind {unknown[0]!r} (kinds: "
            + ", ".join(k.value for k in PRIORITY)
            + ")"
        )
    return tuple(k for k in PRIORITY if k.value in wanted)


BEST_EFFORT = frozenset({QueueKind.CASUAL, QueueKind.ANALYSIS})
"""The kinds of work that may wait for a CPU: a person thinks for seconds between decisions,
an analysis is read later. A worker of these only runs at a lower CPU priority."""
BEST_EFFORT_NICE = 10


def worker_niceness(kinds: Sequence[QueueKind], env: Mapping[str, str] | None = None) -> int:
    """How much ``arena worker`` lowers its CPU priority (``nice``; its work horses, referees and
    bots inherit it, but for the docker sandbox's, which the container runtime starts):
    ``ARENA_WORKER_NICE`` (0 to 19) when set, else ``BEST_EFFORT_NICE`` for a worker that listens
    only to best-effort queues (:data:`BEST_EFFORT`) and 0 for the others. Where the kernel
    schedules each session as a group (Linux's autogroup), a ``nice`` weighs only within the
    worker's session: docs/league.md, "Casual games"."""
    env = os.environ if env is None else env
    raw = env.get("ARENA_WORKER_NICE", "").strip()
    if not raw:
        return BEST_EFFORT_NICE if kinds and set(kinds) <= BEST_EFFORT else 0
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if not 0 <= value <= 19:
        raise SettingsError(f"ARENA_WORKER_NICE: {raw!r} is not a whole number from 0 to 19")
    return value


@dataclass(frozen=True)
class FairSettings:
    """The per-author limits and the ladder's share (docs/league.md, "Queues and limits")."""

    max_matches: int = 48
    """``ARENA_AUTHOR_MAX_MATCHES``: matches an author may have queued or running (0: no limit)."""
    daily_seconds: float = 7200.0
    """``ARENA_AUTHOR_DAILY_S``: worker seconds per author per UTC day (0: no budget)."""
    slots: int = 1
    """``ARENA_AUTHOR_SLOTS``: units of one author released to rq at once."""
    ladder_share: float = 0.5
    """``ARENA_LADDER_SHARE``: the share of worker time the league queue keeps when busy."""
    window_s: float = 600.0
    """``ARENA_FAIR_WINDOW_S``: the decay time of the worker-time shares."""

    def __post_init__(self) -> None:
        if self.max_matches < 0 or self.slots < 1:
            raise SettingsError("ARENA_AUTHOR_MAX_MATCHES >= 0 and ARENA_AUTHOR_SLOTS >= 1")
        if self.daily_seconds < 0 or self.window_s <= 0:
            raise SettingsError("ARENA_AUTHOR_DAILY_S >= 0 and ARENA_FAIR_WINDOW_S > 0")
        if not 0 <= self.ladder_share <= 1:
            raise SettingsError(f"ARENA_LADDER_SHARE must be 0 to 1, got {self.ladder_share}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> FairSettings:
        fields = (
            ("max_matches", "ARENA_AUTHOR_MAX_MATCHES", int),
            ("daily_seconds", "ARENA_AUTHOR_DAILY_S", float),
            ("slots", "ARENA_AUTHOR_SLOTS", int),
            ("ladder_share", "ARENA_LADDER_SHARE", float),
            ("window_s", "ARENA_FAIR_WINDOW_S", float),
        )
        return cls(**numbers_from_env(os.environ if env is None else env, fields))


class QuotaExceeded(Exception):
    """An author is over a limit; ``retry_after`` seconds is when to ask again (HTTP 429)."""

    def __init__(self, message: str, *, limit: str, retry_after: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.retry_after = max(1, int(retry_after))


def utc_day(now: float | None = None) -> tuple[str, int]:
    """The UTC day (``YYYY-MM-DD``) and the whole seconds left in it."""
    now = time.time() if now is None else now
    day = time.strftime("%Y-%m-%d", time.gmtime(now))
    return day, int(86400 - now % 86400) + 1


def _used_today(r: redis.Redis, author: str, now: float | None = None) -> float:
    day, _ = utc_day(now)
    return float(r.get(store.Keys.fair_used(author, day)) or 0)


def admit(
    r: redis.Redis,
    author: str,
    matches: int,
    settings: FairSettings | None = None,
    *,
    now: float | None = None,
) -> None:
    """Raise :class:`QuotaExceeded` unless ``author`` may add ``matches`` matches now."""
    s = settings or FairSettings.from_env()
    if s.max_matches:
        if matches > s.max_matches:
            raise QuotaExceeded(
                f"this needs {matches} matches, more than the {s.max_matches} an author may "
                "have queued or running at once: ask for fewer deals or players",
                limit="matches",
                retry_after=3600,
            )
        active = int(r.hget(store.Keys.fair_author(author), "active") or 0)
        if active + matches > s.max_matches:
            raise QuotaExceeded(
                f"author {author} has {active} matches queued or running (the limit is "
                f"{s.max_matches}); this needs {matches} more",
                limit="matches",
                retry_after=60,
            )
    if s.daily_seconds:
        used = _used_today(r, author, now)
        if used >= s.daily_seconds:
            _, left = utc_day(now)
            raise QuotaExceeded(
                f"author {author} used {used:.0f} s of worker time today (the budget is "
                f"{s.daily_seconds:.0f} s a UTC day)",
                limit="daily",
                retry_after=left,
            )


# --------------------------------------------------------------------------- shares

# KEYS: usage hash; ARGV: now, window, kind, seconds
_USAGE = """
local now = tonumber(ARGV[1])
local stamp = tonumber(redis.call('HGET', KEYS[1], 'stamp') or ARGV[1])
local f = math.exp(-math.max(0, now - stamp) / tonumber(ARGV[2]))
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  if flat[i] ~= 'stamp' and string.sub(flat[i], 1, 6) ~= 'total:' then
    redis.call('HSET', KEYS[1], flat[i], tostring(tonumber(flat[i + 1]) * f))
  end
end
redis.call('HINCRBYFLOAT', KEYS[1], ARGV[3], ARGV[4])
redis.call('HINCRBYFLOAT', KEYS[1], 'total:' .. ARGV[3], ARGV[4])
redis.call('HSET', KEYS[1], 'stamp', ARGV[1])
return 1
"""


def record_usage(
    r: redis.Redis,
    kind: QueueKind,
    seconds: float,
    settings: FairSettings | None = None,
    *,
    now: float | None = None,
) -> None:
    """Count ``seconds`` of worker time to the queue ``kind`` (decayed over the window, and in
    a total that is not)."""
    s = settings or FairSettings.from_env()
    now = time.time() if now is None else now
    args = [repr(now), repr(s.window_s), kind.value, repr(float(seconds))]
    r.register_script(_USAGE)(keys=[store.Keys.FAIR_USAGE], args=args)


def shares(r: redis.Redis) -> dict[str, float]:
    """The decayed worker seconds of each queue kind (their ratio is what matters)."""
    raw = {store.as_text(k): store.as_text(v) for k, v in r.hgetall(store.Keys.FAIR_USAGE).items()}
    return {k: float(v) for k, v in raw.items() if k != "stamp" and ":" not in k}


def totals(r: redis.Redis) -> dict[str, float]:
    """The worker seconds of each queue kind since the store began (not decayed)."""
    raw = {store.as_text(k): store.as_text(v) for k, v in r.hgetall(store.Keys.FAIR_USAGE).items()}
    return {k[6:]: float(v) for k, v in raw.items() if k.startswith("total:")}


def queue_order(
    r: redis.Redis,
    kinds: Sequence[QueueKind],
    settings: FairSettings | None = None,
    running: Mapping[QueueKind, int] | None = None,
) -> list[QueueKind]:
    """The order in which a worker listening to ``kinds`` takes its next job. ``running``: the
    jobs the other workers run now, by kind.

    While other workers run league or author jobs, the league queue goes first if, with this
    worker on an author's job, the league would hold less than its share of the busy workers
    (so with 2 workers and a share of 0.5, one works for the ladder and one for the authors while
    both have work). With no other worker busy (one worker), the decayed worker time decides."""
    s = settings or FairSettings.from_env()
    ordered = [k for k in PRIORITY if k in kinds]
    if QueueKind.LEAGUE not in ordered:
        return ordered
    running = running or {}
    busy_league = running.get(QueueKind.LEAGUE, 0)
    busy_authors = sum(running.get(k, 0) for k in AUTHOR_KINDS)
    if busy_league + busy_authors:
        league_first = busy_league / (busy_league + busy_authors + 1) < s.ladder_share
    else:
        used = shares(r)
        league = used.get(QueueKind.LEAGUE.value, 0.0)
        authors = sum(used.get(k.value, 0.0) for k in AUTHOR_KINDS)
        league_first = league + authors <= 0 or league / (league + authors) < s.ladder_share
    if league_first:
        return ordered
    ordered.remove(QueueKind.LEAGUE)
    at = max((ordered.index(k) for k in AUTHOR_KINDS if k in ordered), default=-1) + 1
    ordered.insert(at, QueueKind.LEAGUE)
    return ordered


# --------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class AuthorUsage:
    author: str
    active_matches: int
    max_matches: int
    pending_units: int
    running_units: int
    used_today_s: float
    daily_budget_s: float
    total_s: float


def author_usage(r: redis.Redis, author: str, settings: FairSettings | None = None) -> AuthorUsage:
    s = settings or FairSettings.from_env()
    h = {
        store.as_text(k): store.as_text(v)
        for k, v in r.hgetall(store.Keys.fair_author(author)).items()
    }
    pending = sum(int(r.llen(store.Keys.fair_pending(author, k.value))) for k in AUTHOR_KINDS)
    return AuthorUsage(
        author=author,
        active_matches=int(h.get("active", 0)),
        max_matches=s.max_matches,
        pending_units=pending,
        running_units=int(r.scard(store.Keys.fair_running(author))),
        used_today_s=_used_today(r, author),
        daily_budget_s=s.daily_seconds,
        total_s=float(h.get("seconds", 0.0)),
    )


def notify(r: redis.Redis, author: str, event: str, payload: dict[str, Any]) -> None:
    """Tell ``author``'s webhook that ``event`` happened (when webhooks exist; never raises)."""
    try:
        webhooks = importlib.import_module(f"{__package__}.webhooks")
        webhooks.notify(r, author, event, payload)
    except Exception:
        log.warning("%s for %s: the webhook was not called", event, author, exc_info=True)
