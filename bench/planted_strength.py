"""Planted strengths through the real ratings (docs/benchmarks.md, "Ratings").

Five bots of known strength (Elo 0, 130, 330, 600, 750 before centring: neighbour gaps 130 to
270) play a league: the seats come from the league's own schedule (``schedule.round_robin``),
each game's ranking from the Plackett-Luce model (strength plus Gumbel noise, ``planted.py``).
Every game is recorded through the real rating script (``ratings.record_result``, on a private
``redis-server``), which keeps the live rating and the live Elo; every CHECK games the real batch
fit (``fit.fit``, incremental) is made, and the former pairwise fit (``baseline_ratings.py``).

Printed per player count, over REPLICATES leagues:

- **games needed**: the first checkpoint from which on the fit's order is right and no two
  neighbours' 95% intervals overlap (median and range over the replicates; a replicate that never
  gets there counts as more than GAMES);
- **coverage**: how often the fit's 95% intervals hold the true rating (all checkpoints, all bots);
- **live order**: the share of leaderboard positions (1st..5th) held by the right bot, from
  FROM games on, for the live rating and for the live Elo (K = 32);
- **live coverage**: how often the live rating's 95% interval holds the batch-fitted rating, from
  FROM games on (goal: at least 90%); the live ratings as the leaderboard shows them
  (``ratings.standings``: centred on the fit's anchor, their mean 1500), and beside it the
  stored ones (``ratings.live_ratings``, whose mean drifts from 1500).

    .venv/bin/python bench/planted_strength.py                  # 2, 3, 4 players, 10 leagues
    .venv/bin/python bench/planted_strength.py --players 3 --replicates 30 --games 6000
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import redis

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))
sys.path.insert(0, str(ROOT.parent / "tests" / "league"))
sys.path.insert(0, str(ROOT))

from planted import rank_games, schedule_seats  # noqa: E402

from arboretum_worker import ratings  # noqa: E402
from arboretum_worker.fit import FitRating, Rankings, fit  # noqa: E402
from arboretum_worker.store import GameOutcome, MatchResult  # noqa: E402
from baseline_ratings import pairwise_fit  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

OFFSETS = (0.0, 130.0, 330.0, 600.0, 750.0)
LEAGUE = "planted"


def planted() -> dict[str, float]:
    centre = sum(OFFSETS) / len(OFFSETS)
    return {f"bot{i}": 1500.0 + x - centre for i, x in enumerate(OFFSETS)}


@dataclass
class Tally:
    needed: list[float] = field(default_factory=list)
    needed_baseline: list[float] = field(default_factory=list)
    covered: int = 0
    intervals: int = 0
    covered_baseline: int = 0
    live_right: int = 0
    elo_right: int = 0
    positions: int = 0
    live_covers_fit: int = 0
    raw_covers_fit: int = 0
    live_checks: int = 0
    drift: list[float] = field(default_factory=list)
    """Per checkpoint: the mean of the stored live means, minus 1500."""
    z_raw: list[float] = field(default_factory=list)
    """(live mean - fitted rating) / live sigma, the stored live rating."""
    z_shown: list[float] = field(default_factory=list)
    """... the live rating as shown (centred)."""
    league_coverage: list[float] = field(default_factory=list)
    """Per league: how often its fit's intervals held the truth."""


def separated(fitted: Sequence[FitRating], truth: Sequence[str]) -> bool:
    """The fit's order is the true one and neighbours' 95% intervals do not overlap."""
    if [f.version for f in fitted] != list(truth):
        return False
    return all(a.lower > b.upper for a, b in itertools.pairwise(fitted))


