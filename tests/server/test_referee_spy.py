"""A spy records everything it can get while it plays: its stream, a spectator stream, and GetMatch,
ListMatches and GetReplay calls while each game runs. Afterwards, the referee's own replays say
which cards stayed hidden from it; none of them, and no seed, may appear in what it got in time."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import text_format
from google.protobuf.message import Message
from referee_clients import (
    RawBot,
    answer,
    create_match,
    random_decision,
    referee,
    run_match,
    verified_replays,
)

from arboretum import Card, derive_game_seed
from arboretum_proto.v1 import bot_pb2, common_pb2, game_pb2, match_pb2, match_pb2_grpc

MATCH_SEED = 0x1234_5678_9ABC_DEF0
GAMES = 2


def cards_in(message: Message) -> set[tuple[int, int]]:
    """Every Card in ``message``, except inside a GameResult (revealed at its game's end)."""
    found: set[tuple[int, int]] = set()
    if isinstance(message, game_pb2.GameResult):
        return found
    if isinstance(message, common_pb2.Card):
        return {(message.species, message.value)}
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        items = value if descriptor.is_repeated else [value]
        for item in items:
            found |= cards_in(item)
    return found


def without_results(message: Message) -> Message:
    """A copy without the GameResult that ends a game (its seed is revealed then, rightly)."""
    copy = type(message)()
    copy.CopyFrom(message)
    if isinstance(copy, bot_pb2.RefereeMessage) and copy.WhichOneof("kind") == "game_end":
        copy.game_end.ClearField("result")
    if isinstance(copy, match_pb2.WatchMatchResponse) and copy.WhichOneof("kind") == "game_end":
        copy.ClearField("game_end")
    return copy


@dataclass
class Loot:
    """What the spy got, by the game in progress when it got it."""

    messages: dict[int, list[Message]] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)

    def add(self, game: int, item: Message | str) -> None:
        if isinstance(item, str):
            self.texts.setdefault(game, []).append(item)
        else:
            self.messages.setdefault(game, []).append(item)


def test_spy_sees_no_hidden_card_and_no_seed(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        loot = Loot()
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 3, games=GAMES, seed=MATCH_SEED)
                mid = created.match_id
                tokens = [t.token for t in created.seat_tokens]

                async def spectate() -> None:
                    game = 0
                    async for response in stub.WatchMatch(
                        match_pb2.WatchMatchRequest(protocol_version=1, match_id=mid)
                    ):
                        loot.add(game, response)
                        if response.WhichOneof("kind") == "game_end":
                            game += 1

                async def spy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
                    game = request.game_index
                    loot.add(game, request)
                    calls = [
                        stub.GetMatch(match_pb2.GetMatchRequest(protocol_version=1, match_id=mid)),
                        stub.ListMatches(match_pb2.ListMatchesRequest(protocol_version=1)),
                        stub.GetReplay(
                            match_pb2.GetReplayRequest(
                                protocol_version=1, match_id=mid, game_index=game
                            )
                        ),
                    ]
                    for call in calls:
                        try:
                            loot.add(game, await call)
                        except grpc.aio.AioRpcError as exc:
                            loot.add(game, exc.details() or "")
                    return [answer(request.decision_number, random_decision(request, bot.rng))]

                watcher = asyncio.create_task(spectate())
                await asyncio.sleep(0.05)
                bots = await run_match(ref.address, tokens, {1: spy})
                await asyncio.wait_for(watcher, 10)
                docs = await verified_replays(stub, mid, GAMES)
        finally:
            await ref.stop()

        # everything the spy's own stream carried, by game
        game = 0
        for message in bots[1].received:
            loot.add(game, message)
            if message.WhichOneof("kind") == "game_end":
                game += 1

        assert all(g in loot.messages for g in range(GAMES))
        for g, doc in enumerate(docs):
            discarded = {
                s["discard"] for s in doc["steps"] if s.get("kind") == "play" and s["discard"]
            }
            hidden = {
                card
                for seat in (0, 2)
                for card in doc["final_hands"][seat]
                if card not in discarded
            }
            assert hidden, "the test needs hidden cards to look for"
            hidden_pb = {(Card.parse(c).species.index + 1, Card.parse(c).value) for c in hidden}
            got: set[tuple[int, int]] = set()
            for message in loot.messages.get(g, []):
                got |= cards_in(message)
                text = text_format.MessageToString(without_results(message))
                for later in range(g, GAMES):
                    assert str(derive_game_seed(MATCH_SEED, later)) not in text
                assert str(MATCH_SEED) not in text
                if isinstance(message, match_pb2.GetReplayResponse):
                    raise AssertionError("a replay of a game in progress reached the spy")
            leaked = got & hidden_pb
            assert not leaked, f"game {g}: the spy saw hidden cards {leaked}"
            for text in loot.texts.get(g, []):
                assert "not over" in text  # GetReplay refused
                assert not any(card in text for card in hidden)
            # the spy did see plenty: its own hand and the public cards
            assert len(got) > 20
        # the seeds do come, at the end
        ends = bots[1].of_kind("game_end")
        assert [e.result.seed for e in ends] == [derive_game_seed(MATCH_SEED, g) for g in range(2)]
        assert bots[1].of_kind("match_end")[0].match_seed == MATCH_SEED

    asyncio.run(main())
