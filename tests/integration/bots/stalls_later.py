"""Answers its first two decisions of a game, then never again (a bot that hangs mid-game)."""

import time

from arboretum_sdk import Bot


class StallsLater(Bot):
    def on_game_start(self, info):
        self.asked = 0

    def choose(self, view):
        self.asked += 1
        if self.asked > 2:
            time.sleep(3600)
        return view.legal_decisions()[0]
