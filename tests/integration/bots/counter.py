"""A league test bot: plays the first legal option and says when its process starts and when
each of its games starts (a series test counts the processes and games from its log)."""

from arboretum_sdk import Bot


class Counter(Bot):
    def __init__(self) -> None:
        print("counter says hello", flush=True)

    def on_game_start(self, info):
        print(f"counter starts game {info.game_index}", flush=True)

    def choose(self, view):
        return view.legal_decisions()[0]
