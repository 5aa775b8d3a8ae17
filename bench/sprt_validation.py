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

**How long a test takes** (``--pairs-table``): for each bounds (the default ``[0, 5]`` and the
screen ``[0, 50]``) and each true difference (+10, +30, +100, +300 Elo, and 0 under the screen),
the verdict rates and the pairs to a verdict (median and 90th percentile) over ``--runs`` tests.
The pairs are drawn from the same model's pentanomial distribution (the five outcomes'
probabilities, integrated over the deal's advantage), which is all the test sees of a pair, and
fed to the same :class:`SprtState`. ``--pentanomial LL,LD,LWDD,DW,WW`` draws them from observed
counts instead (the truth is then what those counts imply), under both bounds.

    .venv/bin/python bench/sprt_validation.py                     # 1000 runs per scenario
    .venv/bin/python bench/sprt_validation.py --runs 200 --deal-sd 0
    .venv/bin/python bench/sprt_validation.py --pairs-table --runs 500
    .venv/bin/python bench/sprt_validation.py --pairs-table --runs 200 --pentanomial 2,1,40,2,55
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import math
import multiprocessing
import multiprocessing.pool
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

from arboretum_worker.sprt.stats import (  # noqa: E402
    OUTCOMES,
    PAIR_VALUES,
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


TABLE_BOUNDS = ((0.0, 5.0), (0.0, 50.0))
"""The default bounds and the quick screen docs/sprt.md recommends."""
TABLE_TRUTHS = (0.0, 10.0, 30.0, 100.0, 300.0)
_GAME_PAIRS = ((0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (1.0, 0.5), (1.0, 1.0))
"""A pair of NEW's game scores for each pentanomial outcome (the test counts only the outcome)."""


def model_pentanomial(offset: float, deal_sd: float, draws: float) -> list[float]:
    """The probabilities of the five pair outcomes (LL first) in the pair model: the two games'
    win/draw/loss chances for each deal advantage, convolved, averaged over the advantage."""
    dist = statistics.NormalDist()
    points = [dist.inv_cdf((i + 0.5) / NORMAL_POINTS) for i in range(NORMAL_POINTS)]
    if not deal_sd:
        points = [0.0]
    out = [0.0] * OUTCOMES
    for z in points:
        games = []
        for sign in (1, -1):
            p = _logistic(offset + sign * deal_sd * z)
            games.append(((1 - draws) * (1 - p), draws, (1 - draws) * p))  # 0, 1, 2 half-points
        for a, b in itertools.product(range(3), repeat=2):
            out[a + b] += games[0][a] * games[1][b] / len(points)
    return out


def _expected_elo(probabilities: list[float]) -> float:
    from arboretum_worker.sprt.stats import elo_of_score

    total = sum(probabilities)
    return elo_of_score(sum(p * a for p, a in zip(probabilities, PAIR_VALUES, strict=True)) / total)


def run_from_pentanomial(
    job: tuple[tuple[float, ...], float, float, int, str, int, int],
) -> tuple[str, int]:
    """One whole test on pairs drawn from a pentanomial distribution: (verdict, pairs)."""
    cumulative, elo0, elo1, seed, name, index, cap = job
    rng = random.Random(f"sprt-bench-table:{seed}:{name}:{index}")
    state = SprtState(SprtSettings(elo0=elo0, elo1=elo1, alpha=0.05, beta=0.05, max_pairs=cap))
    total = cumulative[-1]
    pick = bisect.bisect_right
    random_ = rng.random
    while state.verdict is None:
        state.add(*_GAME_PAIRS[pick(cumulative, random_() * total)])
    return state.verdict.value, state.pairs


def _counts(text: str) -> list[float]:
    """``--pentanomial``: five counts, not all 0 (else the script exits with the reason)."""
    try:
        counts = [float(c) for c in text.split(",")]
    except ValueError:
        counts = []
    if len(counts) != OUTCOMES or any(c < 0 for c in counts) or not sum(counts):
        raise SystemExit(f"--pentanomial: five counts LL,LD,LWDD,DW,WW, not all 0; got {text!r}")
    return counts


def pairs_table(args: argparse.Namespace, pool: multiprocessing.pool.Pool) -> None:
    """Verdict rates and pairs to a verdict for each bounds and true difference."""
    if args.pentanomial:
        counts = _counts(args.pentanomial)
        name = f"observed {args.pentanomial} ({_expected_elo(counts):+.0f} Elo)"
        rows = [(bounds, name, counts) for bounds in TABLE_BOUNDS]
    else:
        model = {
            truth: model_pentanomial(
                solve_offset(truth, args.deal_sd, args.draws), args.deal_sd, args.draws
            )
            for truth in TABLE_TRUTHS
        }
        rows = [
            (bounds, f"{truth:+g} Elo", model[truth])
            for bounds in TABLE_BOUNDS
            for truth in TABLE_TRUTHS
            if truth or bounds[1] > 10  # identical bots under [0, 5]: the scenarios above
        ]
    print("| bounds | truth | pentanomial | H1 | H0 | no verdict | pairs: median, 90th pct |")
    print("|---|---|---|---|---|---|---|")
    for (elo0, elo1), name, probabilities in rows:
        started = time.monotonic()
        cumulative = tuple(itertools.accumulate(probabilities))
        jobs = [
            (cumulative, elo0, elo1, args.seed, f"{name}:{elo0}:{elo1}", i, args.cap)
            for i in range(args.runs)
        ]
        results = pool.map(run_from_pentanomial, jobs, chunksize=max(1, args.runs // 40))
        verdicts = [v for v, _ in results]
        pairs = sorted(p for _, p in results)
        rates = [
            f"{100 * verdicts.count(v.value) / len(results):.1f}%"
            for v in (Verdict.H1, Verdict.H0, Verdict.INCONCLUSIVE)
        ]
        shown = " ".join(f"{p / sum(probabilities):.3f}" for p in probabilities)
        print(
            f"| [{elo0:g}, {elo1:g}] | {name} | {shown} | {' | '.join(rates)} | "
            f"{statistics.median(pairs):,.0f}, {pairs[int(0.9 * len(pairs))]:,} |",
            flush=True,
        )
        print(f"  ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)


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
    parser.add_argument(
        "--pairs-table",
        action="store_true",
        help="pairs to a verdict for +0..+300 Elo under [0, 5] and [0, 50] (a Markdown table)",
    )
    parser.add_argument(
        "--pentanomial",
        metavar="LL,LD,LWDD,DW,WW",
        help="with --pairs-table: draw the pairs from these observed counts",
    )
    args = parser.parse_args()
    if args.pentanomial and not args.pairs_table:
        parser.error("--pentanomial goes with --pairs-table")
    if args.pairs_table:
        if args.pentanomial:
            _counts(args.pentanomial)
        print(
            f"sprt pairs to a verdict: {args.runs} runs per row, alpha = beta = 0.05, deal sd "
            f"{args.deal_sd:g}, draws {args.draws:g}, seed {args.seed}"
        )
        with multiprocessing.Pool(args.processes) as pool:
            pairs_table(args, pool)
        return 0
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
