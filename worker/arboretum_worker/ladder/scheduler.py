"""The ladder's scheduler: a tick, an rq job on the league's queue, tops the matches up.

A tick (:func:`tick`), under the ladder's lock (:mod:`.state`):

1. lets in new versions: a member whose bot has a later version in the registry is replaced by
   it (the old version is retired: never scheduled again, its results stay);
2. enqueues again any queued match of the ladder whose job is gone (a scheduler that died
   between storing a match and enqueueing it loses nothing);
3. fits the ladder's games (the batch fit's model, made on a table of wins per pair that is kept
   between ticks and to which a tick adds only the results recorded since the last, at most
   :data:`.fitdata.READ_LIMIT` of them, so that the first tick of a big ladder is bounded too
   and the next ticks read on, :mod:`.fitdata`; the pairs an operator left out of the fit are
   left out) and asks the choice
   function (:func:`.choice.choose`) for enough units to keep ``depth`` matches queued or
   running, knowing those in flight;
4. hands out the units' numbers (:func:`.state.allocate`, only while it holds the lock) and
   stores and enqueues each unit's matches: its D deals in both seat orders, packed as the
   league packs them (two series of D deals).

Ticks are triggered by every end of a ladder match (the match jobs' callbacks), by a
submission (``arena bot submit``), by ``arena league join`` and ``resume``, and by creating the
ladder. Any number may run at once: one holds the lock, the others mark it to tick again.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from threadpoolctl import threadpool_limits

from .. import store
from ..fit import FitError
from ..jobs import enqueue_matches, on_match_failure
from ..keys import Keys
from ..schedule import MatchSpec, deal_seed, league_order, match_id, pack_series, seating
from ..settings import WorkerSettings
from . import fitdata, state
from .choice import Belief, choose

if TYPE_CHECKING:
    import redis

__all__ = [
    "TICK_JOB_PREFIX",
    "TickReport",
    "enqueue_tick",
    "in_flight",
    "on_ladder_match_end",
    "on_ladder_match_failure",
    "run_tick",
    "tick",
    "unit_specs",
]

log = logging.getLogger(__name__)

TICK_JOB_PREFIX = "arena-ladder-"
TICK_FLAG_TTL_S = 300
"""A waiting tick job marks itself for this long, so that triggers meanwhile add no other."""


@dataclass
class TickReport:
    """What a tick did."""

    ladder: str
    status: str
    """``scheduled``, ``busy`` (another scheduler held the lock), ``lost-lock``, or the ladder's
    status when it schedules nothing (``paused``, ``closed``)."""
    entered: list[str] = field(default_factory=list)
    """Versions that entered."""
    units: list[tuple[str, str]] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)
    requeued: int = 0
    in_flight: int = 0
    behind: int = 0
    """Results not yet read into the ladder's fit (the next ticks read on)."""
    seconds: float = 0.0


def unit_specs(
    league: str, a: str, b: str, unit: int, deals_per_series: int, seed: int
) -> list[MatchSpec]:
    """The matches of unit ``unit`` of pairing {a, b}: its deals, each in both seat orders
    (:func:`arboretum_worker.schedule.seating`), packed into series of ``deals_per_series``."""
    combo = tuple(sorted((a, b)))
    order = league_order(combo, seed)
    games = []
    first = unit * deals_per_series
    for deal in range(first, first + deals_per_series):
        for rotation in range(2):
            games.append(
                MatchSpec(
                    match_id=match_id(league, combo, deal, rotation),
                    league=league,
                    seats=seating(order, deal, rotation),
                    combination=combo,
                    deal=deal,
                    rotation=rotation,
                    seed=deal_seed(seed, combo, deal),
                )
            )
    return pack_series(games, deals_per_series)


def in_flight(r: redis.Redis, name: str) -> list[store.MatchRecord]:
    """The ladder's queued and running matches."""
    ids: list[str] = []
    for status in (store.MatchStatus.QUEUED, store.MatchStatus.RUNNING):
        ids += [store.as_text(m) for m in r.zrange(Keys.league_status(name, status), 0, -1)]
    return [m for m in store.get_matches(r, ids) if m is not None]


