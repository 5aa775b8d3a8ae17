"""The CPU of a casual game's person's seat in the match job's process: over the referee's gRPC
stream (as the relay played it) against the in-process seat of the match API (as it plays now)
(docs/benchmarks.md, "Casual games under load").

One process holds a private referee (``MatchRunner.start_private``, on a unix socket, as the
match job starts it) and seat 0's player, a greedy bot answering at once (the relay with its
person's answer already there, less its Redis). The other seats are ``arena bot run greedy``
processes, as sandboxed bots connect. Matches of one game each (a casual game), the same seeds
both ways, alternating: **grpc** plays seat 0 with :func:`arboretum_sdk.client.run_bot` in a
thread (its own event loop, gRPC's threads, HTTP/2 over the socket), **in-process** with
:func:`arboretum_sdk.channel.play_over` on ``MatchHandle.attach(0)``. Each match's CPU is this
process's (``time.process_time()``: the referee for every seat, and seat 0's player) from the
match's creation to its end; the bots' processes are not in it, nor their start.

Reported per way: CPU-ms per decision of seat 0, and per decision of the match (every seat's),
and the ratio in-process / grpc.

    .venv/bin/python bench/relay_seat.py                # 15 matches each way, 2 players
    .venv/bin/python bench/relay_seat.py --matches 5 --players 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.channel import play_over
from arboretum_sdk.client import run_bot
from arboretum_sdk.info import FaultPolicy, TimeControl
from arboretum_server import MatchConfig
from arboretum_server.botprocs import bot_command
from arboretum_server.runner import MatchRunner

WAYS = ("grpc", "in-process")


class Counting(GreedyBot):
    """Greedy, counting its decisions."""

    def __init__(self) -> None:
        self.decisions = 0

    def choose(self, view: SeatView) -> Decision:
        self.decisions += 1
        return super().choose(view)


async def one_match(
    runner: MatchRunner, way: str, seed: int, players: int
) -> tuple[float, int, int]:
    """Play one match; this process's CPU seconds, seat 0's decisions, the match's decisions."""
    bots: list[subprocess.Popen[bytes]] = []
    config = MatchConfig(
        players=players,
        match_seed=seed,
        game_count=1,
        time_control=TimeControl(per_decision_ms=120_000, bank_ms=600_000),
        fault_policy=FaultPolicy(faults_to_forfeit=3),
        start_timeout_ms=60_000,
    )
    handle = await runner.create(config)
    try:
        for seat in range(1, players):
            bots.append(
                subprocess.Popen(
                    bot_command("greedy", handle.address),
                    env=dict(os.environ, ARENA_TOKEN=handle.tokens[seat]),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
        while not all(handle.connected(seat) for seat in range(1, players)):
            await asyncio.sleep(0.02)  # the bots' start is not measured
        bot = Counting()
        started = time.process_time()
        if way == "grpc":
            await asyncio.to_thread(run_bot, bot, handle.address, handle.tokens[0])
        else:
            seat = handle.attach(0)
            try:
                await asyncio.to_thread(play_over, bot, seat)
            finally:
                seat.detach()
        assert await handle.wait(30), "the match did not end"
        cpu = time.process_time() - started
        outcome = handle.outcome()
        assert outcome.finished and outcome.games[0].faults == (0,) * players, outcome
        steps = len(json.loads((await handle.replays())[0])["steps"])
        return cpu, bot.decisions, steps
    finally:
        for proc in bots:
            proc.kill()
            proc.wait()


async def main(args: argparse.Namespace) -> None:
    totals = {way: [0.0, 0, 0] for way in WAYS}
    per_match: dict[str, list[float]] = {way: [] for way in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        runner = await MatchRunner.start_private(Path(tmp) / "referee.sock")
        try:
            for i in range(args.matches + 1):
                for way in WAYS if i % 2 else reversed(WAYS):
                    cpu, seat_decisions, steps = await one_match(
                        runner, way, args.seed + i, args.players
                    )
                    if i == 0:
                        continue  # warm-up: imports, first connections
                    total = totals[way]
                    total[0] += cpu
                    total[1] += seat_decisions
                    total[2] += steps
                    per_match[way].append(1000 * cpu / seat_decisions)
        finally:
            await runner.stop(1.0)
    print(
        f"{args.matches} matches each way, {args.players} players, one game each "
        f"(python {sys.version.split()[0]})"
    )
    print(
        f"{'way':<11} {'seat 0 decisions':>16} {'CPU-ms/seat-0 decision':>23} "
        f"{'(median of matches)':>20} {'CPU-ms/match decision':>22}"
    )
    per_seat = {}
    for way in WAYS:
        cpu, seat_decisions, steps = totals[way]
        per_seat[way] = 1000 * cpu / seat_decisions
        print(
            f"{way:<11} {seat_decisions:>16} {per_seat[way]:>23.3f} "
            f"{statistics.median(per_match[way]):>20.3f} {1000 * cpu / steps:>22.3f}"
        )
    print(f"ratio in-process / grpc (CPU per seat-0 decision): "
          f"{per_seat['in-process'] / per_seat['grpc']:.3f}")  # fmt: skip


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=15, help="matches each way (default 15)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--seed", type=int, default=27)
    return parser.parse_args()


if __name__ == "__main__":
    from arboretum_sdk import eventloop

    eventloop.run(main(parse_args()))  # the match job's loop (uvloop when installed)
