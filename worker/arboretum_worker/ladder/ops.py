"""A ladder's operations: create, join, leave, pause, resume, close, open to authors; its status.

Statuses: a ladder is ``running`` (its scheduler tops the matches up), ``paused`` (nothing new
is scheduled; matches already queued or running are played) or ``closed`` (for good: nothing is
scheduled again, queued matches are cancelled, a running one finishes and counts). Each change
is refused with a clear error when it makes no sense (pausing a paused ladder, closing a closed
one, pausing a round robin).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS

from .. import store
from ..jobs import fetch_job
from ..progress import LeagueError, LeagueProgress, get_league, league_progress
from ..settings import WorkerSettings
from . import DEALS_PER_UNIT, state
from .scheduler import enqueue_tick, in_flight

if TYPE_CHECKING:
    import redis

__all__ = [
    "DEPTH",
    "NEW_GAMES",
    "LadderStatus",
    "close_ladder",
    "create_ladder",
    "get_ladder",
    "join_ladder",
    "ladder_status",
    "leave_ladder",
    "notice_submission",
    "open_ladder",
    "pause_ladder",
    "resume_ladder",
]

log = logging.getLogger(__name__)

_S = store.LeagueStatus

DEPTH = 8
"""Matches a ladder keeps queued or running, unless its creator says (``--depth``)."""
NEW_GAMES = 40
"""Games a new version plays before its pairings stop coming first (``--new-games``)."""


def get_ladder(r: redis.Redis, name: str) -> store.League:
    """The ladder ``name``; a LeagueError if there is none or it is a round robin."""
    league = get_league(r, name)
    if league.settings.ladder is None:
        raise LeagueError(
            f"league {name} is a round robin, not a ladder: only a ladder is opened, joined, left, "
            "paused, resumed or closed (a round robin is run and cancelled)"
        )
    return league


def create_ladder(
    r: redis.Redis,
    name: str,
    versions: Sequence[str],
    settings: WorkerSettings,
    *,
    depth: int = DEPTH,
    new_games: int = NEW_GAMES,
    per_decision_ms: int = DEFAULT_PER_DECISION_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    faults_to_forfeit: int = DEFAULT_FAULTS_TO_FORFEIT,
    seed: int | None = None,
    deals_per_series: int = DEALS_PER_UNIT,
    compute: str = "fixed",
    players: int = 2,
) -> store.League:
    """Create a running ladder of these versions (ids; one per bot) and tick it."""
    if players != 2:
        raise LeagueError(f"a ladder pairs two bots per game: --players must be 2, not {players}")
    names = store.version_names(r, versions)
    bots = [names[v] for v in versions]
    if None in bots:
        raise LeagueError("every version of a ladder must be a submitted bot's")
    if len(set(bots)) != len(bots):
        raise LeagueError("a ladder plays one version of each bot: name each bot once")
    ls = store.LeagueSettings(
        players=2,
        games_per_pairing=1,
        bots=tuple(versions),
        seed=int.from_bytes(os.urandom(8), "big") if seed is None else seed,
        time_control=store.TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
        fault_policy=store.FaultPolicy(faults_to_forfeit=faults_to_forfeit),
        deals_per_series=deals_per_series,
        compute=compute,
        ladder=store.LadderSettings(depth=depth, new_games=new_games),
    )
    league = store.create_league(r, name, ls)
    for vid, bot in zip(versions, bots, strict=True):
        state.enter(r, name, str(bot), vid, None)
    store.set_league_status(r, name, _S.RUNNING)
    enqueue_tick(r, name, settings)
    return store.League(league.name, ls, _S.RUNNING, league.created)


def join_ladder(
    r: redis.Redis, name: str, versions: Sequence[str], settings: WorkerSettings
) -> list[tuple[str, str, str | None]]:
    """Let these versions in (a bot's version replaces its member); returns (bot, version,
    the version it retired or None) for each that entered."""
    league = get_ladder(r, name)
    if league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed: nothing joins it any more")
    names = store.version_names(r, versions)
    done = []
    for vid in versions:
        bot = names[vid]
        if bot is None:
            raise LeagueError(f"version {vid[:12]} is not a submitted bot's")
        current = state.members(r, name).get(bot)
        if current == vid:
            raise LeagueError(f"{bot}@{vid[:8]} is in ladder {name} already")
        if state.enter(r, name, bot, vid, current) == 1:
            done.append((bot, vid, current))
    enqueue_tick(r, name, settings)
    return done


def leave_ladder(r: redis.Redis, name: str, bot: str) -> str:
    """Take ``bot`` out of the ladder (its version retired, its results kept); returns the
    version that left. A LeagueError when the bot is no member or the ladder is closed."""
    league = get_ladder(r, name)
    if league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed: nothing leaves it any more")
    left = state.leave(r, name, bot)
    if left is None:
        raise LeagueError(f"bot {bot} is not in ladder {name}")
    return left


def open_ladder(r: redis.Redis, name: str, value: bool = True) -> None:
    """Open the ladder to authors (they join and leave it with their own bots through the web
    API), or shut it to them (``value`` False: only the operator changes its members)."""
    league = get_ladder(r, name)
    if value and league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed: it cannot be opened to authors")
    state.set_open(r, name, value)


def pause_ladder(r: redis.Redis, name: str) -> None:
    league = get_ladder(r, name)
    if league.status is _S.PAUSED:
        raise LeagueError(f"ladder {name} is paused already (arena league resume {name})")
    if league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed: it cannot be paused")
    store.set_league_status(r, name, _S.PAUSED)


def resume_ladder(r: redis.Redis, name: str, settings: WorkerSettings) -> None:
    league = get_ladder(r, name)
    if league.status is _S.RUNNING:
        raise LeagueError(f"ladder {name} is running already")
    if league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed: a closed ladder does not run again")
    store.set_league_status(r, name, _S.RUNNING)
    enqueue_tick(r, name, settings)


def close_ladder(r: redis.Redis, name: str) -> int:
    """Close the ladder for good; its queued matches are cancelled (returns how many)."""
    league = get_ladder(r, name)
    if league.status is _S.CLOSED:
        raise LeagueError(f"ladder {name} is closed already")
    store.set_league_status(r, name, _S.CLOSED)
    count = 0
    for match in in_flight(r, name):
        if match.status is not store.MatchStatus.QUEUED:
            continue  # a running match finishes and counts
        job = fetch_job(r, match.id)
        if job is not None:
            try:
                if job.get_status(refresh=True) in ("queued", "scheduled", "deferred"):
                    job.cancel()
            except Exception as exc:  # the job may have started or ended meanwhile
                log.info("match %s: could not cancel its job: %s", match.id, exc)
        if store.set_match_status(
            r, match.id, store.MatchStatus.CANCELLED, failure="ladder closed"
        ):
            count += 1
    return count


@dataclass
class LadderStatus:
    league: store.League
    progress: LeagueProgress
    members: dict[str, str]
    """Bot name -> the version scheduled."""
    entries: dict[str, state.Entry]
    playing: list[store.MatchRecord]
    """Queued and running matches."""
    last_tick: dict[str, Any] | None
    open: bool = False
    """Authors may join and leave it themselves."""


def ladder_status(r: redis.Redis, name: str) -> LadderStatus:
    league = get_ladder(r, name)
    return LadderStatus(
        league=league,
        progress=league_progress(r, name),
        members=state.members(r, name),
        entries=state.entries(r, name),
        playing=in_flight(r, name),
        last_tick=state.last_tick(r, name),
        open=state.is_open(r, name),
    )


def notice_submission(r: redis.Redis, bot: str, settings: WorkerSettings) -> list[str]:
    """Tick every running ladder that ``bot`` is a member of (a new version of it was just
    submitted, and enters at the tick); returns their names."""
    ticked = []
    for league in store.get_leagues(r):
        if league.settings.ladder is None or league.status is not _S.RUNNING:
            continue
        if bot in state.members(r, league.name):
            enqueue_tick(r, league.name, settings)
            ticked.append(league.name)
    return ticked
