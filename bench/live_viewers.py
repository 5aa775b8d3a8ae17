"""Does watching a game live slow it down? A league match played with and without 200 viewers.

The match is what a league job plays (``arboretum_worker.play.run_play_match``): a private
referee on a unix socket, two built-in bots in their own processes (no sandbox: the bots' start is
not what is measured), a series of ``--games`` games, and the live publisher writing every public
event to Redis once the web marks the match as watched. The web app (``uvicorn
arboretum_web.app:app_from_env``) runs in its own process, and ``--viewers`` server-sent-event
clients, in a third process, watch the match through it from before it starts to its end. Each
round plays the same match three ways, in an order that rotates from round to round:

- ``off``: no publisher (the match as before live games);
- ``0``: the publisher, nobody watching (it then keeps the match's messages, writes nothing);
- ``N``: the publisher and N viewers.

A first match, not counted, warms up. Reported, both for the job's whole part (the referee's start
to its stop, with the last events written and the replays fetched) and for the games alone
(``CreateMatch`` to the match's end): the median seconds of each way over the rounds, the ratios
of the medians, and the median of the per-round ratios (the three ways of a round run back to
back, so their ratio cancels the machine's slow drift); every viewer must receive every event.
With ``--pin``, the match (this process, its referee and its bots) runs on CPU 0, Redis, the web
app and the viewers on CPU 1, as when the web tier has a machine of its own; without it,
everything shares the machine. Usage::

    python bench/live_viewers.py                      # 200 viewers, 9 rounds of 20 games
    python bench/live_viewers.py --pin --viewers 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------- the viewers


async def _viewer(host: str, port: int, path: str, ready: asyncio.Event, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n\r\n".encode()
    )
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")  # the headers
    ready.set()
    events = 0
    buffer = b""
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            break
        buffer += chunk
        *frames, buffer = buffer.split(b"\n\n")
        for frame in frames:
            if b"\ndata: " in b"\n" + frame and b"event: " not in frame:
                events += frame.count(b"data: ")
            if b"event: over" in frame:
                counts.append(events)
                writer.close()
                return
    counts.append(events)


async def _viewers(base: str, path: str, n: int) -> list[int]:
    host, port = base.removeprefix("http://").split(":")
    counts: list[int] = []
    readies = [asyncio.Event() for _ in range(n)]
    tasks = [
        asyncio.create_task(_viewer(host, int(port), path, ready, counts)) for ready in readies
    ]
    await asyncio.gather(*(ready.wait() for ready in readies))
    print("connected", flush=True)
    await asyncio.gather(*tasks)
    return counts


def viewers_main(base: str, path: str, n: int) -> None:
    counts = asyncio.run(_viewers(base, path, n))
    print(json.dumps(counts), flush=True)


# ----------------------------------------------------------------------------- the match


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pin(cpu: int | None) -> Any:
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def _play(r: Any, match_id: str, games: int, live: bool) -> tuple[float, float]:
    from arboretum_worker.live import LivePublisher
    from arboretum_worker.play import MatchPlan, SeatPlan, run_play_match
    from arboretum_worker.sandbox import make_runner

    runner = make_runner("none")
    plan = MatchPlan(
        match_id=match_id, seed=2026, players=2, games=games, per_decision_ms=2000,
        bank_ms=10000, faults_to_forfeit=3,
        seats=(SeatPlan(name="random"), SeatPlan(name="greedy")),
    )  # fmt: skip
    bots = ("random", "greedy")

    def start_bot(seat: int, _plan: Any, socket_path: Path, token: str, log: Path) -> Any:
        return runner.start(
            bots[seat], socket_path=socket_path, token=token, log_path=log, builtin=True,
            name=f"bench-{seat}",
        )  # fmt: skip

    with tempfile.TemporaryDirectory(prefix="lvb-") as tmp:
        outcome = run_play_match(
            plan, Path(tmp), start_bot, deadline_s=600, output_cap=10_000,
            live=LivePublisher(r, match_id) if live else None,
        )  # fmt: skip
    if outcome.status != "finished":
        raise SystemExit(f"the match ended {outcome.status}: {outcome.reason}")
    return outcome.seconds, outcome.games_seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--viewers", type=int, default=200, help="viewers of the match")
    parser.add_argument("--games", type=int, default=20, help="games in the match")
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the three ways")
    parser.add_argument("--pin", action="store_true", help="match on CPU 0, the rest on CPU 1")
    parser.add_argument(
        "--viewers-only", nargs=3, metavar=("BASE", "PATH", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.viewers_only:
        base, path, n = args.viewers_only
        viewers_main(base, path, int(n))
        return 0

    import logging

    import redis

    from arboretum_web.demo import seed_demo

    logging.getLogger("arboretum_worker.sandbox").setLevel(logging.ERROR)  # "no sandbox": known
    from arboretum_web.screenshots import private_redis
    from arboretum_worker import store

    match_cpu, web_cpu = (0, 1) if args.pin else (None, None)
    if args.pin:
        os.sched_setaffinity(0, {match_cpu})
    with private_redis() as url:
        r = redis.Redis.from_url(url)
        if args.pin:  # the private Redis is this process's child
            for pid in subprocess.run(["pgrep", "-P", str(os.getpid()), "redis-server"],
                                      capture_output=True, text=True).stdout.split():  # fmt: skip
                os.sched_setaffinity(int(pid), {web_cpu})
        demo = seed_demo(r, games_per_pairing=1, running=True)
        port = _free_port()
        env = {**os.environ, "REDIS_URL": url}
        web = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "--factory", "arboretum_web.app:app_from_env",
             "--port", str(port), "--log-level", "warning", "--timeout-graceful-shutdown", "2"],
            env=env, preexec_fn=_pin(web_cpu),
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the web app did not start") from None
                time.sleep(0.1)
        times: dict[str, list[float]] = {"off": [], "0": [], str(args.viewers): []}
        games_times: dict[str, list[float]] = {way: [] for way in times}
        received: list[int] = []
        events_per_match = 0
        try:
            ways = list(times)
            # a first match, not counted: the imports, the bots' first start, the caches
            r.copy(store.Keys.match(demo.running), store.Keys.match("benchlivewarm"), replace=True)
            r.hset(store.Keys.match("benchlivewarm"), "id", "benchlivewarm")
            _play(r, "benchlivewarm", args.games, live=True)
            store.set_match_status(r, "benchlivewarm", store.MatchStatus.CANCELLED, failure="bench")
            for k in range(args.rounds):
                order = ways[k % 3 :] + ways[: k % 3]
                for way in order:
                    mid = f"benchlive{k}{way}"
                    r.copy(store.Keys.match(demo.running), store.Keys.match(mid), replace=True)
                    r.hset(store.Keys.match(mid), "id", mid)
                    viewers = None
                    if way not in ("off", "0"):
                        viewers = subprocess.Popen(
                            [sys.executable, __file__, "--viewers-only", base,
                             f"/api/v1/matches/{mid}/live", str(args.viewers)],
                            stdout=subprocess.PIPE, text=True, preexec_fn=_pin(web_cpu),
                        )  # fmt: skip
                        assert viewers.stdout is not None
                        if viewers.stdout.readline().strip() != "connected":
                            raise SystemExit("the viewers did not connect")
                    seconds, games_seconds = _play(r, mid, args.games, live=way != "off")
                    times[way].append(seconds)
                    games_times[way].append(games_seconds)
                    if viewers is not None:  # (nobody watching: the publisher writes nothing)
                        events_per_match = r.xlen(f"arena:live:{mid}")
                    store.set_match_status(r, mid, store.MatchStatus.CANCELLED, failure="bench")
                    if viewers is not None:
                        out, _ = viewers.communicate(timeout=120)
                        counts = json.loads(out.strip().splitlines()[-1])
                        received.extend(counts)
                        if len(counts) != args.viewers or set(counts) != {events_per_match}:
                            raise SystemExit(f"viewers missed events: {sorted(set(counts))} of "
                                             f"{events_per_match}")  # fmt: skip
                    print(f"round {k + 1} {way:>4}: {seconds:.3f} s, "
                          f"the games {games_seconds:.3f} s", flush=True)  # fmt: skip
        finally:
            web.terminate()
            web.wait(10)
    watched = str(args.viewers)
    print()
    print(f"{args.games} games per match, {args.rounds} rounds, pinned: {args.pin}, "
          f"{events_per_match} events per match, {os.cpu_count()} CPUs")  # fmt: skip
    for title, table in (("the job's part", times), ("the games alone", games_times)):
        med = {way: statistics.median(values) for way, values in table.items()}
        # each round plays the three ways back to back: its own ratio cancels the slow drift
        paired = [w / z for w, z in zip(table[watched], table["0"], strict=True)]
        print(f" {title} (seconds):")
        for way, values in table.items():
            label = "no publisher" if way == "off" else f"{way} viewers"
            runs = ", ".join(f"{v:.3f}" for v in values)
            print(f"  {label:>13}: median {med[way]:.3f} s  ({runs})")
        print(f"  publisher, nobody watching / no publisher: {med['0'] / med['off']:.3f}")
        print(f"  {watched} viewers / nobody watching: {med[watched] / med['0']:.3f} (medians), "
              f"per round median {statistics.median(paired):.3f} "
              f"[{min(paired):.3f}-{max(paired):.3f}]")  # fmt: skip
    print(f"  every viewer got all {events_per_match} events: {len(received)} viewers in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
