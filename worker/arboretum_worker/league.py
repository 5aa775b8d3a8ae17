"""League operations behind the CLI: create, run, cancel and retry leagues, and find bot versions.

The bots' side (:mod:`.bots`), the rq jobs (:mod:`.jobs`) and a league's progress
(:mod:`.progress`) have modules of their own. The few of their names that the CLI, the web and
the tests take from here are re-exported (``builtin_bot_files``, ``sandbox_check``,
``LeagueError``, ``LeagueProgress``, ``league_progress``, ``mark_finished_if_done``,
``prepare_store``); anything else is imported from its own module.

Everything here talks to Redis through :mod:`.store`, :mod:`.matchindex`, :mod:`.registry` and
the modules above (it runs no Redis command of its own), and to rq through one queue
(``WorkerSettings.queue``, ``arena`` by default). Each scheduled match is one rq job,
:func:`arboretum_worker.jobs.run_match`, with the id ``arena-match-<match id>``, ``Retry(max=2)``,
the failure callback :func:`arboretum_worker.jobs.on_match_failure` and a timeout from
:func:`arboretum_worker.settings.job_timeout`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS

from . import matchindex, registry, store
from .bots import builtin_bot_files, sandbox_check
from .jobs import enqueue_matches, fetch_job
from .progress import (
    LeagueError,
    LeagueProgress,
    get_league,
    league_progress,
    mark_finished_if_done,
    prepare_store,
)
from .schedule import (
    DEFAULT_DEALS_PER_SERIES,
    balance_problem,
    balanced_games_per_pairing,
    round_robin,
)
from .settings import WorkerSettings

if TYPE_CHECKING:
    import redis

__all__ = [
    "LeagueError",
    "LeagueProgress",
    "builtin_bot_files",
    "cancel_league",
    "create_league",
    "league_progress",
    "mark_finished_if_done",
    "prepare_store",
    "resolve_version",
    "retry_league",
    "run_league",
    "sandbox_check",
]

log = logging.getLogger(__name__)


def resolve_version(r: redis.Redis, spec: str) -> str:
    """``NAME`` (its latest version), ``NAME@PREFIX`` or a full version id -> a version id."""
    name, _, prefix = spec.partition("@")
    if not prefix and store.get_version(r, spec) is not None:
        return spec
    versions = registry.versions(r, name)
    if not versions:
        raise LeagueError(
            f"no bot named {name!r} (submit it with: arena bot submit PATH --name {name}; the "
            "built-in bots are registered when a league names them)"
        )
    if not prefix:
        return versions[-1]
    found = [v for v in versions if v.startswith(prefix)]
    if len(found) != 1:
        raise LeagueError(
            f"{spec!r}: {'no' if not found else 'more than one'} version of {name} starts so"
        )
    return found[0]


def create_league(
    r: redis.Redis,
    name: str,
    bots: Sequence[str],
    *,
    players: int,
    games_per_pairing: int | None = None,
    per_decision_ms: int = DEFAULT_PER_DECISION_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    faults_to_forfeit: int = DEFAULT_FAULTS_TO_FORFEIT,
    seed: int | None = None,
    deals_per_series: int = DEFAULT_DEALS_PER_SERIES,
    compute: str = "fixed",
    allow_unbalanced: bool = False,
) -> store.League:
    """Create a league of these bots (names, ``name@version`` or version ids).
    ``games_per_pairing`` defaults to the smallest number that balances the seat orders
    (:func:`~.schedule.balanced_games_per_pairing`); one that does not balance them is refused
    unless ``allow_unbalanced``."""
    if games_per_pairing is None:
        games_per_pairing = balanced_games_per_pairing(players)
    problem = balance_problem(players, games_per_pairing)
    if problem is not None and not allow_unbalanced:
        raise LeagueError(f"{problem} (unless the league allows unbalanced seat orders)")
    versions = [resolve_version(r, spec) for spec in bots]
    if len(set(versions)) != len(versions):
        twice = sorted({s for s, v in zip(bots, versions, strict=True) if versions.count(v) > 1})
        raise LeagueError(
            f"a league lists each bot version once: {', '.join(twice)} name the same version"
        )
    settings = store.LeagueSettings(
        players=players,
        games_per_pairing=games_per_pairing,
        bots=tuple(versions),
        seed=int.from_bytes(os.urandom(8), "big") if seed is None else seed,
        time_control=store.TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
        fault_policy=store.FaultPolicy(faults_to_forfeit=faults_to_forfeit),
        deals_per_series=deals_per_series,
        compute=compute,
    )
    return store.create_league(r, name, settings)


def run_league(r: redis.Redis, name: str, settings: WorkerSettings) -> int:
    """Schedule the league's round robin (idempotent) and enqueue its unfinished matches."""
    league = get_league(r, name)
    if league.settings.ladder is not None:
        raise LeagueError(
            f"league {name} is a ladder: it schedules itself while it runs "
            f"(arena league pause|resume|close {name})"
        )
    if league.status is store.LeagueStatus.CANCELLED:
        raise LeagueError(f"league {name!r} was cancelled")
    ls = league.settings
    specs = round_robin(
        name, ls.bots, ls.players, ls.games_per_pairing, ls.seed, ls.deals_per_series
    )
    store.create_matches(r, specs)
    pending = matchindex.with_status(r, name, store.MatchStatus.QUEUED, store.MatchStatus.RUNNING)
    store.set_league_status(r, name, store.LeagueStatus.RUNNING)
    mark_finished_if_done(r, name)  # nothing left to play: a finished league stays finished
    return enqueue_matches(r, league, pending, settings)


