"""The leaderboard of a big league: 200 versions and 1,000,000 games (docs/benchmarks.md, "Web").

A private ``redis-server`` is filled as the league leaves it: 100 bots of 2 versions each, a
league record, RESULTS results of GAMES_PER_RESULT 2-player games each (the result JSON, the
sequence set and counter), every version's stats hash, live rating and live Elo. (The per-game
rating histories, which the board does not read, are left out unless ``--history``.) The games'
ranks follow planted strengths (Plackett-Luce).

Timed:

- making the stored fit once (``board.refresh_fit``: reading every result and fitting them);
- ``board.read_board`` (what ``arena leaderboard`` reads when the fit is fresh);
- the page ``/?league=`` and ``GET /api/v1/leaderboard?league=`` of the real app served by
  uvicorn on the loopback, over HTTP (one client, keep-alive): fresh, and right after a new
  result while the app makes the new fit in a thread (the page shows the stored fit meanwhile).

Goal: the page and the API under 50 ms (median and 95th percentile). Each figure also gives the
CPU time this process spent on a request (the app and the client), which the load of a shared
machine does not stretch as it stretches the wall time.

    .venv/bin/python bench/board_speed.py                       # 100,000 results x 10 games
    .venv/bin/python bench/board_speed.py --results 10000 --requests 100
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import redis

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))

from arboretum_web.app import WebSettings, create_app  # noqa: E402
from arboretum_web.screenshots import serve_in_thread  # noqa: E402
from arboretum_worker import board, ratings, registry, store  # noqa: E402
from arboretum_worker.fit import ELO_PER_NATURAL  # noqa: E402
from arboretum_worker.live_rating import Skill  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

LEAGUE = "big"


def fill(r: redis.Redis, results: int, per: int, history: bool, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    vids = [
        registry.add_version(r, f"bot{b:03d}", f"# bot {b} version {v}\n".encode())
        for b in range(100)
        for v in range(2)
    ]
    settings = store.LeagueSettings(players=2, games_per_pairing=2, bots=tuple(vids), seed=1)
    store.create_league(r, LEAGUE, settings, created=time.time())
    strength = rng.normal(1500.0, 200.0, len(vids))
    pairs = np.array([rng.choice(len(vids), 2, replace=False) for _ in range(results)])
    gap = (strength[pairs[:, 0]] - strength[pairs[:, 1]]) / ELO_PER_NATURAL
    p_first = 1.0 / (1.0 + np.exp(-gap))
    first_wins = rng.random((results, per)) < p_first[:, None]
    games = np.zeros(len(vids), dtype=np.int64)
    wins = np.zeros(len(vids), dtype=np.int64)
    rank_sum = np.zeros(len(vids), dtype=np.int64)
    pipe = r.pipeline(transaction=False)
    for k in range(results):
        a, b = int(pairs[k, 0]), int(pairs[k, 1])
        outcomes = tuple(
            store.GameOutcome((1, 2) if won else (2, 1), (0, 0), (0, 0)) for won in first_wins[k]
        )
        mid = f"big-{k:07d}"
        result = store.MatchResult(mid, LEAGUE, (vids[a], vids[b]), outcomes, time.time())
        pipe.set(store.Keys.result(mid), result.to_json())
        pipe.zadd(store.Keys.elo_applied(LEAGUE), {mid: k + 1})
        if history:
            for g, won in enumerate(first_wins[k]):
                for seat, w in ((a, won), (b, not won)):
                    line = f"{k + 1} {g} 1500.0 {mid} 1500.0 10.0"
                    pipe.rpush(store.Keys.elo_history(LEAGUE, vids[seat]), line)
                    del w
        n_won = int(first_wins[k].sum())
        games[a] += per
        games[b] += per
        wins[a] += n_won
        wins[b] += per - n_won
        rank_sum[a] += n_won + 2 * (per - n_won)
        rank_sum[b] += (per - n_won) + 2 * n_won
        if k % 2000 == 1999:
            pipe.execute()
            pipe = r.pipeline(transaction=False)
    pipe.set(store.Keys.elo_seq(LEAGUE), results)
    for i, vid in enumerate(vids):
        live = Skill(float(strength[i]), 12.0)
        pipe.hset(store.Keys.elo_live(LEAGUE), vid, live.to_text())
        pipe.hset(store.Keys.elo_ratings(LEAGUE), vid, repr(float(strength[i])))
        pipe.hset(
            store.Keys.elo_stats(LEAGUE, vid),
            mapping={
                "games": int(games[i]),
                "wins": int(wins[i]),
                "shared_wins": 0,
                "win_share": float(wins[i]),
                "rank_sum": int(rank_sum[i]),
                "last_played": time.time(),
                "last_seq": results,
                "rating": repr(float(strength[i])),
                "live": live.to_text(),
            },
        )
    pipe.execute()
    return vids


CPU: list[float] = []
"""This process's CPU time of each timed call (the app runs in it, in a thread), ms."""