def one_league(
    r: redis.Redis, players: int, games: int, check: int, start: int, seed: int, tally: Tally
) -> None:
    r.flushall()
    true = planted()
    truth = sorted(true, key=true.__getitem__, reverse=True)
    played = rank_games(
        true, schedule_seats(list(true), players, games, seed), np.random.default_rng(seed)
    )
    rankings = Rankings()
    covered_before, intervals_before = tally.covered, tally.intervals
    previous = None
    first_ok = first_ok_base = None
    for k, (seats, ranks) in enumerate(played, 1):
        outcome = GameOutcome(ranks, (0,) * players, (0,) * players)
        ratings.record_result(r, MatchResult(f"m{k}", LEAGUE, seats, (outcome,)))
        rankings.add(seats, ranks)
        if k % check:
            continue
        previous = fit(rankings, start=previous)
        fitted = previous.ratings()
        baseline = pairwise_fit(played[:k])
        ok, ok_base = separated(fitted, truth), separated(baseline, truth)
        first_ok = (first_ok or k) if ok else None
        first_ok_base = (first_ok_base or k) if ok_base else None
        for f in fitted:
            tally.covered += f.lower <= true[f.version] <= f.upper
            tally.intervals += 1
        for f in baseline:
            tally.covered_baseline += f.lower <= true[f.version] <= f.upper
        if k < start:
            continue
        live = {row.version: row.live for row in ratings.standings(r, LEAGUE)}  # as shown
        elo = ratings.ratings(r, LEAGUE)
        by_live = sorted(live, key=lambda v: -live[v].mu)
        by_elo = sorted(elo, key=lambda v: -elo[v])
        tally.live_right += sum(a == b for a, b in zip(by_live, truth, strict=True))
        tally.elo_right += sum(a == b for a, b in zip(by_elo, truth, strict=True))
        tally.positions += len(truth)
        raw = ratings.live_ratings(r, LEAGUE)
        tally.drift.append(statistics.fmean(s.mu for s in raw.values()) - 1500.0)
        for f in fitted:
            tally.live_covers_fit += live[f.version].lower <= f.elo <= live[f.version].upper
            tally.raw_covers_fit += raw[f.version].lower <= f.elo <= raw[f.version].upper
            tally.live_checks += 1
            tally.z_raw.append((raw[f.version].mu - f.elo) / raw[f.version].sigma)
            tally.z_shown.append((live[f.version].mu - f.elo) / live[f.version].sigma)
    tally.league_coverage.append(
        (tally.covered - covered_before) / (tally.intervals - intervals_before)
    )
    never = float(games + check)
    tally.needed.append(float(first_ok) if first_ok else never)
    tally.needed_baseline.append(float(first_ok_base) if first_ok_base else never)


def summary(values: list[float], games: int) -> str:
    def text(x: float) -> str:
        return f">{games}" if x > games else f"{x:.0f}"

    return f"{text(statistics.median(values))} [{text(min(values))}-{text(max(values))}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4], choices=(2, 3, 4))
    parser.add_argument("--replicates", type=int, default=10, help="leagues per player count")
    parser.add_argument("--games", type=int, default=4000, help="games per league")
    parser.add_argument("--check", type=int, default=100, help="fit every this many games")
    parser.add_argument("--from", dest="start", type=int, default=1000, help="live checks from")
    args = parser.parse_args()
    print(
        f"planted strengths {', '.join(f'{v:.0f}' for v in planted().values())} "
        f"(gaps {', '.join(f'{b - a:.0f}' for a, b in itertools.pairwise(OFFSETS))})"
        f"; {args.replicates} leagues x {args.games} games per player count"
    )
    with tempfile.TemporaryDirectory(prefix="planted-redis-") as tmp:
        url, process = start_redis_server(Path(tmp), appendonly=False)
        r = redis.Redis.from_url(url)
        try:
            for players in args.players:
                tally = Tally()
                started = time.perf_counter()
                for rep in range(args.replicates):
                    one_league(
                        r, players, args.games, args.check, args.start, players * 1000 + rep, tally
                    )
                seconds = time.perf_counter() - started
                print(f"\n{players} players ({seconds:.0f} s)")
                print(
                    "  games until the order is right, neighbours' 95% intervals apart: "
                    f"fit {summary(tally.needed, args.games)}, "
                    f"former pairwise fit {summary(tally.needed_baseline, args.games)}"
                )
                print(
                    f"  fit intervals hold the truth: {tally.covered / tally.intervals:.3f} "
                    f"(former pairwise fit {tally.covered_baseline / tally.intervals:.3f})"
                )
                print(
                    f"  from {args.start} games on, positions right: live rating "
                    f"{tally.live_right / tally.positions:.4f}, live Elo (K=32) "
                    f"{tally.elo_right / tally.positions:.4f}"
                )
                print(
                    "  live interval holds the fitted rating: "
                    f"{tally.live_covers_fit / tally.live_checks:.3f} (goal >= 0.90; stored, "
                    f"not centred: {tally.raw_covers_fit / tally.live_checks:.3f})"
                )
                mean, sd = statistics.fmean, statistics.pstdev
                print(
                    "  stored live means: their mean drifts from 1500 by "
                    f"{mean(tally.drift):+.1f} Elo (sd {sd(tally.drift):.1f}); "
                    "(mu - fitted rating) / sigma: stored mean "
                    f"{mean(tally.z_raw):+.2f} sd {sd(tally.z_raw):.2f}, "
                    f"shown mean {mean(tally.z_shown):+.2f} sd {sd(tally.z_shown):.2f}"
                )
                cover = tally.league_coverage
                se = statistics.stdev(cover) / len(cover) ** 0.5 if len(cover) > 1 else 0.0
                print(
                    f"  fit coverage per league: mean {statistics.fmean(cover):.3f}, "
                    f"standard error over the leagues {se:.3f}, range "
                    f"{min(cover):.3f}-{max(cover):.3f}"
                )
        finally:
            r.close()
            stop_redis_server(process)


if __name__ == "__main__":
    main()
