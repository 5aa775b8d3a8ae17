"""The built-in search bot: legal answers for every decision kind, its time budget, determinism.

Budgets are checked on the bot's own measurement (``last_elapsed``, time.perf_counter from the
start of ``choose`` to its return), with a generous slack: a loaded machine can stall a process
for a while, and the test must only catch a bot that ignores its budget.
"""

from __future__ import annotations

import random

import pytest

from arboretum import derive_game_seed
from arboretum_sdk import Clock
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.search import SearchBot
from arboretum_sdk.loader import builtin_bots, load_bot
from arboretum_sdk.local import play_game

from .support import kind_of, sample_positions

SLACK_S = 0.5
KINDS = ("first-draw", "second-draw", "play", "play-no-discard")


@pytest.fixture(scope="module")
def views() -> dict[str, list]:
    return sample_positions(per_kind=4)


def test_search_is_a_builtin() -> None:
    assert "search" in builtin_bots()
    assert isinstance(load_bot("search"), SearchBot)


@pytest.mark.parametrize("kind", KINDS)
def test_search_answers_legally(views: dict[str, list], kind: str) -> None:
    bot = SearchBot(seed=3, budget=None, max_rounds=4)
    assert len(views[kind]) == 4
    for view in views[kind]:
        assert kind_of(view) == kind
        decision = bot.choose(view)
        assert decision in view.legal_decisions(), f"{decision} is not legal in {kind}"
        # The engine agrees: the decision applies to a state that has this view.
        state = view.determinize(random.Random(0))
        state.apply(decision)


def test_search_plays_legal_whole_games_with_more_players() -> None:
    for players in (3, 4):
        bots = [SearchBot(seed=s, budget=None, max_rounds=1) for s in range(players)]
        result = play_game(bots, derive_game_seed(99, players))  # apply() validates each answer
        assert len(result.totals) == players


@pytest.mark.parametrize("budget", [0.02, 0.1])
def test_search_respects_its_budget(views: dict[str, list], budget: float) -> None:
    bot = SearchBot(seed=1, budget=budget, max_rounds=10**6)
    for kind in KINDS:
        for view in views[kind][:2]:
            bot.choose(view)
            assert bot.last_elapsed <= budget + SLACK_S, (kind, bot.last_elapsed)
            if bot.last_candidates > 1:
                assert bot.last_elapsed >= 0.5 * budget  # it does use its time


def test_search_respects_the_clock(views: dict[str, list]) -> None:
    """With 100 ms free per decision it plans at most half of it, whatever its own budget."""
    bot = SearchBot(seed=1, budget=5.0, max_rounds=10**6)
    for view in views["play"][:2] + views["first-draw"][:2]:
        bot.clock = Clock(per_decision_ms=100, bank_left_ms=10_000)
        bot.choose(view)
        assert bot.last_elapsed <= 0.05 + SLACK_S, bot.last_elapsed
        assert bot.last_rounds >= 1


def test_search_default_budget_is_well_below_the_default_clock() -> None:
    bot = SearchBot()
    assert bot.budget is not None and bot.budget <= 0.35


def test_search_is_deterministic(views: dict[str, list]) -> None:
    for kind in KINDS:
        for view in views[kind]:
            a = SearchBot(seed=7, budget=None, max_rounds=6).choose(view)
            b = SearchBot(seed=7, budget=None, max_rounds=6).choose(view)
            assert a == b, kind


def test_search_games_are_deterministic() -> None:
    seed = derive_game_seed(5, 0)

    def game() -> tuple[int, ...]:
        return play_game([SearchBot(seed=4, budget=None, max_rounds=3), GreedyBot()], seed).totals

    assert game() == game()