def retry_league(r: redis.Redis, name: str, settings: WorkerSettings) -> list[str]:
    """Re-run the league's failed matches; returns their ids. A league never run, and a
    cancelled one (which ``run`` refuses too), are refused: a retry does not start nor resume a
    league."""
    league = get_league(r, name)
    if league.settings.ladder is not None:
        raise LeagueError(
            f"league {name} is a ladder: it does not play failed matches again, its scheduler "
            "plays other units of the same pairings instead"
        )
    if league.status is store.LeagueStatus.CANCELLED:
        raise LeagueError(f"league {name!r} was cancelled: its matches are not played again")
    if league.status is store.LeagueStatus.CREATED:
        raise LeagueError(f"league {name!r} has not run yet (arena league run {name})")
    again = []
    for match_id in matchindex.with_status(r, name, store.MatchStatus.FAILED):
        if store.set_match_status(
            r, match_id, store.MatchStatus.QUEUED, failure="(retry requested)"
        ):
            again.append(match_id)
    store.set_league_status(r, name, store.LeagueStatus.RUNNING)
    mark_finished_if_done(r, name)  # nothing to retry: a finished league stays finished
    enqueue_matches(r, league, again, settings)
    return again


def cancel_league(r: redis.Redis, name: str, settings: WorkerSettings) -> int:
    """Cancel the league: waiting matches are dropped, running ones stopped. Returns how many.
    A league that is over (finished, or cancelled already) is refused and left as it is."""
    from rq.command import send_stop_job_command

    mark_finished_if_done(r, name)  # a league whose last match ended is finished, not cancelled
    league = get_league(r, name)
    if league.settings.ladder is not None:
        raise LeagueError(f"league {name} is a ladder: close it (arena league close {name})")
    if league.status in (store.LeagueStatus.FINISHED, store.LeagueStatus.CANCELLED):
        raise LeagueError(
            f"league {name} is {league.status.value} already; there is nothing to cancel"
        )
    store.set_league_status(r, name, store.LeagueStatus.CANCELLED)
    count = 0
    for match_id in matchindex.with_status(
        r, name, store.MatchStatus.QUEUED, store.MatchStatus.RUNNING
    ):
        job = fetch_job(r, match_id)
        if job is not None:
            status = job.get_status(refresh=True)
            try:
                if status == "started":
                    send_stop_job_command(r, job.id)
                elif status in ("queued", "scheduled", "deferred"):
                    job.cancel()
            except Exception as exc:  # the job may have ended meanwhile
                log.info("match %s: could not stop its job: %s", match_id, exc)
        if store.set_match_status(
            r, match_id, store.MatchStatus.CANCELLED, failure="league cancelled"
        ):
            count += 1
    return count
