"""A league test bot: plays the first legal option and prints (for `arena match logs`)."""

from arboretum_sdk import Bot


class Printer(Bot):
    def __init__(self) -> None:
        self.decisions = 0
        print("printer says hello", flush=True)

    def choose(self, view):
        self.decisions += 1
        if self.decisions == 1:
            print(f"printer's first decision: {view.legal_decisions()[0]}", flush=True)
        return view.legal_decisions()[0]
