"""Plays randomly, except its first play of game E2E_CHEAT_GAME (default 0): a card it does not
hold."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from arboretum import Card, Decision, DecisionKind, Play, SeatView
from arboretum_sdk import Bot

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace


class CheatBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(4)
        self.cheated: set[int] = set()

    def choose(self, view: SeatView) -> Decision:
        game = self.game.game_index if self.game else -1
        if (
            view.kind is DecisionKind.PLAY
            and game == knob("CHEAT_GAME", 0)
            and game not in self.cheated
        ):
            self.cheated.add(game)
            missing = next(
                Card(s, v) for s in view.species for v in range(1, 9) if Card(s, v) not in view.hand
            )
            cell = next(iter(view.legal_decisions())).cell  # type: ignore[union-attr]
            discard = view.hand[0] if view.discard_required else None
            trace(f"game={game} playing {missing}, which is not in hand")
            return Play(missing, cell, discard)
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
