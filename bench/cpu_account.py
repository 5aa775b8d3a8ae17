"""Exact CPU time of a benchmark's processes: a cgroup (v1 ``cpuacct``) of their own.

A process moved into the cgroup takes every process it starts later with it (referees, workers,
bwrap, the bots in their namespaces, the fork server and its forks), so the cgroup's
``cpuacct.usage`` counts their CPU time exactly, whatever else runs on the machine; rusage would
miss the sandboxed bots, which are reaped inside their pid namespaces. Where no cgroup can be
made (not root, no cpuacct hierarchy), :class:`CpuAccount` falls back to the whole machine's
busy time from ``/proc/stat`` and says so.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all CPUs, from /proc/stat)."""
    with open("/proc/stat") as fh:
        values = [float(v) for v in fh.readline().split()[1:8]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


class CpuAccount:
    """A cgroup for named parts of a benchmark: ``account.join(pid)`` moves a process into it;
    ``account.cpu_s()`` is the CPU seconds of everything in it so far."""

    def __init__(self, name: str) -> None:
        self.path: Path | None = CPUACCT / f"arena-bench-{os.getpid()}-{name}"
        try:
            self.path.mkdir()
        except OSError:
            self.path = None
        self.exact = self.path is not None

    def describe(self) -> str:
        if self.exact:
            return "exact CPU time of the benchmark's processes (a cpuacct cgroup of their own)"
        return "the whole machine's busy CPU time (/proc/stat; no cpuacct cgroup here)"

    def join(self, pid: int = 0) -> None:
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(pid or os.getpid()))

    def cpu_s(self) -> float:
        if self.path is None:
            return machine_busy_s()
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def close(self) -> None:
        """Move what is left back to the root group and remove the cgroup."""
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            for pid in (self.path / "cgroup.procs").read_text().split():
                with contextlib.suppress(OSError):
                    (CPUACCT / "cgroup.procs").write_text(pid)
            self.path.rmdir()
