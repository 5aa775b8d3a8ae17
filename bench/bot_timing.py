"""How long a built-in bot takes per decision in time mode, as the referee measures it, on a loaded
machine: the p99 must stay within the bot's budget + 10%.

The bot plays ``--games`` deals against ``random`` through ``arena play`` (real processes, the
referee on loopback, each deal in both seat orders) with ``ARENA_COMPUTE=time``, while the series
benchmark (``bench/series_throughput.py``, SDK bots) runs over and over in the background to load
the machine, as a league worker's neighbours would. Every decision's time is read from the replays
(``ms``: from the referee sending the request to the answer's arrival, transport included) and the
script prints its quantiles, per decision kind and in all, against the budget. The bot runs as a
thin subclass that also writes its own time of every decision (from the request's arrival in its
process to its answer) to its log, so that a second table shows how much of the referee's time
the bot itself spent and how much went on the way (the request, the answer, a stalled process).
Usage (from the repository root)::

    python bench/bot_timing.py --bot search --budget 0.3         # the search bot's default budget
    python bench/bot_timing.py --bot search --budget 0.3 --check # exit 1 if p99 > budget + 10%
    python bench/bot_timing.py --bot search --budget 0.3 --stall-margin 0,0.15  # both, in turn
    python bench/bot_timing.py --bot lookahead --budget 0.3 --load none

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
from dataclasses import dataclass
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


TIMED_BOT = '''"""The built-in bot {name}, writing its own time of each decision to its log."""

import sys
import time

from arboretum_sdk.loader import load_bot_class

Base = load_bot_class({name!r})


class Timed(Base):  # type: ignore[misc, valid-type]
    def choose(self, view):  # type: ignore[no-untyped-def]
        decision = super().choose(view)
        if self.clock is not None:
            ms = (time.monotonic() - self.clock.received_at) * 1000
            print(f"BOT-TIME {{view.kind.value}} {{ms:.2f}}", file=sys.stderr, flush=True)
        return decision
'''
"""A bot file that runs the built-in bot ``name`` and logs its own time of every decision."""
MARGIN = (
    "\nimport arboretum_sdk.bots.compute\n\narboretum_sdk.bots.compute.STALL_MARGIN = {margin!r}\n"
)
"""Appended to it to set the SDK's stall margin in the bot's process."""


def own_times(replays: Path) -> dict[str, list[float]]:
    """The bot's own time of each of its decisions (ms), by kind (draw, play), from its logs."""
    times: dict[str, list[float]] = {"draw": [], "play": []}
    for log in sorted(replays.glob("*/bot-*.log")):
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("BOT-TIME "):
                _, kind, ms = line.split()
                times["play" if kind == "play" else "draw"].append(float(ms))
    return times


def table(title: str, times: dict[str, list[float]], budget_ms: float) -> list[str]:
    limit_ms = budget_ms * TOLERANCE
    lines = [
        f"| {title} | count | median ms | p90 ms | p99 ms | max ms | over budget | over +10% |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    every = times["draw"] + times["play"]
    for label, values in (("draw", times["draw"]), ("play", times["play"]), ("all", every)):
        if not values:
            continue
        over = sum(1 for v in values if v > budget_ms)
        over_limit = sum(1 for v in values if v > limit_ms)
        lines.append(
            f"| {label} | {len(values)} | {statistics.median(values):.0f} | "
            f"{quantile(values, 0.90):.0f} | {quantile(values, 0.99):.0f} | {max(values):.0f} | "
            f"{over} | {over_limit} |"
        )
    return lines


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


def play_timed(work: Path, bot: str, games: int, seed: int, margin: float | None) -> Played:
    """One ``arena play`` of the timed ``bot`` against random in time mode (with ``margin`` as the
    SDK's ``STALL_MARGIN`` when given), and what it measured."""
    run = work / f"run-{len(list(work.glob('run-*')))}"
    run.mkdir()
    timed = run / f"{bot}.py"  # the entrant's name is the file's stem: the bot's
    text = TIMED_BOT.format(name=bot)
    if margin is not None:
        text += MARGIN.format(margin=margin)
    timed.write_text(text)
    command = [sys.executable, "-m", "arboretum_sdk.cli", "play", str(timed), "random"]
    command += ["--games", str(games), "--seed", str(seed)]
    command += ["--replays", str(run / "replays"), "--json", "--quiet"]
    started = time.monotonic()
    env = dict(os.environ, ARENA_COMPUTE="time")
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(done.stdout + done.stderr)
    report = json.loads(done.stdout)
    faults = sum(b["faults"] for b in report["bots"] if b["bot"] == bot)
    return Played(seconds, faults, decision_times(run / "replays", bot), own_times(run / "replays"))


@dataclass
class Played:
    seconds: float
    faults: int
    times: dict[str, list[float]]
    """As the referee measured them."""
    own: dict[str, list[float]]
    """As the bot measured them."""


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
    parser.add_argument(
        "--stall-margin",
        type=lambda text: [float(v) for v in text.split(",")],
        default=[None],
        metavar="S[,S...]",
        help="the seconds the bot keeps in hand (arboretum_sdk.bots.compute.STALL_MARGIN; "
        "default: the SDK's); several: one run each, in turn, under the same load",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if p99 > budget + 10%%")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arena-bot-timing-"))
    load = start_load(work) if args.load == "series" else None
    runs: list[tuple[float | None, Played]] = []
    try:
        if load is not None:
            time.sleep(5.0)  # the load's referee and bots are up
        for margin in args.stall_margin:
            runs.append((margin, play_timed(work, args.bot, args.games, args.seed, margin)))
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    finally:
        if load is not None:
            stop_load(load)
        shutil.rmtree(work, ignore_errors=True)
    budget_ms = args.budget * 1000
    limit_ms = budget_ms * TOLERANCE
    failed = False
    for margin, played in runs:
        every = played.times["draw"] + played.times["play"]
        kept = "the SDK's stall margin" if margin is None else f"stall margin {margin:g} s"
        print(
            f"{args.bot} in time mode, budget {args.budget:g} s, {kept}, against random: "
            f"{2 * args.games} games, {len(every)} decisions, {played.seconds:.0f} s, "
            f"load: {args.load}, faults: {played.faults}"
        )
        print("\n".join(table("as the referee measures", played.times, budget_ms)))
        print()
        print("\n".join(table("the bot's own time", played.own, budget_ms)))
        p99 = quantile(every, 0.99)
        verdict = "met" if p99 <= limit_ms else "NOT met"
        print(f"p99 {p99:.0f} ms, limit {limit_ms:.0f} ms (budget + 10%): {verdict}\n")
        failed = failed or p99 > limit_ms
    return 1 if args.check and failed else 0


if __name__ == "__main__":
    sys.exit(main())
