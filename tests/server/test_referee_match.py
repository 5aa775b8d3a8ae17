"""Whole matches between random-playing raw clients, over real gRPC on real sockets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
import pytest
from referee_clients import create_match, get_match, referee, run_match, verified_replays

from arboretum import verify_replay
from arboretum_proto.v1 import common_pb2, match_pb2, match_pb2_grpc


@pytest.mark.parametrize("players", [2, 3, 4])
def test_full_match(tmp_path: Path, players: int) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, players, games=1, seed=1000 + players)
                tokens = [t.token for t in created.seat_tokens]
                assert len(set(tokens)) == players
                bots = await run_match(ref.address, tokens)
                for seat, bot in enumerate(bots):
                    kinds = [m.WhichOneof("kind") for m in bot.received]
                    assert kinds[0] == "match_start" and kinds[-1] == "match_end"
                    assert kinds[1] == "game_start"
                    assert "game_end" in kinds
                    assert bot.codes == [grpc.StatusCode.OK]
                    assert bot.of_kind("match_start")[0].seat == seat
                    end = bot.of_kind("match_end")[0]
                    assert end.status == common_pb2.MATCH_STATUS_FINISHED
                    assert end.match_seed == 1000 + players
                    assert not bot.of_kind("fault_notice")
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED
                assert info.config.match_seed == 1000 + players
                assert len(info.results) == 1
                docs = await verified_replays(stub, created.match_id, 1)
                assert docs[0]["match_seed"] == str(1000 + players)
                assert docs[0]["result"]["totals"] == [s.total for s in info.results[0].seats]
                path = tmp_path / "replays" / created.match_id / "game-0.json"
                verify_replay(json.loads(path.read_text()))
        finally:
            await ref.stop()

    asyncio.run(main())


def test_summary_adds_up_while_a_series_is_polled(tmp_path: Path) -> None:
    """The match summary (kept and extended game by game) always equals the sums over the games'
    results, whenever it is read: polled all through a series, and at its end."""

    def check(info: object) -> None:
        results = info.results  # type: ignore[attr-defined]
        summary = info.summary  # type: ignore[attr-defined]
        assert summary.games_finished == len(results)
        for seat in summary.seats:
            scores = [s for r in results for s in r.seats if s.seat == seat.seat]
            assert seat.total_points == sum(s.total for s in scores)
            assert seat.first_places == sum(s.rank == 1 for s in scores)
            assert seat.rank_sum == sum(s.rank for s in scores)
            assert seat.faults == sum(s.faults for s in scores)
            assert seat.forfeits == sum(s.forfeited for s in scores)

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2, games=4, seed=77)
                play = asyncio.ensure_future(
                    run_match(ref.address, [t.token for t in created.seat_tokens])
                )
                seen = set()
                while not play.done():
                    info = await get_match(stub, created.match_id)
                    check(info)
                    seen.add(info.summary.games_finished)
                    await asyncio.sleep(0.005)
                await play
                info = await get_match(stub, created.match_id)
                check(info)
                assert info.summary.games_finished == 4
                assert len(seen) >= 2, seen  # read mid-series too, not only before or after
        finally:
            await ref.stop()

    asyncio.run(main())


def test_explicit_game_seeds(tmp_path: Path) -> None:
    """A match created with game_seeds plays game i with game_seeds[i] (the deal follows from it),
    never echoes them in its config, adds no match seed to the replays; a count that does not
    match game_count is refused with INVALID_ARGUMENT naming the field."""
    from arboretum import derive_game_seed

    seeds = [derive_game_seed(99, 3), 12345, 2**64 - 1]

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2, games=3, seed=99, game_seeds=seeds)
                await run_match(ref.address, [t.token for t in created.seat_tokens])
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED
                assert [r.seed for r in sorted(info.results, key=lambda r: r.game_index)] == seeds
                assert list(info.config.game_seeds) == []
                docs = await verified_replays(stub, created.match_id, 3)
                for doc, seed in zip(docs, seeds, strict=True):
                    # verify_replay (above) checked that the seed gives the replay's deck
                    assert doc["seed"] == str(seed) and "match_seed" not in doc
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await create_match(stub, 2, games=2, game_seeds=[1])
                assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "game_seeds must be empty or hold one seed per game (2 games, got 1)" in (
                    err.value.details() or ""
                )
        finally:
            await ref.stop()

    asyncio.run(main())


def test_seat_clocks_through_the_admin_service(tmp_path: Path) -> None:
    """CreateMatch takes a clock per seat and GetMatch gives them back; a count other than the
    seats', or a clock that a match's own would not pass, is refused with INVALID_ARGUMENT
    naming the seat's field. (What each seat is told and timed on: test_match_runner.py.)"""

    async def refused(stub: match_pb2_grpc.MatchServiceStub, clocks: list[tuple[int, int]]) -> str:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await create_match(stub, 2, seat_clocks=clocks)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        return err.value.details() or ""

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                clocks = [(120_000, 600_000), (1000, 10_000)]
                created = await create_match(stub, 2, seat_clocks=clocks)
                info = await get_match(stub, created.match_id)
                assert [(c.per_decision_ms, c.bank_ms) for c in info.config.seat_time_controls] == (
                    clocks
                )
                # a spectator's first message is the match, with every seat's clock
                watch = stub.WatchMatch(
                    match_pb2.WatchMatchRequest(protocol_version=1, match_id=created.match_id)
                )
                first = await watch.read()
                watch.cancel()
                told = first.match.config.seat_time_controls
                assert [(c.per_decision_ms, c.bank_ms) for c in told] == clocks
                plain = await get_match(stub, (await create_match(stub, 2)).match_id)
                assert list(plain.config.seat_time_controls) == []
                assert await refused(stub, [(1000, 0)]) == (
                    "CreateMatchRequest.config.seat_time_controls must be empty or hold one time "
                    "control per seat (2 seats, got 1)"
                )
                assert "CreateMatchRequest.config.seat_time_controls[1].per_decision_ms" in (
                    await refused(stub, [(1000, 0), (0, 0)])
                )
                too_long = await refused(stub, [(10**9, 0), (1000, 0)])
                assert too_long.startswith(
                    "CreateMatchRequest.config.seat_time_controls[0]: per_decision_ms must be 1 to"
                ), too_long
        finally:
            await ref.stop()

    asyncio.run(main())
