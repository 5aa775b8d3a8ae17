"""Greedy beats random, significantly, in-process: the 95% interval of the difference of their win
rates excludes 0.

30 deals, each played in both seat orders (60 games, fresh bots each game; a few seconds). Greedy
won every game when this was written; the Wilson interval of a 60-0 record is [0.94, 1], so the
difference 2p - 1 is at least 0.88. The assertion needs only 0 to be outside, which a true greedy
win rate of 0.75 would still give with probability above 0.999.

The league-level version (ratings fitted from the games) is in ``test_fit.py``.
"""

from __future__ import annotations

from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot

from .support import duel

DEALS = 30


def test_greedy_beats_random_significantly() -> None:
    result = duel(lambda _: GreedyBot(), RandomBot, deals=DEALS, match_seed=2026)
    diff, low, high = result.difference()
    assert result.games == 2 * DEALS
    assert low > 0, (
        f"greedy won {result.score} of {result.games} games against random: win-rate difference "
        f"{diff:.2f}, 95% interval [{low:.2f}, {high:.2f}] includes 0"
    )
