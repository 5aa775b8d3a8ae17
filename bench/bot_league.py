"""The built-in bots' league: random, greedy and search, rated with intervals (not run in CI).

Every pair of bots plays two-player games in-process with the rules engine
(``arboretum_sdk.local.play_game``: no referee, no network, the clock reported but not enforced).
Each deal is played twice, once in each seat order, by fresh bots: the duplicate format, so the
luck of the deal cancels out. Pairings with the search bot are slow (it thinks up to ``--budget``
seconds per decision), so they get ``--deals`` deals; random against greedy gets ``--fast-deals``.

The results are recorded as the league records them (``MatchResult``: one match per pairing and
seat order, the engine's ranks) and fitted by the league's batch fit, ``arboretum_worker.fit``
(Plackett-Luce, Bradley-Terry for 2 players; 95% intervals, mean anchored at 1500). The script
prints:

- per pairing: the first bot's score (wins, a shared game counting 1/2), its 95% Wilson interval
  and the mean score margin;
- the ratings with their 95% intervals, best first, and whether neighbours' intervals overlap;
- **games needed**: the games are added to the fit in the order they were played (the pairings
  interleaved deal by deal); the report gives, for each pair of neighbours in the final order,
  the number of games of the whole league after which their intervals stopped overlapping for
  good (``-`` if they still overlap at the end).

Usage (from the repository root; be nice to shared machines)::

    nice -n 15 python bench/bot_league.py                       # 40 deals per search pairing
    nice -n 15 python bench/bot_league.py --deals 80 --workers 2 --json results.json
    nice -n 15 python bench/bot_league.py --deals 5 --fast-deals 20 --budget 0.05   # smoke run

Figures (and the time they take) are in docs/benchmarks.md. In short, measured on a loaded
2-core machine with the search bot's defaults (at most 0.3 s and 32 samples per decision):

- the order is search > greedy > random in every full run;
- greedy against random separates at once: their intervals stop overlapping after 6 games
  between them;
- search against greedy: search scores 0.650 of the games (95% interval [0.608, 0.690], 520
  games), 2.6 points a game more. Their head-to-head interval excludes 0.5 from about 200 games
  between them, but their *rating* intervals overlap much longer, because each rating's interval
  also carries the uncertainty of the mean the ratings are anchored to, which the random bot
  (almost no wins) makes wide. Three runs of this script (seeds 2026, 2028 and 2029 with
  ``--deals`` 40, 160 and 60) fitted together, in playing order: the intervals of search and
  greedy stop overlapping for good after 1,590 games of the league, 456 of them between the two;
  at 160 deals per pairing alone (960 games, 15 min with two workers) they still overlapped by
  24 Elo. Plan on about 250 deals per pairing (1,500 games, about 25 min with two workers), or
  fit several runs together: ``--add a.json --add b.json --deals 0 --fast-deals 0``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for sub in ("sdk", "worker"):
    if str(ROOT / sub) not in sys.path:
        sys.path.insert(0, str(ROOT / sub))

from arboretum import derive_game_seed  # noqa: E402
from arboretum_sdk import Bot  # noqa: E402
from arboretum_sdk.bots.greedy import GreedyBot  # noqa: E402
from arboretum_sdk.bots.random_bot import RandomBot  # noqa: E402
from arboretum_sdk.bots.search import SearchBot  # noqa: E402
from arboretum_sdk.local import play_game  # noqa: E402

BOTS = ("random", "greedy", "search")
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Job:
    a: str
    b: str
    deal: int
    match_seed: int
    budget: float
    max_rounds: int


@dataclass(frozen=True)
class Game:
    """One game: ``seats`` are bot names in seat order."""

    a: str
    b: str
    deal: int
    seats: tuple[str, str]
    ranks: tuple[int, ...]
    totals: tuple[int, ...]
    seconds: float
    search: tuple[tuple[int, float], ...] = ()
    """The search bot's (rounds, seconds) for each decision it searched."""


class MeasuredSearch(SearchBot):
    """The search bot, keeping its own measurement of each decision (rounds, seconds)."""

    def __init__(self, seed: int, budget: float, max_rounds: int) -> None:
        super().__init__(seed=seed, budget=budget, max_rounds=max_rounds)
        self.samples: list[tuple[int, float]] = []

    def choose(self, view):  # type: ignore[no-untyped-def]
        decision = super().choose(view)
        if self.last_candidates > 1:
            self.samples.append((self.last_rounds, self.last_elapsed))
        return decision


