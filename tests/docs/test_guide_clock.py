"""docs/writing-a-bot.md names the clock of ``self.clock.received_at``, and it is that clock."""

from __future__ import annotations

import re
import time
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.local import play_game

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-bot.md"


def _paragraph(text: str, start: str) -> str:
    begin = text.index(start)
    return " ".join(text[begin : text.index("\n\n", begin)].split())


def test_the_guide_names_the_clock_of_received_at() -> None:
    paragraph = _paragraph(GUIDE.read_text(), "**Keeping a time budget.**")
    assert "`self.clock.received_at`" in paragraph
    assert re.search(r"on the `time\.monotonic\(\)` clock", paragraph), paragraph
    assert "never with `time.time()`" in paragraph


def test_received_at_is_on_the_monotonic_clock() -> None:
    """What the guide says, in a game: ``time.monotonic() - received_at`` is the time since the
    request arrived (a fraction of a second), which it would not be on ``time.time()``'s scale."""
    ages: list[float] = []

    class Timer(RandomBot):
        def choose(self, view: SeatView) -> Decision:
            ages.append(time.monotonic() - self.clock.received_at)
            return super().choose(view)

    bots: list[Bot] = [Timer(1), RandomBot(2)]
    play_game(bots, seed=3)
    assert ages and all(0 <= age < 5 for age in ages), ages[:5]
