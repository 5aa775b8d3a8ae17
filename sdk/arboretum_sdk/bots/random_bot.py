"""The ``random`` bot: a uniformly random legal decision (a fixed point for ratings)."""

from __future__ import annotations

import random

from arboretum import Decision, SeatView
from arboretum_sdk import Bot


class RandomBot(Bot):
    """Picks uniformly among the legal options of each decision: a draw source, then a
    (card, cell, discard) combination.

    Its numbers come from :attr:`Bot.rng`, which the SDK seeds from the seat's bot seed at every
    game's start, so a re-run game takes the same decisions; ``seed`` only seeds the generator
    used before a game starts (a bot driven by hand, outside a match)."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: SeatView) -> Decision:
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
