"""The web server's CPU a request with uvicorn's two HTTP/1.1 parsers: ``h11`` and ``httptools``.

``arena web`` serves with uvicorn, which takes ``httptools`` (a C parser, a dependency of
``arboretum-web``) when it is installed and the pure-Python ``h11`` otherwise. This starts a
private redis-server and the real app (``create_app``) under uvicorn in a process of its own, once
with each parser in turn, ``--rounds`` times, and sends each the same requests over one kept-alive
connection: a page (``GET /play``), a JSON read (``GET /api/v1/health``, which asks Redis) and a
refused write (``POST /api/v1/bots/x/versions`` without a token: 401 before any work). It reports
the server process's CPU a request (``/proc/PID/stat``), whose ratio is the figure
(docs/benchmarks.md, "Casual games under load")::

    .venv/bin/python bench/web_http_parser.py                 # 2,000 requests of each, 3 rounds
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARSERS = ("h11", "httptools")
SERVE = """
import sys, uvicorn
from arboretum_web.app import WebSettings, create_app
app = create_app(WebSettings(redis_url=sys.argv[1]))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), http=sys.argv[3], log_level="info")
"""
LIMITS = "anonymous_reads=1000000000,anonymous_writes=1000000000"
"""The rate limits out of the way: every request comes from the loopback (each is still counted)."""
REQUESTS = (
    ("GET", "/play", None, 200),
    ("GET", "/api/v1/health", None, 200),
    ("POST", "/api/v1/bots/x/versions", b"print(1)\n", 401),
)


def cpu_s(pid: int) -> float:
    """A process's user and system CPU so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ask(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None) -> int:
    conn.request(method, path, body=body)
    response = conn.getresponse()
    response.read()
    return response.status


def measure(parser: str, redis_url: str, count: int) -> float:
    """The server's CPU-ms a request with ``parser``, over ``count`` of each request."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, redis_url, str(port), parser],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, ARENA_RATE_LIMITS=LIMITS),
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                ask(conn, "GET", "/api/v1/health", None)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"the server with {parser} did not start") from None
                time.sleep(0.1)
        for method, path, body, want in REQUESTS:  # warm-up, and each answers as expected
            status = ask(conn, method, path, body)
            if status != want:
                raise SystemExit(f"{method} {path}: {status}, expected {want}")
        before = cpu_s(proc.pid)
        for _ in range(count):
            for method, path, body, _want in REQUESTS:
                ask(conn, method, path, body)
        return 1000 * (cpu_s(proc.pid) - before) / (count * len(REQUESTS))
    finally:
        proc.terminate()
        proc.wait(30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="of each kind, a measure")
    parser.add_argument("--rounds", type=int, default=3, help="each parser in turn, N times")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE.parent / "tests"))
    from redis_server import start_redis_server, stop_redis_server

    tmp = Path(tempfile.mkdtemp(prefix="arena-http-parser-"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    results: dict[str, list[float]] = {name: [] for name in PARSERS}
    try:
        for k in range(args.rounds):
            for name in PARSERS if k % 2 == 0 else reversed(PARSERS):
                results[name].append(measure(name, url, args.requests))
                print(f"  round {k}, {name}: {results[name][-1]:.3f} CPU-ms a request")
    finally:
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)
    h11, fast = (statistics.median(results[name]) for name in PARSERS)
    print(f"median CPU-ms a request: h11 {h11:.3f}, httptools {fast:.3f}: ratio {fast / h11:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
