"""docs/protocol.md, "Decision numbers": the match's first decision is number 1, and one counter,
increasing, is shared by all seats and all games."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
from referee_clients import create_match, get_match, referee, run_match

from arboretum_proto.v1 import common_pb2, match_pb2_grpc


def test_decision_numbers_start_at_1_and_one_counter_serves_every_seat_and_game(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 3, games=2, seed=5)
                bots = await run_match(ref.address, [t.token for t in created.seat_tokens])
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED, info.reason
        finally:
            await ref.stop()
        per_seat = [[r.decision_number for r in bot.of_kind("decision_request")] for bot in bots]
        for numbers in per_seat:
            assert numbers, "every seat decides"
            assert numbers == sorted(set(numbers)), "increasing for each seat"
        every = sorted(n for numbers in per_seat for n in numbers)
        # unique across the seats, no number skipped: one counter from 1, over both games
        assert every == list(range(1, len(every) + 1))
        games = {r.game_index for bot in bots for r in bot.of_kind("decision_request")}
        assert games == {0, 1}

    asyncio.run(main())
