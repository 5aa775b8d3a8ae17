"""Tokens, permissions, statuses and the match service, over real gRPC."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee_clients import (
    ADMIN,
    RawBot,
    admin_md,
    answer,
    create_match,
    get_match,
    play_call,
    random_decision,
    referee,
    replay,
    run_match,
)

from arboretum import verify_replay, verify_steps
from arboretum_proto.v1 import bot_pb2, common_pb2, match_pb2, match_pb2_grpc
from arboretum_server import BindError, Settings, start_referee


async def expect_code(code: grpc.StatusCode, coro: Any) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await coro
    assert info.value.code() == code, info.value.details()
    return info.value.details() or ""


async def first_message(call: Any) -> Any:
    return await call.read()


def test_tokens_permissions_and_statuses(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path, reflection=True)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                health = health_pb2_grpc.HealthStub(channel)
                status = await health.Check(health_pb2.HealthCheckRequest(service=""))
                assert status.status == health_pb2.HealthCheckResponse.SERVING

                created = await create_match(stub, 2, per_decision_ms=1000, bank_ms=1000)
                t0, t1 = (t.token for t in created.seat_tokens)
                mid = created.match_id

                call0 = play_call(channel, t0)
                assert (await call0.read()).WhichOneof("kind") == "match_start"
                # a second stream for a live seat, a made-up token, no token
                await expect_code(
                    grpc.StatusCode.ALREADY_EXISTS, first_message(play_call(channel, t0))
                )
                await expect_code(
                    grpc.StatusCode.UNAUTHENTICATED,
                    first_message(play_call(channel, "made-up-token-123456")),
                )
                await expect_code(
                    grpc.StatusCode.UNAUTHENTICATED, first_message(play_call(channel, None))
                )
                # an absurd (too short) deadline for a stream that must last a match
                await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    first_message(play_call(channel, t1, timeout=0.5)),
                )
                # admin calls with a seat token, or none
                request = match_pb2.CreateMatchRequest(
                    protocol_version=1, config=match_pb2.MatchConfig(player_count=2, game_count=1)
                )
                for metadata in (((ADMIN, t0),), (("x-arena-token", t0),), ()):
                    await expect_code(
                        grpc.StatusCode.PERMISSION_DENIED,
                        stub.CreateMatch(request, metadata=metadata),
                    )
                    await expect_code(
                        grpc.StatusCode.PERMISSION_DENIED,
                        stub.CancelMatch(
                            match_pb2.CancelMatchRequest(protocol_version=1, match_id=mid),
                            metadata=metadata,
                        ),
                    )
                # a game that has not started
                await expect_code(grpc.StatusCode.NOT_FOUND, replay(stub, mid, 0, admin=True))
                await expect_code(grpc.StatusCode.NOT_FOUND, get_match(stub, "m-nope"))
                # invalid requests
                await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    stub.GetMatch(match_pb2.GetMatchRequest(protocol_version=2, match_id=mid)),
                )
                await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    stub.GetMatch(match_pb2.GetMatchRequest(protocol_version=1)),
                )
                bad_configs = [
                    match_pb2.MatchConfig(player_count=5, game_count=1),
                    match_pb2.MatchConfig(player_count=2, game_count=0),
                    match_pb2.MatchConfig(player_count=2, game_count=1, seat_names=["a"]),
                    match_pb2.MatchConfig(
                        player_count=2,
                        game_count=1,
                        time_control=common_pb2.TimeControl(per_decision_ms=0, bank_ms=5),
                    ),
                    match_pb2.MatchConfig(
                        player_count=2,
                        game_count=1,
                        fault_policy=common_pb2.FaultPolicy(faults_to_forfeit=0),
                    ),
                    match_pb2.MatchConfig(
                        player_count=2, game_count=1, species=[common_pb2.SPECIES_OAK] * 6
                    ),
                ]
                for config in bad_configs:
                    details = await expect_code(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        stub.CreateMatch(
                            match_pb2.CreateMatchRequest(protocol_version=1, config=config),
                            metadata=admin_md(),
                        ),
                    )
                    assert "config" in details
                await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    stub.CreateMatch(
                        match_pb2.CreateMatchRequest(protocol_version=1), metadata=admin_md()
                    ),
                )
                await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    stub.ListMatches(
                        match_pb2.ListMatchesRequest(protocol_version=1, page_token="x")
                    ),
                )
                info = await get_match(stub, mid)
                assert info.status == common_pb2.MATCH_STATUS_WAITING
                assert not info.config.HasField("match_seed")
                assert [s.connected for s in info.seats] == [True, False]
                call0.cancel()

                # play the match; in the middle, a partial replay is admin-only
                seen: dict[str, Any] = {}

                async def peeking(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
                    if bot.requests == 3:
                        seen["public"] = await expect_code(
                            grpc.StatusCode.PERMISSION_DENIED, replay(stub, mid, 0)
                        )
                        seen["seat"] = await expect_code(
                            grpc.StatusCode.PERMISSION_DENIED,
                            stub.GetReplay(
                                match_pb2.GetReplayRequest(
                                    protocol_version=1, match_id=mid, game_index=0
                                ),
                                metadata=((ADMIN, t1),),
                            ),
                        )
                        seen["admin"] = await replay(stub, mid, 0, admin=True)
                        seen["info"] = await get_match(stub, mid)
                    return [answer(request.decision_number, random_decision(request, bot.rng))]

                await asyncio.sleep(0.05)
                await run_match(ref.address, [t0, t1], {1: peeking})
                doc, complete = seen["admin"]
                assert not complete and doc["complete"] is False and "result" not in doc
                assert seen["info"].HasField("current_game_index")
                assert seen["info"].status == common_pb2.MATCH_STATUS_RUNNING
                doc, complete = await replay(stub, mid, 0)
                assert complete
                verify_replay(doc)

                # after the match: its tokens name a finished match
                await expect_code(
                    grpc.StatusCode.FAILED_PRECONDITION, first_message(play_call(channel, t0))
                )
                await expect_code(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    stub.CancelMatch(
                        match_pb2.CancelMatchRequest(protocol_version=1, match_id=mid),
                        metadata=admin_md(),
                    ),
                )
                # listing, newest first, with pages
                extra = [await create_match(stub, 2) for _ in range(3)]
                listed = await stub.ListMatches(
                    match_pb2.ListMatchesRequest(protocol_version=1, page_size=2)
                )
                assert [m.match_id for m in listed.matches] == [
                    extra[2].match_id,
                    extra[1].match_id,
                ]
                assert all(not m.results for m in listed.matches)
                rest = await stub.ListMatches(
                    match_pb2.ListMatchesRequest(
                        protocol_version=1, page_size=2, page_token=listed.next_page_token
                    )
                )
                assert [m.match_id for m in rest.matches] == [extra[0].match_id, mid]
                assert rest.next_page_token == ""
                finished = await stub.ListMatches(
                    match_pb2.ListMatchesRequest(
                        protocol_version=1, status=common_pb2.MATCH_STATUS_FINISHED
                    )
                )
                assert [m.match_id for m in finished.matches] == [mid]

                # cancel a waiting match
                cancelled = await stub.CancelMatch(
                    match_pb2.CancelMatchRequest(
                        protocol_version=1, match_id=extra[0].match_id, reason="test"
                    ),
                    metadata=admin_md(),
                )
                assert cancelled.match.status == common_pb2.MATCH_STATUS_CANCELLED
                assert cancelled.match.reason == "test"

                # reflection lists the services
                from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

                refl = reflection_pb2_grpc.ServerReflectionStub(channel)
                call = refl.ServerReflectionInfo()
                await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
                response = await call.read()
                names = {s.name for s in response.list_services_response.service}
                assert {"arboretum.v1.BotService", "arboretum.v1.MatchService"} <= names
                call.cancel()
        finally:
            await ref.stop()

    asyncio.run(main())


def test_cancel_a_running_match(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2, games=3, seed=99)
                mid = created.match_id

                async def slow(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
                    await asyncio.sleep(0.01)
                    if bot.requests == 10:
                        await stub.CancelMatch(
                            match_pb2.CancelMatchRequest(
                                protocol_version=1, match_id=mid, reason="enough"
                            ),
                            metadata=admin_md(),
                        )
                    return [answer(request.decision_number, random_decision(request, bot.rng))]

                bots = await run_match(
                    ref.address, [t.token for t in created.seat_tokens], {0: slow, 1: slow}
                )
                for bot in bots:
                    end = bot.of_kind("match_end")[0]
                    assert end.status == common_pb2.MATCH_STATUS_CANCELLED
                    assert end.reason == "enough"
                    assert not end.HasField("match_seed")
                    assert bot.codes == [grpc.StatusCode.OK]
                info = await get_match(stub, mid)
                assert info.status == common_pb2.MATCH_STATUS_CANCELLED
                assert not info.config.HasField("match_seed")
                doc, complete = await replay(stub, mid, 0, admin=True)
                assert not complete and doc["stopped"] == "enough"
                path = tmp_path / "replays" / mid / "game-0.partial.json"
                written = json.loads(path.read_text())
                assert written["stopped"] == "enough"
                # The stopped game's steps re-play, digests and the final "stopped" note too.
                check = verify_steps(written)
                assert check.digests and check.steps == len(written["steps"])
                assert not check.state.is_over and check.stopped == "enough"
        finally:
            await ref.stop()

    asyncio.run(main())


def test_play_with_more_than_one_token_is_refused(tmp_path: Path) -> None:
    """Two values of x-arena-token are refused before either is looked at, whichever comes
    first; the seat is left free for the call that sends one."""

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2, per_decision_ms=1000, bank_ms=1000)
                t0, t1 = (t.token for t in created.seat_tokens)
                for tokens in ((t0, t0), (t0, t1), (t0, "made-up-token-123456"), (t1, t0, t1)):
                    details = await expect_code(
                        grpc.StatusCode.UNAUTHENTICATED, first_message(play_call(channel, tokens))
                    )
                    assert details == (
                        "Play takes exactly one seat token in the x-arena-token metadata "
                        f"(got {len(tokens)} values)"
                    )
                seats = (await get_match(stub, created.match_id)).seats
                assert [s.connected for s in seats] == [False, False]
                call = play_call(channel, t0)
                assert (await call.read()).WhichOneof("kind") == "match_start"
                call.cancel()
        finally:
            await ref.stop()

    asyncio.run(main())


def test_port_conflict_fails_loudly(tmp_path: Path) -> None:
    async def main() -> None:
        first = await referee(tmp_path)
        try:
            with pytest.raises(BindError, match="cannot listen"):
                await start_referee(
                    Settings(listen=(first.address,), admin_token="x" * 20, replay_dir=tmp_path)
                )
        finally:
            await first.stop()

    asyncio.run(main())


def test_unix_socket(tmp_path: Path) -> None:
    async def main() -> None:
        address = f"unix:{tmp_path}/arena.sock"
        ref = await referee(tmp_path, listen=(address,))
        try:
            assert ref.address == address
            async with grpc.aio.insecure_channel(address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2)
                bots = await run_match(address, [t.token for t in created.seat_tokens])
                assert all(b.codes == [grpc.StatusCode.OK] for b in bots)
        finally:
            await ref.stop()

    asyncio.run(main())


def test_undecodable_requests_are_invalid_arguments_after_the_admin_check(tmp_path: Path) -> None:
    """Bytes that are no protobuf message: INVALID_ARGUMENT naming the request type, never gRPC's
    UNKNOWN; and an admin method without the admin token is PERMISSION_DENIED whatever its bytes."""
    garbage = b"\xff\xff\xff\xff"

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                for name, admin_only in (
                    ("CreateMatch", True),
                    ("CancelMatch", True),
                    ("GetMatch", False),
                    ("ListMatches", False),
                    ("GetReplay", False),
                ):
                    call = channel.unary_unary(f"/arboretum.v1.MatchService/{name}")
                    if admin_only:
                        denied = await expect_code(
                            grpc.StatusCode.PERMISSION_DENIED, call(garbage, timeout=10)
                        )
                        assert "admin token" in denied
                    details = await expect_code(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        call(garbage, metadata=admin_md(), timeout=10),
                    )
                    assert f"not a valid {name}Request" in details, details
                watch = channel.unary_stream("/arboretum.v1.MatchService/WatchMatch")
                details = await expect_code(
                    grpc.StatusCode.INVALID_ARGUMENT, watch(garbage, timeout=10).read()
                )
                assert "not a valid WatchMatchRequest" in details
                # The referee is unharmed.
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2)
                assert (await get_match(stub, created.match_id)).match_id == created.match_id
        finally:
            await ref.stop()

    asyncio.run(main())


def test_create_match_takes_the_id_asked_for(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                config = match_pb2.MatchConfig(player_count=2, game_count=1)

                def create(match_id: str) -> Any:
                    request = match_pb2.CreateMatchRequest(
                        protocol_version=1, config=config, match_id=match_id
                    )
                    return stub.CreateMatch(request, metadata=admin_md(), timeout=10)

                created = await create("league-7f3a.x_1")
                assert created.match_id == "league-7f3a.x_1"
                assert (await get_match(stub, "league-7f3a.x_1")).match_id == "league-7f3a.x_1"
                taken = await expect_code(grpc.StatusCode.ALREADY_EXISTS, create("league-7f3a.x_1"))
                assert "league-7f3a.x_1" in taken
                for bad in ("a b", "-x", "x" * 65, "é"):
                    details = await expect_code(grpc.StatusCode.INVALID_ARGUMENT, create(bad))
                    assert "CreateMatchRequest.match_id" in details
                assert (await create("")).match_id.startswith("m-")  # the referee's choice
                assert len((await create("y" * 64)).match_id) == 64
        finally:
            await ref.stop()

    asyncio.run(main())


def test_seat_tokens_never_start_with_a_dash() -> None:
    # A token starting with "-" (1 in 64 of token_urlsafe's) broke `arena bot run --token TOKEN`:
    # argparse read it as an option ("argument --token: expected one argument").
    from arboretum_server.seats import new_token

    tokens = {new_token() for _ in range(5000)}
    assert len(tokens) == 5000
    assert all(len(t) == 32 and not t.startswith("-") for t in tokens)
