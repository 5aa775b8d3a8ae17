"""Small raw-stub clients for the referee tests: bots, an admin and a spectator.

The bots speak the protocol with the generated messages directly (no SDK client), so that the tests
can also send what a well-behaved client never would: garbage bytes, stale answers, illegal cards.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from arboretum import verify_replay
from arboretum_proto.v1 import bot_pb2, common_pb2, match_pb2, match_pb2_grpc
from arboretum_server import Referee, Settings, start_referee

PLAY_METHOD = "/arboretum.v1.BotService/Play"
ADMIN = "x-arena-admin-token"
ADMIN_TOKEN = "test-admin-token-0123456789abcdef"


def settings(tmp_path: Path, **changes: Any) -> Settings:
    values: dict[str, Any] = {
        "listen": ("127.0.0.1:0",),
        "admin_token": ADMIN_TOKEN,
        "replay_dir": tmp_path / "replays",
    }
    values.update(changes)
    return Settings(**values)


async def referee(tmp_path: Path, **changes: Any) -> Referee:
    return await start_referee(settings(tmp_path, **changes))


def _serialize(message: Any) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def play_call(channel: grpc.aio.Channel, token: str | tuple[str, ...] | None, **kwargs: Any) -> Any:
    """A ``Play`` call with the seat token (none, or several values of the header)."""
    method = channel.stream_stream(
        PLAY_METHOD,
        request_serializer=_serialize,
        response_deserializer=bot_pb2.RefereeMessage.FromString,
    )
    tokens = () if token is None else (token,) if isinstance(token, str) else token
    metadata = tuple(("x-arena-token", t) for t in tokens)
    return method(metadata=metadata, **kwargs)


def admin_md() -> tuple[tuple[str, str], ...]:
    return ((ADMIN, ADMIN_TOKEN),)


async def create_match(
    stub: match_pb2_grpc.MatchServiceStub,
    players: int,
    *,
    games: int = 1,
    seed: int | None = 7,
    per_decision_ms: int | None = None,
    bank_ms: int | None = None,
    faults_to_forfeit: int | None = None,
    start_timeout_ms: int = 10000,
    names: list[str] | None = None,
    game_seeds: list[int] | None = None,
    seat_clocks: list[tuple[int, int]] | None = None,
) -> match_pb2.CreateMatchResponse:
    config = match_pb2.MatchConfig(
        player_count=players, game_count=games, start_timeout_ms=start_timeout_ms
    )
    if seed is not None:
        config.match_seed = seed
    if per_decision_ms is not None:
        config.time_control.per_decision_ms = per_decision_ms
        config.time_control.bank_ms = bank_ms or 0
    if faults_to_forfeit is not None:
        config.fault_policy.faults_to_forfeit = faults_to_forfeit
    if names:
        config.seat_names.extend(names)
    if game_seeds is not None:
        config.game_seeds.extend(game_seeds)
    for per_decision_ms_, bank_ms_ in seat_clocks or ():
        config.seat_time_controls.add(per_decision_ms=per_decision_ms_, bank_ms=bank_ms_)
    return await stub.CreateMatch(
        match_pb2.CreateMatchRequest(protocol_version=1, config=config),
        metadata=admin_md(),
        timeout=10,
    )


def random_decision(request: bot_pb2.DecisionRequest, rng: random.Random) -> common_pb2.Decision:
    kind = request.kind
    if kind in (common_pb2.DECISION_KIND_FIRST_DRAW, common_pb2.DECISION_KIND_SECOND_DRAW):
        source = rng.choice(list(request.legal_sources))
        decision = common_pb2.Decision()
        target = (
            decision.first_draw
            if kind == common_pb2.DECISION_KIND_FIRST_DRAW
            else decision.second_draw
        )
        target.CopyFrom(source)
        return decision
    hand = list(request.view.hand)
    card = rng.choice(hand)
    cell = rng.choice(list(request.legal_cells))
    play = common_pb2.PlayDecision(card=card, cell=cell)
    if request.discard_required:
        play.discard.CopyFrom(rng.choice([c for c in hand if c != card]))
    return common_pb2.Decision(play=play)


def answer(number: int, decision: common_pb2.Decision) -> bot_pb2.BotMessage:
    return bot_pb2.BotMessage(
        protocol_version=1,
        answer=bot_pb2.DecisionAnswer(decision_number=number, decision=decision),
    )


Strategy = Callable[["RawBot", bot_pb2.DecisionRequest], Awaitable[list[Any] | None]]


async def random_strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
    return [answer(request.decision_number, random_decision(request, bot.rng))]


@dataclass
class RawBot:
    """A bot over the raw stub. ``strategy`` returns what to write for a request (None: stop)."""

    address: str
    token: str
    seed: int = 0
    strategy: Strategy = random_strategy
    received: list[bot_pb2.RefereeMessage] = field(default_factory=list)
    codes: list[grpc.StatusCode] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    requests: int = 0
    rng: random.Random = field(init=False)
    channel: grpc.aio.Channel | None = None
    call: Any = None
    reconnect_on_error: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def of_kind(self, kind: str) -> list[Any]:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("kind") == kind]

    async def run(self, *, reconnect_after: int | None = None, reconnect_on_error: int = 0) -> None:
        """Play until the stream ends. ``reconnect_after``: drop the stream after that many
        requests, then reconnect once; ``reconnect_on_error``: reconnect after that many
        streams that end with an error status."""
        self.channel = grpc.aio.insecure_channel(self.address)
        self.reconnect_on_error = reconnect_on_error
        try:
            while True:
                self.call = play_call(self.channel, self.token)
                again = await self._session(reconnect_after)
                if not again:
                    break
                reconnect_after = None
        finally:
            await self.channel.close()

    async def _session(self, drop_after: int | None) -> bool:
        call = self.call
        try:
            while True:
                message = await call.read()
                if message is grpc.aio.EOF:
                    break
                self.received.append(message)
                if message.WhichOneof("kind") == "match_end":
                    await call.done_writing()
                if message.WhichOneof("kind") != "decision_request":
                    continue
                self.requests += 1
                if drop_after is not None and self.requests >= drop_after:
                    call.cancel()
                    self.codes.append(grpc.StatusCode.CANCELLED)
                    await asyncio.sleep(0.05)
                    return True
                writes = await self.strategy(self, message.decision_request)
                if writes is None:
                    call.cancel()
                    self.codes.append(grpc.StatusCode.CANCELLED)
                    return False
                for item in writes:
                    try:
                        await call.write(item)
                    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                        break  # the referee already ended the call: read what it sent

        except grpc.aio.AioRpcError as exc:
            self.codes.append(exc.code())
            self.details.append(exc.details() or "")
            if self.reconnect_on_error > 0:
                self.reconnect_on_error -= 1
                return True
            return False
        self.codes.append(await call.code())
        self.details.append(await call.details() or "")
        return False


async def run_match(
    address: str,
    tokens: list[str],
    strategies: dict[int, Strategy] | None = None,
    run_kw: dict[int, dict[str, Any]] | None = None,
) -> list[RawBot]:
    bots = [
        RawBot(address, token, seed=seat, strategy=(strategies or {}).get(seat, random_strategy))
        for seat, token in enumerate(tokens)
    ]
    kw = run_kw or {}
    await asyncio.gather(*(bot.run(**kw.get(seat, {})) for seat, bot in enumerate(bots)))
    return bots


async def get_match(stub: match_pb2_grpc.MatchServiceStub, match_id: str) -> match_pb2.MatchInfo:
    response = await stub.GetMatch(
        match_pb2.GetMatchRequest(protocol_version=1, match_id=match_id), timeout=10
    )
    return response.match


async def replay(
    stub: match_pb2_grpc.MatchServiceStub, match_id: str, game: int, admin: bool = False
) -> tuple[dict[str, Any], bool]:
    response = await stub.GetReplay(
        match_pb2.GetReplayRequest(protocol_version=1, match_id=match_id, game_index=game),
        metadata=admin_md() if admin else (),
        timeout=10,
    )
    return json.loads(response.replay_json), response.complete


async def verified_replays(
    stub: match_pb2_grpc.MatchServiceStub, match_id: str, games: int
) -> list[dict[str, Any]]:
    docs = []
    for game in range(games):
        doc, complete = await replay(stub, match_id, game)
        assert complete
        verify_replay(doc)
        docs.append(doc)
    return docs


def faults_in(doc: dict[str, Any], seat: int) -> list[dict[str, str]]:
    return [s["fault"] for s in doc["steps"] if s.get("seat") == seat and "fault" in s]


def notes_in(doc: dict[str, Any], seat: int, kind: str) -> list[dict[str, Any]]:
    return [s for s in doc["steps"] if s.get("note") and s["seat"] == seat and s["kind"] == kind]