def _enter_new_versions(r: redis.Redis, name: str) -> list[str]:
    entered = []
    members = state.members(r, name)
    pipe = r.pipeline(transaction=False)
    for bot in members:
        pipe.lindex(Keys.bot_versions(bot), -1)  # a bot's versions are listed oldest first
    for (bot, current), raw in zip(members.items(), pipe.execute(), strict=True):
        newest = None if raw is None else store.as_text(raw)
        if newest is None or newest == current:
            continue
        if state.enter(r, name, bot, newest, current) == 1:
            log.info("ladder %s: %s@%s entered, %s retired", name, bot, newest[:8], current)
            entered.append(newest)
    return entered


def _requeue_orphans(
    r: redis.Redis,
    league: store.League,
    flying: Sequence[store.MatchRecord],
    settings: WorkerSettings,
) -> int:
    queued = [m.id for m in flying if m.status is store.MatchStatus.QUEUED]
    return enqueue_matches(r, league, queued, settings, **ladder_callbacks())


def ladder_callbacks() -> dict[str, Any]:
    """The callbacks of a ladder's match jobs: every end of a match ticks the ladder."""
    from rq import Callback

    return {
        "on_success": Callback(on_ladder_match_end),
        "on_failure": Callback(on_ladder_match_failure),
    }


def tick(r: redis.Redis, name: str, settings: WorkerSettings) -> TickReport:
    """Top the ladder up (see the module doc). Safe to run any number of times, at once."""
    started = time.perf_counter()
    league = store.get_league(r, name)
    if league is None or league.settings.ladder is None:
        raise ValueError(f"no ladder named {name!r}")
    if league.status is not store.LeagueStatus.RUNNING:
        return TickReport(name, league.status.value)
    token = state.acquire(r, name)
    if token is None:
        return TickReport(name, "busy")
    report = TickReport(name, "scheduled")
    try:
        while True:
            _tick_locked(r, league, token, settings, report)
            if report.status != "scheduled" or state.release(r, name, token) != 2:
                break
            league = store.get_league(r, name) or league
            if league.status is not store.LeagueStatus.RUNNING:
                state.release(r, name, token)
                break
    except BaseException:
        state.release(r, name, token)
        raise
    report.seconds = time.perf_counter() - started
    state.set_last_tick(
        r,
        name,
        {
            "at": time.time(),
            "status": report.status,
            "units": len(report.units),
            "matches": len(report.matches),
            "in_flight": report.in_flight,
            "entered": report.entered,
            "seconds": round(report.seconds, 4),
        },
    )
    return report


def _tick_locked(
    r: redis.Redis, league: store.League, token: str, settings: WorkerSettings, report: TickReport
) -> None:
    name = league.name
    ls = league.settings
    assert ls.ladder is not None
    report.entered += _enter_new_versions(r, name)
    flying = in_flight(r, name)
    report.requeued += _requeue_orphans(r, league, flying, settings)
    missing = ls.ladder.depth - len(flying)
    report.in_flight = len(flying)
    if missing <= 0:
        return
    active = sorted(set(state.members(r, name).values()))
    if len(active) < 2:
        return
    data = fitdata.update(r, name)
    report.behind = data.behind
    versions, wins = fitdata.table(r, name, data)
    # One BLAS thread: a worker's tick runs beside other workers' matches, and OpenBLAS's
    # threads only spin against them (a 200 x 200 solve took 0.5 s instead of a few ms on a
    # busy 2-core machine; docs/benchmarks.md, "Ladder").
    with threadpool_limits(limits=1):
        units = _fit_and_choose(r, name, league, versions, wins, data, flying, active)
    numbers = state.allocate(r, name, token, [state.pairing(a, b) for a, b in units])
    if numbers is None:
        report.status = "lost-lock"
        return
    specs = [
        spec
        for (a, b), unit in zip(units, numbers, strict=True)
        for spec in unit_specs(name, a, b, unit, ls.deals_per_series, ls.seed)
    ]
    store.create_matches(r, specs)
    enqueue_matches(r, league, [s.match_id for s in specs], settings, **ladder_callbacks())
    report.units += units
    report.matches += [s.match_id for s in specs]