def make_bot(name: str, seed: int, budget: float, max_rounds: int) -> Bot:
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot()
    return MeasuredSearch(seed, budget, max_rounds)


def play_deal(job: Job) -> list[Game]:
    """Both seat orders of one deal, fresh bots each game."""
    seed = derive_game_seed(job.match_seed, job.deal)
    out = []
    for seats in ((job.a, job.b), (job.b, job.a)):
        bots = [make_bot(n, seed + i, job.budget, job.max_rounds) for i, n in enumerate(seats)]
        start = time.perf_counter()
        result = play_game(bots, seed)
        out.append(
            Game(
                job.a,
                job.b,
                job.deal,
                seats,
                result.ranks,
                result.totals,
                time.perf_counter() - start,
                tuple(s for bot in bots if isinstance(bot, MeasuredSearch) for s in bot.samples),
            )
        )
    return out


def load_games(path: Path) -> list[Game]:
    """The games of an earlier run's ``--json`` file."""
    out = []
    for g in json.loads(path.read_text())["games"]:
        g["seats"], g["ranks"], g["totals"] = map(tuple, (g["seats"], g["ranks"], g["totals"]))
        g["search"] = tuple(tuple(s) for s in g["search"])
        out.append(Game(**g))
    return out


def wilson(score: float, n: int) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p, z = score / n, Z95
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def fit(games: Sequence[Game]) -> list:
    """The league's batch fit of these games (one MatchResult per pairing and seat order)."""
    from arboretum_worker.fit import fit_ratings
    from arboretum_worker.store import GameOutcome, MatchResult

    matches: dict[tuple[str, str], list] = {}
    for g in games:
        matches.setdefault(g.seats, []).append(GameOutcome(g.ranks, g.totals, (0, 0)))
    results = [
        MatchResult(f"{s[0]}-vs-{s[1]}", "bot-league", s, tuple(outs))
        for s, outs in matches.items()
    ]
    return fit_ratings(results)


def separated(ratings: Sequence) -> list[bool]:
    """For each pair of neighbours (best first): True when their intervals do not overlap."""
    return [ratings[i].lower > ratings[i + 1].upper for i in range(len(ratings) - 1)]


