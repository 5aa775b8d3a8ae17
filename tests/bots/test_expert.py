"""The built-in expert bot: legal answers for every decision kind, whole games with 2 to 4 players,
its fixed compute (deterministic, every sample taken), its time budget, and the potential it adds
to the one-ply heuristic.

Budgets are checked on the bot's own measurement with a generous slack, as for ``search``: the test
only catches a bot that ignores its budget (the p99 under load is a benchmark:
bench/bot_timing.py).
"""

from __future__ import annotations

import dataclasses
import random

import pytest

from arboretum import (
    DECK,
    Arboretum,
    Card,
    Cell,
    DecisionKind,
    Draw,
    Play,
    SeatView,
    Species,
    derive_game_seed,
)
from arboretum_sdk import Clock
from arboretum_sdk.bots.expert import ExpertBot
from arboretum_sdk.loader import builtin_bots, load_bot
from arboretum_sdk.local import play_game

from .support import kind_of, sample_positions

SLACK_S = 0.5
KINDS = ("first-draw", "second-draw", "play", "play-no-discard")


@pytest.fixture(scope="module")
def views() -> dict[str, list]:
    return sample_positions(per_kind=4)


def late_views(count: int, players: int = 2) -> list:
    """Views of real positions with 8 deck cards or fewer (the sampled endgame)."""
    from .support import positions

    found = []
    for seed in range(200):
        for view in positions(seed, players):
            if 0 < view.deck_size <= 8 and view.my_turn:
                found.append(view)
                break
        if len(found) >= count:
            return found
    raise AssertionError("no late positions found")


def test_expert_is_a_builtin() -> None:
    assert "expert" in builtin_bots()
    assert isinstance(load_bot("expert"), ExpertBot)


@pytest.mark.parametrize("kind", KINDS)
def test_expert_answers_legally(views: dict[str, list], kind: str) -> None:
    bot = ExpertBot(seed=3, compute="fixed", simulations=4)
    for view in views[kind]:
        assert kind_of(view) == kind
        decision = bot.choose(view)
        assert decision in view.legal_decisions(), f"{decision} is not legal in {kind}"
        view.determinize(random.Random(0)).apply(decision)  # the engine agrees
        assert bot.choose(view) == decision, "the same view, the same decision"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_expert_plays_whole_games(players: int) -> None:
    bots = [ExpertBot(seed=s, compute="fixed", simulations=2) for s in range(players)]
    result = play_game(bots, derive_game_seed(8, players))  # apply() validates every answer
    assert len(result.totals) == players


def test_fixed_compute_samples_every_endgame_decision_and_repeats_itself() -> None:
    """In fixed mode a late decision takes exactly its simulations, whatever the clock says (an
    exhausted clock included), and the same position and seed give the same decision."""
    for view in late_views(6):
        bot = ExpertBot(seed=5, compute="fixed", simulations=7)
        bot.clock = Clock(per_decision_ms=1, bank_left_ms=0)
        first = bot.choose(view)
        if len(view.legal_decisions()) > 1:
            assert bot.last_rounds == 7
        again = ExpertBot(seed=5, compute="fixed", simulations=7).choose(view)
        assert again == first


def test_whole_games_repeat_in_fixed_compute() -> None:
    seed = derive_game_seed(21, 0)
    runs = [
        play_game([ExpertBot(compute="fixed", simulations=3), ExpertBot(compute="fixed")], seed)
        for _ in range(2)
    ]
    assert runs[0].totals == runs[1].totals and runs[0].ranks == runs[1].ranks


@pytest.mark.parametrize("budget", [0.02, 0.1])
def test_expert_respects_its_budget(views: dict[str, list], budget: float) -> None:
    bot = ExpertBot(seed=1, compute="time", budget=budget, simulations=10**6)
    for view in [*late_views(3), *(v for kind in KINDS for v in views[kind][:2])]:
        bot.choose(view)
        assert bot.last_elapsed <= budget + SLACK_S, (kind_of(view), bot.last_elapsed)


def test_expert_samples_in_time_mode() -> None:
    """Given time (0.48 s planned of 0.6), a late decision samples (a loaded machine may leave no
    round for one decision, not for all three)."""
    bot = ExpertBot(seed=1, compute="time", budget=0.6, simulations=10**6)
    rounds = []
    for view in late_views(3):
        bot.choose(view)
        rounds.append(bot.last_rounds)
    assert max(rounds) > 0, rounds


