"""Web pages on a big store, and what a stored game costs in Redis (docs/benchmarks.md, "Store").

Pages: a private redis-server gets N stored matches (100,000 by default) written straight into
Redis in the layout the league wrote before the match indexes existed (match hashes, the
leagues' lists, results, live ratings; no index), so the same data serves the code before and
after the indexes. Then ``arena web`` starts on it (the new code indexes the old data at start:
its start-up time is printed) and each page is asked ``--requests`` times, the pages
interleaved, over one keep-alive connection; the first answer of each is timed on its own.

    .venv/bin/python bench/store_bench.py                 # 100,000 matches, 20 requests each
    .venv/bin/python bench/store_bench.py --arena OTHER/.venv/bin/arena --memory-games 0

Memory: a fresh database gets ``--memory-games`` real games (played in-process by the SDK's
random policy) in series matches of ``--deals-per-series`` games (the league's default, 10),
each stored through the league's own functions (``store.create_matches``,
``start_match_attempt``, ``ratings.record_result``, ``replays.save_replay``,
``replays.append_bot_log``), and Redis's ``used_memory`` before and after gives the bytes per
stored game; ``MEMORY USAGE`` of every key splits them by kind.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from arboretum_worker import ratings, registry, replays, store  # noqa: E402
from arboretum_worker.schedule import round_robin  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]
STATUS_SHARES = (("finished", 0.86), ("queued", 0.08), ("running", 0.02), ("failed", 0.03))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- the page data set


def write_old_layout(r: redis.Redis, matches: int, bots: int, seed: int = 1) -> dict[str, int]:
    """``matches`` matches of 2-player leagues of ``bots`` bots, in the pre-index layout.

    Most are in one big league; two small leagues hold 5% each. Statuses are drawn with
    STATUS_SHARES (the rest cancelled); finished matches get a result, a sequence number and
    live Elo (recomputed from the results, as the rating script would have left it).
    """
    rng = random.Random(seed)
    versions = []
    for i in range(bots):
        versions.append(registry.add_version(r, f"bot{i:02d}", f"# bench bot {i}\n".encode()))
    sizes = {"big": matches - 2 * (matches // 20), "small1": matches // 20, "small2": matches // 20}
    now = time.time()
    for index, (name, size) in enumerate(sizes.items()):
        pairs = bots * (bots - 1)  # each pair in both seat orders per deal
        deals = -(-size // pairs)
        settings = store.LeagueSettings(
            players=2, games_per_pairing=deals, bots=tuple(versions), seed=seed + index
        )
        r.hset(
            store.Keys.league(name),
            mapping={
                "name": name,
                "settings": settings.to_json(),
                "status": "running",
                "created": repr(now - 3600 * (3 - index)),
            },
        )
        r.sadd(store.Keys.LEAGUES, name)
        specs = round_robin(name, versions, 2, deals, seed + index)[:size]
        results = []
        pipe = r.pipeline(transaction=False)
        seq = 0
        for count, spec in enumerate(specs, 1):
            roll, status = rng.random(), "cancelled"
            for candidate, share in STATUS_SHARES:
                if roll < share:
                    status = candidate
                    break
                roll -= share
            record = {
                "id": spec.match_id,
                "league": name,
                "seats": json.dumps(list(spec.seats)),
                "deal": spec.deal,
                "rotation": spec.rotation,
                "seed": spec.seed,
                "status": status,
                "attempts": 0 if status == "queued" else 1,
                "created": repr(now),
            }
            if status != "queued":
                record.update(worker="bench-worker", started=repr(now))
            if status == "failed":
                record["failure"] = "RuntimeError: the bot crashed (bench)"
            if status == "finished":
                seq += 1
                record["finished"] = repr(now)
                first = rng.random() < 0.5
                ranks = (1, 2) if first else (2, 1)
                result = store.MatchResult(
                    spec.match_id,
                    name,
                    spec.seats,
                    (store.GameOutcome(ranks, (20, 10) if first else (10, 20), (0, 0)),),
                    now,
                )
                results.append(result)
                pipe.set(store.Keys.result(spec.match_id), result.to_json())
                pipe.zadd(store.Keys.elo_applied(name), {spec.match_id: seq})
            pipe.hset(store.Keys.match(spec.match_id), mapping=record)
            pipe.rpush(store.Keys.league_matches(name), spec.match_id)
            if count % 2000 == 0:
                pipe.execute()
        pipe.set(store.Keys.elo_seq(name), seq)
        pipe.execute()
        _write_ratings(r, name, results)
    return sizes


def _write_ratings(r: redis.Redis, league: str, results: list[store.MatchResult]) -> None:
    live = ratings.recompute(results)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    for result in results:
        for vid, rank in zip(result.seats, result.games[0].ranks, strict=True):
            stats[vid]["games"] += 1
            stats[vid]["rank_sum"] += rank
            stats[vid]["wins"] += rank == 1
    pipe = r.pipeline(transaction=False)
    for vid, value in live.items():
        pipe.hset(store.Keys.elo_ratings(league), vid, f"{value:.17g}")
        st = stats[vid]
        pipe.hset(
            store.Keys.elo_stats(league, vid),
            mapping={
                "games": st["games"],
                "wins": st["wins"],
                "shared_wins": 0,
                "win_share": st["wins"],
                "rank_sum": st["rank_sum"],
                "last_played": repr(time.time()),
                "last_seq": len(results),
                "rating": f"{value:.17g}",
            },
        )
    pipe.execute()


# --------------------------------------------------------------------------- timing the pages


def start_web(arena: list[str], url: str, port: int, log: Path) -> tuple[subprocess.Popen, float]:
    """Start ``arena web``; (process, seconds until it answers /api/v1/health)."""
    started = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*arena, "web", "--host", "127.0.0.1", "--port", str(port), "--redis-url", url],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("arena web exited:\n" + log.read_text(errors="replace")[-3000:])
        with contextlib.suppress(OSError):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=900)
            conn.request("GET", "/api/v1/health")
            if conn.getresponse().status == 200:
                conn.close()
                return proc, time.perf_counter() - started
        time.sleep(0.1)
    raise RuntimeError("arena web did not answer")


def time_get(conn: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    elapsed = time.perf_counter() - started
    if response.status != 200:
        raise RuntimeError(f"GET {path}: {response.status} {body[:300]!r}")
    return elapsed


def bench_pages(args: argparse.Namespace) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="arena-store-bench-"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    web = None
    try:
        r = redis.Redis.from_url(url)
        t0 = time.perf_counter()
        sizes = write_old_layout(r, args.matches, args.bots)
        print(
            f"wrote {sum(sizes.values())} matches in {time.perf_counter() - t0:.1f} s "
            f"(leagues: {', '.join(f'{k} {v}' for k, v in sizes.items())}), pre-index layout"
        )
        bot = f"bot{args.bots // 2:02d}"
        paths = [
            "/leagues",
            "/leagues/big",
            f"/matches?status=finished&bot={bot}",
            f"/api/v1/matches?bot={bot}&limit=10",
        ]
        port = _free_port()
        web, startup = start_web(args.arena, url, port, tmp / "web.log")
        print(f"arena web answered after {startup:.1f} s (start-up, with any migration)")
        for line in (tmp / "web.log").read_text(errors="replace").splitlines():
            if "indexed" in line:
                print(f"  {line.strip()}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=args.timeout)
        first = {path: time_get(conn, path) for path in paths}
        times: dict[str, list[float]] = {path: [] for path in paths}
        for _ in range(args.requests):
            for path in paths:
                times[path].append(time_get(conn, path))
        conn.close()
        print(f"{args.requests} requests per page after the first, interleaved (ms):")
        print(f"{'page':<42} {'first':>9} {'p50':>9} {'p90':>9} {'max':>9}")
        for path in paths:
            ms = sorted(1000 * t for t in times[path])
            p90 = ms[min(len(ms) - 1, int(0.9 * len(ms)))]
            print(
                f"{path:<42} {1000 * first[path]:>9.1f} {statistics.median(ms):>9.1f} "
                f"{p90:>9.1f} {ms[-1]:>9.1f}"
            )
        memory = int(r.info("memory")["used_memory"])
        print(f"redis used_memory with the {sum(sizes.values())} matches: {memory / 2**20:.1f} MiB")
    finally:
        if web is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(web.pid, signal.SIGTERM)
            try:
                web.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(web.pid, signal.SIGKILL)
                web.wait()
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- memory per game


def _kind(key: bytes) -> str:
    text = key.decode()
    parts = text.split(":")
    if parts[1] == "league" and len(parts) > 3:
        return "match indexes" if parts[3] in ("status", "bot", "retrying") else "league lists"
    if parts[1] == "elo":
        return "elo history" if parts[3] == "history" else "elo (ratings, stats, sequence)"
    return {
        "match": "match records",
        "result": "results",
        "replay": "replays",
        "log": "bot logs",
    }.get(parts[1], "bots, versions, leagues")


def store_series(r: redis.Redis, spec: Any, labels: dict[str, str]) -> list[int]:
    """Play every game of a scheduled match (a series) in-process with the random policy and
    store it as a job does: the attempt, the result with Elo (``ratings.record_result``), each
    game's replay, each seat's log (a line per game). The replays' JSON sizes."""
    from arboretum import GameState, ReplayRecorder
    from arboretum_sdk.bots.random_bot import RandomBot

    store.start_match_attempt(r, spec.match_id, "bench-worker")
    docs, outcomes = [], []
    for index, seed in enumerate(spec.game_seeds):
        state = GameState.new(len(spec.seats), seed)
        recorder = ReplayRecorder(
            state, match_id=spec.match_id, seats=[labels[v] for v in spec.seats], game_index=index
        )
        policies = [RandomBot(seed + i).choose for i in range(len(spec.seats))]
        rng = random.Random(seed)
        while not state.is_over:
            seat = state.current_seat
            recorder.apply(policies[seat](state.view(seat)), ms=round(rng.uniform(0.2, 3), 3))
        doc = recorder.to_json()
        doc["match_seed"] = str(spec.seed)
        docs.append(doc)
        result = state.result()
        outcomes.append(store.GameOutcome(result.ranks, result.totals, (0,) * len(spec.seats)))
    finished = time.time()
    outcome = store.MatchResult(spec.match_id, spec.league, spec.seats, tuple(outcomes), finished)
    league = store.get_league(r, spec.league)
    ratings.record_result(r, outcome, league.settings.elo if league else None)
    sizes = []
    for index, doc in enumerate(docs):
        text = json.dumps(doc)
        sizes.append(len(text))
        replays.save_replay(r, spec.match_id, index, text)
    for seat, vid in enumerate(spec.seats):
        lines = "".join(
            f"[{labels[vid]}] seat {seat}: game {i} over, total {o.totals[seat]}\n"
            for i, o in enumerate(outcomes)
        )
        replays.append_bot_log(r, spec.match_id, seat, lines.encode())
    return sizes


