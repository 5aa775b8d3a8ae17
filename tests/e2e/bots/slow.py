"""Sleeps past its deadline on its first decision of game E2E_SLOW_GAME (default 0), then plays
randomly and instantly."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace


class SlowBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(2)
        self.slept_in: set[int] = set()

    def choose(self, view: SeatView) -> Decision:
        game = self.game.game_index if self.game else -1
        if game == knob("SLOW_GAME", 0) and game not in self.slept_in and self.clock is not None:
            self.slept_in.add(game)
            pause = self.clock.remaining() + 0.3
            trace(f"game={game} sleeping {pause:.2f} s past the deadline")
            time.sleep(pause)
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
