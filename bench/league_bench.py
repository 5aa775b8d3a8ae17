"""League throughput: games per second with 1 and with 2 workers (docs/benchmarks.md, "League").

Each run starts a private redis-server, submits copies of the built-in greedy bot (CPU-bound;
distinct versions, so they make a round robin; ``--random`` makes the last one the built-in
random bot), starts W ``arena worker`` processes, waits until they are registered, then times
``league run`` to the last recorded result. Everything a match costs is inside the timing: the
worker's fork, its private referee, materialising the bots, starting each bot in its sandbox
(bwrap here, through the workers' fork server unless ``--no-fork-server``), the games, fetching
results and replays, Redis. A match is a series of ``--deals-per-series`` deals (the league's
default, 10).

The CPU of the run is counted exactly: this process, Redis, the workers and everything they
start are in a cpuacct cgroup of their own (``cpu_account.py``; else the whole machine's busy
time). With ``--start-share``, a control run afterwards measures the CPU of one bot start up to
its first decision, the same way the workers start them (``bot_start.py``), and the share of the
league's CPU that its bot starts (two per match) took.

    .venv/bin/python bench/league_bench.py                 # 1 and 2 workers, 4 bots, 2 deals
    .venv/bin/python bench/league_bench.py --workers 1 2 4 --deals 3
    .venv/bin/python bench/league_bench.py --bots 20 --random --deals 10 --workers 2 --start-share
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
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import redis
from rq import Queue, Worker

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from arboretum_worker import league, registry, store  # noqa: E402
from arboretum_worker.settings import WorkerSettings  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from cpu_account import CpuAccount  # noqa: E402

ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]


def bench_bot_source(i: int, builtin: str = "greedy") -> bytes:
    base = league.builtin_bot_files(builtin)
    return base + f"\n# copy {i}: a distinct version for the benchmark\n".encode()


def greedy_copies(r: redis.Redis, count: int, with_random: bool = False) -> list[str]:
    """``count`` distinct bots: copies of greedy, the last one ``random`` with ``with_random``."""
    names = []
    for i in range(count):
        builtin = "random" if with_random and i == count - 1 else "greedy"
        name = f"{builtin}{i}"
        registry.add_version(r, name, bench_bot_source(i, builtin))
        names.append(name)
    return names


class Run(NamedTuple):
    games: int
    matches: int
    seconds: float
    cpu_s: float  # CPU seconds of everything the run started (see the module's docstring)


def start_workers(
    env: dict[str, str],
    count: int,
    logs: Path,
    prefix: str,
    pin: bool = False,
    arena: list[str] = ARENA,
) -> list[subprocess.Popen[bytes]]:
    """``count`` ``arena worker`` processes named ``PREFIX-i``, each in a session of its own, its
    output in ``logs/PREFIX-i.log``. With ``pin``, worker ``i`` (and all it starts) on CPU ``i``.
    ``arena``: the command that is ``arena``."""
    procs: list[subprocess.Popen[bytes]] = []
    for i in range(count):
        log = open(logs / f"{prefix}-{i}.log", "wb")  # noqa: SIM115 - the process owns it
        cpus = {i % (os.cpu_count() or 1)} if pin else None
        procs.append(
            subprocess.Popen(
                [*arena, "worker", "--name", f"{prefix}-{i}"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=(lambda c=cpus: os.sched_setaffinity(0, c)) if cpus else None,
            )
        )
        log.close()
    return procs


def wait_for_workers(
    r: redis.Redis,
    queue: str,
    count: int,
    timeout: float = 60,
    procs: Sequence[subprocess.Popen[bytes]] = (),
) -> None:
    """Until ``count`` workers listen to the rq queue ``queue``; an error at once if one of
    ``procs`` exited."""
    deadline = time.monotonic() + timeout
    while len(Worker.all(queue=Queue(queue, connection=r))) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"the workers of {queue} did not start")
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"a worker exited at its start (status {proc.returncode})")
        time.sleep(0.05)


def stop_processes(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each, then wait; a process (group) still there after 10 s is killed."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def time_league(r: redis.Redis, name: str, settings: WorkerSettings) -> tuple[int, int, float]:
    """Run the created league ``name`` to its last recorded result: (games, matches, seconds)."""
    started = time.perf_counter()
    league.run_league(r, name, settings)
    total = len(store.league_matches(r, name))
    # The job that records the last result marks the league finished. Polling that one key
    # every 0.1 s keeps the benchmark's own load on the machine negligible (league_progress
    # reads every match; at 0.02 s the polling alone took 2 CPU-ms per game); the full
    # progress is read once, at the end. The timing is late by 0.05 s on average.
    while True:
        record = store.get_league(r, name)
        if record is None or record.status is not store.LeagueStatus.RUNNING:
            break
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    progress = league.league_progress(r, name)
    if progress.counts["finished"] != total:
        raise RuntimeError(f"not every match finished: {progress.summary()}")
    games = sum(len(store.get_result(r, m).games) for m in store.league_matches(r, name))
    return games, total, elapsed


def run_once(args: argparse.Namespace, workers: int) -> Run:
    """One league with ``workers`` workers, from ``league run`` to its last recorded result.

    With ``--pin``, worker ``i`` and everything it starts (work horses, referee, sandboxes, bots)
    run on CPU ``i`` only: a worker per CPU, as a worker per machine would be."""
    account = CpuAccount("league")
    account.join()
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-", dir="/tmp"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=True)
    procs: list[subprocess.Popen[bytes]] = []
    env = dict(os.environ, REDIS_URL=url, ARENA_MATCH_ROOT=str(tmp / "m"), ARENA_SANDBOX="bwrap")
    env["ARENA_FORK_SERVER"] = "0" if args.no_fork_server else "1"
    try:
        r = redis.Redis.from_url(url)
        names = greedy_copies(r, args.bots, args.random)
        league.create_league(
            r, "bench", names, players=2, games_per_pairing=args.deals,
            per_decision_ms=args.per_decision_ms, bank_ms=10_000, seed=1,
            deals_per_series=args.deals_per_series,
        )  # fmt: skip
        procs = start_workers(env, workers, tmp, "bench", pin=args.pin)
        wait_for_workers(r, "arena", workers)
        cpu_before = account.cpu_s()
        games, total, elapsed = time_league(r, "bench", WorkerSettings(redis_url=url))
        cpu = account.cpu_s() - cpu_before
    finally:
        stop_processes(procs)
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)
        account.close()
    # Workers, their work horses, referees, sandboxes, bots and Redis, all waited for by now.
    return Run(games, total, elapsed, cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--bots", type=int, default=4, help="distinct bots (default 4)")
    parser.add_argument("--random", action="store_true", help="the last bot is random")
    parser.add_argument("--deals", type=int, default=2, help="deals per pairing (default 2)")
    parser.add_argument(
        "--deals-per-series", type=int, default=10, help="deals per match (default 10)"
    )
    parser.add_argument("--per-decision-ms", type=int, default=1000)
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per worker count, interleaved; best kept"
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run worker i (and all it starts) on CPU i only: one CPU per worker",
    )
    parser.add_argument(
        "--no-fork-server", action="store_true", help="plain bwrap starts (ARENA_FORK_SERVER=0)"
    )
    parser.add_argument(
        "--start-share",
        action="store_true",
        help="afterwards, measure the CPU of a bot start and its share of the league's CPU",
    )
    parser.add_argument("--start-rounds", type=int, default=20)
    args = parser.parse_args()
    bots = f"{args.bots - 1} greedy copies and random" if args.random else f"{args.bots} greedy"
    probe = CpuAccount("probe")
    probe.close()
    print(
        f"cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; bots: {bots}, 2 players, "
        f"{args.deals} deal(s) per pairing in both seat orders, {args.deals_per_series} deals per "
        f"series; bwrap, {'plain starts' if args.no_fork_server else 'fork server'}; "
        f"CPU: {probe.describe()}"
        + ("; each worker pinned to a CPU of its own" if args.pin else "")
    )
    rates: dict[int, float] = {}
    runs: dict[int, Run] = {}
    for _ in range(args.repeat):
        for workers in args.workers:
            run = run_once(args, workers)
            rate = run.games / run.seconds
            if rate > rates.get(workers, 0.0):
                rates[workers], runs[workers] = rate, run
            print(
                f"{workers} worker(s): {run.games} games ({run.matches} matches) in "
                f"{run.seconds:.1f} s = {rate:.2f} games/s; {run.cpu_s:.1f} CPU-s "
                f"({run.cpu_s / run.seconds:.2f} CPUs busy, {1000 * run.cpu_s / run.games:.0f} "
                "CPU-ms per game)",
                flush=True,
            )
    print("best: " + ", ".join(f"{w} worker(s) {rate:.2f} games/s" for w, rate in rates.items()))
    if 1 in rates:
        for workers, rate in rates.items():
            if workers != 1:
                print(f"speed-up with {workers} workers: {rate / rates[1]:.2f}x")
    if args.start_share:
        import asyncio
        import statistics

        from bot_start import start_cpu

        way = "plain" if args.no_fork_server else "fork"
        cpu = asyncio.run(start_cpu([way], args.start_rounds, bench_bot_source(0), report=False))
        per_start = statistics.mean(cpu[way])
        print(
            f"one bot start ({way}), up to its first decision: {1000 * per_start:.0f} CPU-ms "
            f"(mean of {len(cpu[way])})"
        )
        for workers, run in runs.items():
            starts = 2 * run.matches
            share = starts * per_start / run.cpu_s
            print(
                f"{workers} worker(s): {starts} bot starts x {1000 * per_start:.0f} ms = "
                f"{starts * per_start:.1f} CPU-s of {run.cpu_s:.1f}: {100 * share:.1f}% of the CPU"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
