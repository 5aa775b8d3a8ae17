"""A seat held in the referee's process (``MatchHandle.attach``, :mod:`arboretum_server.inprocess`)
played by the SDK without gRPC (:func:`arboretum_sdk.channel.play_over`), beside seats whose bots
connect over gRPC (:func:`arboretum_sdk.client.run_bot`): a real referee, real bots, no mocks.

The seat is the same seat either way: a seeded match played with a bot over gRPC and over the
in-process seat gives the same replay and the bot the same messages; a malformed answer is the
same fault, with the same clear reason, and the seat is attached again to play on."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from referee_clients import ADMIN_TOKEN

from arboretum import Decision, GameResult, SeatView, verify_replay
from arboretum_proto.v1 import bot_pb2
from arboretum_sdk.bot import Bot
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.channel import play_over
from arboretum_sdk.client import run_bot
from arboretum_sdk.info import (
    FaultNotice,
    FaultPolicy,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    TimeControl,
)
from arboretum_server import AlreadyConnected, MatchConfig, Settings
from arboretum_server.inprocess import InProcessSeat
from arboretum_server.runner import MatchHandle, MatchRunner


@asynccontextmanager
async def runner() -> AsyncIterator[MatchRunner]:
    started = await MatchRunner.start(Settings(listen=("127.0.0.1:0",), admin_token=ADMIN_TOKEN))
    try:
        yield started
    finally:
        await started.stop(1.0)


def config(players: int, games: int, seed: int = 11) -> MatchConfig:
    return MatchConfig(
        players=players,
        match_seed=seed,
        game_count=games,
        seat_names=tuple("abcd"[:players]),
        time_control=TimeControl(per_decision_ms=5000, bank_ms=5000),
        fault_policy=FaultPolicy(faults_to_forfeit=3),
    )


class Recording(GreedyBot):
    """Greedy, noting every message it is given (all but the clocks, which tell the time)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def choose(self, view: SeatView) -> Decision:
        self.seen.append(("request", self.decision_number, view, self.events))
        return super().choose(view)

    def on_match_start(self, info: MatchInfo) -> None:
        self.seen.append(("match_start", info))

    def on_game_start(self, info: GameInfo) -> None:
        self.seen.append(("game_start", info, self.rng.random()))

    def on_fault(self, notice: FaultNotice) -> None:
        self.seen.append(("fault", notice))

    def on_game_end(self, result: GameResult, info: GameEnd) -> None:
        self.seen.append(("game_end", result, info, self.events))

    def on_match_end(self, info: MatchEnd) -> None:
        self.seen.append(("match_end", info))


def play_held(bot: Bot, seat: InProcessSeat) -> MatchEnd:
    """What a player of a held seat does in its thread: play, then let go."""
    try:
        return play_over(bot, seat)
    finally:
        seat.detach()


async def play(handle: MatchHandle, bots: list[Bot], held: set[int]) -> list[MatchEnd]:
    """Each seat's bot in a thread: over the in-process seat for the seats in ``held``, over
    gRPC with the seat's token for the others."""
    runs = []
    for seat, bot in enumerate(bots):
        if seat in held:
            runs.append(asyncio.to_thread(play_held, bot, handle.attach(seat)))
        else:
            runs.append(asyncio.to_thread(run_bot, bot, handle.address, handle.tokens[seat]))
    ends = await asyncio.wait_for(asyncio.gather(*runs), 120)
    assert await handle.wait(5)
    return list(ends)


def without_times(text: str) -> dict[str, Any]:
    """A replay (which verifies) with its steps' timings taken out, and so their digests, a hash
    chain over the steps as recorded: the one thing that differs between two runs."""
    doc = json.loads(text)
    verify_replay(doc)
    for step in doc["steps"]:
        del step["ms"], step["digest"]
    return doc


