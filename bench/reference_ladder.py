"""The built-in bots' ladder: each pairing's score over duplicate deals, with the compute each used.

Every game is played in-process with the rules engine (``arboretum_sdk.local.play_game``: no
referee, no network), each bot in **fixed compute** (``compute="fixed"``: the same work every
decision, whatever the machine's load), so that a run's figures do not depend on the load and a
re-run with the same ``--seed`` reproduces them exactly. Each deal is played in every rotation of
the seats (the duplicate format), by fresh bots each game, so the luck of the deal cancels out.

A pairing ``A:B`` with ``--players N`` seats one ``A`` and N-1 copies of ``B`` (each copy draws its
numbers from its own seat's bot seed). A's score per game is 1 for a win, 1/k for a win shared by
k seats, 0 otherwise; the report gives its mean with a 95% Wilson interval, the mean points margin
(A's total minus the best other total), A's share of the wins for comparison (1/N), the seconds a
game took and A's mean and largest seconds a decision.

Usage (from the repository root; ``--workers`` processes, at most 2 on a shared machine)::

    python bench/reference_ladder.py                   # the ladder, 100 deals a pairing
    python bench/reference_ladder.py --pairs expert:lookahead --deals 200 --workers 2
    python bench/reference_ladder.py --pairs expert:greedy --players 3 --deals 60
    python bench/reference_ladder.py --pairs expert:lookahead --expert-args '{"potential": 0.5}'

The figures are in docs/benchmarks.md ("Bots: the ladder").
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "sdk") not in sys.path:
    sys.path.insert(0, str(ROOT / "sdk"))

from arboretum import Decision, SeatView, derive_game_seed  # noqa: E402
from arboretum_sdk import Bot  # noqa: E402
from arboretum_sdk.bots.expert import ExpertBot  # noqa: E402
from arboretum_sdk.bots.greedy import GreedyBot  # noqa: E402
from arboretum_sdk.bots.lookahead import LookaheadBot  # noqa: E402
from arboretum_sdk.bots.random_bot import RandomBot  # noqa: E402
from arboretum_sdk.bots.search import SearchBot  # noqa: E402
from arboretum_sdk.local import play_game  # noqa: E402

Z95 = 1.959963984540054
EXPERT_ARGS = "REFERENCE_LADDER_EXPERT_ARGS"
"""The environment variable that carries ``--expert-args`` to the worker processes."""

FACTORIES: dict[str, tuple[Callable[[], Bot], str]] = {
    "random": (RandomBot, "none (uniform)"),
    "greedy": (GreedyBot, "none (one heuristic pass)"),
    "lookahead": (LookaheadBot, "none (one heuristic pass)"),
    "search": (
        lambda: SearchBot(compute="fixed"),
        "fixed: 32 determinizations x <= 64 candidates a decision",
    ),
    "expert": (
        lambda: ExpertBot(compute="fixed", **json.loads(os.environ.get(EXPERT_ARGS, "{}"))),
        f"fixed: {ExpertBot.SIMULATIONS} determinizations x <= 12 candidates a decision, "
        f"once the deck holds {ExpertBot().endgame_deck} cards or fewer; a heuristic pass before",
    ),
}
"""name -> (a fresh bot in fixed compute, the compute it uses, in words)"""

LADDER = (
    ("greedy", "random"),
    ("lookahead", "greedy"),
    ("search", "lookahead"),
    ("expert", "search"),
    ("expert", "lookahead"),
    ("expert", "greedy"),
)


class Timed:
    """Wraps a bot, recording the seconds of each of its decisions."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.seconds: list[float] = []

    def install(self) -> Bot:
        choose = self.bot.choose

        def timed(view: SeatView) -> Decision:
            start = time.perf_counter()
            decision = choose(view)
            self.seconds.append(time.perf_counter() - start)
            return decision

        self.bot.choose = timed  # type: ignore[method-assign]
        return self.bot


@dataclass(frozen=True)
class Job:
    a: str
    b: str
    players: int
    deal: int
    match_seed: int


