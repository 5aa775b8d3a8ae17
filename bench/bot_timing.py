"""How long a built-in bot takes per decision in time mode, as the referee measures it, on a loaded
machine: the p99 must stay within the bot's budget + 10%.

The bot plays ``--games`` deals against ``random`` through ``arena play`` (real processes, the
referee on loopback, each deal in both seat orders) with ``ARENA_COMPUTE=time``, while the series
benchmark (``bench/series_throughput.py``, SDK bots) runs over and over in the background to load
the machine, as a league worker's neighbours would. Every decision's time is read from the replays
(``ms``: from the referee sending the request to the answer's arrival, transport included) and the
script prints its quantiles, per decision kind and in all. Usage (from the repository root)::

    python bench/bot_timing.py --bot search --budget 0.3         # the search bot's default budget
    python bench/bot_timing.py --bot search --budget 0.3 --check # exit 1 if p99 > budget + 10%
    python bench/bot_timing.py --bot ismcts --budget 0.5 --load none

``--budget`` is what the bot promises (the figure checked); the bot itself is run at its defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOLERANCE = 1.10
"""The p99 rule: at most the budget + 10%."""


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_load(work: Path) -> subprocess.Popen[bytes]:
    """The series benchmark in a loop, in its own process group (stopped as one)."""
    loop = (
        f"while true; do {sys.executable} {HERE / 'series_throughput.py'} --bots sdk "
        f"--rounds 3 --games 100 >> {work / 'load.log'} 2>&1; done"
    )
    return subprocess.Popen(["sh", "-c", loop], start_new_session=True)


def stop_load(load: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(load.pid, 15)
    except ProcessLookupError:
        return
    try:
        load.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(load.pid, 9)
        load.wait()


def decision_times(replays: Path, bot: str) -> dict[str, list[float]]:
    """The referee's ``ms`` of every decision of ``bot``'s seats, by kind (draw, play)."""
    times: dict[str, list[float]] = {"draw": [], "play": []}
    for path in sorted(replays.glob("*/game-*.json")):
        doc = json.loads(path.read_text())
        seats = {s["seat"] for s in doc["seats"] if s["bot"] == bot}
        for step in doc["steps"]:
            if step.get("seat") in seats and step.get("kind") in times and "ms" in step:
                times[step["kind"]].append(float(step["ms"]))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--bot", default="search", help="built-in bot to time (default search)")
    parser.add_argument(
        "--budget", type=float, required=True, help="the bot's budget per decision, in seconds"
    )
    parser.add_argument("--games", type=int, default=10, help="deals (default 10, x2 seatings)")
    parser.add_argument("--seed", type=int, default=2026, help="match seed (default 2026)")
    parser.add_argument(
        "--load",
        choices=("series", "none"),
        default="series",
        help="series: run the series benchmark meanwhile (default); none: an idle machine",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if p99 > budget + 10%%")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arena-bot-timing-"))
    load = start_load(work) if args.load == "series" else None
    try:
        if load is not None:
            time.sleep(5.0)  # the load's referee and bots are up
        started = time.monotonic()
        command = [sys.executable, "-m", "arboretum_sdk.cli", "play", args.bot, "random"]
        command += ["--games", str(args.games), "--seed", str(args.seed)]
        command += ["--replays", str(work / "replays"), "--json", "--quiet"]
        env = dict(os.environ, ARENA_COMPUTE="time")
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
    finally:
        if load is not None:
            stop_load(load)
    try:
        if done.returncode != 0:
            print(done.stdout + done.stderr, file=sys.stderr)
            return 2
        report = json.loads(done.stdout)
        faults = sum(b["faults"] for b in report["bots"] if b["bot"] == args.bot)
        times = decision_times(work / "replays", args.bot)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    limit_ms = args.budget * 1000 * TOLERANCE
    every = times["draw"] + times["play"]
    print(
        f"{args.bot} in time mode, budget {args.budget:g} s, against random: "
        f"{2 * args.games} games, {len(every)} decisions, {seconds:.0f} s, load: {args.load}, "
        f"faults: {faults}"
    )
    print("| decisions | count | median ms | p90 ms | p99 ms | max ms | over budget | over +10% |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, values in (("draw", times["draw"]), ("play", times["play"]), ("all", every)):
        if not values:
            continue
        over = sum(1 for v in values if v > args.budget * 1000)
        over_limit = sum(1 for v in values if v > limit_ms)
        print(
            f"| {label} | {len(values)} | {statistics.median(values):.0f} | "
            f"{quantile(values, 0.90):.0f} | {quantile(values, 0.99):.0f} | {max(values):.0f} | "
            f"{over} | {over_limit} |"
        )
    p99 = quantile(every, 0.99)
    verdict = "met" if p99 <= limit_ms else "NOT met"
    print(f"p99 {p99:.0f} ms, limit {limit_ms:.0f} ms (budget + 10%): {verdict}")
    return 1 if args.check and p99 > limit_ms else 0


if __name__ == "__main__":
    sys.exit(main())
