"""Shared by the test bots: knobs from the environment and a stderr trace the tests read.

The runner gives every bot process its own environment plus ``ARENA_TOKEN``, so a test steers a
bot with ``E2E_*`` variables. Lines starting with ``E2E`` go to stderr, which ``arena play`` saves
in ``<replays>/<match id>/bot-<seat>.log``.
"""

from __future__ import annotations

import os
import sys


def knob(name: str, default: int) -> int:
    return int(os.environ.get(f"E2E_{name}", default))


def trace(text: str) -> None:
    print(f"E2E pid={os.getpid()} {text}", file=sys.stderr, flush=True)
