"""Plays randomly and writes its pid at every game start: one process must play a whole match."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot, GameInfo

sys.path.insert(0, str(Path(__file__).parent))
from _common import trace


class PidBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(1)

    def on_game_start(self, info: GameInfo) -> None:
        trace(f"game={info.game_index} seat={info.seat}")

    def choose(self, view: SeatView) -> Decision:
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
