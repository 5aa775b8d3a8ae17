"""``arena serve`` as a process: a port conflict fails loudly; SIGTERM drains."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee_clients import (
    ADMIN_TOKEN,
    RawBot,
    answer,
    create_match,
    random_decision,
    referee,
    run_match,
)

from arboretum import verify_replay, verify_steps
from arboretum_proto.v1 import bot_pb2, common_pb2, match_pb2_grpc

pytestmark = pytest.mark.integration


def arena(*args: str, log: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, ARENA_ADMIN_TOKEN=ADMIN_TOKEN)
    env.pop("ARENA_LISTEN", None)
    return subprocess.Popen(
        [sys.executable, "-m", "arboretum_sdk.cli", *args],
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
        env=env,
    )


def test_port_conflict_exits_non_zero(tmp_path: Path) -> None:
    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            log = tmp_path / "serve.log"
            proc = arena("serve", "--listen", ref.address, log=log)
            code = await asyncio.to_thread(proc.wait, 30)
            assert code != 0
            assert "cannot listen on" in log.read_text()
        finally:
            await ref.stop()

    asyncio.run(main())


def test_a_port_in_use_is_one_line_and_leaves_nothing_behind(tmp_path: Path) -> None:
    """A port held by another program: one ``arena:`` line naming the address, exit 1, no banner,
    no gRPC log line, and no generated admin token file in the temporary folder."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(TMPDIR=str(temp), GRPC_VERBOSITY="ERROR")
    with socket.create_server(("127.0.0.1", 0)) as held:
        address = f"127.0.0.1:{held.getsockname()[1]}"
        done = subprocess.run(
            [sys.executable, "-m", "arboretum_sdk.cli", "serve", "--listen", address],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"arena: cannot listen on {address}: the address is in use\n"
    assert done.stdout == ""
    assert list(temp.iterdir()) == []


def test_invalid_settings_exit_2(tmp_path: Path) -> None:
    proc = arena("serve", "--listen", "nowhere", log=tmp_path / "serve.log")
    assert proc.wait(30) == 2
    assert "arena: invalid referee settings" in (tmp_path / "serve.log").read_text()


def slow_bot(delay: float) -> Any:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        await asyncio.sleep(delay)
        return [answer(request.decision_number, random_decision(request, bot.rng))]

    return strategy


def test_sigterm_drains(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    log = tmp_path / "serve.log"
    proc = arena(
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--replay-dir",
        str(replays),
        "--drain-timeout-s",
        "3",
        log=log,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("referee listening on "), log.read_text()
        address = line.split()[-1]

        async def main() -> None:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                health = health_pb2_grpc.HealthStub(channel)
                check = health_pb2.HealthCheckRequest(service="")
                assert (await health.Check(check)).status == health_pb2.HealthCheckResponse.SERVING
                quick = await create_match(stub, 2, games=3, seed=1)
                slow = await create_match(stub, 2, games=1, seed=2)
                quick_run = asyncio.create_task(
                    run_match(
                        address,
                        [t.token for t in quick.seat_tokens],
                        {0: slow_bot(0.005), 1: slow_bot(0.005)},
                    )
                )
                slow_run = asyncio.create_task(
                    run_match(
                        address,
                        [t.token for t in slow.seat_tokens],
                        {0: slow_bot(0.1), 1: slow_bot(0.1)},
                    )
                )
                await asyncio.sleep(0.3)  # both games are under way
                proc.send_signal(signal.SIGTERM)
                await asyncio.sleep(0.3)
                response = await health.Check(check)
                assert response.status == health_pb2.HealthCheckResponse.NOT_SERVING
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await create_match(stub, 2)
                assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
                quick_bots = await asyncio.wait_for(quick_run, 20)
                slow_bots = await asyncio.wait_for(slow_run, 20)

            # the quick match: its game in flight finished, then the match stopped
            for bot in quick_bots:
                assert len(bot.of_kind("game_end")) == 1
                end = bot.of_kind("match_end")[0]
                assert end.status == common_pb2.MATCH_STATUS_CANCELLED
                assert "shutting down" in end.reason
            doc = json.loads((replays / quick.match_id / "game-0.json").read_text())
            verify_replay(doc)
            # the slow match: stopped by the drain timeout, with the reason recorded
            for bot in slow_bots:
                assert not bot.of_kind("game_end")
                end = bot.of_kind("match_end")[0]
                assert end.status == common_pb2.MATCH_STATUS_CANCELLED
                assert "drain timeout" in end.reason
            partial = json.loads((replays / slow.match_id / "game-0.partial.json").read_text())
            assert "drain timeout" in partial["stopped"]
            assert partial["steps"][-1]["kind"] == "stopped"
            assert verify_steps(partial).steps == len(partial["steps"])

        asyncio.run(main())
        started = time.monotonic()
        assert proc.wait(20) == 0, log.read_text()
        assert time.monotonic() - started < 20
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
