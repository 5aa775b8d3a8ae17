"""Shared by the test bots: knobs from the environment and a stderr trace the tests read.

The runner gives every bot process its own environment plus ``ARENA_TOKEN``, so a test steers a
bot with ``E2E_*`` variables. Lines starting with ``E2E`` go to stderr, which ``arena play`` saves
in ``<replays>/<match id>/bot-<seat>.log``, and are appended to the file ``E2E_TRACE_FILE`` when
it is set (a process that is not a match's bot process has no log).
"""

from __future__ import annotations

import os
import sys


def knob(name: str, default: int) -> int:
    return int(os.environ.get(f"E2E_{name}", default))


def trace(text: str) -> None:
    line = f"E2E pid={os.getpid()} {text}"
    print(line, file=sys.stderr, flush=True)
    path = os.environ.get("E2E_TRACE_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")
