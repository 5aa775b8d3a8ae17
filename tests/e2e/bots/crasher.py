"""Plays randomly, then kills its own process (os._exit) at its E2E_CRASH_AT-th decision (default
5) of game E2E_CRASH_GAME (default 1)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot, GameInfo

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace


class CrashBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(3)
        self.decisions = 0

    def on_game_start(self, info: GameInfo) -> None:
        self.decisions = 0

    def choose(self, view: SeatView) -> Decision:
        self.decisions += 1
        game = self.game.game_index if self.game else -1
        if game == knob("CRASH_GAME", 1) and self.decisions == knob("CRASH_AT", 5):
            trace(f"game={game} crashing now")
            os._exit(3)
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
