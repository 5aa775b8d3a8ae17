"""Rules engine benchmark: random-play games per second, final scoring included, on one core.

Two ways through the engine are measured, in the same run and interleaved round by round, so that
their ratio stays meaningful on a noisy machine:

- ``public``: the validated public API, as the referee and ``arena simulate`` use it:
  ``GameState.new``, then ``random_decision`` (``legal_decisions()`` and one ``rng`` choice) and
  ``apply()`` with full validation until the game is over, then ``result()`` with its explanation.
- ``fast``: the trusted path for search rollouts: ``GameState.new``, ``playout(rng)`` (no
  re-validation of the decisions the engine generates) and ``arboretum.scoring.final_totals``.

The process pins itself to one CPU, warms up, then plays games for ``--seconds`` per measurement,
``--rounds`` times per (players, mode); the table shows the median round (and the slowest and
fastest). Time is the process's CPU time by default (``--clock cpu``), so that time slices lost to
other processes on a shared machine do not count; ``--clock wall`` measures elapsed time instead.
Usage (from the repository root)::

    python3 bench/engine_bench.py                         # 2, 3 and 4 players, both modes
    python3 bench/engine_bench.py --players 2 --check     # exit 1 unless the 2-player goals are met
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

MODES = ("public", "fast")
GOALS = {"public": 1500.0, "fast": 3000.0}
"""Two-player goals in games per second, checked by ``--check``."""
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}

Runner = Callable[[int, int, random.Random], int]
"""Plays one game (players, seed, rng) and returns the number of decisions made."""


def make_runners() -> dict[str, Runner]:
    """The two game loops, bound to the engine imported at call time."""
    from arboretum import GameState, random_decision
    from arboretum.scoring import final_totals

    def public_game(players: int, seed: int, rng: random.Random) -> int:
        state = GameState.new(players, seed)
        while not state.is_over:
            state.apply(random_decision(state, rng))
        state.result()
        return state.event_count

    def fast_game(players: int, seed: int, rng: random.Random) -> int:
        state = GameState.new(players, seed)
        state.playout(rng)
        final_totals(state)
        return state.event_count

    return {"public": public_game, "fast": fast_game}


@dataclass
class Series:
    """The rounds of one measurement (players, mode)."""

    games_per_s: list[float] = field(default_factory=list)
    decisions_per_s: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.games_per_s)

    @property
    def median_decisions(self) -> float:
        return statistics.median(self.decisions_per_s)


def measure(
    run: Runner, players: int, seconds: float, seed: int, clock: Callable[[], float]
) -> tuple[float, float]:
    """Play games (seeds ``seed``, ``seed + 1``, ...) for about ``seconds``; returns (games/s,
    decisions/s)."""
    rng = random.Random(seed)
    gc.collect()
    games = decisions = 0
    started = clock()
    deadline = started + seconds
    now = started
    while now < deadline:
        decisions += run(players, seed + games, rng)
        games += 1
        now = clock()
    elapsed = now - started
    return games / elapsed, decisions / elapsed


def pin(cpu: int | None) -> str:
    """Pin this process to one CPU; returns a description for the report."""
    if cpu is None:
        return "not pinned"
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this platform)"
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def fmt(value: float) -> str:
    return f"{value:,.0f}"


def table(results: dict[tuple[int, str], Series], players: list[int], modes: list[str]) -> str:
    """The Markdown table: one row per player count, medians with the (min-max) of the rounds."""
    head = ["Players"]
    for mode in modes:
        head += [f"{mode} games/s (min-max)", f"{mode} decisions/s"]
    both = len(modes) == 2
    if both:
        head.append("fast / public")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---:" for _ in head) + "|"]
    for p in players:
        row = [str(p)]
        for mode in modes:
            s = results[p, mode]
            spread = f"{fmt(min(s.games_per_s))}-{fmt(max(s.games_per_s))}"
            row += [f"{fmt(s.median)} ({spread})", fmt(s.median_decisions)]
        if both:
            row.append(f"{results[p, 'fast'].median / results[p, 'public'].median:.2f}x")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Rules engine benchmark: random-play games per second on one core."
    )
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=[2, 3, 4])
    parser.add_argument("--mode", choices=["public", "fast", "both"], default="both")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one measurement")
    parser.add_argument("--rounds", type=int, default=5, help="measurements per (players, mode)")
    parser.add_argument("--warmup", type=float, default=1.0, help="seconds of warm-up in all")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="cpu: this process's CPU time (default); wall: elapsed time",
    )
    parser.add_argument(
        "--cpu",
        default=None,
        help="CPU to pin to (default: the highest one allowed now); 'none' to leave unpinned",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the first game")
    parser.add_argument(
        "--sdk",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "sdk",
        help="directory to import arboretum from (default: this checkout's sdk/)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="exit 1 unless the 2-player medians meet the goals (public 1500, fast 3000 games/s)",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0:
        parser.error("--rounds must be at least 1, --seconds positive, --warmup not negative")
    modes = list(MODES) if args.mode == "both" else [args.mode]
    players: list[int] = sorted(set(args.players))
    if args.check and 2 not in players:
        parser.error("--check needs the 2-player figures: include 2 in --players")

    if args.cpu is None:
        cpu: int | None = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    else:
        cpu = None if args.cpu == "none" else int(args.cpu)
    pinned = pin(cpu)
    clock = CLOCKS[args.clock]

    sys.path.insert(0, str(args.sdk))
    import arboretum

    runners = make_runners()
    print(
        f"arboretum {arboretum.ENGINE_VERSION}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{pinned}, {args.clock} clock; {args.rounds} rounds of {args.seconds:g} s per "
        f"measurement, median reported",
        file=sys.stderr,
    )
    for mode in modes:
        for p in players:
            measure(runners[mode], p, args.warmup / len(modes) / len(players), args.seed, clock)

    results = {(p, mode): Series() for p in players for mode in modes}
    for r in range(args.rounds):
        for p in players:
            for mode in modes:  # interleaved, so that both modes see the same machine load
                seed = args.seed + r * 100_003
                games, decisions = measure(runners[mode], p, args.seconds, seed, clock)
                results[p, mode].games_per_s.append(games)
                results[p, mode].decisions_per_s.append(decisions)
        done = ", ".join(
            f"{p}p {mode} {fmt(results[p, mode].games_per_s[-1])}"
            for p in players
            for mode in modes
        )
        print(f"round {r + 1}/{args.rounds}: {done} games/s", file=sys.stderr, flush=True)

    print(table(results, players, modes), flush=True)

    if args.check:
        failed = [
            f"2-player {mode}: median {fmt(results[2, mode].median)} games/s "
            f"< goal {fmt(GOALS[mode])}"
            for mode in modes
            if results[2, mode].median < GOALS[mode]
        ]
        if failed:
            print("engine benchmark goals not met: " + "; ".join(failed), file=sys.stderr)
            return 1
        met = ", ".join(f"{mode} >= {fmt(GOALS[mode])}" for mode in modes)
        print(f"2-player goals met: {met} games/s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