def timed(call: Callable[[], object], count: int) -> list[float]:
    out = []
    for _ in range(count):
        start, cpu = time.perf_counter(), time.process_time()
        call()
        out.append(1000 * (time.perf_counter() - start))
        CPU.append(1000 * (time.process_time() - cpu))
    return out


def summary(ms: list[float]) -> str:
    q = statistics.quantiles(ms, n=20)
    cpu = statistics.median(CPU[-len(ms) :])
    return (
        f"median {statistics.median(ms):6.1f} ms  p95 {q[18]:6.1f} ms  max {max(ms):6.1f} ms  "
        f"(CPU of this process: median {cpu:5.1f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--games-per-result", type=int, default=10)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--history", action="store_true")
    parser.add_argument("--seed", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-board-") as tmp:
        url, process = start_redis_server(Path(tmp), appendonly=False)
        try:
            r = redis.Redis.from_url(url)
            start = time.monotonic()
            vids = fill(r, args.results, args.games_per_result, args.history, args.seed)
            games = args.results * args.games_per_result
            memory = r.info("memory")["used_memory_human"]
            print(
                f"filled: {len(vids)} versions, {args.results:,} results, {games:,} games "
                f"({time.monotonic() - start:.0f} s; Redis uses {memory})"
            )
            start = time.monotonic()
            board.refresh_fit(r, LEAGUE)
            print(f"board.refresh_fit (read every result, fit): {time.monotonic() - start:.1f} s")
            found = board.read_board(r, LEAGUE)
            assert found.fresh and len(found.rows) == 100, (found.fresh, len(found.rows))
            reads = timed(lambda: board.read_board(r, LEAGUE), args.requests)
            print(f"board.read_board (200 versions, 100 rows): {summary(reads)}")
            app = create_app(WebSettings(redis_url=url))
            with serve_in_thread(app) as base:
                parts = urllib.parse.urlsplit(base)
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)

                def get(path: str) -> bytes:
                    conn.request("GET", path)
                    resp = conn.getresponse()
                    body = resp.read()
                    assert resp.status == 200, (path, resp.status, body[:200])
                    return body

                page, api = f"/?league={LEAGUE}", f"/api/v1/leaderboard?league={LEAGUE}"
                get(page)
                get(api)
                assert len(json.loads(get(api))["rows"]) == 100
                print(f"page {page}: {summary(timed(lambda: get(page), args.requests))}")
                print(f"API  {api}: {summary(timed(lambda: get(api), args.requests))}")
                # a new result: the app shows the stored fit while it makes the new one
                a, b = vids[0], vids[1]
                outcome = store.GameOutcome((1, 2), (0, 0), (0, 0))
                ratings.record_result(r, store.MatchResult("big-new", LEAGUE, (a, b), (outcome,)))
                stale = timed(lambda: get(api), 1)
                fitted_then = json.loads(get(api))["fitted_results"]
                stale += timed(lambda: get(page), args.requests // 2)
                stale += timed(lambda: get(api), args.requests // 2)
                print(
                    f"page and API while the new fit is made (fit covered {fitted_then:,} of "
                    f"{args.results + 1:,} results at the second request): {summary(stale)}"
                )
                app.state.settings.fits.wait(600)
                after = json.loads(get(api))
                print(f"then the fit covers {after['fitted_results']:,} of {after['results']:,}")
                conn.close()
        finally:
            stop_redis_server(process)


if __name__ == "__main__":
    main()
