"""What a ladder's scheduler tick costs on a big ladder (docs/benchmarks.md, "Ladder").

A private redis-server gets a ladder of VERSIONS versions (``ladder.ops.create_ladder``) and
GAMES results of it, written straight into Redis as the rating path stores them (the result JSON
and its sequence number in ``elo_applied``; matches of 10 games between random pairs, outcomes
drawn from random strengths). Then the real tick (``ladder.scheduler.tick``) runs:

- the **first tick** reads the oldest results (at most ``fitdata.READ_LIMIT``) into the table
  of wins per pair that the ladder keeps between ticks (``ladder/fitdata.py``), fits and
  schedules from them; the **ticks that catch up** (after the matches scheduled are recorded)
  each read as many more, until every result is in the table;
- then, ROUNDS times, the matches the last tick scheduled are recorded by the real rating path
  (``ratings.record_result``) and the ladder ticks again: a **tick in steady state**, which
  reads only the results recorded since the last.

Printed: the seconds of each, and with ``--before``, for comparison in the same run, what a tick
spent before the table was kept: reading every result (``ratings.results_in_order``), building
the fit's rankings from them and fitting.

    .venv/bin/python bench/ladder_tick.py                          # 200 versions, 1,000,000 games
    .venv/bin/python bench/ladder_tick.py --versions 50 --games 100000
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from arboretum_worker import ratings, registry, store  # noqa: E402
from arboretum_worker.fit import Rankings, fit, games_of  # noqa: E402
from arboretum_worker.ladder import ops  # noqa: E402
from arboretum_worker.ladder.scheduler import in_flight, tick  # noqa: E402
from arboretum_worker.settings import WorkerSettings  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

GAMES_PER_MATCH = 10


def write_results(
    r: redis.Redis, name: str, versions: list[str], games: int, rng: np.random.Generator
) -> None:
    strength = rng.normal(0.0, 1.0, len(versions))
    matches = games // GAMES_PER_MATCH
    pipe = r.pipeline(transaction=False)
    for m in range(matches):
        i, j = rng.choice(len(versions), 2, replace=False)
        p = 1.0 / (1.0 + np.exp(strength[j] - strength[i]))
        wins = rng.random(GAMES_PER_MATCH) < p
        match_id = f"{name}-old-{m}"
        pipe.set(
            store.Keys.result(match_id),
            json.dumps(
                {
                    "match_id": match_id,
                    "league": name,
                    "seats": [versions[i], versions[j]],
                    "games": [
                        {"ranks": [1, 2] if w else [2, 1], "totals": [0, 0], "faults": [0, 0]}
                        for w in wins
                    ],
                    "finished": 0.0,
                },
                sort_keys=True,
                separators=(",", ":"),
            ),
        )
        pipe.zadd(store.Keys.elo_applied(name), {match_id: m + 1})
        if m % 5000 == 4999:
            pipe.execute()
    pipe.set(store.Keys.elo_seq(name), matches)
    pipe.execute()


def play_in_flight(r: redis.Redis, name: str, rng: np.random.Generator) -> int:
    done = 0
    for match in in_flight(r, name):
        games = tuple(
            store.GameOutcome((1, 2) if rng.random() < 0.5 else (2, 1), (0, 0), (0, 0))
            for _ in match.deals
        )
        ratings.record_result(r, store.MatchResult(match.id, name, match.seats, games))
        done += 1
    return done


def before(r: redis.Redis, name: str) -> None:
    t0 = time.perf_counter()
    results = ratings.results_in_order(r, name)
    t1 = time.perf_counter()
    rankings = Rankings().extend(games_of(results))
    t2 = time.perf_counter()
    fit(rankings)
    t3 = time.perf_counter()
    print(
        f"before (every result each tick): read {t1 - t0:.2f} s, rankings {t2 - t1:.2f} s, "
        f"fit {t3 - t2:.2f} s: {t3 - t0:.2f} s"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=200)
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=10, help="ticks in steady state")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument(
        "--before", action="store_true", help="time a tick's reading and fit as they were too"
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="ladder-tick-"))
    url, proc = start_redis_server(tmp / "redis", appendonly=False)
    try:
        r = redis.Redis.from_url(url)
        settings = WorkerSettings(redis_url=url, queue="ladder-tick-bench")
        versions = [
            registry.add_version(r, f"bot{i:03d}", f"# bot {i}\n".encode())
            for i in range(args.versions)
        ]
        name = "big"
        ops.create_ladder(
            r, name, versions, settings, depth=8, seed=args.seed, deals_per_series=GAMES_PER_MATCH
        )
        t0 = time.perf_counter()
        write_results(r, name, versions, args.games, rng)
        print(
            f"{args.versions} versions, {args.games:,} games in "
            f"{args.games // GAMES_PER_MATCH:,} results written in "
            f"{time.perf_counter() - t0:.1f} s"
        )

        if args.before:
            before(r, name)

        first = tick(r, name, settings)
        print(
            f"first tick (reads the oldest results into the table): {first.seconds:.2f} s, "
            f"{first.status}, {len(first.matches)} matches scheduled, "
            f"{first.behind:,} results left to read"
        )
        behind = first.behind
        while behind:
            play_in_flight(r, name, rng)
            report = tick(r, name, settings)
            behind = report.behind
            print(
                f"  a tick that catches up: {report.seconds:.2f} s, {report.status}, "
                f"{len(report.matches)} matches scheduled, {behind:,} results left to read"
            )
        seconds = []
        for _ in range(args.rounds):
            played = play_in_flight(r, name, rng)
            report = tick(r, name, settings)
            assert report.status == "scheduled" and report.matches, report
            seconds.append(report.seconds)
            print(
                f"  tick after {played} results: {report.seconds:.3f} s, "
                f"{len(report.matches)} matches scheduled"
            )
        print(
            f"steady state, {args.rounds} ticks: median {statistics.median(seconds):.3f} s, "
            f"max {max(seconds):.3f} s"
        )
    finally:
        stop_redis_server(proc)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