@pytest.mark.parametrize("players", [2, 4])
def test_a_match_with_a_seat_held_in_process(players: int) -> None:
    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(config(players, 2), match_id=f"held-{players}")
            bots: list[Bot] = [GreedyBot() for _ in range(players)]
            ends = await play(handle, bots, held={1})
            outcome = handle.outcome()
            assert outcome.status is MatchStatus.FINISHED
            assert all(end.status is MatchStatus.FINISHED for end in ends)
            assert all(g.faults == (0,) * players for g in outcome.games)
            for game, text in zip(outcome.games, await handle.replays(), strict=True):
                assert verify_replay(json.loads(text)).ranks == game.result.ranks
            assert not handle.connected(1), "the held seat let go at the end"

    asyncio.run(main())


def test_the_same_match_over_grpc_and_in_process_is_the_same() -> None:
    """Seat 0's greedy over gRPC, then over the in-process seat, in the same seeded match: the
    same replays (every decision, the results) and the same messages to the bot."""

    async def run(held: set[int]) -> tuple[list[dict[str, Any]], Recording, MatchEnd]:
        async with runner() as matches:
            handle = await matches.create(config(3, 3, seed=2026), match_id="same")
            recording = Recording()
            ends = await play(handle, [recording, GreedyBot(), GreedyBot()], held)
            assert handle.outcome().status is MatchStatus.FINISHED
            return [without_times(t) for t in await handle.replays()], recording, ends[0]

    async def main() -> None:
        over_grpc = await run(held=set())
        in_process = await run(held={0})
        assert in_process[0] == over_grpc[0]
        assert len(over_grpc[1].seen) > 50
        assert in_process[1].seen == over_grpc[1].seen
        assert in_process[2] == over_grpc[2]

    asyncio.run(main())


def test_a_malformed_answer_is_a_fault_and_the_seat_plays_on() -> None:
    """Garbage for an answer: the decision faults (the fallback plays) with a reason that says
    so, the referee ends the held stream as it ends a bot's call, and the seat attached again
    resumes and finishes the match."""

    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(config(2, 1), match_id="garbage")
            seat = handle.attach(0)
            with pytest.raises(AlreadyConnected):
                handle.attach(0)
            other = asyncio.create_task(
                asyncio.to_thread(run_bot, GreedyBot(), handle.address, handle.tokens[1])
            )

            def answer_garbage() -> list[str]:
                kinds = []
                while (data := seat.receive(timeout=30)) is not None:
                    message = bot_pb2.RefereeMessage.FromString(data)
                    kinds.append(message.WhichOneof("kind"))
                    if kinds[-1] == "decision_request":
                        seat.send(b"\xff\xfe not a BotMessage")
                return kinds

            kinds = await asyncio.to_thread(answer_garbage)
            assert kinds[:3] == ["match_start", "game_start", "decision_request"]
            assert kinds[3:] == ["fault_notice"], kinds
            assert seat.end is not None and seat.end.status == "INVALID_ARGUMENT"
            assert "does not decode as a BotMessage" in seat.end_reason
            assert not handle.over
            again = handle.attach(0)
            end = await asyncio.to_thread(play_held, GreedyBot(), again)
            assert end.status is MatchStatus.FINISHED
            await asyncio.wait_for(other, 60)
            outcome = handle.outcome()
            assert outcome.status is MatchStatus.FINISHED
            assert outcome.games[0].faults == (1, 0)
            doc = json.loads((await handle.replays())[0])
            assert "does not decode as a BotMessage" in json.dumps(doc)
            verify_replay(doc)

    asyncio.run(main())


def test_a_held_seat_let_go_is_disconnected_and_its_player_told() -> None:
    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(config(2, 1), match_id="let-go")
            seat = handle.attach(0)
            first = await asyncio.to_thread(seat.receive, 10)
            assert first is not None
            assert bot_pb2.RefereeMessage.FromString(first).WhichOneof("kind") == "match_start"
            seat.cancel()
            assert await asyncio.to_thread(seat.receive, 10) is None
            assert seat.end is not None and seat.end.status == "CANCELLED"
            await asyncio.sleep(0)  # the referee's side runs on its loop
            assert not handle.connected(0)
            seat.send(b"")  # after the end: dropped
            await handle.cancel("done")

    asyncio.run(main())
