"""Plays randomly, except its E2E_RAISE_AT-th decision (default 3) of every game: there it raises
a ValueError whose message runs over several lines and 1,000 characters."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot, GameInfo

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace


class RaiseBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.decisions = 0

    def on_game_start(self, info: GameInfo) -> None:
        self.decisions = 0

    def choose(self, view: SeatView) -> Decision:
        self.decisions += 1
        if self.decisions == knob("RAISE_AT", 3):
            trace(f"game={self.game.game_index if self.game else -1} raising now")
            return self.explode(view)
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]

    def explode(self, view: SeatView) -> Decision:
        raise ValueError(f"no plan for turn {view.turn}\n" + "x" * 1000)
