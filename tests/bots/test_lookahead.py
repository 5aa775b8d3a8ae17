"""The built-in lookahead bot: a legal answer for every decision kind, whole games with 2 to 4
players, deterministic, and the one-ply choices it promises."""

from __future__ import annotations

import random

import pytest

from arboretum import Draw, Play, derive_game_seed
from arboretum_sdk.bots.lookahead import LookaheadBot
from arboretum_sdk.loader import builtin_bots, load_bot
from arboretum_sdk.local import play_game

from .support import kind_of, sample_positions

KINDS = ("first-draw", "second-draw", "play", "play-no-discard")


@pytest.fixture(scope="module")
def views() -> dict[str, list]:
    return sample_positions(per_kind=6)


def test_lookahead_is_a_builtin() -> None:
    assert "lookahead" in builtin_bots()
    assert isinstance(load_bot("lookahead"), LookaheadBot)


@pytest.mark.parametrize("kind", KINDS)
def test_lookahead_answers_legally(views: dict[str, list], kind: str) -> None:
    bot = LookaheadBot()
    for view in views[kind]:
        assert kind_of(view) == kind
        decision = bot.choose(view)
        assert decision in view.legal_decisions(), f"{decision} is not legal in {kind}"
        view.determinize(random.Random(0)).apply(decision)  # the engine agrees
        assert bot.choose(view) == decision, "the same view, the same decision"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_lookahead_plays_whole_games(players: int) -> None:
    result = play_game([LookaheadBot() for _ in range(players)], derive_game_seed(8, players))
    assert len(result.totals) == players  # play_game applies (and validates) every answer


def test_a_discard_that_extends_the_next_players_path_is_avoided(views: dict[str, list]) -> None:
    """Over many positions, the discards it picks help the next player less than the average
    discard would (its deny term at work), and it never discards the card it plays."""
    from arboretum_sdk.bots.lookahead import view_cells
    from arboretum_sdk.bots.paths import PathTable

    bot = LookaheadBot()
    chosen = mean = 0.0
    count = 0
    for view in sample_positions(per_kind=30)["play"]:
        decision = bot.choose(view)
        assert isinstance(decision, Play) and decision.discard is not None
        assert decision.discard != decision.card
        nxt = (view.seat + 1) % view.players
        table = PathTable(view_cells(view, nxt), [s.index for s in view.species])
        ones = [1.0] * 10
        rest = [c for c in view.hand if c != decision.card]
        gains = {c: table.best_gain(c.id, ones)[0] for c in rest}
        chosen += gains[decision.discard]
        mean += sum(gains.values()) / len(gains)
        count += 1
    assert count >= 20
    assert chosen < mean, (chosen / count, mean / count)


def test_a_draw_takes_a_pile_top_that_completes_a_path(views: dict[str, list]) -> None:
    """When the top of a pile extends its path by much, it takes it rather than the deck."""
    from dataclasses import replace

    from arboretum import Arboretum, Card, Cell, Species

    view = views["first-draw"][0]
    oak = Species.OAK if Species.OAK in view.species else view.species[0]
    arb = Arboretum({Cell(0, 0): Card(oak, 2), Cell(1, 0): Card(oak, 3), Cell(2, 0): Card(oak, 4)})
    other = 1 - view.seat if view.players == 2 else (view.seat + 1) % view.players
    piles = list(view.discard_piles)
    piles[other] = (Card(oak, 5),)
    arbs = list(view.arboretums)
    arbs[view.seat] = arb
    hand = tuple(c for c in view.hand if c.species is not oak)
    view = replace(
        view,
        arboretums=tuple(arbs),
        discard_piles=tuple(piles),
        hand=hand,
        hand_sizes=tuple(len(hand) if s == view.seat else n for s, n in enumerate(view.hand_sizes)),
        known_cards=tuple(() for _ in view.known_cards),
    )
    assert LookaheadBot().choose(view) == Draw(other)
