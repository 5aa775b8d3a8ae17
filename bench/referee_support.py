"""Shared pieces of the referee benchmarks (``bench/referee_*.py``, ``bench/series_throughput.py``,
``bench/concurrent_matches.py``): raw-stub bot seats, admin calls, child servers, percentiles, RSS.

The seats here speak the wire protocol directly with the generated stubs, so the benchmarks
measure the referee and gRPC, not a bot framework. Their decisions are legal by construction: the
request's helpers (``legal_sources``, ``legal_cells``, ``view.hand``) list the legal options, so a
draw picks a listed source and a play picks any card of the hand, a listed cell and another card
to discard.

Run as a script it starts one server in the foreground (used by the benchmarks as a child process)::

    python bench/referee_support.py referee --port P --admin-token T [--max-matches N] [--unix PATH]
    python bench/referee_support.py echo --port P
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from arboretum_proto.v1 import bot_pb2, bot_pb2_grpc, common_pb2, match_pb2, match_pb2_grpc

HERE = Path(__file__).resolve().parent
ECHO_METHOD = "/bench.Echo/Echo"
ADMIN_KEY = "x-arena-admin-token"
TOKEN_KEY = "x-arena-token"

Policy = Callable[[bot_pb2.DecisionRequest], common_pb2.Decision]


# ----------------------------------------------------------------------------- decisions


def first_legal(request: bot_pb2.DecisionRequest) -> common_pb2.Decision:
    """The first legal option: an instant, deterministic bot."""
    kind = request.kind
    if kind == common_pb2.DECISION_KIND_FIRST_DRAW:
        return common_pb2.Decision(first_draw=request.legal_sources[0])
    if kind == common_pb2.DECISION_KIND_SECOND_DRAW:
        return common_pb2.Decision(second_draw=request.legal_sources[0])
    hand = request.view.hand
    play = common_pb2.PlayDecision(card=hand[0], cell=request.legal_cells[0])
    if request.discard_required:
        play.discard.CopyFrom(hand[1])
    return common_pb2.Decision(play=play)


def random_legal(rng: random.Random) -> Policy:
    """A uniformly random source; for a play a random card, cell and (other) discard."""

    def policy(request: bot_pb2.DecisionRequest) -> common_pb2.Decision:
        kind = request.kind
        if kind == common_pb2.DECISION_KIND_FIRST_DRAW:
            return common_pb2.Decision(first_draw=rng.choice(request.legal_sources))
        if kind == common_pb2.DECISION_KIND_SECOND_DRAW:
            return common_pb2.Decision(second_draw=rng.choice(request.legal_sources))
        hand = list(request.view.hand)
        card = hand.pop(rng.randrange(len(hand)))
        play = common_pb2.PlayDecision(card=card, cell=rng.choice(request.legal_cells))
        if request.discard_required:
            play.discard.CopyFrom(rng.choice(hand))
        return common_pb2.Decision(play=play)

    return policy


class EngineRandom:
    """A uniformly random legal decision chosen by the rules engine: the request's view is decoded
    into the engine's ``SeatView`` (``arboretum_sdk.wire``, with its checks) and
    ``arboretum.random_decision`` picks among ``view.legal_decisions()``. It costs the load
    generator far more CPU than :func:`random_legal`, which reads the request's helper fields."""

    def __init__(self, rng: random.Random) -> None:
        from arboretum_sdk import wire

        self.rng = rng
        self.wire = wire
        self.species: tuple[object, ...] = ()

    def game_start(self, setup: object) -> None:
        wire = self.wire
        self.species = tuple(wire.species_from_pb(s) for s in setup.species_in_play)  # type: ignore[attr-defined]

    def __call__(self, request: bot_pb2.DecisionRequest) -> common_pb2.Decision:
        from arboretum import random_decision

        wire = self.wire
        kind = wire.kind_from_pb(request.kind)
        view = wire.seat_view_from_pb(request.view, species=self.species, kind=kind)  # type: ignore[arg-type]
        return wire.decision_to_pb(random_decision(view, self.rng), kind)  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- a raw seat


