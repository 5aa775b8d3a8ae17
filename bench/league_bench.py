"""League throughput: games per second with 1 and with 2 workers (docs/benchmarks.md, "League").

Each run starts a private redis-server, submits copies of the built-in greedy bot (CPU-bound;
distinct versions, so they make a round robin), starts W ``arena worker`` processes, waits until
they are registered, then times ``league run`` to the last recorded result. Everything a match
costs is inside the timing: the worker's fork, its private referee, materialising the bots,
starting each bot in its sandbox (bwrap here), the game, fetching results and replays, Redis.

    .venv/bin/python bench/league_bench.py                 # 1 and 2 workers, 4 bots, 2 deals
    .venv/bin/python bench/league_bench.py --workers 1 2 4 --deals 3
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis
from rq import Queue, Worker

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from arboretum_worker import league, registry, store  # noqa: E402
from arboretum_worker.settings import WorkerSettings  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]


def greedy_copies(r: redis.Redis, count: int) -> list[str]:
    base = league.builtin_bot_files("greedy")
    names = []
    for i in range(count):
        name = f"greedy{i}"
        files = base + f"\n# copy {i}: a distinct version for the benchmark\n".encode()
        registry.add_version(r, name, files)
        names.append(name)
    return names


def _machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of all CPUs so far, from /proc/stat."""
    with open("/proc/stat") as fh:
        values = [float(v) for v in fh.readline().split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    total = sum(values[:8])  # user .. steal (guest time is already inside user)
    return total - idle, total


def run_once(
    workers: int, bots: int, deals: int, per_decision_ms: int, pin: bool
) -> tuple[int, float, float]:
    """(games, wall seconds, CPUs busy on average: the whole machine's, from /proc/stat).

    The machine's CPU time is the only complete count: the sandboxed bots run in pid namespaces
    whose processes are reaped inside the sandbox, so rusage of the children misses them.

    With ``pin``, worker ``i`` and everything it starts (work horses, referee, sandboxes, bots)
    run on CPU ``i`` only: a worker per CPU, as a worker per machine would be."""
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=True)
    procs: list[subprocess.Popen[bytes]] = []
    env = dict(os.environ, REDIS_URL=url, ARENA_MATCH_ROOT=str(tmp / "m"))
    try:
        r = redis.Redis.from_url(url)
        names = greedy_copies(r, bots)
        league.create_league(
            r, "bench", names, players=2, games_per_pairing=deals,
            per_decision_ms=per_decision_ms, bank_ms=10_000, seed=1,
        )  # fmt: skip
        for i in range(workers):
            log = open(tmp / f"worker{i}.log", "wb")  # noqa: SIM115 - the process owns it
            cpus = {i % (os.cpu_count() or 1)} if pin else None
            procs.append(
                subprocess.Popen(
                    [*ARENA, "worker", "--name", f"bench-{i}"],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=(lambda c=cpus: os.sched_setaffinity(0, c)) if cpus else None,
                )
            )
            log.close()
        queue = Queue("arena", connection=r)
        deadline = time.monotonic() + 60
        while len(Worker.all(queue=queue)) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not start")
            time.sleep(0.05)
        settings = WorkerSettings(redis_url=url)
        busy_before = _machine_busy()
        started = time.perf_counter()
        league.run_league(r, "bench", settings)
        total = len(store.league_matches(r, "bench"))
        # The job that records the last result marks the league finished. Polling that one key
        # keeps the benchmark's own load on the machine negligible (league_progress reads every
        # match); the full progress is read once, at the end.
        while True:
            record = store.get_league(r, "bench")
            if record is None or record.status is not store.LeagueStatus.RUNNING:
                break
            time.sleep(0.02)
        elapsed = time.perf_counter() - started
        progress = league.league_progress(r, "bench")
        busy_after = _machine_busy()
        busy = (busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1])
        if progress.counts["finished"] != total:
            raise RuntimeError(f"not every match finished: {progress.summary()}")
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)
    # Workers, their work horses, referees, sandboxes, bots and Redis, all waited for by now.
    return total, elapsed, busy * (os.cpu_count() or 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--bots", type=int, default=4, help="greedy copies (default 4)")
    parser.add_argument("--deals", type=int, default=2, help="deals per pairing (default 2)")
    parser.add_argument("--per-decision-ms", type=int, default=1000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per worker count, interleaved; best kept"
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run worker i (and all it starts) on CPU i only: one CPU per worker",
    )
    args = parser.parse_args()
    print(
        f"cpus: {os.cpu_count()}, bots: {args.bots} greedy copies, 2 players, "
        f"{args.deals} deal(s) per pairing, each in both seat orders (one game per match)"
        + ("; each worker pinned to a CPU of its own" if args.pin else "")
    )
    rates: dict[int, float] = {}
    for _ in range(args.repeat):
        for workers in args.workers:
            games, elapsed, busy = run_once(
                workers, args.bots, args.deals, args.per_decision_ms, args.pin
            )
            rate = games / elapsed
            rates[workers] = max(rates.get(workers, 0.0), rate)
            print(
                f"{workers} worker(s): {games} games in {elapsed:.2f} s = {rate:.2f} games/s "
                f"({busy:.2f} of {os.cpu_count()} CPUs busy: {busy * elapsed / games:.2f} CPU-s "
                "per game)"
            )
    print("best: " + ", ".join(f"{w} worker(s) {rate:.2f} games/s" for w, rate in rates.items()))
    if 1 in rates:
        for workers, rate in rates.items():
            if workers != 1:
                print(f"speed-up with {workers} workers: {rate / rates[1]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