def _fit_and_choose(
    r: redis.Redis,
    name: str,
    league: store.League,
    versions: list[str],
    wins: np.ndarray,
    data: fitdata.FitData,
    flying: Sequence[store.MatchRecord],
    active: list[str],
) -> list[tuple[str, str]]:
    """The fit of the table, then the units that teach the most under it."""
    ls = league.settings
    assert ls.ladder is not None
    missing = ls.ladder.depth - len(flying)
    try:
        fitted = None
        if versions:
            fitted = fitdata.fit_table(versions, wins, start=data.maximum)
            fitdata.keep_maximum(r, name, data, fitted)
    except FitError as exc:
        log.warning("ladder %s: the fit failed (%s); scheduling from the prior", name, exc)
        fitted = None
    pending = [(m.seats[0], m.seats[1], m.games) for m in flying]
    involved = set(active) | {v for a, b, _ in pending for v in (a, b)}
    belief = Belief.of(involved, fitted)
    played = {} if fitted is None else dict(zip(versions, fitted.rankings.games, strict=True))
    per_unit = 2 * ls.deals_per_series
    return choose(
        belief,
        active,
        count=math.ceil(missing / 2),
        unit_games=per_unit,
        in_flight=pending,
        played=played,
        new_games=ls.ladder.new_games,
    )


# --------------------------------------------------------------------------- the tick job


def tick_job_id(name: str) -> str:
    import secrets

    return f"{TICK_JOB_PREFIX}{name}-{secrets.token_hex(4)}"


def enqueue_tick(r: redis.Redis, name: str, settings: WorkerSettings) -> bool:
    """Enqueue a tick of ladder ``name`` unless one is waiting already; True if enqueued."""
    from rq import Queue, Retry

    if not r.set(Keys.ladder(name, "queued"), "1", nx=True, ex=TICK_FLAG_TTL_S):
        return False
    Queue(settings.queue, connection=r).enqueue(
        run_tick,
        name,
        job_id=tick_job_id(name),
        job_timeout=120,
        retry=Retry(max=settings.retries),
        result_ttl=3600,
        failure_ttl=7 * 24 * 3600,
        description=f"ladder {name}: tick",
    )
    return True


def run_tick(name: str) -> dict[str, Any]:
    """The rq job: one tick of ladder ``name``."""
    from ..jobs import job_connection

    settings = WorkerSettings.from_env()
    r = job_connection(settings)
    r.delete(Keys.ladder(name, "queued"))  # triggers from now on enqueue another tick
    report = tick(r, name, settings)
    log.info(
        "ladder %s: tick %s, %d units (%d matches) scheduled, %d in flight before",
        name,
        report.status,
        len(report.units),
        len(report.matches),
        report.in_flight,
    )
    return {
        "status": report.status,
        "units": [list(u) for u in report.units],
        "matches": report.matches,
        "entered": report.entered,
    }


def _ladder_of(job: Any, connection: Any) -> str | None:
    match = job.args[0] if job.args else None
    if not match:
        return None
    league = connection.hget(Keys.match(match), "league")
    return None if league is None else store.as_text(league)


def on_ladder_match_end(job: Any, connection: Any, result: Any = None, *args: Any) -> None:
    """rq success callback of a ladder match: tick the ladder."""
    name = _ladder_of(job, connection)
    if name:
        enqueue_tick(connection, name, WorkerSettings.from_env())


def on_ladder_match_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """rq failure callback of a ladder match: record the failure as any league match's, then
    tick the ladder (a match that failed for good leaves room in the queue)."""
    on_match_failure(job, connection, exc_type, exc, tb)
    name = _ladder_of(job, connection)
    if name:
        enqueue_tick(connection, name, WorkerSettings.from_env())