@dataclass
class SeatStats:
    """What one raw seat saw. ``turn_rtt_ms``: from sending an answer to receiving the next request
    of the same turn (first draw -> second draw -> play), i.e. one referee round trip."""

    decisions: int = 0
    games: int = 0
    faults: int = 0
    retries: int = 0
    turn_rtt_ms: list[float] = field(default_factory=list)
    request_bytes: list[int] = field(default_factory=list)
    status: str = ""


RETRYABLE_BEFORE_START = ("CANCELLED", "UNAVAILABLE")
"""Codes that mean the stream never reached the referee's handler when they come before any message:
grpc cancels a call the server application has not picked up within 30 s (the grpc.aio server takes
one new call per event-loop turn, so a referee busy with hundreds of games can be that slow)."""


async def play_seat(
    channel: grpc.aio.Channel,
    token: str,
    policy: Policy,
    stats: SeatStats | None = None,
    retries: int = 5,
) -> SeatStats:
    """Play one seat of a match to its end over ``channel`` with ``policy``. A stream refused before
    its first message is opened again (``retries`` times at most; counted in ``stats.retries``)."""
    stats = stats if stats is not None else SeatStats()
    while True:
        started = await _play_stream(channel, token, policy, stats)
        if started or stats.retries >= retries or not stats.status.startswith("rpc error"):
            break
        if stats.status.split()[2].rstrip(":") not in RETRYABLE_BEFORE_START:
            break
        stats.retries += 1
        await asyncio.sleep(0.5 * stats.retries)
    if not stats.status.startswith("MATCH_STATUS"):
        print(f"seat stream failed: {stats.status}", file=sys.stderr, flush=True)
    return stats


async def _play_stream(
    channel: grpc.aio.Channel, token: str, policy: Policy, stats: SeatStats
) -> bool:
    """One Play stream; True once a message came (the referee accepted the stream)."""
    stub = bot_pb2_grpc.BotServiceStub(channel)
    call = stub.Play(metadata=((TOKEN_KEY, token),), wait_for_ready=True)
    sent_at = 0.0
    last_kind = 0
    perf = time.perf_counter
    started = False
    try:
        while True:
            message = await call.read()
            now = perf()
            if message is grpc.aio.EOF:
                break
            started = True
            kind = message.WhichOneof("kind")
            if kind == "decision_request":
                request = message.decision_request
                if sent_at and request.kind == last_kind + 1 and last_kind:
                    stats.turn_rtt_ms.append((now - sent_at) * 1000.0)
                stats.decisions += 1
                answer = bot_pb2.BotMessage(
                    protocol_version=1,
                    answer=bot_pb2.DecisionAnswer(
                        decision_number=request.decision_number, decision=policy(request)
                    ),
                )
                last_kind = request.kind
                sent_at = perf()
                await call.write(answer)
            elif kind == "game_start":
                start = getattr(policy, "game_start", None)
                if start is not None:
                    start(message.game_start.setup)
            elif kind == "game_end":
                stats.games += 1
                sent_at = 0.0
                last_kind = 0
            elif kind == "fault_notice":
                stats.faults += 1
            elif kind == "match_end":
                stats.status = common_pb2.MatchStatus.Name(message.match_end.status)
    except grpc.aio.AioRpcError as exc:
        stats.status = f"rpc error {exc.code().name}: {exc.details()}"
    except Exception as exc:
        stats.status = f"error {exc!r}"
        traceback.print_exc()
    finally:
        call.cancel()
    return started


# ----------------------------------------------------------------------------- admin


async def create_match(
    channel: grpc.aio.Channel,
    admin_token: str,
    *,
    players: int,
    games: int,
    seed: int,
    per_decision_ms: int = 1000,
    bank_ms: int = 10000,
    names: Sequence[str] = (),
    start_timeout_ms: int = 0,
) -> tuple[str, list[str]]:
    """Create a match; returns its id and the seat tokens."""
    stub = match_pb2_grpc.MatchServiceStub(channel)
    config = match_pb2.MatchConfig(
        player_count=players,
        match_seed=seed,
        game_count=games,
        time_control=common_pb2.TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
        seat_names=list(names),
        start_timeout_ms=start_timeout_ms,
    )
    response = await stub.CreateMatch(
        match_pb2.CreateMatchRequest(protocol_version=1, config=config),
        metadata=((ADMIN_KEY, admin_token),),
    )
    return response.match_id, [t.token for t in response.seat_tokens]


