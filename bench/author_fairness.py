"""Fair sharing of the workers (docs/benchmarks.md, "Authors share the workers").

A private redis-server, W real ``arena worker`` processes on every queue, real bots in the
sandbox. A ladder of copies of the built-in greedy bot runs (``ladder.ops.create_ladder``: it
keeps matches in flight). Once it has played a few matches, A simulated authors, each with two
versions of a bot of their own (copies of the built-in random bot), submit at the same instant
the same work: one challenge (their bot against a ladder bot, every seat order, D deals) and
one sequential test of their two versions (P pairs, B pairs per batch). Measured, from the rq
jobs' own start and end times:

- **the ladder's share** of the worker time (leagues' queue against the authors' queues) from
  that instant until the last author's work ended, against ``ARENA_LADDER_SHARE``;
- **each author's first-challenge start delay**: from the submission to the start of the
  author's first challenge match, against the bound ``(A / (W (1 - s)) + 1) x U`` (s the
  ladder's share, U the longest author unit);
- **Jain's fairness index** of the worker time each author received up to the moment the
  first author's work was all done (all asked for the same work, so equal shares are fair),
  and of each author's total.

    .venv/bin/python bench/author_fairness.py                      # 20 authors, 2 workers
    .venv/bin/python bench/author_fairness.py --authors 8 --pairs 2
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
from typing import Any

import redis
from rq import Queue, Worker
from rq.job import Job
from rq.registry import FailedJobRegistry, FinishedJobRegistry, StartedJobRegistry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from arboretum_worker import league, queues, registry  # noqa: E402
from arboretum_worker.challenges import create_challenge  # noqa: E402
from arboretum_worker.ladder import ops  # noqa: E402
from arboretum_worker.queues import QueueKind  # noqa: E402
from arboretum_worker.settings import WorkerSettings  # noqa: E402
from arboretum_worker.sprt import authors as sprt_authors  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]


def copy_of(builtin: str, tag: str) -> bytes:
    return league.builtin_bot_files(builtin) + f"\n# {tag}: a distinct version\n".encode()


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 1.0


def jobs_of(r: redis.Redis, names: list[str]) -> list[Job]:
    ids: set[str] = set()
    for name in names:
        for registry_class in (FinishedJobRegistry, FailedJobRegistry, StartedJobRegistry):
            ids.update(registry_class(name=name, connection=r).get_job_ids())
    found = Job.fetch_many(sorted(ids), connection=r)
    return [j for j in found if j is not None and j.started_at is not None]


def span(job: Job, now: float) -> tuple[float, float]:
    start = job.started_at.timestamp()  # type: ignore[union-attr]
    end = job.ended_at.timestamp() if job.ended_at else now
    return start, end


def clipped(job: Job, lo: float, hi: float, now: float) -> float:
    start, end = span(job, now)
    return max(0.0, min(end, hi) - max(start, lo))


def start_workers(count: int, env: dict[str, str], tmp: Path) -> list[subprocess.Popen[bytes]]:
    procs = []
    for i in range(count):
        log = open(tmp / f"worker{i}.log", "wb")  # noqa: SIM115 - the process owns it
        procs.append(
            subprocess.Popen(
                [*ARENA, "worker", "--name", f"fair-{i}"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        log.close()
    return procs


def submit_all(
    r: redis.Redis, args: argparse.Namespace, settings: WorkerSettings, opponent: str
) -> dict[str, dict[str, Any]]:
    limits = sprt_authors.TestLimits(batch=args.batch, window=2, max_pairs=10_000)
    made: dict[str, dict[str, Any]] = {}
    for i in range(args.authors):
        author = f"author{i:02d}"
        old = registry.add_version(
            r, f"bot{i:02d}", copy_of("random", f"{author} v1"), owner=author
        )
        new = registry.add_version(
            r, f"bot{i:02d}", copy_of("random", f"{author} v2"), owner=author
        )
        made[author] = {"old": old, "new": new}
    t0 = time.time()
    for author, versions in made.items():
        c = create_challenge(
            r, author, f"bot{author[-2:]}", [opponent], deals=args.deals, worker_settings=settings
        )
        t = sprt_authors.create_author_test(
            r, author, versions["new"], versions["old"], elo0=0, elo1=50,
            max_pairs=args.pairs, limits=limits, worker_settings=settings,
        )  # fmt: skip
        versions.update(challenge=c.id, test=t.id, submitted=t0)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--authors", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ladder-bots", type=int, default=4)
    parser.add_argument("--share", type=float, default=0.5, help="ARENA_LADDER_SHARE")
    parser.add_argument("--deals", type=int, default=1, help="deals of each challenge")
    parser.add_argument("--pairs", type=int, default=2, help="pairs of each author's test")
    parser.add_argument("--batch", type=int, default=1, help="pairs per batch")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--verbose", action="store_true", help="every job's start and length")
    args = parser.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="fair-", dir="/tmp"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    env = dict(
        os.environ,
        REDIS_URL=url,
        ARENA_MATCH_ROOT=str(tmp / "m"),
        ARENA_LADDER_SHARE=str(args.share),
        ARENA_FAIR_WINDOW_S="120",
        ARENA_AUTHOR_MAX_MATCHES="1000",
        ARENA_AUTHOR_DAILY_S="0",
    )
    os.environ.update({k: env[k] for k in ("ARENA_AUTHOR_MAX_MATCHES", "ARENA_AUTHOR_DAILY_S")})
    procs: list[subprocess.Popen[bytes]] = []
    try:
        r = redis.Redis.from_url(url)
        settings = WorkerSettings(redis_url=url)
        ladder = [
            registry.add_version(r, f"ladder{i}", copy_of("greedy", f"ladder {i}"))
            for i in range(args.ladder_bots)
        ]
        ops.create_ladder(r, "main", ladder, settings, depth=8, deals_per_series=2, seed=1)
        procs = start_workers(args.workers, env, tmp)
        league_queue = Queue("arena", connection=r)
        while len(Worker.all(queue=league_queue)) < args.workers:
            time.sleep(0.1)
        while FinishedJobRegistry(name="arena", connection=r).count < 2 * args.workers:
            time.sleep(0.2)  # the ladder is running
        before = queues.totals(r)
        made = submit_all(r, args, settings, "ladder0")
        t0 = next(iter(made.values()))["submitted"]
        if args.verbose:
            waiting = {k.value: Queue(queues.queue_name(k), connection=r).count for k in QueueKind}
            print(f"submitted in {time.time() - t0:.1f} s; waiting jobs: {waiting}")
        print(f"{args.authors} authors submitted at once; {args.workers} workers; ladder share "
              f"{args.share}")  # fmt: skip
        deadline = time.monotonic() + args.timeout
        while any(queues.author_usage(r, a).active_matches for a in made):
            if time.monotonic() > deadline:
                raise RuntimeError("the authors' work did not end in time")
            time.sleep(0.5)
        now = time.time()
        after = queues.totals(r)
        used = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
        report(r, args, made, t0, now, used)
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        stop_redis_server(redis_proc)
        if args.verbose:
            print(f"the workers' logs are in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def report(
    r: redis.Redis,
    args: argparse.Namespace,
    made: dict[str, dict[str, Any]],
    t0: float,
    now: float,
    used: dict[str, float],
) -> None:
    author_queues = [queues.queue_name(k) for k in (QueueKind.CHALLENGES, QueueKind.TESTS)]
    ladder_jobs = jobs_of(r, ["arena"])
    author_jobs = jobs_of(r, author_queues)
    end = max(span(j, now)[1] for j in author_jobs)
    ladder_s = sum(clipped(j, t0, end, now) for j in ladder_jobs)
    author_s = sum(clipped(j, t0, end, now) for j in author_jobs)
    share = ladder_s / (ladder_s + author_s)
    print(f"window {end - t0:.1f} s: ladder {ladder_s:.1f} s, authors {author_s:.1f} s of "
          f"job time; the ladder's share {share:.3f} (configured {args.share})")  # fmt: skip
    league_s = used.get("league", 0.0)
    others = sum(v for k, v in used.items() if k in ("challenges", "tests"))
    print(f"worker occupancy (jobs with their callbacks, every worker's count): ladder "
          f"{league_s:.1f} s, authors {others:.1f} s; the ladder's share "
          f"{league_s / max(1e-9, league_s + others):.3f}")  # fmt: skip

    by_author: dict[str, list[Job]] = {a: [] for a in made}
    for job in author_jobs:
        by_author[job.meta["author"]].append(job)
    first_done = min(max(span(j, now)[1] for j in jobs) for jobs in by_author.values())
    delays, early, total = [], [], []
    for _author, jobs in sorted(by_author.items()):
        challenge_starts = [span(j, now)[0] for j in jobs if j.origin.endswith("-challenges")]
        delays.append(min(challenge_starts) - t0)
        early.append(sum(clipped(j, t0, first_done, now) for j in jobs))
        total.append(sum(clipped(j, t0, end, now) for j in jobs))
    longest = max(span(j, now)[1] - span(j, now)[0] for j in author_jobs)
    if args.verbose:
        for j in sorted(author_jobs + ladder_jobs, key=lambda j: span(j, now)[0]):
            a, b = span(j, now)
            print(f"  {a - t0:7.1f} {b - a:6.1f} s {j.origin:18} {j.id} {j.worker_name}")
    bound = (args.authors / (args.workers * (1 - args.share)) + 1) * longest
    delays.sort()
    print(f"first-challenge start delay: median {delays[len(delays) // 2]:.1f} s, max "
          f"{delays[-1]:.1f} s; bound (A/(W(1-s)) + 1) x U = {bound:.1f} s "
          f"(U = {longest:.1f} s, the longest author unit)")  # fmt: skip
    print(f"Jain's index over {args.authors} authors: {jain(early):.3f} up to the first author's "
          f"end ({first_done - t0:.1f} s), {jain(total):.3f} over the whole run; per-author worker "
          f"time {min(total):.1f} to {max(total):.1f} s")  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