def games_needed(games: Sequence[Game], order: Sequence[str]) -> list[tuple[int, int] | None]:
    """Per neighbour pair of ``order``: (league games, games between the two) after which their
    intervals stayed apart to the end, or None if they overlap at the end."""
    needed: list[tuple[int, int] | None] = [None] * (len(order) - 1)
    for n in range(2, len(games) + 1, 2):
        by_name = {r.version: r for r in fit(games[:n])}
        if any(name not in by_name for name in order):
            continue
        for i in range(len(order) - 1):
            hi, lo = by_name[order[i]], by_name[order[i + 1]]
            ok = hi.elo > lo.elo and hi.lower > lo.upper
            if ok and needed[i] is None:
                pair = {order[i], order[i + 1]}
                between = sum(1 for g in games[:n] if set(g.seats) == pair)
                needed[i] = (n, between)
            elif not ok:
                needed[i] = None
    return needed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=40, help="deals per pairing with search")
    parser.add_argument("--fast-deals", type=int, default=150, help="deals of random vs greedy")
    parser.add_argument("--seed", type=int, default=2026, help="match seed of every pairing")
    parser.add_argument(
        "--budget", type=float, default=0.3, help="search: seconds per decision (default 0.3)"
    )
    parser.add_argument("--max-rounds", type=int, default=32, help="search: samples per decision")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--pairing",
        action="append",
        metavar="A,B",
        help="play only this pairing (repeatable; default: all three)",
    )
    parser.add_argument("--json", type=Path, help="write every game and the fit here")
    parser.add_argument(
        "--add",
        type=Path,
        action="append",
        metavar="JSON",
        help="games of an earlier run (its --json file) to fit with these, first; repeatable "
        "(with --deals 0 --fast-deals 0: only fit them)",
    )
    args = parser.parse_args(argv)
    pairings = list(combinations(BOTS, 2))
    if args.pairing:
        wanted = [tuple(sorted(p.split(","), key=BOTS.index)) for p in args.pairing]
        pairings = [p for p in pairings if p in wanted]

    jobs = []
    for deal in range(max(args.deals, args.fast_deals)):
        for a, b in pairings:
            slow = "search" in (a, b)
            if deal < (args.deals if slow else args.fast_deals):
                jobs.append(Job(a, b, deal, args.seed, args.budget, args.max_rounds))
    print(
        f"bot league: {len(jobs) * 2} games; search budget {args.budget} s per decision, "
        f"at most {args.max_rounds} samples; {args.workers} worker(s)",
        file=sys.stderr,
    )
    start = time.perf_counter()
    games: list[Game] = [g for path in args.add or () for g in load_games(path)]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            for i, result in enumerate(pool.map(play_deal, jobs), 1):
                games.extend(result)
                _progress(i, len(jobs), start)
    else:
        for i, job in enumerate(jobs, 1):
            games.extend(play_deal(job))
            _progress(i, len(jobs), start)
    wall = time.perf_counter() - start
    print(file=sys.stderr)

    added = f", {len(games) - 2 * len(jobs)} of them from --add" if args.add else ""
    print(
        f"{len(games)} games{added}; played in {wall:.0f} s "
        f"(seed {args.seed}, search budget {args.budget} s)"
    )
    print()
    print(f"{'pairing':<18} {'games':>5} {'score of first':>14} {'95% interval':>16} {'margin':>7}")
    for a, b in combinations(BOTS, 2):
        mine = [g for g in games if (g.a, g.b) == (a, b)]
        if not mine:
            continue
        score = 0.0
        margin = 0
        for g in mine:
            seat = g.seats.index(a)
            other = 1 - seat
            if g.ranks[seat] < g.ranks[other]:
                score += 1
            elif g.ranks[seat] == g.ranks[other]:
                score += 0.5
            margin += g.totals[seat] - g.totals[other]
        low, high = wilson(score, len(mine))
        print(
            f"{a + ' v ' + b:<18} {len(mine):>5} {score / len(mine):>14.3f} "
            f"{'[' + f'{low:.3f}, {high:.3f}' + ']':>16} {margin / len(mine):>+7.2f}"
        )
    ratings = fit(games)
    order = [r.version for r in ratings]
    print()
    print("ratings (arboretum_worker.fit; 95% intervals; mean 1500)")
    for i, r in enumerate(ratings, 1):
        print(
            f"{i:>2}. {r.version:<8} {r.elo:7.1f}  [{r.lower:7.1f}, {r.upper:7.1f}]  "
            f"{r.games} games"
        )
    print("order: " + " > ".join(order))
    needed = games_needed(games, order)
    for i, sep in enumerate(separated(ratings)):
        when = (
            f"from {needed[i][1]} games between them ({needed[i][0]} games of the league)"
            if needed[i]
            else "-"
        )
        state = "separated" if sep else "overlapping"
        print(f"{order[i]} / {order[i + 1]}: intervals {state}; non-overlapping for good {when}")
    per_game = {
        name: sum(g.seconds for g in games if name in g.seats)
        / max(1, sum(1 for g in games if name in g.seats))
        for name in BOTS
    }
    searched = [s for g in games for s in g.search]
    if searched:
        rounds = sorted(r for r, _ in searched)
        seconds = sorted(t for _, t in searched)
        print(
            f"search: {len(searched)} searched decisions; samples per decision: mean "
            f"{sum(rounds) / len(rounds):.1f}, median {rounds[len(rounds) // 2]}, min {rounds[0]}; "
            f"seconds per decision: mean {sum(seconds) / len(seconds):.3f}, "
            f"99th percentile {seconds[int(0.99 * len(seconds))]:.3f}, max {seconds[-1]:.3f}"
        )
    print(
        "mean wall seconds per game involving: "
        + ", ".join(f"{n} {s:.2f}" for n, s in per_game.items())
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "seed": args.seed,
                    "budget": args.budget,
                    "max_rounds": args.max_rounds,
                    "seconds": wall,
                    "games": [g.__dict__ for g in games],
                    "ratings": [
                        {"bot": r.version, "elo": r.elo, "lower": r.lower, "upper": r.upper}
                        for r in ratings
                    ],
                    "games_needed": {
                        f"{order[i]}/{order[i + 1]}": needed[i] for i in range(len(needed))
                    },
                },
                indent=1,
            )
            + "\n"
        )
    return 0


def _progress(done: int, total: int, start: float) -> None:
    elapsed = time.perf_counter() - start
    eta = elapsed / done * (total - done)
    print(
        f"\r{done}/{total} deals, {elapsed:.0f} s, about {eta:.0f} s left   ",
        end="",
        file=sys.stderr,
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
