"""The rq job of a casual game: one game on a private referee, the bots in their sandboxes as in a
league match, the person's seat held by the relay (:mod:`.relay`) in this process, on the
referee's match API (``MatchHandle.attach``).

:func:`casual_game` plays it (``arena-casual`` queue), then stores the replay for good
(``Keys.replay("casual-<id>")``, game 0), the game's result, and each bot version's game and
record against people; the feed ends with ``match_end`` (carrying the replay's URL path) or with
``error`` when the game could not be played. A casual game is never played again: a failure, a
timeout or a worker stopping ends it as ``failed`` (:func:`on_casual_failure` for the failures
that end the job itself). Nothing is written to a league, a ladder, Elo or a test.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk.stdio import lines

from .. import replays
from ..jobs import job_connection, new_match_dir, play_planned
from ..play import MatchPlan, PlayedMatch, SeatPlan, WorkerStopping
from ..settings import WorkerSettings
from . import feed
from .games import game_timeout, release
from .records import (
    BOT_CLOCK,
    PERSON_NAME,
    CasualGame,
    CasualSettings,
    Status,
    read_game,
    replay_url,
    resigned,
    set_status,
    store_result,
)
from .relay import RelaySeat

if TYPE_CHECKING:
    import redis

    from arboretum_server.inprocess import InProcessSeat
    from arboretum_server.runner import MatchHandle

__all__ = ["casual_game", "on_casual_failure", "replay_id"]

log = logging.getLogger(__name__)

_FAILED = "the game could not be played (an error on the worker)"


def replay_id(game_id: str) -> str:
    """Where a casual game's replay is stored (``replays.get_replay(r, replay_id, 0)``)."""
    return f"casual-{game_id}"


def _plan(game: CasualGame, names: list[str]) -> MatchPlan:
    """One game: the person's seat on the game's generous clock (the match's, which also sizes
    the job and the bots' sandboxes), each bot's on the referee's default clock (a bot that
    stalls forfeits in seconds, not after the person's minutes)."""
    return MatchPlan(
        match_id=game.game_id,
        seed=secrets.randbits(63),
        players=game.players,
        games=1,
        per_decision_ms=game.per_decision_ms,
        bank_ms=game.bank_ms,
        faults_to_forfeit=game.faults_to_forfeit,
        seats=tuple(
            SeatPlan(name=name, clock=None if seat == game.person_seat else BOT_CLOCK)
            for seat, name in enumerate(names)
        ),
    )


def _seat_names(game: CasualGame) -> list[str]:
    """The referee's (and the replay's) seat names: the person, and each bot's name@version."""
    return [
        PERSON_NAME if seat == game.person_seat else f"{name.partition('@')[0]}@{vid[:8]}"
        for seat, (name, vid) in enumerate(zip(game.names, game.seats, strict=True))
    ]


class _Person:
    """Starts the relay for the person's seat, attaches the seat and resigns it through the
    match's handle (on the referee's event loop: the relay calls from its threads)."""

    def __init__(self, r: redis.Redis, game: CasualGame) -> None:
        self.r = r
        self.game = game
        self.handle: MatchHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.seat: RelaySeat | None = None

    def created(self, handle: MatchHandle) -> None:
        self.handle, self.loop = handle, asyncio.get_running_loop()

    def start(self, seat: int, plan: SeatPlan, socket_path: Path, token: str, log: Path) -> Any:
        self.seat = RelaySeat(self.r, self.game.game_id, self.attach, self.resign)
        return self.seat

    def attach(self) -> InProcessSeat:
        handle, loop = self.handle, self.loop
        assert handle is not None and loop is not None, "the match is created before its seats"

        async def attach() -> InProcessSeat:
            return handle.attach(self.game.person_seat)

        return asyncio.run_coroutine_threadsafe(attach(), loop).result(timeout=30)

    def resign(self) -> bool:
        handle, loop = self.handle, self.loop
        if handle is None or loop is None:
            return False

        async def resign() -> bool:
            return handle.resign(self.game.person_seat, "the person resigned")

        return asyncio.run_coroutine_threadsafe(resign(), loop).result(timeout=10)