def test_expert_respects_the_clock() -> None:
    """With 200 ms free per decision it plans at most half of it, whatever its own budget."""
    bot = ExpertBot(seed=1, compute="time", budget=5.0, simulations=10**6)
    for view in late_views(3):
        bot.clock = Clock(per_decision_ms=200, bank_left_ms=10_000)
        bot.choose(view)
        assert bot.last_elapsed <= 0.1 + SLACK_S, bot.last_elapsed


def test_it_keeps_the_cards_that_extend_its_row(views: dict[str, list]) -> None:
    """Holding Oak 5 and 6 beside an Oak 2-3-4 row, and 1s of other species: it discards neither
    Oak (they are its path's future and its right to score it), and if it plays one, it is on the
    row's open end."""
    view = views["play"][0]
    oak = Species.OAK if Species.OAK in view.species else view.species[0]
    others = [s for s in view.species if s is not oak]
    arb = Arboretum({Cell(0, 0): Card(oak, 2), Cell(1, 0): Card(oak, 3), Cell(2, 0): Card(oak, 4)})
    hand = (Card(oak, 5), Card(oak, 6), *(Card(s, 1) for s in others[:6]))
    arbs = list(view.arboretums)
    arbs[view.seat] = arb
    view = dataclasses.replace(
        view,
        arboretums=tuple(arbs),
        hand=hand,
        hand_sizes=tuple(len(hand) if s == view.seat else n for s, n in enumerate(view.hand_sizes)),
        known_cards=tuple(() for _ in view.known_cards),
        discard_piles=tuple(() for _ in view.discard_piles),
        deck_size=20,
    )
    decision = ExpertBot(compute="fixed", endgame_deck=0).choose(view)  # the heuristic alone
    assert isinstance(decision, Play)
    assert decision.discard not in (Card(oak, 5), Card(oak, 6)), decision
    if decision.card.species is oak:
        assert decision.cell == Cell(3, 0), decision


def second_draw_with_deck(deck: int) -> SeatView:
    """A real 2-player second draw with ``deck`` cards left and a card on some pile."""
    from .support import positions

    for seed in range(300):
        for view in positions(seed, 2):
            if (
                view.kind is DecisionKind.SECOND_DRAW
                and view.deck_size == deck
                and any(view.discard_piles)
            ):
                return view
    raise AssertionError(f"no second draw with {deck} deck cards found")


def test_it_keeps_the_last_turn_for_itself() -> None:
    """With 3 deck cards at its second draw, the deck leaves 2 (the opponent takes both and ends
    the game with one turn more than this seat), a pile leaves 3 (the opponent takes 2, this seat
    the last): valuing the last turn highly, it takes a pile."""
    view = second_draw_with_deck(3)
    pile = next(s for s, p in enumerate(view.discard_piles) if p)
    bot = ExpertBot(compute="fixed", simulations=4, tempo=100.0)
    assert bot._tempo(view, DECK) == -100.0
    assert bot._tempo(view, pile) == 0.0
    decision = bot.choose(view)
    assert isinstance(decision, Draw) and decision.source != DECK, decision
    # Far from the end (more than tempo_deck cards left after the turn) it plays no part.
    assert ExpertBot(tempo=100.0, tempo_deck=1)._tempo(view, DECK) == 0.0


def test_first_draw_counts_the_best_second_draw() -> None:
    """At a first draw with 4 deck cards: the deck then the deck leaves 2 (bad), the deck then a
    pile 3 (good), so the deck is not penalised; with 2, a pile leaves 1 or 2 whatever the second
    draw (the opponent ends the game), the deck lets the second draw end it; with 1 card left the
    deck ends the game on this turn, and a pile leaves it to the opponent unless the second draw
    takes it."""
    from .support import positions

    found = {}
    for seed in range(300):
        for view in positions(seed, 2):
            first = view.kind is DecisionKind.FIRST_DRAW
            if first and view.deck_size in (1, 2, 4) and any(view.discard_piles):
                found.setdefault(view.deck_size, view)
        if len(found) == 3:
            break
    bot = ExpertBot()  # tempo 2 by default
    pile = next(s for s, p in enumerate(found[4].discard_piles) if p)
    assert bot._tempo(found[4], DECK) == 0.0  # then a pile: 3 left, the last turn is ours
    assert bot._tempo(found[4], pile) == 0.0  # then the deck: 3 left
    assert bot._tempo(found[1], DECK) == 0.0  # the game ends on this turn
    pile = next(s for s, p in enumerate(found[1].discard_piles) if p)
    assert bot._tempo(found[1], pile) == 0.0  # the second draw may still take the deck
    pile = next(s for s, p in enumerate(found[2].discard_piles) if p)
    assert bot._tempo(found[2], pile) == -2.0
    assert bot._tempo(found[2], DECK) == 0.0