@dataclass
class Outcome:
    score: float = 0.0
    games: int = 0
    margin: float = 0.0
    seconds: float = 0.0
    decisions: list[float] = field(default_factory=list)


def play_deal(job: Job) -> Outcome:
    """Every rotation of the seats on one deal: A in each seat once."""
    seed = derive_game_seed(job.match_seed, job.deal)
    out = Outcome()
    for a_seat in range(job.players):
        names = [job.b] * job.players
        names[a_seat] = job.a
        timer = Timed(FACTORIES[job.a][0]())
        bots = [timer.install() if s == a_seat else FACTORIES[n][0]() for s, n in enumerate(names)]
        start = time.perf_counter()
        result = play_game(bots, seed)
        out.seconds += time.perf_counter() - start
        ranks, totals = result.ranks, result.totals
        if ranks[a_seat] == 1:
            out.score += 1 / sum(1 for r in ranks if r == 1)
        out.margin += totals[a_seat] - max(t for s, t in enumerate(totals) if s != a_seat)
        out.games += 1
        out.decisions.extend(timer.seconds)
    return out


def wilson(score: float, n: int) -> tuple[float, float]:
    p, z = score / n, Z95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def run_pair(
    a: str, b: str, players: int, deals: int, seed: int, workers: int
) -> dict[str, object]:
    jobs = [Job(a, b, players, d, seed) for d in range(deals)]
    total = Outcome()
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(play_deal, jobs, chunksize=1))
    else:
        results = [play_deal(job) for job in jobs]
    for r in results:
        total.score += r.score
        total.games += r.games
        total.margin += r.margin
        total.seconds += r.seconds
        total.decisions.extend(r.decisions)
    low, high = wilson(total.score, total.games)
    decisions = sorted(total.decisions)
    return {
        "a": a,
        "b": b,
        "players": players,
        "games": total.games,
        "score": total.score / total.games,
        "low": low,
        "high": high,
        "margin": total.margin / total.games,
        "share": 1 / players,
        "seconds_per_game": total.seconds / total.games,
        "a_mean_decision": sum(decisions) / len(decisions),
        "a_max_decision": decisions[-1],
        "wall": time.perf_counter() - start,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pairs",
        nargs="*",
        default=[f"{a}:{b}" for a, b in LADDER],
        help="pairings A:B (default: the ladder)",
    )
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    parser.add_argument("--deals", type=int, default=100, help="deals per pairing")
    parser.add_argument("--seed", type=int, default=2026, help="match seed of the deals")
    parser.add_argument("--workers", type=int, default=1, help="processes (at most 2 here)")
    parser.add_argument("--json", type=Path, help="write the results here too")
    parser.add_argument(
        "--expert-args",
        metavar="JSON",
        help="keyword arguments of ExpertBot, to try its settings: '{\"potential\": 0.5}'",
    )
    args = parser.parse_args(argv)
    if args.expert_args:
        json.loads(args.expert_args)  # a bad JSON fails here, not in a worker
        os.environ[EXPERT_ARGS] = args.expert_args  # the workers inherit it
    rows = []
    for pair in args.pairs:
        a, _, b = pair.partition(":")
        if a not in FACTORIES or b not in FACTORIES:
            parser.error(f"unknown bot in {pair!r}; known: {', '.join(FACTORIES)}")
        row = run_pair(a, b, args.players, args.deals, args.seed, args.workers)
        rows.append(row)
        print(
            f"{a:>9} v {b:<9} {args.players}p  {row['games']:4d} games  "
            f"score {row['score']:.3f} [{row['low']:.3f}, {row['high']:.3f}]  "
            f"(share {row['share']:.2f})  margin {row['margin']:+.1f}  "
            f"{row['seconds_per_game']:.2f} s/game  "
            f"{a}: mean {row['a_mean_decision'] * 1000:.0f} ms, "
            f"max {row['a_max_decision'] * 1000:.0f} ms a decision",
            flush=True,
        )
    print("\ncompute (fixed, the same work on any machine):")
    for name, (_, words) in FACTORIES.items():
        print(f"  {name:>9}: {words}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
