"""The built-in search bot: legal answers for every decision kind, its time budget, its fixed
compute, determinism.

Budgets are checked on the bot's own measurement (``last_elapsed``, time.perf_counter from the
start of ``choose`` to its return), with a generous slack: a loaded machine can stall a process
for a while, and the test must only catch a bot that ignores its budget. (The p99 of its decision
time under load is a benchmark: bench/bot_timing.py.)
"""

from __future__ import annotations

import dataclasses
import os
import random

import pytest

from arboretum import derive_game_seed
from arboretum_sdk import Clock
from arboretum_sdk.bots.compute import SAFETY, STALL_MARGIN, Allowance, planned
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
    bot = SearchBot(seed=1, compute="time", budget=budget, max_rounds=10**6)
    for kind in KINDS:
        for view in views[kind][:2]:
            bot.choose(view)
            assert bot.last_elapsed <= budget + SLACK_S, (kind, bot.last_elapsed)
            if bot.last_candidates > 1:
                assert bot.last_elapsed >= 0.5 * budget  # it does use its time


def test_time_mode_plans_to_keep_a_margin() -> None:
    """A bot in time mode plans to stop STALL_MARGIN before its budget (the stalls of a loaded
    machine do not shrink with the budget), at most at SAFETY of it, and never before half of it."""
    assert planned(0.3) == pytest.approx(0.3 - STALL_MARGIN)
    assert planned(2.0) == pytest.approx(SAFETY * 2.0)
    assert planned(0.1) == pytest.approx(0.05)
    assert planned(0.0) == 0.0 and planned(-1.0) == 0.0
    assert all(planned(b / 100) <= planned((b + 1) / 100) for b in range(300)), "monotone"
    allow = Allowance(5, deadline=None)
    assert not allow.over() and allow.left() == float("inf")
    assert Allowance(5, deadline=0.0).left() == 0.0 and Allowance(5, deadline=0.0).over()


def test_search_respects_the_clock(views: dict[str, list]) -> None:
    """With 400 ms free per decision it plans at most half of it, whatever its own budget (and it
    does search: a loaded machine may leave no round for some decision, not for all)."""
    bot = SearchBot(seed=1, compute="time", budget=5.0, max_rounds=10**6)
    rounds = []
    for view in views["play"][:2] + views["first-draw"][:2]:
        bot.clock = Clock(per_decision_ms=400, bank_left_ms=10_000)
        bot.choose(view)
        assert bot.last_elapsed <= 0.2 + SLACK_S, bot.last_elapsed
        rounds.append(bot.last_rounds)
    assert max(rounds) >= 1, rounds


def test_search_stops_its_preparation_when_the_time_is_up(views: dict[str, list]) -> None:
    """With no time at all it still answers legally, from the first placement it rated: the
    shortlist is not completed and no determinization is evaluated."""
    bot = SearchBot(seed=1, compute="time", budget=0.0)
    for view in views["play"]:
        decision = bot.choose(view)
        assert decision in view.legal_decisions()
        assert bot.last_rounds == 0
        assert bot.last_candidates == len(view.hand) - 1, "one placement, with each discard"
    full = SearchBot(seed=1, compute="fixed", max_rounds=1)
    full.choose(views["play"][0])
    assert full.last_candidates == 8 * (len(views["play"][0].hand) - 1)


def test_fixed_compute_ignores_the_clock(views: dict[str, list]) -> None:
    """In fixed mode every decision evaluates exactly max_rounds determinizations, even with a
    clock that has no time left, and the environment's mode is overridden either way."""
    for mode in ("fixed", "time"):
        os.environ["ARENA_COMPUTE"] = mode
        try:
            bot = SearchBot(seed=1, compute="fixed", max_rounds=3)
            for view in views["play"][:2] + views["first-draw"][:2]:
                bot.clock = Clock(per_decision_ms=1, bank_left_ms=0)
                bot.choose(view)
                assert bot.last_rounds == 3, (mode, bot.last_rounds)
        finally:
            del os.environ["ARENA_COMPUTE"]


def test_the_environment_chooses_the_mode(views: dict[str, list]) -> None:
    view = views["play"][0]
    os.environ["ARENA_COMPUTE"] = "fixed"
    try:
        bot = SearchBot(seed=1, max_rounds=2)
        bot.clock = Clock(per_decision_ms=1, bank_left_ms=0)
        bot.choose(view)
        assert bot.last_rounds == 2
    finally:
        del os.environ["ARENA_COMPUTE"]
    os.environ["ARENA_COMPUTE"] = "time"
    try:
        bot.choose(view)  # the same clock, now obeyed: no time for a single round
        assert bot.last_rounds == 0
    finally:
        del os.environ["ARENA_COMPUTE"]


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

    def game(bot_seed: int) -> tuple[int, ...]:
        bot = SearchBot(seed=bot_seed, compute="fixed", max_rounds=3)
        return play_game([bot, GreedyBot()], seed).totals

    assert game(4) == game(4) == game(5), "the game's bot seed decides, not the constructor's"


def test_search_samples_from_the_game_bot_seed(views: dict[str, list]) -> None:
    bot = SearchBot(seed=0, compute="fixed", max_rounds=1)
    play_game([bot, GreedyBot()], derive_game_seed(6, 0))  # leaves bot.game set
    assert bot.game is not None
    choices = []
    for bot_seed in (1, 2):
        bot.game = dataclasses.replace(bot.game, bot_seed=bot_seed)
        choices.append([bot.choose(view) for view in views["play"]])
    assert choices[0] != choices[1], "one determinization each: the seeds sample differently"
    bot.game = dataclasses.replace(bot.game, bot_seed=1)
    assert [bot.choose(view) for view in views["play"]] == choices[0]