async def get_match(channel: grpc.aio.Channel, match_id: str) -> match_pb2.MatchInfo:
    stub = match_pb2_grpc.MatchServiceStub(channel)
    response = await stub.GetMatch(match_pb2.GetMatchRequest(protocol_version=1, match_id=match_id))
    return response.match


async def get_replay_json(channel: grpc.aio.Channel, match_id: str, game_index: int) -> str:
    stub = match_pb2_grpc.MatchServiceStub(channel)
    response = await stub.GetReplay(
        match_pb2.GetReplayRequest(protocol_version=1, match_id=match_id, game_index=game_index)
    )
    return str(response.replay_json)


# ----------------------------------------------------------------------------- processes, numbers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(
    port: int, timeout: float = 20.0, proc: subprocess.Popen[bytes] | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server process exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port} after {timeout} s")


def spawn_server(
    kind: str, port: int, *extra: str, cpus: set[int] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``referee`` or ``echo`` in a child process and wait until it listens. The child gets
    the gRPC transport that the ``arena`` command sets up (see :mod:`arboretum_sdk.grpc_setup`),
    and runs on ``cpus`` when given (all its threads)."""
    from arboretum_sdk import grpc_setup

    env = dict(os.environ)
    env.setdefault("GRPC_EXPERIMENTS", grpc_setup.GRPC_EXPERIMENTS)
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "referee_support.py"), kind, "--port", str(port), *extra],
        env=env,
        preexec_fn=None if cpus is None else (lambda: os.sched_setaffinity(0, cpus)),
    )
    try:
        wait_for_port(port, proc=proc)
    except BaseException:
        stop_process(proc)  # a server that does not come up is not left behind
        raise
    return proc


def stop_process(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rss_mib(pid: int) -> float:
    """Resident set size of a process, in MiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100), nearest-rank on the sorted values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, round(p / 100.0 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine() -> str:
    import platform

    return (
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"grpcio {grpc.__version__}, {os.cpu_count()} CPUs, {platform.machine()}"
    )


# ----------------------------------------------------------------------------- child servers


async def _serve_echo(port: int) -> None:
    async def echo(request_iterator, context):  # type: ignore[no-untyped-def]
        async for data in request_iterator:
            yield data

    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.stream_stream_rpc_method_handler(echo)}
    )
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await _until_signal()
    await server.stop(1.0)


async def _serve_referee(port: int, admin_token: str, max_matches: int, unix: str | None) -> None:
    from arboretum_server.config import Settings
    from arboretum_server.server import start_referee

    listen = (f"127.0.0.1:{port}", f"unix:{unix}") if unix else (f"127.0.0.1:{port}",)
    referee = await start_referee(
        Settings(listen=listen, admin_token=admin_token, max_matches=max_matches)
    )
    await _until_signal()
    await referee.stop(1.0)


async def _until_signal() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=("referee", "echo"))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--admin-token", default="bench-admin-token-0123456789")
    parser.add_argument("--max-matches", type=int, default=1024)
    parser.add_argument("--unix", metavar="PATH", help="referee: also listen on this unix socket")
    args = parser.parse_args()
    # Both on the loop that `arena serve` runs (uvloop when installed; ARENA_EVENT_LOOP=asyncio for
    # the standard loop), so that the echo and the referee differ only in what they do per message.
    from arboretum_sdk import eventloop

    if args.kind == "echo":
        eventloop.run(_serve_echo(args.port))
    else:
        eventloop.run(_serve_referee(args.port, args.admin_token, args.max_matches, args.unix))


if __name__ == "__main__":
    main()
