"""Games per second in a 2-player series: one match of ``--games`` games on one referee, two bots
in separate processes, everything over loopback.

The referee runs in a child process (``referee_support.py referee``); this process only creates the
match and follows it on the spectator stream (``WatchMatch``). Two kinds of bots, each measured in
the same run, alternating rounds:

- ``sdk``: the real thing, ``python -m arboretum_sdk.cli bot run random --server ADDR`` (the SDK's
  client, its wire conversions and the built-in random bot), as ``arena play`` launches them;
- ``raw``: a raw-stub seat per process (random legal options from the request's helper fields), to
  show how much of the time is the referee's;
- ``node``: seat 0 is a random bot in JavaScript over the line protocol
  (``arena bot run --cmd "node examples/javascript/bot.js"``: the SDK's bridge and its Node.js
  child, ``docs/stdio-protocol.md``), seat 1 the SDK's ``random`` as in ``sdk``.

Games per second are counted from the match's start (status RUNNING: every seat connected) to its
end, so the processes' start-up is excluded; the start-up (match created -> running) is reported
apart. Nobody watches the match while it runs. Usage::

    python bench/series_throughput.py                    # 3 rounds of 100 games, both kinds
    python bench/series_throughput.py --bots sdk --check # exit 1 below the goal (15 games/s)
    python bench/series_throughput.py --bots stdio --check  # sdk and node rounds alternating;
                                                     # exit 1 when node / sdk < 0.70
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
from typing import NamedTuple

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
STDIO_GOAL = 0.70
"""A Node.js bot over the line protocol against random: at least this share of two SDK bots'
games per second."""
NODE_BOT = HERE.parent / "examples" / "javascript" / "bot.js"
POLL_START_S = 0.02
"""How often the status is polled until the match runs."""
POLL_RUNNING_S = 0.1
"""How often the status is polled while the match runs (each poll costs the referee CPU)."""


def start_bot(
    kind: str, address: str, token: str, work: Path, seed: int
) -> subprocess.Popen[bytes]:
    if kind in ("sdk", "node"):
        run = [sys.executable, "-m", "arboretum_sdk.cli", "bot", "run"]
        if kind == "node":
            run += ["--cmd", f"node {NODE_BOT}"]
        else:
            run.append("random")
        command = [*run, "--server", address]
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


class Round(NamedTuple):
    rate: float  # games per second, from RUNNING to the end
    startup: float  # seconds from the match's creation to RUNNING
    faults: int
    cpu_ms: tuple[float, float]  # CPU milliseconds per game: the referee's, both bots' together


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a live process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reap_cpu(proc: subprocess.Popen[bytes], timeout: float) -> float:
    """Wait for a bot process (killing it after ``timeout``); its total CPU seconds."""
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            proc.kill()
        time.sleep(0.01)


async def one_round(
    port: int,
    kind: str,
    games: int,
    seed: int,
    work: Path,
    referee_pid: int,
    bot_address: str | None = None,
) -> Round:
    """Plays one match of ``games`` games; the referee is the process ``referee_pid``.

    Nobody watches the match while it runs (a spectator costs the referee a message per event):
    this process polls ``ListMatches`` (the newest match first, without results) for the status,
    every 20 ms until the match runs (so that its start is timed closely), then every 100 ms (a
    poll costs the referee CPU; the end is then seen up to 100 ms late, which errs on the slow
    side), and reads the results with ``GetMatch`` once the match is over."""
    address = f"127.0.0.1:{port}"
    async with grpc.aio.insecure_channel(address) as channel:
        match_id, tokens = await create_match(
            channel, ADMIN, players=2, games=games, seed=seed, per_decision_ms=2000, bank_ms=10000
        )
        stub = match_pb2_grpc.MatchServiceStub(channel)
        created = time.perf_counter()
        seat_address = bot_address or address
        bots = [
            start_bot("sdk" if kind == "node" and i else kind, seat_address, t, work, seed * 10 + i)
            for i, t in enumerate(tokens)
        ]
        first = end = 0.0
        cpu_first: dict[int, float] = {}
        try:
            while not end:
                listed = await stub.ListMatches(
                    match_pb2.ListMatchesRequest(protocol_version=1, page_size=1)
                )
                info = listed.matches[0]
                assert info.match_id == match_id
                if info.status == common_pb2.MATCH_STATUS_RUNNING and not first:
                    first = time.perf_counter()
                    cpu_first = {p: process_cpu(p) for p in (referee_pid, *(b.pid for b in bots))}
                elif info.status not in (
                    common_pb2.MATCH_STATUS_WAITING,
                    common_pb2.MATCH_STATUS_RUNNING,
                ):
                    end = time.perf_counter()
                    referee_cpu = process_cpu(referee_pid) - cpu_first.get(referee_pid, 0.0)
                    if info.status != common_pb2.MATCH_STATUS_FINISHED:
                        raise RuntimeError(f"match ended {info}")
                await asyncio.sleep(POLL_RUNNING_S if first else POLL_START_S)
        finally:
            bots_cpu = 0.0
            for bot in bots:
                bots_cpu += reap_cpu(bot, 10.0) - cpu_first.get(bot.pid, 0.0)
        result = await stub.GetMatch(
            match_pb2.GetMatchRequest(protocol_version=1, match_id=match_id)
        )
        finished = len(result.match.results)
        faults = sum(s.faults for s in result.match.summary.seats)
        if finished != games:
            raise RuntimeError(f"{finished} of {games} games finished")
        cpu_ms = (referee_cpu * 1000 / games, bots_cpu * 1000 / games)
        return Round(games / (end - first), first - created, faults, cpu_ms)


async def run(args: argparse.Namespace) -> int:
    port = free_port()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    sock = work / "referee.sock"
    referee = spawn_server("referee", port, "--admin-token", ADMIN, "--unix", str(sock))
    kinds = {"both": ["sdk", "raw"], "stdio": ["sdk", "node"]}.get(args.bots, [args.bots])
    if args.unix:
        kinds.append("sdk-unix")
    rates: dict[str, list[float]] = {k: [] for k in kinds}
    startups: dict[str, list[float]] = {k: [] for k in kinds}
    cpus: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    faults = 0
    try:
        await one_round(port, kinds[0].removesuffix("-unix"), 3, 1, work, referee.pid)  # warm-up
        for r in range(args.rounds):
            for kind in kinds:
                bot_address = f"unix:{sock}" if kind.endswith("-unix") else None
                result = await one_round(
                    port,
                    kind.removesuffix("-unix"),
                    args.games,
                    100 + r,
                    work,
                    referee.pid,
                    bot_address,
                )
                rates[kind].append(result.rate)
                startups[kind].append(result.startup)
                cpus[kind].append(result.cpu_ms)
                faults += result.faults
                print(
                    f"round {r + 1}/{args.rounds} {kind}: {result.rate:.1f} games/s, CPU per game: "
                    f"referee {result.cpu_ms[0]:.0f} ms, bots {result.cpu_ms[1]:.0f} ms",
                    file=sys.stderr,
                )
    finally:
        stop_process(referee)
        shutil.rmtree(work, ignore_errors=True)
    print(f"machine: {machine()}")
    print(f"2-player series, {args.games} games per match, {args.rounds} rounds; faults: {faults}")
    for kind in kinds:
        values = ", ".join(f"{x:.1f}" for x in rates[kind])
        print(
            f"{kind:>4} bots: median {median(rates[kind]):.1f} games/s ({values}); "
            f"start-up {median(startups[kind]):.2f} s; CPU per game: referee "
            f"{median([c[0] for c in cpus[kind]]):.0f} ms, both bots "
            f"{median([c[1] for c in cpus[kind]]):.0f} ms"
        )
    if "sdk" in rates and "raw" in rates:
        print(f"sdk / raw: {median(rates['sdk']) / median(rates['raw']):.2f}")
    if "sdk" in rates and "node" in rates:
        share = median(rates["node"]) / median(rates["sdk"])
        print(f"node / sdk: {share:.2f} (goal {STDIO_GOAL:.2f})")
        if args.check and share < STDIO_GOAL:
            return 1
    if args.check and median(rates[kinds[0]]) < GOAL:
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--games", type=int, default=100, help="games per match (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    parser.add_argument(
        "--bots",
        choices=("sdk", "raw", "both", "node", "stdio"),
        default="both",
        help="both: sdk and raw; stdio: sdk and node (default both)",
    )
    parser.add_argument(
        "--unix",
        action="store_true",
        help="also measure SDK bots over the referee's unix socket (as league workers connect)",
    )
    parser.add_argument("--check", action="store_true", help=f"exit 1 below {GOAL} games/s")
    raise SystemExit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
