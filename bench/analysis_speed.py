"""How long the analysis of a whole 2-player game takes (docs/benchmarks.md, "Analysis").

Games between built-in bots (bench/analysis_games.py, fixed compute, one per pairing), each
analysed whole, every seat, with the default configuration (``arena replay analyze FILE``
without ``--seat``), in this one process: one core. Prints per game the decisions analysed and
the CPU time of the process (``time.process_time``: what a loaded machine's other work does not
add to) and the wall time; the goal is under 30 s a game. Exits 1 if a game's CPU time is over
``--goal``.

    .venv/bin/python bench/analysis_speed.py
    .venv/bin/python bench/analysis_speed.py --games 8 --seed 7
"""

from __future__ import annotations

import argparse
import sys
import time

from analysis_games import PAIRINGS, record_game
from arboretum_sdk.analysis import AnalysisConfig, analyse_replay


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=len(PAIRINGS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--goal", type=float, default=30.0, help="seconds a game at most")
    args = parser.parse_args()
    config = AnalysisConfig()
    print(f"analysis: samples {config.samples}, alternatives {config.alternatives}; every seat")
    print(f"{'game':<18} {'steps':>5} {'decisions':>9} {'cpu s':>6} {'wall s':>6} {'ms/dec':>6}")
    worst = 0.0
    for g in range(args.games):
        names = PAIRINGS[g % len(PAIRINGS)]
        doc = record_game(names, args.seed + g)
        cpu, wall = time.process_time(), time.perf_counter()
        found = analyse_replay(doc, None, config)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        worst = max(worst, cpu)
        print(
            f"{'-'.join(names):<18} {len(doc['steps']):>5} {len(found):>9} {cpu:>6.1f} "
            f"{wall:>6.1f} {1000 * cpu / max(1, len(found)):>6.0f}"
        )
    print(f"slowest game: {worst:.1f} s CPU (goal: under {args.goal:.0f} s)")
    return 0 if worst < args.goal else 1


if __name__ == "__main__":
    sys.exit(main())
