"""Plays randomly, except that on its first five play decisions of game 0 it gets them wrong, one
way each: a string, a Draw (the wrong kind), None, a Play of text instead of engine values, and an
exception whose message cannot even be formatted."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

from arboretum import Cell, DecisionKind, Draw, Play, SeatView
from arboretum_sdk import Bot

sys.path.insert(0, str(Path(__file__).parent))
from _common import trace


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no words")


WRONG: list[Any] = [
    "play OA5 0,1 discard JA3",
    Draw(),
    None,
    Play("OA5", Cell(0, 0), None),  # type: ignore[arg-type]
    Unprintable,
]


class MisreturnBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(6)
        self.plays = 0

    def choose(self, view: SeatView) -> Any:
        if view.kind is DecisionKind.PLAY and self.game and self.game.game_index == 0:
            self.plays += 1
            if self.plays <= len(WRONG):
                wrong = WRONG[self.plays - 1]
                trace(f"play {self.plays}: returning {wrong!r}")
                if wrong is Unprintable:
                    raise Unprintable()
                return wrong
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