def bench_memory(args: argparse.Namespace) -> None:

    tmp = Path(tempfile.mkdtemp(prefix="arena-store-mem-"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    try:
        r = redis.Redis.from_url(url)
        if args.listpack_value:
            r.config_set("hash-max-listpack-value", args.listpack_value)
        versions = [
            registry.add_version(r, f"bot{i:02d}", f"# bench bot {i}\n".encode())
            for i in range(args.bots)
        ]
        labels = {vid: f"bot{i:02d}@{vid[:8]}" for i, vid in enumerate(versions)}
        pairs = args.bots * (args.bots - 1)  # each pair in both seat orders per deal
        per_series = args.deals_per_series
        deals = max(per_series, -(-args.memory_games // pairs))
        settings = store.LeagueSettings(
            players=2,
            games_per_pairing=deals,
            bots=tuple(versions),
            seed=5,
            deals_per_series=per_series,
        )
        store.create_league(r, "mem", settings)
        specs, games = [], 0
        for spec in round_robin("mem", versions, 2, deals, 5, deals_per_series=per_series):
            if games >= args.memory_games:
                break
            specs.append(spec)
            games += len(spec.game_seeds)
        before = int(r.info("memory")["used_memory"])
        store.create_matches(r, specs)
        raw_sizes = []
        started = time.perf_counter()
        for spec in specs:
            raw_sizes += store_series(r, spec, labels)
        elapsed = time.perf_counter() - started
        after = int(r.info("memory")["used_memory"])
        per_game = (after - before) / games
        by_kind: Counter[str] = Counter()
        packed = []
        for key in r.scan_iter(count=1000):
            by_kind[_kind(key)] += int(r.memory_usage(key, samples=0) or 0)
            if key.startswith(b"arena:replay:"):
                packed += [len(v) for v in r.hvals(key)]
        listpack = r.config_get("hash-max-listpack-value")
        print(
            f"{games} games in {len(specs)} matches (series of up to {per_series} deals) stored "
            f"through the league's functions in {elapsed:.1f} s "
            f"({args.bots} bots, 2 players, random policy; redis {r.info()['redis_version']}, "
            f"hash-max-listpack-value {next(iter(listpack.values()), '?')!s})"
        )
        print(
            f"replay JSON: mean {statistics.mean(raw_sizes):.0f} bytes, stored compressed: "
            f"mean {statistics.mean(packed):.0f} bytes "
            f"({statistics.mean(raw_sizes) / statistics.mean(packed):.1f}x)"
        )
        print(
            f"used_memory grew by {after - before} bytes: {per_game:.0f} bytes per stored game, "
            f"{per_game * 1e6 / 2**30:.2f} GiB per million games"
        )
        total = sum(by_kind.values())
        print("MEMORY USAGE by kind of key (bytes per game):")
        for kind, size in by_kind.most_common():
            print(f"  {kind:<34} {size / games:>8.0f}  ({100 * size / total:.0f}%)")
    finally:
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--bots", type=int, default=20)
    parser.add_argument("--requests", type=int, default=20, help="per page, after the first")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per request")
    parser.add_argument(
        "--arena",
        nargs="+",
        default=ARENA,
        help="the arena command to serve with (default: this checkout's)",
    )
    parser.add_argument(
        "--memory-games", type=int, default=10_000, help="games for the memory figure (0: skip)"
    )
    parser.add_argument(
        "--deals-per-series",
        type=int,
        default=10,
        help="games per stored match for the memory figure (default 10, the league's default)",
    )
    parser.add_argument("--skip-pages", action="store_true")
    parser.add_argument(
        "--listpack-value",
        type=int,
        default=0,
        help="Redis's hash-max-listpack-value for the memory figure (0: Redis's default, 64)",
    )
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}, arena: {args.arena}")
    if not args.skip_pages:
        bench_pages(args)
    if args.memory_games:
        bench_memory(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
