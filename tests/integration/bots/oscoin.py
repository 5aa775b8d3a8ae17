"""A league test bot that takes its randomness from the OS, not from its game's bot seed (so a
re-run of its games differs), and says which compute mode its sandbox gave it."""

import os
import random

from arboretum_sdk import Bot


class OsCoin(Bot):
    def __init__(self) -> None:
        self.coin = random.SystemRandom()
        print(f"oscoin's compute: {os.environ.get('ARENA_COMPUTE')} {self.compute}", flush=True)

    def choose(self, view):
        legal = view.legal_decisions()
        return legal[self.coin.randrange(len(legal))]
