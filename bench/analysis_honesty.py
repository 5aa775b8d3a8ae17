"""Are the analysis's marks honest? (docs/benchmarks.md, "Analysis"; docs/analysis.md)

Games between built-in bots (bench/analysis_games.py: strong and weak pairings, fixed compute) are
analysed with the default configuration (``arboretum_sdk.analysis``). Then the decisions the
analysis found an alternative better than the one taken (by at least ``--floor`` points before
the correction: every decision that can be marked), and one in ``--others`` of the rest, are valued
again from the same position (the decision's seat's view) on an **independent and larger** sample:
``--check`` determinizations from another generator, the decision taken and the analysis's best
alternative each played out to the end of the game by the same policy, on the same
determinizations. The measured loss is the mean of best minus taken.

Per mark bucket (inaccuracy, mistake, blunder; "none": the checked decisions left unmarked), the
table gives the decisions, the mean loss the analysis estimated and the mean loss measured, with
the measured mean's 95% interval. The marks are honest when every bucket's measured mean is at
least its lower bound (the threshold of its mark); the script exits 1 if one is not.

Every checked decision is written as a JSON line to ``--out`` (the estimate before the
correction and its standard error too), so that ``--report FILE`` prints the table again for other
thresholds or another correction (``--shrink``, ``--thresholds I,M,B``) without playing anything.

    .venv/bin/python bench/analysis_honesty.py                  # 8 games, 48 checks a decision
    .venv/bin/python bench/analysis_honesty.py --games 2 --check 24
    .venv/bin/python bench/analysis_honesty.py --report honesty.jsonl --shrink 0.5
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from typing import Any

from analysis_games import PAIRINGS, record_game
from arboretum_sdk.analysis import AnalysisConfig, analyse_replay
from arboretum_sdk.analysis.engine import game_state_at
from arboretum_sdk.bots.planning import TurnPlanner

BUCKETS = ("none", "inaccuracy", "mistake", "blunder")


def collect(args: argparse.Namespace, config: AnalysisConfig) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    skipped = 0
    with open(args.out, "w") as out:
        for g in range(args.games):
            names = PAIRINGS[g % len(PAIRINGS)]
            doc = record_game(names, args.seed + g)
            for d in analyse_replay(doc, None, config):
                if d.best == d.taken:
                    continue
                if d.difference < args.floor:
                    skipped += 1
                    if skipped % args.others:
                        continue
                view = game_state_at(doc, d.step).view(d.seat)
                key = f"honesty:{args.seed}:{g}:{d.step}"
                rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
                planner = TurnPlanner(view, replies=-1)
                total = 0.0
                for _ in range(args.check):
                    det = view.determinize(rng)
                    total += planner.margin(det, d.best) - planner.margin(det, d.taken)
                row = {
                    "game": g,
                    "step": d.step,
                    "bots": list(names),
                    "difference": d.difference,
                    "stderr": d.stderr,
                    "measured": total / args.check,
                }
                rows.append(row)
                out.write(json.dumps(row) + "\n")
                out.flush()
            took = time.perf_counter() - start
            print(f"game {g + 1}/{args.games} {'-'.join(names)}: {took:.0f} s", file=sys.stderr)
    return rows


def report(rows: list[dict[str, Any]], config: AnalysisConfig, what: str) -> bool:
    bounds = {
        "none": 0.0,
        "inaccuracy": config.inaccuracy,
        "mistake": config.mistake,
        "blunder": config.blunder,
    }
    buckets: dict[str, list[tuple[float, float]]] = {b: [] for b in BUCKETS}
    for row in rows:
        loss = max(0.0, row["difference"] - config.shrink * row["stderr"])
        buckets[config.mark(loss) or "none"].append((loss, row["measured"]))
    print(
        f"{what}; analysis: samples {config.samples}, alternatives {config.alternatives}, "
        f"shrink {config.shrink}"
    )
    print(
        f"{'bucket':<11} {'bound':>5} {'n':>4} {'estimated':>9} {'measured':>8}  "
        "95% interval    honest"
    )
    honest = True
    for bucket in BUCKETS:
        pairs = buckets[bucket]
        if not pairs:
            print(f"{bucket:<11} {bounds[bucket]:>5.1f} {0:>4}")
            continue
        n = len(pairs)
        est = sum(e for e, _ in pairs) / n
        measured = [m for _, m in pairs]
        mean = sum(measured) / n
        sd = math.sqrt(sum((m - mean) ** 2 for m in measured) / (n - 1)) if n > 1 else 0.0
        half = 1.96 * sd / math.sqrt(n)
        ok = bucket == "none" or mean >= bounds[bucket]
        honest &= ok
        print(
            f"{bucket:<11} {bounds[bucket]:>5.1f} {n:>4} {est:>9.2f} {mean:>8.2f}  "
            f"[{mean - half:5.2f}, {mean + half:5.2f}]  {'yes' if ok else 'NO'}"
        )
    return honest


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--check", type=int, default=48, help="determinizations of the check")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--floor", type=float, default=0.5, help="points: check all above")
    parser.add_argument("--others", type=int, default=4, help="check 1 in N below the floor")
    parser.add_argument("--out", default="analysis-honesty.jsonl")
    parser.add_argument("--report", metavar="FILE", help="only print the table of FILE")
    parser.add_argument("--shrink", type=float)
    parser.add_argument("--thresholds", help="inaccuracy,mistake,blunder in points")
    args = parser.parse_args()
    config = AnalysisConfig()
    changes: dict[str, float] = {}
    if args.shrink is not None:
        changes["shrink"] = args.shrink
    if args.thresholds:
        i, m, b = (float(x) for x in args.thresholds.split(","))
        changes.update(inaccuracy=i, mistake=m, blunder=b)
    if changes:
        config = AnalysisConfig(**{**_fields(config), **changes})
    if args.report:
        with open(args.report) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        what = f"{len(rows)} checked decisions from {args.report}"
    else:
        rows = collect(args, config)
        what = (
            f"{args.games} games, {len(rows)} checked decisions, {args.check} independent "
            "determinizations each"
        )
    return 0 if report(rows, config, what) else 1


def _fields(config: AnalysisConfig) -> dict[str, Any]:
    return {name: getattr(config, name) for name in config.__slots__}  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
