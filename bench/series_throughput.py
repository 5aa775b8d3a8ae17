"""Games per second in a 2-player series: one match of ``--games`` games on one referee, two bots
in separate processes, everything over loopback.

The referee runs in a child process (``referee_support.py referee``); this process only creates the
match and follows it on the spectator stream (``WatchMatch``). Two kinds of bots, each measured in
the same run, alternating rounds:

- ``sdk``: the real thing, ``python -m arboretum_sdk.cli bot run random --server ADDR`` (the SDK's
  client, its wire conversions and the built-in random bot), as ``arena play`` launches them;
- ``raw``: a raw-stub seat per process (random legal options from the request's helper fields), to
  show how much of the time is the referee's.

Games per second are counted from the match's start (status RUNNING: every seat connected) to its
end, so the processes' start-up is excluded; the start-up (match created -> running) is reported
apart. Nobody watches the match while it runs. Usage::

    python bench/series_throughput.py                    # 3 rounds of 100 games, both kinds
    python bench/series_throughput.py --bots sdk --check # exit 1 below the goal (15 games/s)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from arboretum_proto.v1 import common_pb2, match_pb2, match_pb2_grpc
from referee_support import (
    create_match,
    free_port,
    machine,
    median,
    spawn_server,
    stop_process,
)

ADMIN = "bench-admin-token-0123456789"
HERE = Path(__file__).resolve().parent
GOAL = 15.0


def start_bot(
    kind: str, address: str, token: str, work: Path, seed: int
) -> subprocess.Popen[bytes]:
    if kind == "sdk":
        command = [
            sys.executable,
            "-m",
            "arboretum_sdk.cli",
            "bot",
            "run",
            "random",
            "--server",
            address,
        ]
        env = dict(os.environ, ARENA_TOKEN=token)
        return subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
    tokens = work / f"token-{seed}.json"
    tokens.write_text(json.dumps([token]))
    command = [
        sys.executable,
        str(HERE / "concurrent_matches.py"),
        "loadgen",
        "--port",
        address.rsplit(":", 1)[1],
        "--tokens",
        str(tokens),
        "--out",
        str(work / f"out-{seed}.json"),
        "--seed",
        str(seed),
    ]
    return subprocess.Popen(command)


async def one_round(
    port: int, kind: str, games: int, seed: int, work: Path, bot_address: str | None = None
) -> tuple[float, float, int]:
    """Returns (games per second, start-up seconds, faults).

    Nobody watches the match while it runs (a spectator costs the referee a message per event):
    this process polls ``ListMatches`` (the newest match first, without results) every 20 ms for the
    status, and reads the results with ``GetMatch`` once the match is over."""
    address = f"127.0.0.1:{port}"
    async with grpc.aio.insecure_channel(address) as channel:
        match_id, tokens = await create_match(
            channel, ADMIN, players=2, games=games, seed=seed, per_decision_ms=2000, bank_ms=10000
        )
        stub = match_pb2_grpc.MatchServiceStub(channel)
        created = time.perf_counter()
        seat_address = bot_address or address
        bots = [start_bot(kind, seat_address, t, work, seed * 10 + i) for i, t in enumerate(tokens)]
        first = end = 0.0
        try:
            while not end:
                listed = await stub.ListMatches(
                    match_pb2.ListMatchesRequest(protocol_version=1, page_size=1)
                )
                info = listed.matches[0]
                assert info.match_id == match_id
                if info.status == common_pb2.MATCH_STATUS_RUNNING and not first:
                    first = time.perf_counter()
                elif info.status not in (
                    common_pb2.MATCH_STATUS_WAITING,
                    common_pb2.MATCH_STATUS_RUNNING,
                ):
                    end = time.perf_counter()
                    if info.status != common_pb2.MATCH_STATUS_FINISHED:
                        raise RuntimeError(f"match ended {info}")
                await asyncio.sleep(0.02)
        finally:
            for bot in bots:
                try:
                    bot.wait(10)
                except subprocess.TimeoutExpired:
                    bot.kill()
                    bot.wait()
        result = await stub.GetMatch(
            match_pb2.GetMatchRequest(protocol_version=1, match_id=match_id)
        )
        finished = len(result.match.results)
        faults = sum(s.faults for s in result.match.summary.seats)
        if finished != games:
            raise RuntimeError(f"{finished} of {games} games finished")
        return games / (end - first), first - created, faults


async def run(args: argparse.Namespace) -> int:
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    sock = work / "referee.sock"
    referee = spawn_server("referee", port, "--admin-token", ADMIN, "--unix", str(sock))
    kinds = ["sdk", "raw"] if args.bots == "both" else [args.bots]
    if args.unix:
        kinds.append("sdk-unix")
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    startups: dict[str, list[float]] = {k: [] for k in kinds}
    faults = 0
    try:
        await one_round(port, kinds[0].removesuffix("-unix"), 3, 1, work)  # warm-up
        for r in range(args.rounds):
            for kind in kinds:
                bot_address = f"unix:{sock}" if kind.endswith("-unix") else None
                rate, startup, bad = await one_round(
                    port, kind.removesuffix("-unix"), args.games, 100 + r, work, bot_address
                )
                rates[kind].append(rate)
                startups[kind].append(startup)
                faults += bad
                print(f"round {r + 1}/{args.rounds} {kind}: {rate:.1f} games/s", file=sys.stderr)
    finally:
        stop_process(referee)
        shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {machine()}")
    print(f"2-player series, {args.games} games per match, {args.rounds} rounds; faults: {faults}")
    for kind in kinds:
        values = ", ".join(f"{x:.1f}" for x in rates[kind])
        print(
            f"{kind:>4} bots: median {median(rates[kind]):.1f} games/s ({values}); "
            f"start-up {median(startups[kind]):.2f} s"
        )
    if "sdk" in rates and "raw" in rates:
        print(f"sdk / raw: {median(rates['sdk']) / median(rates['raw']):.2f}")
    if args.check and median(rates[kinds[0]]) < GOAL:
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--games", type=int, default=100, help="games per match (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--bots", choices=("sdk", "raw", "both"), default="both")
    parser.add_argument(
        "--unix",
        action="store_true",
        help="also measure SDK bots over the referee's unix socket (as league workers connect)",
    )
    parser.add_argument("--check", action="store_true", help=f"exit 1 below {GOAL} games/s")
    raise SystemExit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
