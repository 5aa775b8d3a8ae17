"""A league test bot: plays the first legal option and prints (for `arena match logs`): a few
lines, then about 300 KiB, past the 64 KiB the league keeps of a bot's output."""

import resource

from arboretum_sdk import Bot


class Printer(Bot):
    def __init__(self) -> None:
        self.decisions = 0
        print("printer says hello", flush=True)
        print(f"printer's cpu limit: {resource.getrlimit(resource.RLIMIT_CPU)[0]} s", flush=True)

    def choose(self, view):
        self.decisions += 1
        if self.decisions == 1:
            print(f"printer's first decision: {view.legal_decisions()[0]}", flush=True)
            for i in range(3000):
                print(f"filler line {i:05d} " + "." * 84, flush=i % 100 == 0)
        return view.legal_decisions()[0]
