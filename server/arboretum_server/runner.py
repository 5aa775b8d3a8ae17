"""The in-process match API: what drives matches on a referee in the same process.

Every match driver in this process uses it (the league's match job, the sandbox check of a
submitted bot, ``arena play``, the local SPRT run); only the bots reach the referee over gRPC,
their stream being a real process boundary. A seat whose player runs in this process (a casual
game's person) is held here instead (:meth:`MatchHandle.attach`: the same bytes, no gRPC)::

    runner = await MatchRunner.start(Settings(listen=("unix:/run/arena/referee.sock",)))
    handle = await runner.create(MatchConfig(players=2, match_seed=7, game_count=10))
    ...  # start each seat's bot with handle.address and handle.tokens[seat]
    while not await handle.wait(0.05):  # the match's end wakes it at once
        ...  # look at the bot processes: handle.report_crash(seat, reason)
    outcome = handle.outcome()  # status, reason, per game the engine's result and the faults
    replays = await handle.replays()  # each finished game's replay (JSON text)
    await runner.stop()

A handle talks to the referee's :class:`~arboretum_server.match.Match` through its public
methods only: no protobuf, no admin token, no polling. :meth:`MatchHandle.watch` is the
spectator subscription: the match's public events as :class:`SpectatorEvent` values (a type and
its JSON fields, in the public replay's terms), the one shape in which a spectator on this side
of the wire sees a match. A referee in another process is driven through its gRPC admin service
by :class:`~arboretum_server.remote.RemoteMatchRunner`, the one thin gRPC client with the same
interface (``arena play --server``).

A finished game is the SDK's :class:`~arboretum_sdk.info.GameEnd` (the engine's
:class:`~arboretum.GameResult`, each seat's faults, the seed, the turns), as a bot is told it and
as the referee keeps it: there is no other shape of a result on this side of the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk.clitools import plural
from arboretum_sdk.info import GameEnd

from .errors import InvalidArgument, NotFound
from .matchconfig import MatchConfig
from .messages import MatchStatus, is_over
from .watchers import PublicFeed, SpectatorEvent, Watcher

if TYPE_CHECKING:
    from .config import Settings
    from .inprocess import InProcessSeat
    from .match import Match
    from .server import Referee

log = logging.getLogger(__name__)

__all__ = [
    "GameEnd",
    "MatchHandle",
    "MatchOutcome",
    "MatchRunner",
    "MatchStatus",
    "MatchWatch",
    "SpectatorEvent",
]


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """How a match ended (or stands): its status and reason, and each finished game in order
    (the engine's :class:`~arboretum.GameResult` with the seats' faults, seed and turns)."""

    status: MatchStatus
    reason: str
    games: tuple[GameEnd, ...]

    @property
    def finished(self) -> bool:
        return self.status is MatchStatus.FINISHED


class MatchWatch:
    """A spectator subscription to one match: its public events, in order, until its end.

    Iterate it (``async for event in watch``: :class:`SpectatorEvent` values). A consumer that
    batches (the league's live feed) takes the subscription's items from ``queue`` as they come
    (``None`` at the end; opaque: the match's own messages) and reads them later, in order,
    with :meth:`public`. A subscription that falls more than a queue's length behind is ended
    (``overflowed``). :meth:`close` ends it early."""

    def __init__(self, match: Match, watcher: Watcher) -> None:
        self._match = match
        self._watcher = watcher
        self._feed = PublicFeed()

    @property
    def queue(self) -> asyncio.Queue[object | None]:
        return self._watcher.queue  # type: ignore[return-value]

    def public(self, items: list[object]) -> list[SpectatorEvent]:
        """The public events of ``items`` taken from ``queue`` (each item once, in order; from
        one thread at a time)."""
        feed = self._feed
        return [event for item in items if item is not None for event in feed.events(item)]

    @property
    def overflowed(self) -> bool:
        return self._watcher.overflowed

    def close(self) -> None:
        self._match.unwatch(self._watcher)

    async def __aiter__(self) -> AsyncIterator[SpectatorEvent]:
        feed = self._feed
        while (message := await self._watcher.queue.get()) is not None:
            for event in feed.events(message):
                yield event


class MatchHandle:
    """One match created on an in-process referee (:meth:`MatchRunner.create`)."""

    def __init__(self, match: Match, tokens: list[str], address: str) -> None:
        self._match = match
        self.match_id = match.match_id
        self.tokens: tuple[str, ...] = tuple(tokens)
        """Each seat's token, by seat: what its bot connects with."""
        self.address = address
        """Where the bots connect (the referee's first listen address)."""

    @property
    def config(self) -> MatchConfig:
        return self._match.config

    @property
    def status(self) -> MatchStatus:
        return self._match.status

    @property
    def over(self) -> bool:
        return self._match.done.is_set()

    def connected(self, seat: int) -> bool:
        """Whether ``seat`` has a live stream now."""
        return self._match.seats[self._seat(seat)].connected

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the match is over (at most ``timeout`` seconds); whether it is."""
        done = self._match.done
        if timeout is None:
            await done.wait()
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), timeout)
        return done.is_set()

    def outcome(self) -> MatchOutcome:
        """The status, the reason and the games finished so far (all of them once it is over)."""
        match = self._match
        return MatchOutcome(match.status, match.reason, tuple(match.outcomes))

    def replay(self, game_index: int) -> tuple[dict[str, Any], bool] | None:
        """The replay document of a game and whether it is complete (a game in progress or
        stopped has a partial one); None for a game not started."""
        return self._match.replay(game_index)

    async def replays(self) -> list[str]:
        """Each finished game's replay, in order, as the JSON text ``GetReplay`` sends."""
        return [json.dumps(self._match.replays[g.game_index]) for g in self._match.outcomes]

    def report_crash(self, seat: int, reason: str = "") -> bool:
        """The bot process of ``seat`` exited: its decisions fault with ``crash`` at once until
        it reconnects. False once the match is over (nothing to report to)."""
        seat = self._seat(seat)
        if is_over(self._match.status):
            return False
        self._match.report_crash(seat, reason)
        return True

    def report_restart(self, seat: int) -> bool:
        """A fresh process replaces the crashed one of ``seat``: from the next game on the seat
        is only disconnected until it connects. False once the match is over."""
        seat = self._seat(seat)
        if is_over(self._match.status):
            return False
        self._match.report_restart(seat)
        return True

    def resign(self, seat: int, reason: str = "resigned") -> bool:
        """``seat`` gives up the game in progress: it forfeits as at its last fault (ranks last,
        the fallback plays its remaining decisions, the replay records it). False when no game is
        in progress (the match waits for its seats, or is over) or the seat forfeited already."""
        return self._match.resign(self._seat(seat), reason)

    def attach(self, seat: int) -> InProcessSeat:
        """A stream of ``seat`` held in this process, for a player in another thread (its
        messages and answers as the wire's bytes: :mod:`arboretum_server.inprocess`), in place of
        a bot connecting with ``tokens[seat]``. Raises ``MatchOver`` once the match is over and
        ``AlreadyConnected`` while the seat has a live stream."""
        from .inprocess import InProcessSeat  # (not on a league match's path)

        return InProcessSeat(self._match, self._seat(seat))

    def watch(self) -> MatchWatch:
        """A spectator subscription (see :class:`MatchWatch`)."""
        return MatchWatch(self._match, self._match.watch())

    async def cancel(self, reason: str, timeout: float = 10.0) -> None:
        """Stop the match now (the game in progress has no result) and wait for its end."""
        self._match.cancel(reason)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._match.done.wait(), timeout)

    def _seat(self, seat: int) -> int:
        if not 0 <= seat < len(self._match.seats):
            raise NotFound(f"match {self.match_id} has no seat {seat}")
        return seat


class MatchRunner:
    """Matches on a referee running in this process's event loop."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    @classmethod
    async def start(cls, settings: Settings, *, admin: bool = True) -> MatchRunner:
        """Start a referee in the running loop (see :func:`~arboretum_server.start_referee`)."""
        from .server import start_referee

        return cls(await start_referee(settings, admin=admin))

    @classmethod
    async def start_private(cls, socket_path: Path, max_matches: int = 4) -> MatchRunner:
        """Start a private referee: bots connect on ``unix:<socket_path>`` only, and only this
        process drives its matches (the league's match job, the sandbox check of a bot).

        It writes no replay files (``handle.replays()`` reads them from the referee's memory),
        and has no admin service (its admin token is random and known to nobody)."""
        from .config import Settings

        settings = Settings(
            listen=(f"unix:{socket_path}",),
            admin_token=secrets.token_urlsafe(24),
            replay_dir=None,
            max_matches=max_matches,
            keep_finished=16,
        )
        runner = await cls.start(settings, admin=False)
        log.debug("private referee listening on unix:%s", socket_path)
        return runner

    @property
    def address(self) -> str:
        return self.referee.address

    async def create(self, config: MatchConfig, match_id: str | None = None) -> MatchHandle:
        """Create and start a match (``match_id``: the id to give it, else the referee picks
        one). Raises :class:`~arboretum_server.errors.Unavailable` when the referee is full or
        draining, :class:`~arboretum_server.errors.MatchExists` for an id it has."""
        registry = self.referee.registry
        if config.game_count > registry.settings.max_games:
            raise InvalidArgument(
                f"a match of {plural(config.game_count, 'game')}: this referee plays at most "
                f"{registry.settings.max_games}"
            )
        match, tokens = registry.create(config, match_id)
        return MatchHandle(match, tokens, self.referee.address)

    def get(self, match_id: str) -> MatchHandle:
        """A handle on a match the referee knows (raises ``NotFound``)."""
        match = self.referee.registry.get(match_id)
        return MatchHandle(match, [s.token for s in match.seats], self.referee.address)

    async def stop(self, grace: float | None = 1.0) -> None:
        """Stop the referee: live matches are cancelled."""
        await self.referee.stop(grace)