def casual_game(game_id: str) -> dict[str, Any]:
    """Play casual game ``game_id`` (started by :func:`.games.start_game`) and record it."""
    settings = WorkerSettings.from_env()
    casual = CasualSettings.from_env()
    r = job_connection(settings)
    game = read_game(r, game_id)
    if game is None or game.status != Status.QUEUED:
        return {"game": game_id, "played": False, "reason": "not waiting to be played"}
    if resigned(r, game_id):
        _fail(r, game, "you resigned before the game started", casual.keep_s)
        return {"game": game_id, "played": False, "reason": "resigned before the start"}
    game = replace(game, status=Status.PLAYING)
    set_status(r, game)
    release(r, game_id, queued_only=True)  # its address's count is held until the end
    feed.append(r, game_id, {"type": "started"})
    person = _Person(r, game)
    match_dir = new_match_dir(settings, game_id)
    try:
        played = play_planned(
            r,
            settings,
            _plan(game, _seat_names(game)),
            game.seats,
            match_dir,
            game_timeout(game) - 10,
            publish=False,
            others={game.person_seat: person.start},
            on_created=person.created,
        )
    except WorkerStopping:
        _fail(r, game, "the worker playing the game stopped", casual.keep_s)
        return {"game": game_id, "played": False, "reason": "the worker stopped"}
    except Exception:
        log.exception("casual game %s: not played", game_id)
        _fail(r, game, _FAILED, casual.keep_s)
        raise
    finally:
        shutil.rmtree(match_dir, ignore_errors=True)
    return _record(r, game, played, person, casual.keep_s)


def _record(
    r: redis.Redis, game: CasualGame, played: PlayedMatch, person: _Person, keep_s: int
) -> dict[str, Any]:
    """Store the replay, the result and the bots' records; end the feed."""
    if played.status != "finished" or not played.games:
        reason = f"the game ended early ({played.status})"
        _fail(r, game, reason, keep_s)
        return {"game": game.game_id, "played": False, "reason": reason}
    end = played.games[0]
    rid = replay_id(game.game_id)
    replays.save_replay(r, rid, 0, played.replays[0])
    result = end.result
    game = replace(
        game,
        status=Status.OVER,
        ended=time.time(),
        replay_id=rid,
        result={
            "ranks": list(result.ranks),
            "totals": list(result.totals),
            "forfeited": [s.forfeited for s in result.seats],
            "faults": list(end.faults),
        },
    )
    store_result(r, game, keep_s)
    release(r, game.game_id)
    ended = person.seat.relay.ended if person.seat is not None else None
    message: dict[str, Any] = (
        lines.match_end_message(ended)
        if ended is not None
        else {"type": "match_end", "status": "finished", "reason": "", "games": 1}
    )
    message["replay"] = replay_url(game.game_id)
    feed.append(r, game.game_id, message)
    log.info("casual game %s: over, ranks %s", game.game_id, list(result.ranks))
    return {"game": game.game_id, "played": True, "ranks": list(result.ranks)}


def _fail(r: redis.Redis, game: CasualGame, reason: str, keep_s: int) -> None:
    """End the game as failed: the record, the limits, and an ``error`` on the feed."""
    release(r, game.game_id)
    failed = replace(game, status=Status.FAILED, ended=time.time(), reason=reason)
    store_result(r, failed, keep_s)
    feed.append(r, game.game_id, {"type": "error", "reason": reason})


def on_casual_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """rq failure callback (a timeout, an abandoned job): the game ends as failed, once."""
    game_id = job.args[0] if job.args else None
    if not game_id:
        return
    game = read_game(connection, game_id)
    if game is None or game.over:
        return
    name = getattr(exc_type, "__name__", "")
    if name == "JobTimeoutException":
        reason = "the game exceeded its time limit"
    elif name == "AbandonedJobError":
        reason = "the worker playing the game stopped"
    else:
        reason = _FAILED
    _fail(connection, game, reason, CasualSettings.from_env().keep_s)
