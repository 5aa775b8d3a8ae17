"""A league test bot for output per decision: plays the first legal option and prints, with
print() and its logger, during every third of its decisions the decision it takes; during its
tenth it prints 260 lines (past the 200 kept per decision); its twentieth raises KeyError('OA5')
(a bot_error fault). It prints at each game's start too, outside any decision."""

from arboretum_sdk import Bot


class StepPrinter(Bot):
    def __init__(self) -> None:
        self.count = 0

    def on_game_start(self, info):
        print(f"stepprinter: game {info.game_index} starts")

    def choose(self, view):
        self.count += 1
        decision = view.legal_decisions()[0]
        if self.count % 3 == 0:
            print(f"stepprinter chose {decision}")
            self.log.warning("stepprinter logged %s", decision)
        if self.count == 10:
            for i in range(260):
                print(f"flood {i}")
        if self.count == 20:
            raise KeyError("OA5")
        return decision
