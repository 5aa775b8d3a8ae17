"""Do hostile uploads slow the pages? ``/api/v1/leaderboard`` latency while 20 uploads at once
keep sending compression bombs.

The web app runs as it is deployed (``uvicorn arboretum_web.app:app_from_env``, its own process,
the league's sandbox check) on a private Redis holding the demo league. One client thread asks for
the leaderboard every ``--interval`` seconds and times each answer; ``--uploads`` threads each send
hostile uploads one after the other, for ``--seconds``: a tar.bz2 of concatenated streams that
unpacks to 1 GiB hidden in ``__pycache__``, the same in gzip and xz, one-stream bombs (8 MiB), a
zip whose skipped entry declares 8 MiB, an archive of 2,000 entries, a body over 2 MiB, and a
``bot.py`` that spins at import (it passes unpacking; the sandbox check stops it). The
same probe runs first with no upload, for a baseline. Reported: p50, p99 and the worst leaderboard
latency of both phases, and how the uploads were answered. Usage::

    python bench/hostile_uploads.py                    # 20 uploads at once, 20 s
    python bench/hostile_uploads.py --check            # exit 1 if the p99 under attack >= 200 ms
"""

from __future__ import annotations

import argparse
import bz2
import collections
import gzip
import http.client
import io
import lzma
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
import zipfile

GOAL_P99_MS = 200.0
MIB = 1 << 20
BOT = b"from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    pass\n"


def _tar_bytes(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _concatenated(compress: object, gib: int = 1) -> bytes:
    head = _tar_bytes([("bot.py", BOT)])[:-1024]
    info = tarfile.TarInfo("__pycache__/huge.pyc")
    info.size = gib * 1024 * MIB
    one = compress(bytes(MIB))  # type: ignore[operator]
    return compress(head + info.tobuf(format=tarfile.GNU_FORMAT)) + one * (gib * 1024)  # type: ignore[operator]


def payloads() -> list[tuple[str, bytes]]:
    single = _tar_bytes([("bot.py", BOT), ("__pycache__/x.pyc", bytes(8 * MIB))])
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.py", BOT)
        z.writestr("__pycache__/x.pyc", bytes(8 * MIB))
    many = _tar_bytes([(f"d{i}/x.pyc", b"") for i in range(2000)] + [("bot.py", BOT)])
    return [
        ("gib.tar.bz2", _concatenated(bz2.compress)),
        ("gib.tar.gz", _concatenated(gzip.compress)),
        ("gib.tar.xz", _concatenated(lzma.compress)),
        ("single.tar.bz2", bz2.compress(single)),
        ("single.tar.gz", gzip.compress(single)),
        ("skipped.zip", zbuf.getvalue()),
        ("many.tar.gz", gzip.compress(many)),
        ("big.tar", bytes(2 * MIB + 1)),
        # unpacks fine, then spins at import in the sandbox check until its CPU limit
        ("burner.py", b"while True:\n    pass\n"),
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def probe(port: int, seconds: float, interval: float) -> list[float]:
    """Leaderboard latencies (ms), one request every ``interval`` s, on a kept-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        conn.request("GET", "/api/v1/leaderboard")
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise SystemExit(f"the leaderboard answered {resp.status}")
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(max(0.0, interval - (time.perf_counter() - started)))
    conn.close()
    return out


def attacker(
    port: int, token: str, bodies: list[tuple[str, bytes]], stop: threading.Event,
    answers: collections.Counter[int], lock: threading.Lock, offset: int,
) -> None:  # fmt: skip
    k = offset
    while not stop.is_set():
        name, body = bodies[k % len(bodies)]
        k += 1
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            conn.request(
                "POST", f"/api/v1/bots/hostile{offset}/versions?filename={name}", body=body,
                headers={"Authorization": f"Bearer {token}",
                         "Content-Type": "application/octet-stream"},
            )  # fmt: skip
            status = conn.getresponse().status
        except OSError:
            status = 0  # refused before the body was read (413 on Content-Length)
        finally:
            conn.close()
        with lock:
            answers[status] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=20, help="hostile uploads at once")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase")
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between probes")
    parser.add_argument("--check", action="store_true", help="exit 1 if the goal is missed")
    args = parser.parse_args()

    import redis

    from arboretum_web.authors import add_author
    from arboretum_web.demo import seed_demo
    from arboretum_web.screenshots import private_redis

    bodies = payloads()
    print("payloads:", ", ".join(f"{n} {len(b) / 1024:.0f} KiB" for n, b in bodies))
    with private_redis() as url:
        r = redis.Redis.from_url(url)
        seed_demo(r, games_per_pairing=2)
        token = add_author(r, "mallory")
        port = _free_port()
        web = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "arboretum_web.app:app_from_env",
             "--port", str(port), "--log-level", "warning"],
            env={**os.environ, "REDIS_URL": url},
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise SystemExit("the web app did not start") from None
                    time.sleep(0.1)
            probe(port, 2.0, args.interval)  # warm up (the fit is cached after the first)
            quiet = probe(port, args.seconds, args.interval)
            stop = threading.Event()
            answers: collections.Counter[int] = collections.Counter()
            lock = threading.Lock()
            threads = [
                threading.Thread(
                    target=attacker,
                    args=(port, token, bodies, stop, answers, lock, i),
                    daemon=True,
                )
                for i in range(args.uploads)
            ]
            for t in threads:
                t.start()
            time.sleep(1.0)  # every attacker is sending
            attacked = probe(port, args.seconds, args.interval)
            stop.set()
            for t in threads:
                t.join(120)
        finally:
            web.terminate()
            web.wait(10)
    print(f"{os.cpu_count()} CPUs, {args.uploads} hostile uploads at once, {args.seconds:.0f} s "
          f"per phase, a leaderboard request every {args.interval * 1000:.0f} ms")  # fmt: skip
    for label, values in (("no upload", quiet), ("under attack", attacked)):
        print(
            f"  {label:>12}: {len(values)} requests, p50 {_percentile(values, 0.5):.1f} ms, "
            f"p99 {_percentile(values, 0.99):.1f} ms, worst {max(values):.1f} ms"
        )
    print("  upload answers:", ", ".join(f"{s or 'cut'}: {n}" for s, n in sorted(answers.items())))
    p99 = _percentile(attacked, 0.99)
    met = p99 < GOAL_P99_MS
    print(f"  goal p99 < {GOAL_P99_MS:.0f} ms under attack: {'met' if met else 'NOT met'}")
    if any(s in answers for s in (200, 201)):
        print("  (!) a hostile upload was stored")
        return 1
    return 1 if args.check and not met else 0


if __name__ == "__main__":
    raise SystemExit(main())
