"""Many concurrent matches in one referee process, driven by a few load-generator processes.

The referee runs in a child process (``referee_support.py referee``). This script creates
``--matches`` 2-player matches of ``--games`` games (one deal each, seed = match number), then
starts ``--procs`` load-generator processes that split the seats between them: each plays its
seats concurrently (asyncio, one stream per seat, ``--seats-per-channel`` streams per HTTP/2
connection) with random legal decisions (by default chosen by the rules engine on the decoded view;
see ``--policy``). The clock is generous (``--per-decision-ms``, no bank), so a timeout would mean
the referee fell behind, not that a bot was slow. Each seat's stream waits for the connection to be
ready (``wait_for_ready``): hundreds of streams opened at once otherwise fail with UNAVAILABLE while
the connection is being made.

Reported:

- whether every match finished, and the faults (the goal is zero timeouts);
- decision latency, p50 / p99: the referee's own clock (the replays' ``ms``: request sent ->
  answer received, which includes the load generators' queueing) and the bot side (answer sent ->
  next request of the same turn received);
- memory per live match: the referee's peak RSS while the matches run minus its RSS before they
  were created (after a warm-up match), divided by the number of matches;
- decisions per second through the referee.

Loopback only; bounded by ``--timeout-s`` (everything is killed after it). Usage::

    python bench/concurrent_matches.py                       # 500 matches, 4 load generators
    python bench/concurrent_matches.py --matches 50 --procs 2 --games 1   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

from referee_support import (
    EngineRandom,
    Policy,
    SeatStats,
    create_match,
    free_port,
    get_match,
    get_replay_json,
    machine,
    percentile,
    play_seat,
    random_legal,
    rss_mib,
    spawn_server,
    stop_process,
)

ADMIN = "bench-admin-token-0123456789"
HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------- load generator


async def loadgen(
    port: int, tokens: list[str], seats_per_channel: int, seed: int, policy: str
) -> dict[str, object]:
    rng = random.Random(seed)

    def make_policy() -> Policy:
        return EngineRandom(rng) if policy == "engine" else random_legal(rng)

    channels = [
        grpc.aio.insecure_channel(
            f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
        )
        for _ in range((len(tokens) + seats_per_channel - 1) // seats_per_channel)
    ]
    stats = [SeatStats() for _ in tokens]
    try:
        # Connect first, then open the streams: a connection attempt that has to wait for a
        # referee already busy with hundreds of games can time out.
        await asyncio.gather(*(channel.channel_ready() for channel in channels))
        await asyncio.gather(
            *(
                play_seat(channels[i // seats_per_channel], token, make_policy(), stats[i])
                for i, token in enumerate(tokens)
            )
        )
    finally:
        for channel in channels:
            await channel.close()
    bad = [s.status for s in stats if s.status != "MATCH_STATUS_FINISHED"]
    return {
        "seats": len(tokens),
        "decisions": sum(s.decisions for s in stats),
        "faults": sum(s.faults for s in stats),
        "retries": sum(s.retries for s in stats),
        "games": sum(s.games for s in stats),
        "not_finished": bad[:5],
        "not_finished_count": len(bad),
        "rtt_ms": [round(x, 3) for s in stats for x in s.turn_rtt_ms],
    }


def loadgen_main(args: argparse.Namespace) -> None:
    tokens = json.loads(Path(args.tokens).read_text())
    result = asyncio.run(loadgen(args.port, tokens, args.seats_per_channel, args.seed, args.policy))
    Path(args.out).write_text(json.dumps(result))


# ----------------------------------------------------------------------------- driver


async def create_all(
    port: int, matches: int, games: int, per_decision_ms: int
) -> list[tuple[str, list[str]]]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        created = []
        for i in range(matches):
            created.append(
                await create_match(
                    channel,
                    ADMIN,
                    players=2,
                    games=games,
                    seed=i,
                    per_decision_ms=per_decision_ms,
                    bank_ms=0,
                    start_timeout_ms=300_000,
                )
            )
        return created


async def collect(
    port: int, match_ids: list[str], games: int
) -> tuple[dict[str, int], list[float]]:
    """Statuses and fault counts of every match, and the referee-side step times."""
    statuses: dict[str, int] = {}
    faults = 0
    step_ms: list[float] = []
    options = [("grpc.max_receive_message_length", 16 * 1024 * 1024)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        for match_id in match_ids:
            info = await get_match(channel, match_id)
            name = str(info.status)
            statuses[name] = statuses.get(name, 0) + 1
            faults += sum(s.faults for s in info.summary.seats)
            for index in range(len(info.results)):
                doc = json.loads(await get_replay_json(channel, match_id, index))
                step_ms += [float(s["ms"]) for s in doc["steps"] if "ms" in s]
    statuses["faults"] = faults
    return statuses, step_ms


async def warm_up(port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        _, tokens = await create_match(channel, ADMIN, players=2, games=1, seed=99)
        rng = random.Random(0)
        await asyncio.gather(*(play_seat(channel, t, random_legal(rng)) for t in tokens))


def driver(args: argparse.Namespace) -> int:
    port = free_port()
    referee = spawn_server(
        "referee", port, "--admin-token", ADMIN, "--max-matches", str(args.matches + 8)
    )
    work = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    procs: list[subprocess.Popen[bytes]] = []
    deadline = time.monotonic() + args.timeout_s
    try:
        asyncio.run(warm_up(port))
        time.sleep(0.5)
        rss_before = rss_mib(referee.pid)
        created = asyncio.run(create_all(port, args.matches, args.games, args.per_decision_ms))
        rss_created = rss_mib(referee.pid)
        seats = [token for _, tokens in created for token in tokens]
        # Deal seats round-robin so both seats of a match are in different processes when possible.
        shares = [seats[i :: args.procs] for i in range(args.procs)]
        started = time.monotonic()
        for i, share in enumerate(shares):
            tokens_file = work / f"tokens-{i}.json"
            tokens_file.write_text(json.dumps(share))
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        str(HERE / "concurrent_matches.py"),
                        "loadgen",
                        "--port",
                        str(port),
                        "--tokens",
                        str(tokens_file),
                        "--out",
                        str(work / f"result-{i}.json"),
                        "--seats-per-channel",
                        str(args.seats_per_channel),
                        "--seed",
                        str(i),
                        "--policy",
                        args.policy,
                    ]
                )
            )
        rss_peak = rss_created
        while any(p.poll() is None for p in procs):
            if time.monotonic() > deadline:
                raise TimeoutError(f"not finished after {args.timeout_s} s")
            rss_peak = max(rss_peak, rss_mib(referee.pid))
            time.sleep(0.2)
        elapsed = time.monotonic() - started
        if any(p.returncode for p in procs):
            raise RuntimeError(f"a load generator failed: {[p.returncode for p in procs]}")
        results = [json.loads((work / f"result-{i}.json").read_text()) for i in range(args.procs)]
        rss_after = rss_mib(referee.pid)
        statuses, step_ms = asyncio.run(collect(port, [m for m, _ in created], args.games))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        stop_process(referee)
        for f in work.iterdir():
            f.unlink()
        work.rmdir()
    rtts = [x for r in results for x in r["rtt_ms"]]
    decisions = sum(r["decisions"] for r in results)
    finished = statuses.get("3", 0)  # MATCH_STATUS_FINISHED
    not_finished = sum(r["not_finished_count"] for r in results)
    print(f"machine: {machine()}")
    print(
        f"{args.matches} matches x {args.games} games, 2 players, {args.procs} load generators, "
        f"{args.seats_per_channel} streams per connection, policy {args.policy}; "
        f"clock L={args.per_decision_ms} ms, B=0"
    )
    print(
        f"finished: {finished}/{args.matches} matches; seats not finished: {not_finished}; "
        f"faults: {statuses['faults']}"
    )
    retries = sum(r["retries"] for r in results)
    print(f"seat streams opened again (dropped by grpc before the referee took them): {retries}")
    print(
        f"wall time {elapsed:.1f} s; {decisions} decisions, {decisions / elapsed:.0f} decisions/s"
    )
    print(
        f"decision latency, referee clock: p50 {percentile(step_ms, 50):.2f} ms, "
        f"p99 {percentile(step_ms, 99):.2f} ms, max {max(step_ms):.2f} ms "
        f"({len(step_ms)} decisions)"
    )
    print(
        f"round trip, bot side (same turn): p50 {percentile(rtts, 50):.2f} ms, "
        f"p99 {percentile(rtts, 99):.2f} ms"
    )
    per_match = (rss_peak - rss_before) * 1024 / args.matches
    print(
        f"referee RSS: {rss_before:.1f} MiB before, "
        f"{rss_created:.1f} MiB with {args.matches} created, "
        f"peak {rss_peak:.1f} MiB while live, {rss_after:.1f} MiB after; "
        f"{per_match:.0f} KiB per live match"
    )
    ok = finished == args.matches and statuses["faults"] == 0
    print("OK: every match finished, zero faults" if ok else "FAILED")
    return 0 if ok else 1


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="mode")
    run = sub.add_parser("run", help="the benchmark (default)")
    gen = sub.add_parser("loadgen", help="internal: one load-generator process")
    gen.add_argument("--port", type=int, required=True)
    gen.add_argument("--tokens", required=True)
    gen.add_argument("--out", required=True)
    gen.add_argument("--seats-per-channel", type=int, default=50)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--policy", choices=("engine", "helpers"), default="engine")
    for p in (parser, run):
        p.add_argument("--matches", type=int, default=500)
        p.add_argument("--games", type=int, default=1, help="games per match (default 1)")
        p.add_argument("--procs", type=int, default=4, help="load-generator processes (default 4)")
        p.add_argument("--seats-per-channel", type=int, default=50)
        p.add_argument("--per-decision-ms", type=int, default=60_000, help="L (default 60000)")
        p.add_argument("--timeout-s", type=float, default=900.0, help="give up after (default 900)")
        p.add_argument(
            "--policy",
            choices=("engine", "helpers"),
            default="engine",
            help="how the load generators choose: the engine on the decoded view (default), or the "
            "request's helper fields (cheaper)",
        )
    args = parser.parse_args()
    if args.mode == "loadgen":
        loadgen_main(args)
        return
    raise SystemExit(driver(args))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
