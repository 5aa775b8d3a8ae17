"""What keeps the seat token from a line-protocol bot: the bridge's memory and command line.

The bridge (``arena bot run`` with a command) holds its seat's token; its child, the bot's
command, runs as the same user and must not find it. :func:`close_memory` closes the bridge's
memory to it (no ``ptrace``, no ``/proc/<pid>/mem`` or ``/environ``), and :func:`hide_argument`
takes a token given as an argument out of the command line the kernel shows
(``/proc/<pid>/cmdline``). Both are Linux's; elsewhere they log a warning and do nothing.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

__all__ = ["close_memory", "hide_argument"]

log = logging.getLogger("arboretum_sdk.stdio")

_PR_SET_DUMPABLE = 4


def close_memory() -> bool:
    """Make this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``), for good: a process of
    the same user without ``CAP_SYS_PTRACE`` (the bridge's child) can then neither ``ptrace``
    it nor read its memory (``/proc/<pid>/mem``, ``/proc/<pid>/environ``, ``/proc/<pid>/maps``,
    ``process_vm_readv``), and its ``/proc/<pid>`` files belong to root. It also writes no core
    dump. True when done; False, with a warning in the log, where it cannot be (not Linux)."""
    if not sys.platform.startswith("linux"):
        log.warning("the bridge's memory stays open to its child: no prctl on %s", sys.platform)
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        failed = libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0
    except (OSError, AttributeError) as exc:
        log.warning("the bridge's memory stays open to its child: %s", exc)
        return False
    if failed:
        reason = os.strerror(ctypes.get_errno())
        log.warning("the bridge's memory stays open to its child: prctl failed: %s", reason)
        return False
    return True


def hide_argument(value: str) -> bool:
    """Overwrite ``value`` with ``x`` wherever it is in this process's command line as others see
    it (``/proc/<pid>/cmdline``, ``ps``: the arguments the kernel keeps in this process's memory),
    so that a seat token given as an argument (``arena bot run --token T``) is not there for the
    bridge's child to read. ``sys.argv`` is a copy, unchanged. True when it was found and hidden;
    False where it was not there or cannot be reached (not Linux)."""
    if not value or not sys.platform.startswith("linux"):
        return False
    secret = value.encode()
    hidden = False
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start, arg_end (fields 48 and 49)
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            mem.seek(start)
            args = mem.read(end - start)
            at = args.find(secret)
            while at >= 0:
                mem.seek(start + at)
                mem.write(b"x" * len(secret))
                hidden = True
                at = args.find(secret, at + len(secret))
    except (OSError, ValueError, IndexError) as exc:
        log.warning("the seat token stays on the bridge's command line: %s", exc)
    return hidden
