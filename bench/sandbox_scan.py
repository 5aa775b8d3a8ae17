"""How long a sandbox's process scan takes as the machine's process count grows
(docs/benchmarks.md, "Finding a sandbox's processes").

A sandbox is looked for at least twice as it is killed (``SandboxedBot.remaining_pids``: its pid
namespace and its runner's process group), by every match. The scan now asks the kernel
(``getpgid``, ``stat`` of the namespace link: ``sandbox.base._host_processes``); before, it read
each process's ``/proc/PID/stat`` file for the group and ``stat``-ed the namespace link in a
second pass. Both are timed here, in the same run, with ``--extra`` sleeping processes started
first (fifty casual tables put some 300 more on a machine: their work horses, sandboxes, bots),
and checked to find the same processes.

    .venv/bin/python bench/sandbox_scan.py
    .venv/bin/python bench/sandbox_scan.py --extra 0 200 400 --repeat 50
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from arboretum_worker.sandbox.base import _host_processes


def plain_scan(pidns: int, pgid: int) -> set[int]:
    """The scan as it was: a pass reading every ``stat`` file, and a pass over the ns links."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                found.add(int(entry))
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}/ns/pid").st_ino == pidns:
                    found.add(int(entry))
            except OSError:
                continue
    return found


def timed(fn: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", type=int, nargs="+", default=[0, 150, 300])
    parser.add_argument("--repeat", type=int, default=30, help="the best of N scans")
    args = parser.parse_args()
    # a namespace no process is in and a group no process leads: every scan looks at everything
    pidns, pgid = 1, 2**22 + 1
    sleepers: list[subprocess.Popen[bytes]] = []
    print("| processes on the machine | before: stat files + ns links | now | ratio |")
    print("|---|---|---|---|")
    try:
        for extra in sorted(args.extra):
            while len(sleepers) < extra:
                sleepers.append(subprocess.Popen(["sleep", "600"]))
            assert plain_scan(pidns, pgid) == _host_processes(pidns, pgid)
            mine = os.getpgid(0)
            assert plain_scan(pidns, mine) >= _host_processes(pidns, mine) >= {os.getpid()}
            count = sum(1 for e in os.listdir("/proc") if e.isdigit())
            before = timed(lambda: plain_scan(pidns, pgid), args.repeat)
            now = timed(lambda: _host_processes(pidns, pgid), args.repeat)
            print(f"| {count} | {before:.2f} ms | {now:.2f} ms | {before / now:.1f}x |")
    finally:
        for proc in sleepers:
            proc.kill()
        for proc in sleepers:
            proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
