"""A league test bot that takes its time (so a test can kill a worker in the middle of a match)."""

import time

from arboretum_sdk import Bot


class Slow(Bot):
    def on_game_start(self, info):
        print(f"slow starts game {info.game_index}", flush=True)

    def choose(self, view):
        time.sleep(0.08)
        return view.legal_decisions()[0]
