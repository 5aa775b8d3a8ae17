"""CPU of starting a sandboxed bot, up to its first decision: a plain bwrap start against the fork
server (docs/benchmarks.md, "League": "Starting a bot").

A referee runs in a child process of its own (``referee_support.py referee``, on a unix socket
in a folder the fork server sees). Each round creates a 2-player match, starts both seats' bots
as a league match does (``BwrapRunner.start``: a copy of ``greedy`` from a materialised folder,
``arena bot run`` with the seat token), waits until the referee reports the match running (both
bots imported everything, connected and were sent their first decision), then kills both. This
process and every bot (and the fork server with all its forks) are in a cpuacct cgroup of their
own, the referee in another (``cpu_account.py``), so the CPU per start is exact, whatever else
runs on the machine; this process's own share (starting, waiting, polling the referee) is counted
as start-up too. The ways alternate, round by round.

    .venv/bin/python bench/bot_start.py                    # 20 rounds (40 starts) per way
    .venv/bin/python bench/bot_start.py --rounds 50 --ways fork
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import grpc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from arboretum_proto.v1 import common_pb2  # noqa: E402
from arboretum_worker.bots import builtin_bot_files  # noqa: E402
from arboretum_worker.sandbox import BwrapRunner  # noqa: E402
from arboretum_worker.sandbox.forkserver import ForkServer  # noqa: E402
from cpu_account import CpuAccount  # noqa: E402
from referee_support import (  # noqa: E402
    create_match,
    free_port,
    get_match,
    machine,
    spawn_server,
    stop_process,
)

ADMIN = "bench-admin-token-0123456789"


async def one_round(
    runner: BwrapRunner, address: str, sock: Path, bot: Path, seed: int
) -> tuple[float, float]:
    """(wall seconds from the first start until the match runs: the bots' start-up done, 0)."""
    async with grpc.aio.insecure_channel(address) as channel:
        match_id, tokens = await create_match(
            channel, ADMIN, players=2, games=1, seed=seed, start_timeout_ms=60_000
        )
        started = time.perf_counter()
        bots = await asyncio.gather(
            *(
                asyncio.to_thread(runner.start, bot, socket_path=sock, token=t, name=f"s{i}")
                for i, t in enumerate(tokens)
            )
        )
        try:
            while True:
                info = await get_match(channel, match_id)
                if info.status != common_pb2.MATCH_STATUS_WAITING:
                    break
                if any(b.returncode is not None for b in bots):
                    raise RuntimeError(f"a bot exited: {[b.output()[-500:] for b in bots]}")
                await asyncio.sleep(0.005)
            ready = time.perf_counter() - started
        finally:
            for b in bots:
                b.kill()
    return ready, 0.0


async def start_cpu(
    ways: list[str], rounds: int, bot_source: bytes, report: bool = True
) -> dict[str, list[float]]:
    """CPU seconds of each bot start (after one warm-up round per way), per way."""
    work = Path(tempfile.mkdtemp(prefix="arena-start-", dir="/tmp"))
    bots_cpu = CpuAccount("bots")
    referee_cpu = CpuAccount("referee")
    server: ForkServer | None = None
    referee = None
    try:
        sock = work / "referee.sock"
        bot = work / "bot" / "bot.py"
        bot.parent.mkdir(mode=0o755)
        bot.write_bytes(bot_source)
        bot.chmod(0o444)
        port = free_port()
        referee = spawn_server("referee", port, "--admin-token", ADMIN, "--unix", str(sock))
        referee_cpu.join(referee.pid)
        bots_cpu.join()
        sock.chmod(0o666)
        runners: dict[str, BwrapRunner] = {}
        if "plain" in ways:
            runners["plain"] = BwrapRunner(fork_server=False)
        if "fork" in ways:
            t0, c0 = time.perf_counter(), bots_cpu.cpu_s()
            server = ForkServer.start([work])
            if report:
                print(
                    f"fork server started in {time.perf_counter() - t0:.2f} s, "
                    f"{bots_cpu.cpu_s() - c0:.3f} CPU-s (once per worker)"
                )
            runners["fork"] = BwrapRunner(fork_server=server)
        address = f"127.0.0.1:{port}"
        cpu: dict[str, list[float]] = {w: [] for w in runners}
        wall: dict[str, list[float]] = {w: [] for w in runners}
        for r in range(rounds + 1):
            for way, runner in runners.items():
                before = bots_cpu.cpu_s()
                ready, _ = await one_round(runner, address, sock, bot, 100 + r)
                used = bots_cpu.cpu_s() - before
                if r:  # the first round of each way warms the page cache
                    cpu[way] += [used / 2, used / 2]
                    wall[way].append(ready)
        if report:
            print(f"machine: {machine()}; CPU counted: {bots_cpu.describe()}")
            for way in runners:
                print(
                    f"{way:>5}: CPU per bot start {1000 * statistics.median(cpu[way]):.0f} ms "
                    f"median (mean {1000 * statistics.mean(cpu[way]):.0f}, {len(cpu[way])} "
                    f"starts); both bots ready after {1000 * statistics.median(wall[way]):.0f} ms"
                )
            if len(runners) == 2:
                ratio = statistics.median(cpu["plain"]) / statistics.median(cpu["fork"])
                print(f"plain / fork: {ratio:.1f}x")
        return cpu
    finally:
        if server is not None:
            server.stop()
        if referee is not None:
            stop_process(referee)
        # this process back to the root group, then the groups go
        bots_cpu.close()
        referee_cpu.close()
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="rounds per way (2 starts each)")
    parser.add_argument("--ways", nargs="+", choices=("plain", "fork"), default=["plain", "fork"])
    args = parser.parse_args()
    source = builtin_bot_files("greedy") + b"\n# a copy for the benchmark\n"
    asyncio.run(start_cpu(args.ways, args.rounds, source))


if __name__ == "__main__":
    main()
