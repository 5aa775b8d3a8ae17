"""Settings, the generated admin token, limits, and the synchronous helper."""

from __future__ import annotations

import argparse
import asyncio
import logging
import stat
from pathlib import Path
from typing import Any

import grpc
import pytest
from referee_clients import (
    RawBot,
    answer,
    create_match,
    get_match,
    play_call,
    random_decision,
    referee,
    run_match,
)

from arboretum_proto.v1 import bot_pb2, common_pb2, match_pb2, match_pb2_grpc
from arboretum_sdk.info import FaultPolicy, TimeControl
from arboretum_server import RefereeThread, Settings, SettingsError, settings_from, start_referee
from arboretum_server.config import add_arguments


def test_settings_from_environment_and_flags(tmp_path: Path) -> None:
    env = {
        "ARENA_LISTEN": "127.0.0.1:7000, unix:/run/arena.sock",
        "ARENA_BANK_MS": "500",
        "ARENA_REFLECTION": "yes",
        "ARENA_ADMIN_TOKEN": "a" * 20,
    }
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--bank-ms", "700", "--replay-dir", str(tmp_path)])
    settings = settings_from(env, args)
    assert settings.listen == ("127.0.0.1:7000", "unix:/run/arena.sock")
    assert settings.bank_ms == 700  # the flag wins
    assert settings.reflection is True
    assert settings.replay_dir == tmp_path
    assert settings.admin_token == "a" * 20
    assert "aaaa" not in repr(settings)
    for bad in (
        {"ARENA_LISTEN": "nowhere"},
        {"ARENA_PER_DECISION_MS": "0"},
        {"ARENA_BANK_MS": "lots"},
        {"ARENA_ADMIN_TOKEN": "short"},
        {"ARENA_REFLECTION": "maybe"},
    ):
        with pytest.raises(SettingsError):
            settings_from(bad)


def test_generated_admin_token(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        path = tmp_path / "secret" / "admin-token"
        ref = await start_referee(Settings(listen=("127.0.0.1:0",), admin_token_file=path))
        try:
            assert path.read_text().strip() == ref.admin_token
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert ref.admin_token not in caplog.text
            assert str(path) in caplog.text
        finally:
            await ref.stop()

    with caplog.at_level(logging.DEBUG):
        asyncio.run(main())


def test_match_time_cap_and_message_size(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path, max_match_s=0.5)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2)
                tokens = [t.token for t in created.seat_tokens]

                async def slow(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
                    await asyncio.sleep(0.05)
                    return [answer(request.decision_number, random_decision(request, bot.rng))]

                bots = await run_match(ref.address, tokens, {0: slow, 1: slow})
                end = bots[0].of_kind("match_end")[0]
                assert end.status == common_pb2.MATCH_STATUS_CANCELLED
                assert "limit of 0.5 s" in end.reason
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_CANCELLED

                # an oversized message is refused by gRPC itself
                other = await create_match(stub, 2)
                call = play_call(channel, other.seat_tokens[0].token)
                await call.read()
                await call.write(b"\x0a" + b"\xff" * (300 * 1024))
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    while True:
                        await call.read()
                assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                big = match_pb2.GetMatchRequest(protocol_version=1, match_id="m" * 300_000)
                with pytest.raises(grpc.aio.AioRpcError) as error:
                    await stub.GetMatch(big)
                assert error.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        finally:
            await ref.stop()

    asyncio.run(main())


def test_referee_thread(tmp_path: Path) -> None:
    settings = Settings(listen=("127.0.0.1:0",), admin_token="t" * 20, replay_dir=tmp_path)
    with RefereeThread(settings) as ref, grpc.insecure_channel(ref.address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        config = match_pb2.MatchConfig(player_count=3, game_count=1)
        created = stub.CreateMatch(
            match_pb2.CreateMatchRequest(protocol_version=1, config=config),
            metadata=(("x-arena-admin-token", "t" * 20),),
            timeout=10,
        )
        info = stub.GetMatch(
            match_pb2.GetMatchRequest(protocol_version=1, match_id=created.match_id), timeout=10
        ).match
        assert info.status == common_pb2.MATCH_STATUS_WAITING
        assert len(created.seat_tokens) == 3


def test_default_referee_settings(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        await ref.stop()
        await ref.stop()  # idempotent

    asyncio.run(main())


def test_a_match_without_a_clock_gets_the_sdks_defaults(tmp_path: Path) -> None:
    """The referee's defaults are the SDK's TimeControl() and FaultPolicy(), as every other
    entry point's (tests/league/test_defaults.py): from no environment and no flags, and in a
    match created without a clock."""
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    settings = settings_from({}, parser.parse_args([]))
    assert TimeControl(settings.per_decision_ms, settings.bank_ms) == TimeControl()
    assert FaultPolicy(settings.faults_to_forfeit) == FaultPolicy()

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2)
                config = (await get_match(stub, created.match_id)).config
                assert config.HasField("time_control") and config.HasField("fault_policy")
                clock, policy = config.time_control, config.fault_policy
                assert TimeControl(clock.per_decision_ms, clock.bank_ms) == TimeControl()
                assert FaultPolicy(policy.faults_to_forfeit) == FaultPolicy()
        finally:
            await ref.stop()

    asyncio.run(main())
