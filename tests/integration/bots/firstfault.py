"""Plays randomly, except its first decision of each game: a draw from its own discard pile,
which is empty then (a well-formed but illegal answer: one fault a game)."""

from __future__ import annotations

from arboretum import Decision, Draw, SeatView
from arboretum_sdk.bots.random_bot import RandomBot


class FirstFault(RandomBot):
    def __init__(self) -> None:
        super().__init__()
        self.faulted: set[int] = set()

    def choose(self, view: SeatView) -> Decision:
        game = self.game.game_index if self.game else -1
        if game not in self.faulted:
            self.faulted.add(game)
            return Draw(view.seat)
        return super().choose(view)
