"""The match API over gRPC: a referee in another process, driven through its admin service.

:class:`RemoteMatchRunner` is the one client of ``MatchService`` in the project (``arena play
--server``); it has the interface of the in-process :class:`~arboretum_server.runner.MatchRunner`
(``create``, ``wait``, ``outcome``, ``replays``, ``cancel``), so that a driver does not care where
its referee runs. What only a runner in the referee's process can do is refused: a crash report
(``report_crash`` and ``report_restart`` return False; the referee sees the stream end, a
``disconnect``) and the spectator subscription. Results arrive as protobuf and leave as the SDK's
:class:`~arboretum_sdk.info.GameEnd`, decoded by the SDK's wire module.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from arboretum_proto.v1 import common_pb2, match_pb2, match_pb2_grpc
from arboretum_sdk import wire
from arboretum_sdk.info import GameEnd, MatchStatus

from .errors import InvalidArgument, NotFound, Unavailable
from .matchconfig import MatchConfig
from .messages import is_over
from .runner import MatchOutcome

__all__ = ["ADMIN_METADATA", "RemoteMatchHandle", "RemoteMatchRunner"]

ADMIN_METADATA = "x-arena-admin-token"
POLL_S = 0.25
"""How often :meth:`RemoteMatchHandle.wait` asks the referee (``GetMatch``)."""
RPC_TIMEOUT_S = 30.0


class RemoteMatchRunner:
    """Matches on the referee at ``address``, created with its admin token."""

    def __init__(self, address: str, admin_token: str) -> None:
        self.address = address
        self._metadata = ((ADMIN_METADATA, admin_token),)
        self._channel = grpc.aio.insecure_channel(address)
        self._stub = match_pb2_grpc.MatchServiceStub(self._channel)

    async def create(self, config: MatchConfig, match_id: str | None = None) -> RemoteMatchHandle:
        """``CreateMatch``; a refused configuration raises :class:`InvalidArgument` with the
        referee's reason, an unreachable or full referee :class:`Unavailable`."""
        request = match_pb2.CreateMatchRequest(
            protocol_version=wire.PROTOCOL_VERSION,
            config=_config_to_pb(config),
            match_id=match_id or "",
        )
        try:
            created = await self._stub.CreateMatch(
                request, metadata=self._metadata, timeout=RPC_TIMEOUT_S
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:
                raise InvalidArgument(exc.details() or "invalid match") from None
            raise Unavailable(f"the referee at {self.address}: {exc.details()}") from None
        tokens = tuple(t.token for t in sorted(created.seat_tokens, key=lambda t: t.seat))
        return RemoteMatchHandle(self, created.match_id, tokens)

    async def stop(self, grace: float | None = None) -> None:
        """Close the connection (the referee itself keeps running)."""
        await self._channel.close(grace)

    async def _call(self, method: str, request: Any) -> Any:
        rpc = getattr(self._stub, method)
        return await rpc(request, metadata=self._metadata, timeout=RPC_TIMEOUT_S)


class RemoteMatchHandle:
    """One match on a remote referee (:meth:`RemoteMatchRunner.create`)."""

    def __init__(self, runner: RemoteMatchRunner, match_id: str, tokens: tuple[str, ...]) -> None:
        self._runner = runner
        self.match_id = match_id
        self.tokens = tokens
        self.address = runner.address
        self._outcome = MatchOutcome(MatchStatus.WAITING, "", ())
        self._asked = 0.0

    @property
    def status(self) -> MatchStatus:
        """As of the referee's last answer."""
        return self._outcome.status

    @property
    def over(self) -> bool:
        return is_over(self._outcome.status)

    async def wait(self, timeout: float | None = None) -> bool:
        """Wait until the match is over (at most ``timeout`` seconds), asking the referee every
        :data:`POLL_S`; whether it is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.over:
            due = self._asked + POLL_S - time.monotonic()
            if deadline is not None and time.monotonic() + max(due, 0) > deadline:
                await asyncio.sleep(max(0.0, deadline - time.monotonic()))
                return self.over
            if due > 0:
                await asyncio.sleep(due)
            await self._refresh()
        return True

    def outcome(self) -> MatchOutcome:
        """As of the referee's last answer (:meth:`wait` asks it)."""
        return self._outcome

    async def replays(self) -> list[str]:
        """Each finished game's replay, in order (``GetReplay``)."""
        out = []
        for game in self._outcome.games:
            reply = await self._runner._call(
                "GetReplay",
                match_pb2.GetReplayRequest(
                    protocol_version=wire.PROTOCOL_VERSION,
                    match_id=self.match_id,
                    game_index=game.game_index,
                ),
            )
            out.append(reply.replay_json)
        return out

    def report_crash(self, seat: int, reason: str = "") -> bool:
        """Not possible from another process: False (the referee sees a disconnect)."""
        return False

    def report_restart(self, seat: int) -> bool:
        return False

    async def cancel(self, reason: str, timeout: float = 2.0) -> None:
        """``CancelMatch`` (nothing when the match is over already or cannot be reached)."""
        request = match_pb2.CancelMatchRequest(
            protocol_version=wire.PROTOCOL_VERSION, match_id=self.match_id, reason=reason
        )
        rpc = self._runner._stub.CancelMatch
        try:
            await rpc(request, metadata=self._runner._metadata, timeout=timeout)
        except grpc.aio.AioRpcError:
            return

    async def _refresh(self) -> None:
        self._asked = time.monotonic()
        request = match_pb2.GetMatchRequest(
            protocol_version=wire.PROTOCOL_VERSION, match_id=self.match_id
        )
        try:
            info = (await self._runner._call("GetMatch", request)).match
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                raise NotFound(exc.details() or f"no match {self.match_id!r}") from None
            raise Unavailable(f"the referee at {self.address}: {exc.details()}") from None
        status = MatchStatus(
            common_pb2.MatchStatus.Name(info.status).removeprefix("MATCH_STATUS_").lower()
        )
        games = tuple(sorted(map(_game_end, info.results), key=lambda g: g.game_index))
        self._outcome = MatchOutcome(status, info.reason, games)


def _game_end(pb: Any) -> GameEnd:
    return GameEnd(
        game_index=pb.game_index,
        seed=pb.seed,
        species=tuple(wire.species_from_pb(v) for v in pb.species_in_play),
        turns=pb.turns,
        seat_names=tuple(s.name for s in pb.seats),
        faults=tuple(s.faults for s in pb.seats),
        result=wire.game_result_from_pb(pb),
    )


def _config_to_pb(config: MatchConfig) -> match_pb2.MatchConfig:
    pb = match_pb2.MatchConfig(
        player_count=config.players,
        match_seed=config.match_seed,
        game_count=config.game_count,
        seat_names=list(config.seat_names),
        start_timeout_ms=config.start_timeout_ms,
        game_seeds=list(config.game_seeds),
        time_control=wire.time_control_to_pb(config.time_control),
        fault_policy=wire.fault_policy_to_pb(config.fault_policy),
        seat_time_controls=[wire.time_control_to_pb(c) for c in config.seat_time_controls],
    )
    if config.species is not None:
        pb.species.extend(wire.species_to_pb(s) for s in config.species)
    return pb
