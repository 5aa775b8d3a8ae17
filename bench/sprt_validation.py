"""The sequential test's error rates, by simulation (docs/benchmarks.md, "Sequential test").

Each run is one whole ``arena sprt`` test on simulated pairs, through the real statistics
(:class:`arboretum_worker.sprt.stats.SprtState`): pairs are fed until the LLR reaches a bound.
The scenarios compare identical bots (true Elo 0) and a bot planted 20 Elo stronger, each under
the bounds it is tested with, and print how often each verdict came, with a 95% interval, and
the mean number of pairs to a verdict.

**The pair model.** A pair is two games on one deal with the seats swapped. The deal favours one
seat by ``u`` (normal, sd ``--deal-sd`` in logistic units), which the two games share, so the
games of a pair are correlated as real ones are: NEW wins the first with probability
``logistic(d + u)`` and the second with ``logistic(d - u)``; a game is a shared first place
(a draw) with probability ``--draws``. ``d`` is solved so that NEW's expected score per game is
exactly the planted logistic Elo. ``--deal-sd 0`` makes the games independent.

    .venv/bin/python bench/sprt_validation.py                     # 1000 runs per scenario
    .venv/bin/python bench/sprt_validation.py --runs 200 --deal-sd 0
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

from arboretum_worker.sprt.stats import (  # noqa: E402
    SprtSettings,
    SprtState,
    Verdict,
    score_of_elo,
)

NORMAL_POINTS = 4000


@dataclass(frozen=True)
class Scenario:
    name: str
    elo0: float
    elo1: float
    true_elo: float
    goal: Verdict
    """The verdict the goal asks for in at least 95% of runs."""


SCENARIOS = (
    Scenario("identical bots, bounds [0, 10]", 0, 10, 0, Verdict.H0),
    Scenario("planted +20 Elo, bounds [0, 10]", 0, 10, 20, Verdict.H1),
    Scenario("identical bots, defaults [0, 5]", 0, 5, 0, Verdict.H0),
    Scenario("planted +5 Elo, defaults [0, 5]", 0, 5, 5, Verdict.H1),
)


def _logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _expected_score(d: float, deal_sd: float, draws: float, normals: list[float]) -> float:
    wins = statistics.fmean(
        (_logistic(d + deal_sd * z) + _logistic(d - deal_sd * z)) / 2 for z in normals
    )
    return (1 - draws) * wins + draws / 2


def solve_offset(true_elo: float, deal_sd: float, draws: float) -> float:
    """The logistic offset d that gives NEW the planted expected score per game."""
    target = score_of_elo(true_elo)
    dist = statistics.NormalDist()
    normals = [dist.inv_cdf((i + 0.5) / NORMAL_POINTS) for i in range(NORMAL_POINTS)]
    low, high = -10.0, 10.0
    for _ in range(80):
        mid = (low + high) / 2
        if _expected_score(mid, deal_sd, draws, normals) < target:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _game(rng: random.Random, p: float, draws: float) -> float:
    if rng.random() < draws:
        return 0.5
    return 1.0 if rng.random() < p else 0.0


def one_run(job: tuple[Scenario, float, float, float, int, int, int]) -> tuple[str, int]:
    scenario, offset, deal_sd, draws, seed, index, cap = job
    rng = random.Random(f"sprt-bench:{seed}:{scenario.name}:{index}")
    state = SprtState(
        SprtSettings(elo0=scenario.elo0, elo1=scenario.elo1, alpha=0.05, beta=0.05, max_pairs=cap)
    )
    while state.verdict is None:
        u = rng.gauss(0.0, deal_sd) if deal_sd else 0.0
        first = _game(rng, _logistic(offset + u), draws)
        second = _game(rng, _logistic(offset - u), draws)
        state.add(first, second)
    return state.verdict.value, state.pairs


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="tests per scenario (default 1000)")
    parser.add_argument("--seed", type=int, default=2026, help="simulation seed (default 2026)")
    parser.add_argument(
        "--deal-sd", type=float, default=1.0, help="sd of the deal's seat advantage (default 1.0)"
    )
    parser.add_argument(
        "--draws", type=float, default=0.02, help="probability of a shared first (default 0.02)"
    )
    parser.add_argument(
        "--cap", type=int, default=1_000_000, help="pairs at most per test (default 1000000)"
    )
    parser.add_argument(
        "--scenario",
        type=int,
        action="append",
        choices=range(len(SCENARIOS)),
        help="only these scenarios (0-based; default all)",
    )
    parser.add_argument("--processes", type=int, default=2, help="worker processes (default 2)")
    args = parser.parse_args()
    chosen = [SCENARIOS[i] for i in args.scenario] if args.scenario else list(SCENARIOS)
    print(
        f"sprt validation: {args.runs} runs per scenario, alpha = beta = 0.05, deal sd "
        f"{args.deal_sd:g}, draws {args.draws:g}, seed {args.seed}"
    )
    failed = False
    with multiprocessing.Pool(args.processes) as pool:
        for scenario in chosen:
            started = time.monotonic()
            offset = solve_offset(scenario.true_elo, args.deal_sd, args.draws)
            jobs = [
                (scenario, offset, args.deal_sd, args.draws, args.seed, i, args.cap)
                for i in range(args.runs)
            ]
            results = pool.map(one_run, jobs, chunksize=max(1, args.runs // 40))
            verdicts = [v for v, _ in results]
            pairs = [p for _, p in results]
            hits = verdicts.count(scenario.goal.value)
            low, high = wilson(hits, len(results))
            met = hits / len(results) >= 0.95
            failed |= not met
            counts = ", ".join(
                f"{v.value} {verdicts.count(v.value)}" for v in Verdict if verdicts.count(v.value)
            )
            print(
                f"{scenario.name}: {scenario.goal.value} in {100 * hits / len(results):.1f}% "
                f"[{100 * low:.1f}, {100 * high:.1f}] of runs ({counts}); pairs to a verdict: "
                f"mean {statistics.fmean(pairs):.0f}, median {statistics.median(pairs):.0f}, "
                f"90th percentile {sorted(pairs)[int(0.9 * len(pairs))]}"
                f"{'' if met else '  <-- below 95%'}  ({time.monotonic() - started:.0f} s)",
                flush=True,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
