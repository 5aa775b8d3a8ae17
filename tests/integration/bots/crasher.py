"""A league test bot whose process dies at its first decision of the series' second game (unless
it joined that game late, as a fresh process does after the crash)."""

import os

from arboretum_sdk import Bot


class Crasher(Bot):
    def __init__(self) -> None:
        self.game_index = -1
        self.late = False
        print("crasher says hello", flush=True)

    def on_game_start(self, info):
        self.game_index, self.late = info.game_index, info.resumed
        print(f"crasher starts game {info.game_index} (resumed: {info.resumed})", flush=True)

    def choose(self, view):
        if self.game_index == 1 and not self.late:
            print("crasher exits now", flush=True)
            os._exit(3)
        return view.legal_decisions()[0]
