"""Referee round-trip latency per decision over loopback, against a bare gRPC echo.

Two servers run in child processes, side by side, for the whole run:

- ``echo``: a tiny grpc.aio server whose bidi stream echoes the bytes it receives (no parsing);
- ``referee``: the arena referee (``arboretum_server``), started as ``arena play`` starts it.

Both run on the same event loop (uvloop when installed) with the same gRPC transport.

The client (this process) alternates rounds between them, so that both see the same machine noise:

- an **echo round** sends, on one stream, a serialized ``RefereeMessage`` carrying a
  ``DecisionRequest`` of the median size (taken from the referee round before it) and times each
  send -> echo received. Like a bot's stub, the client parses what comes back as a
  ``RefereeMessage``: both rounds pay the same client-side parsing, so that the difference is
  what the referee does (the echo also carries the request's bytes upstream, where a bot sends a
  small answer: a few hundred bytes more per round trip);
- a **referee round** plays a 2-player match of ``--games`` games between two instant raw-stub bots
  (first legal option, no thinking), each on a connection of its own, and times, on the bot side,
  each answer sent -> next request received within the same turn (first draw -> second draw ->
  play). That is one full referee round trip: decode the answer, validate and apply it, build the
  next view and events, encode, send.

Rounds are short (a few hundred round trips each) and many, so that a change in the machine's
speed hits both sides alike. The figures are the medians over rounds of each round's p50 and p99;
the ratio referee / echo at p50 is what the goal (<= 1.5) is about. ``--pin`` runs the client on
one CPU and both servers on the other. Usage::

    python bench/referee_latency.py                 # 15 rounds of 6 games each
    python bench/referee_latency.py --pin --check   # exit 1 if the p50 ratio is over 1.5
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

import grpc

from arboretum_proto.v1 import bot_pb2
from referee_support import (
    SeatStats,
    create_match,
    first_legal,
    free_port,
    machine,
    median,
    percentile,
    play_seat,
    spawn_server,
    stop_process,
)

ADMIN = "bench-admin-token-0123456789"
GOAL_RATIO = 1.5


async def echo_round(port: int, payload: bytes, count: int) -> list[float]:
    """``count`` round trips of ``payload`` on one stream, each reply parsed as a
    ``RefereeMessage``; returns the times in ms."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.stream_stream(
            ECHO, response_deserializer=bot_pb2.RefereeMessage.FromString
        )()
        times: list[float] = []
        perf = time.perf_counter
        for _ in range(20):  # warm-up
            await call.write(payload)
            await call.read()
        for _ in range(count):
            start = perf()
            await call.write(payload)
            message = await call.read()
            times.append((perf() - start) * 1000.0)
            assert message.decision_request.decision_number
        await call.done_writing()
        while await call.read() is not grpc.aio.EOF:
            pass
        return times


ECHO = "/bench.Echo/Echo"


async def referee_round(port: int, games: int, seed: int) -> tuple[list[float], bytes]:
    """One 2-player match of instant bots, each seat on a connection of its own (as bots in their
    own processes have): the bot-side round trips (ms), and a serialized decision-request message
    of the median size."""
    address = f"127.0.0.1:{port}"
    async with grpc.aio.insecure_channel(address) as channel:
        match_id, tokens = await create_match(
            channel, ADMIN, players=2, games=games, seed=seed, per_decision_ms=5000, bank_ms=0
        )
    stats = [SeatStats(), SeatStats()]
    samples: list[bytes] = []

    def policy(request: bot_pb2.DecisionRequest) -> object:
        if len(samples) < 2000:
            message = bot_pb2.RefereeMessage(protocol_version=1, decision_request=request)
            samples.append(message.SerializeToString())
        return first_legal(request)

    # a local subchannel pool: a connection per seat, not one shared by both
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(address, options=options) for _ in tokens]
    try:
        await asyncio.gather(
            *(
                play_seat(c, t, policy, s)  # type: ignore[arg-type]
                for c, t, s in zip(channels, tokens, stats, strict=True)
            )
        )
    finally:
        for c in channels:
            await c.close()
    for s in stats:
        if s.faults or s.status != "MATCH_STATUS_FINISHED":
            raise RuntimeError(f"referee round {match_id} went wrong: {s}")
    samples.sort(key=len)
    return [x for s in stats for x in s.turn_rtt_ms], samples[len(samples) // 2]


async def run(args: argparse.Namespace) -> int:
    echo_port, ref_port = free_port(), free_port()
    servers_cpus = None
    if args.pin:
        # before this process starts any gRPC thread, so that they all inherit it
        os.sched_setaffinity(0, {0})
        servers_cpus = {1 % (os.cpu_count() or 1)}
    echo = spawn_server("echo", echo_port, cpus=servers_cpus)
    try:
        referee = spawn_server("referee", ref_port, "--admin-token", ADMIN, cpus=servers_cpus)
    except BaseException:
        stop_process(echo)
        raise
    rows: dict[str, list[tuple[float, float]]] = {"echo": [], "referee": []}
    sample = b""
    try:
        await referee_round(ref_port, 2, 1)  # warm-up
        for r in range(args.rounds):
            rtts, sample = await referee_round(ref_port, args.games, 1000 + r)
            echo_times = await echo_round(echo_port, sample, len(rtts))
            rows["referee"].append((percentile(rtts, 50), percentile(rtts, 99)))
            rows["echo"].append((percentile(echo_times, 50), percentile(echo_times, 99)))
            print(
                f"round {r + 1}/{args.rounds}: {len(rtts)} round trips; "
                f"echo p50 {rows['echo'][-1][0]:.3f} ms, "
                f"referee p50 {rows['referee'][-1][0]:.3f} ms",
                file=sys.stderr,
            )
    finally:
        stop_process(echo)
        stop_process(referee)
    summary = {
        name: (median([a for a, _ in v]), median([b for _, b in v])) for name, v in rows.items()
    }
    ratio50 = summary["referee"][0] / summary["echo"][0]
    ratio99 = summary["referee"][1] / summary["echo"][1]
    print(f"machine: {machine()}")
    print(f"request message size: {len(sample)} bytes; {args.rounds} rounds of {args.games} games")
    print(f"{'':<16}{'p50 ms':>10}{'p99 ms':>10}")
    print(f"{'bare echo':<16}{summary['echo'][0]:>10.3f}{summary['echo'][1]:>10.3f}")
    print(f"{'referee':<16}{summary['referee'][0]:>10.3f}{summary['referee'][1]:>10.3f}")
    print(f"ratio referee/echo: p50 {ratio50:.2f} (goal <= {GOAL_RATIO}), p99 {ratio99:.2f}")
    if args.check and ratio50 > GOAL_RATIO:
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds (default 15)")
    parser.add_argument("--games", type=int, default=6, help="games per referee round (default 6)")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the p50 ratio misses the goal"
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run this client on CPU 0 and both servers on CPU 1 (less noise from migrations)",
    )
    raise SystemExit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
