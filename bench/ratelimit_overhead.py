"""What the rate limiter costs a request, and that two web processes share one count
(docs/benchmarks.md, "Web").

A private ``redis-server``; the real app served by uvicorn on the loopback, one keep-alive
client. Timed: ``GET /api/v1/me`` of an author (a token lookup and a small read), REQUESTS times
with the rate limits off and on (a limit no request reaches: every request counted, none
refused), interleaved in rounds so that the load of a shared machine hits both alike; with the
CPU time this process (app and client) spent a request, which that load stretches less than
the wall time. (Off, the middleware still looks the author up, for the audit log; the endpoint
then reads it from the request.) Then two
apps (two "processes" on one Redis) take turns on one author with a limit of LIMIT a window:
exactly LIMIT answers are 200, the rest 429.

    .venv/bin/python bench/ratelimit_overhead.py
    .venv/bin/python bench/ratelimit_overhead.py --requests 2000 --rounds 5
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests"))

from arboretum_web import authors  # noqa: E402
from arboretum_web.app import WebSettings, create_app  # noqa: E402
from arboretum_web.ratelimit import RateLimits  # noqa: E402
from arboretum_web.screenshots import serve_in_thread  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402


def _conn(base: str) -> http.client.HTTPConnection:
    parts = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)


def _get(conn: http.client.HTTPConnection, token: str) -> int:
    conn.request("GET", "/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    resp = conn.getresponse()
    resp.read()
    return resp.status


def timed(base: str, token: str, n: int) -> tuple[list[float], float]:
    """Wall time of each request, and the CPU time this process (app and client) spent."""
    conn = _conn(base)
    out = []
    cpu = time.process_time()
    for _ in range(n):
        start = time.perf_counter()
        assert _get(conn, token) == 200
        out.append(time.perf_counter() - start)
    conn.close()
    return out, time.process_time() - cpu


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[int(0.95 * (len(values) - 1))]
    return f"median {1000 * statistics.median(values):.2f} ms, p95 {1000 * p95:.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000, help="requests per round and mode")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=50, help="the shared limit's size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-ratelimit-") as tmp:
        url, process = start_redis_server(Path(tmp), appendonly=False)
        try:
            r = redis.Redis.from_url(url)
            token = authors.add_author(r, "alice")
            huge = 10**9
            on = RateLimits(author_reads=huge, author_writes=huge, window_s=3600)
            off = RateLimits(enabled=False)
            times: dict[str, list[float]] = {"off": [], "on": []}
            cpu = {"off": 0.0, "on": 0.0}
            apps = {
                "off": create_app(WebSettings(redis_url=url, rate_limits=off)),
                "on": create_app(WebSettings(redis_url=url, rate_limits=on)),
            }
            with serve_in_thread(apps["off"]) as base_off, serve_in_thread(apps["on"]) as base_on:
                bases = {"off": base_off, "on": base_on}
                for _ in range(args.rounds):
                    for mode in ("off", "on"):
                        wall, spent = timed(bases[mode], token, args.requests)
                        times[mode] += wall
                        cpu[mode] += spent
            for mode in ("off", "on"):
                n = len(times[mode])
                print(
                    f"limits {mode:3}: {n} requests, {_ms(times[mode])}, "
                    f"CPU {1000 * cpu[mode] / n:.2f} ms a request"
                )
            extra = (cpu["on"] - cpu["off"]) / len(times["on"])
            print(f"the limiter's cost: {1000 * extra:+.2f} ms of CPU a request")

            r.flushall()
            token = authors.add_author(r, "bob")
            shared = RateLimits(author_reads=args.limit, window_s=3600)
            one = create_app(WebSettings(redis_url=url, rate_limits=shared))
            two = create_app(WebSettings(redis_url=url, rate_limits=shared))
            with serve_in_thread(one) as a, serve_in_thread(two) as b:
                conns = [_conn(a), _conn(b)]
                codes = [_get(conns[i % 2], token) for i in range(2 * args.limit)]
            ok, refused = codes.count(200), codes.count(429)
            print(
                f"two apps on one Redis, limit {args.limit}: {ok} answered 200, "
                f"{refused} answered 429 (of {len(codes)})"
            )
            return 0 if ok == args.limit and refused == args.limit else 1
        finally:
            stop_redis_server(process)


if __name__ == "__main__":
    raise SystemExit(main())
