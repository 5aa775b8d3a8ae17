"""Where a benchmark's CPU goes: the CPU time of named process trees, from ``/proc``.

A snapshot reads every process's own CPU time and that of its reaped children (``utime``,
``stime``, ``cutime``, ``cstime`` of ``/proc/PID/stat``), so a bot that exited and was waited for
is counted in its parent's figure; a process is put in the part of its nearest ancestor that was
named (a root: the web server, a worker, Redis...). Inside a worker's tree, the worker with its
work horses (rq's forks: the job, the referee; the same command line as the worker; a work horse
that ended is in its worker's figure) and the rest (the fork server, bwrap, the bots) are told
apart. The difference of two snapshots is the CPU of
each part in between; a process that exited unreaped in between is missed.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _read(pid: str) -> tuple[int, int, float, str] | None:
    """(ppid, start time, CPU seconds with the reaped children's, command line)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmd = (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return None
    rest = stat.rsplit(")", 1)[1].split()
    ticks = sum(int(v) for v in rest[11:15])
    return int(rest[1]), int(rest[19]), ticks / _TICK, cmd


class CpuParts:
    """``roots`` maps a pid to its part's name; workers (``workers``: pid -> name) are split in
    two: ``NAME: workers and work horses`` (the worker and the processes with its command line)
    and ``NAME: sandboxes and bots``."""

    def __init__(self) -> None:
        self.roots: dict[int, str] = {}
        self.workers: dict[int, str] = {}

    def snapshot(self) -> dict[tuple[int, int], tuple[str, float]]:
        procs = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit() and (info := _read(entry)) is not None:
                procs[int(entry)] = info
        out = {}
        for pid, (_ppid, start, cpu, cmd) in procs.items():
            part = self._part(pid, procs, cmd)
            if part is not None:
                out[(pid, start)] = (part, cpu)
        return out

    def _part(
        self, pid: int, procs: dict[int, tuple[int, int, float, str]], cmd: str
    ) -> str | None:
        node = pid
        for _ in range(64):
            if node in self.roots:
                return self.roots[node]
            if node in self.workers:
                name = self.workers[node]
                if node == pid or cmd == procs[node][3]:  # the worker or its fork
                    return f"{name}: workers and work horses"
                return f"{name}: sandboxes and bots"
            if node not in procs or node <= 1:
                return None
            node = procs[node][0]
        return None

    @staticmethod
    def between(
        before: dict[tuple[int, int], tuple[str, float]],
        after: dict[tuple[int, int], tuple[str, float]],
    ) -> dict[str, float]:
        """CPU seconds per part from ``before`` to ``after``."""
        parts: dict[str, float] = defaultdict(float)
        for key, (part, cpu) in after.items():
            parts[part] += cpu - (before[key][1] if key in before else 0.0)
        return dict(parts)
