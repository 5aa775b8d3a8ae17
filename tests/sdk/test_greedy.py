"""The built-in greedy bot: it beats random clearly, and it is fast.

The games are seeded, so the test is deterministic; the threshold only has to survive future tuning.
Greedy won 200 of 200 games when this was written. If its true win rate were as low as 0.90, the
chance of fewer than 160 wins in 200 games would be below 1e-6 (binomial; mean 180, sd 4.2), so
a failure means greedy got much weaker, not bad luck.

Decision times are measured in CPU time (``time.thread_time``), so a loaded machine does not make
the speed check flaky.
"""

from __future__ import annotations

import time

import pytest

from arboretum import Decision, SeatView, derive_game_seed
from arboretum_sdk import Bot
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.local import play_game

GAMES = 200
MIN_WINS = 160


class TimedGreedy(GreedyBot):
    def __init__(self) -> None:
        self.times: list[float] = []

    def choose(self, view: SeatView) -> Decision:
        start = time.thread_time()
        decision = super().choose(view)
        self.times.append(time.thread_time() - start)
        return decision


@pytest.mark.slow
def test_greedy_beats_random() -> None:
    greedy = TimedGreedy()
    wins = 0.0
    for game in range(GAMES):
        seed = derive_game_seed(2026, game)
        seat = game % 2  # alternate seats: seat 0 moves first
        bots: list[Bot] = [RandomBot(seed), RandomBot(seed + 1)]
        bots[seat] = greedy
        result = play_game(bots, seed)
        if seat in result.winners:
            wins += 1 / len(result.winners)
    assert wins >= MIN_WINS, f"greedy won {wins} of {GAMES} games against random"
    times = sorted(greedy.times)
    mean = sum(times) / len(times)
    p99 = times[int(0.99 * len(times))]
    assert mean < 0.010, f"mean {mean * 1000:.1f} ms per decision"
    assert p99 < 0.050, f"99th percentile {p99 * 1000:.1f} ms per decision"


def test_greedy_plays_legally_with_more_players() -> None:
    for players in (3, 4):
        for game in range(5):
            bots = [GreedyBot() for _ in range(players)]
            play_game(bots, derive_game_seed(7, game))  # raises on an illegal decision
