"""The job timeout's bound on decisions per game holds, even for a bot that stalls the deck."""

from __future__ import annotations

import random

import pytest

from arboretum import DecisionKind, GameState
from arboretum_worker.sandbox import DEFAULT_LIMITS
from arboretum_worker.settings import (
    deck_size,
    job_timeout,
    max_decisions_per_game,
    seat_thinking_s,
)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_decisions_per_game_never_exceed_the_bound(players: int) -> None:
    bound = max_decisions_per_game(players)
    longest = 0
    for seed in range(40):
        rng = random.Random(seed)
        state = GameState.new(players=players, seed=seed)
        decisions = 0
        per_seat = [0] * players
        while not state.is_over:
            per_seat[state.current_seat] += 1
            legal = state.legal_decisions()
            if state.decision_kind is DecisionKind.PLAY:
                decision = legal[rng.randrange(len(legal))]
            else:
                decision = legal[-1]  # a discard pile whenever there is one: the longest games
            state.apply(decision)
            decisions += 1
        assert decisions <= bound
        # the seat's share that its CPU limit is derived from (seat_thinking_s)
        assert max(per_seat) <= 3 * -(-deck_size(players) // players)
        longest = max(longest, decisions)
    assert longest > bound // 2  # the stalling policy does make long games


def test_job_timeout_formula() -> None:
    assert deck_size(2) == 34 and deck_size(3) == 43 and deck_size(4) == 52
    # 2 players, L = 1 s, B = 10 s: 102 decisions x 1 s + 2 x 10 s + 90 s margin.
    assert job_timeout(2, 1, 1000, 10_000) == 102 + 20 + 90
    assert job_timeout(4, 2, 500, 0, margin_s=0) == 2 * 3 * 52 // 2


def test_cpu_limit_of_a_match_follows_the_clock() -> None:
    # 2 players, L = 1 s, B = 10 s: a seat thinks at most 17 turns x 3 x 1 s + 10 s = 61 s.
    assert seat_thinking_s(2, 1, 1000, 10_000) == 61
    assert DEFAULT_LIMITS.for_match(seat_thinking_s(2, 1, 1000, 10_000)).cpu_seconds == 107
    # 4 players, 3 games, L = 0.5 s, B = 2 s: 3 x (13 x 3 x 0.5 + 2) = 64.5 s.
    assert seat_thinking_s(4, 3, 500, 2000) == 64.5
