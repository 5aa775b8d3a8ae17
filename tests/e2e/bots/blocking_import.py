"""Blocks at import for E2E_IMPORT_SLEEP seconds (default 120): ``arena play`` must give up on it
within its start timeout, and one Ctrl-C must stop it at once."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace

trace("importing: blocking")
time.sleep(knob("IMPORT_SLEEP", 120))


class BlockingBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(3)

    def choose(self, view: SeatView) -> Decision:
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
