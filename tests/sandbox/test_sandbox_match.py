"""A whole match over a real referee on a unix socket, every bot in its own sandbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from arboretum_proto.v1 import common_pb2, match_pb2, match_pb2_grpc
from arboretum_server import Settings, start_referee
from arboretum_worker.sandbox import DEFAULT_LIMITS, SandboxRunner

from .conftest import BOTS

pytestmark = pytest.mark.integration

ADMIN_TOKEN = "sandbox-test-admin-token-0123456789"


def test_match_between_sandboxed_bots(kind: str, tmp_path: Path) -> None:
    from .conftest import make

    runner: SandboxRunner = make(kind, limits=DEFAULT_LIMITS.for_match(60))
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700)
    sock = match_dir / "referee.sock"

    async def main() -> None:
        ref = await start_referee(
            Settings(
                listen=(f"unix:{sock}",), admin_token=ADMIN_TOKEN, replay_dir=tmp_path / "replays"
            )
        )
        try:
            async with grpc.aio.insecure_channel(f"unix:{sock}") as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                config = match_pb2.MatchConfig(player_count=3, game_count=1, match_seed=5)
                created = await stub.CreateMatch(
                    match_pb2.CreateMatchRequest(protocol_version=1, config=config),
                    metadata=(("x-arena-admin-token", ADMIN_TOKEN),),
                    timeout=10,
                )
                tokens = [t.token for t in created.seat_tokens]
                specs: list[tuple[str | Path, bool]] = [
                    ("random", True),
                    ("greedy", True),
                    (BOTS / "folder_bot", False),
                ]
                bots = [
                    runner.start(
                        spec,
                        socket_path=sock,
                        token=token,
                        log_path=tmp_path / "logs" / f"seat-{seat}.log",
                        name=f"seat-{seat}",
                        builtin=builtin,
                    )
                    for seat, ((spec, builtin), token) in enumerate(zip(specs, tokens, strict=True))
                ]
                try:
                    codes = await asyncio.gather(*(asyncio.to_thread(b.wait, 60) for b in bots))
                finally:
                    for bot in bots:
                        bot.kill()
                outputs = [b.output().decode(errors="replace") for b in bots]
                assert codes == [0, 0, 0], outputs
                reply = await stub.GetMatch(
                    match_pb2.GetMatchRequest(protocol_version=1, match_id=created.match_id),
                    metadata=(("x-arena-admin-token", ADMIN_TOKEN),),
                    timeout=10,
                )
                info = reply.match
                assert info.status == common_pb2.MATCH_STATUS_FINISHED
                assert len(info.results) == 1
                for seat in range(3):
                    log = (tmp_path / "logs" / f"seat-{seat}.log").read_bytes()
                    assert log == bots[seat].output()
        finally:
            await ref.stop()

    asyncio.run(main())


FIRST_LINE = "env_bot: my first line"


def test_a_bots_log_starts_with_its_own_first_line(kind: str, tmp_path: Path) -> None:
    """Nothing of the sandbox or the SDK comes before what the bot prints: no warning, no
    start-up line (the fork server once put runpy's RuntimeWarning first in every log)."""
    from .conftest import make

    runner: SandboxRunner = make(kind, limits=DEFAULT_LIMITS.for_match(60))
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700)
    sock = match_dir / "referee.sock"
    log_path = tmp_path / "logs" / "seat-1.log"

    async def main() -> None:
        ref = await start_referee(
            Settings(
                listen=(f"unix:{sock}",), admin_token=ADMIN_TOKEN, replay_dir=tmp_path / "replays"
            )
        )
        try:
            async with grpc.aio.insecure_channel(f"unix:{sock}") as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                config = match_pb2.MatchConfig(player_count=2, game_count=1, match_seed=9)
                created = await stub.CreateMatch(
                    match_pb2.CreateMatchRequest(protocol_version=1, config=config),
                    metadata=(("x-arena-admin-token", ADMIN_TOKEN),),
                    timeout=10,
                )
                tokens = [t.token for t in created.seat_tokens]
                bots = [
                    runner.start("random", socket_path=sock, token=tokens[0], builtin=True),
                    runner.start(
                        BOTS / "env_bot.py",
                        socket_path=sock,
                        token=tokens[1],
                        log_path=log_path,
                        name="seat-1",
                        env={"ARENA_COMPUTE": "fixed"},
                    ),
                ]
                try:
                    codes = await asyncio.gather(*(asyncio.to_thread(b.wait, 60) for b in bots))
                finally:
                    for bot in bots:
                        bot.kill()
                assert codes == [0, 0], [b.output() for b in bots]
        finally:
            await ref.stop()

    asyncio.run(main())
    lines = log_path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == FIRST_LINE, lines[:3]
    assert lines[1].startswith("ENV "), lines[:3]
    assert not [line for line in lines if "Warning" in line], lines
