"""The built-in bots' shared pieces: PathTable's "what if" scoring is the engine's exact scoring,
and the right-to-score model's chances behave at their limits (known hands, the 8/1 rule)."""

from __future__ import annotations

import random
from dataclasses import replace

from arboretum import ALL_CARDS, Card, GameState, Species
from arboretum.scoring import best_path
from arboretum_sdk.bots.paths import OpponentModel, PathTable, opponent_chances, right_chances

from .support import sample_positions


def random_positions(count: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    states = []
    for game in range(count):
        state = GameState.new(2 + game % 3, rng.getrandbits(64))
        for _ in range(rng.randrange(10, 120)):
            if state.is_over:
                break
            legal = state.legal_decisions()
            state.push(legal[rng.randrange(len(legal))])
        states.append(state)
    return states


def test_path_table_scores_every_placement_as_the_engine_does() -> None:
    rng = random.Random(5)
    checked = 0
    for state in random_positions(60, seed=3):
        species = state._species_ids
        for seat in range(state.players):
            cells = dict(state._arbs[seat])
            table = PathTable(cells, species)
            for s in species:
                assert table.best[s] == best_path(cells, s)[0]
            placed = set(cells.values())
            for cell in table.free:
                for card in rng.sample([c for c in range(80) if c >> 3 in species], 12):
                    if card in placed:
                        continue
                    after = dict(cells)
                    after[cell] = card
                    gains = dict(table.gains(cell, card))
                    for s in species:
                        exact = best_path(after, s)[0]
                        assert max(table.best[s], table.through(cell, card, s)) == exact
                        assert gains.get(s, 0) == exact - table.best[s]
                        checked += 1
    assert checked > 10_000


def test_best_gain_finds_the_best_cell() -> None:
    for state in random_positions(20, seed=8):
        species = state._species_ids
        table = PathTable(dict(state._arbs[0]), species)
        weights = [1.0] * 10
        for card in range(0, 80, 7):
            if card >> 3 not in species or card in state._arbs[0].values():
                continue
            gain, cell = table.best_gain(card, weights)
            values = [sum(g for _, g in table.gains(c, card)) for c in table.free]
            assert gain == max([0.0, *values])
            assert cell in table.free
            if gain > 0:
                assert sum(g for _, g in table.gains(cell, card)) == gain


def board(
    mine: tuple[Card, ...], known: tuple[Card, ...], hidden: int, unseen: tuple[Card, ...]
) -> tuple[OpponentModel, int]:
    """The model of seat 0 holding ``mine`` against seat 1, which holds ``known`` (taken from a
    pile) plus ``hidden`` cards among ``unseen`` and the deck; every other card of oak and maple
    is on seat 0's pile. Returns (the model, the opponent's seat)."""
    base = sample_positions(1)["play"][0]
    oak, maple = Species.OAK, Species.MAPLE
    pile = tuple(
        c
        for c in ALL_CARDS
        if c.species in (oak, maple) and c not in mine + known and c not in unseen
    )
    view = replace(
        base,
        seat=0,
        current_seat=0,
        players=2,
        species=(oak, maple),
        hand=mine,
        known_cards=((), known),
        hand_sizes=(len(mine), len(known) + hidden),
        deck_size=len(unseen) - hidden,
        arboretums=(type(base.arboretums[0])(), type(base.arboretums[0])()),
        discard_piles=(pile, ()),
        forfeited=(False, False),
    )
    return OpponentModel(view), 1


def test_known_hands_give_certain_chances() -> None:
    """With the opponent's hand all known (taken from piles) and nothing unseen, the chance of
    the right is 1 or 0 by the totals, ties keeping it; the opponent's chance mirrors it."""
    oak, maple = Species.OAK, Species.MAPLE
    mine = (Card(oak, 5), Card(maple, 2))
    model, other = board(mine, (Card(oak, 4), Card(maple, 2), Card(maple, 3)), 0, ())
    assert not model.unseen_ids
    hand = [c.id for c in mine]
    chances = right_chances(hand, model)
    assert chances[oak.index] == 1.0 and chances[maple.index] == 0.0
    against = opponent_chances(hand, model, other)
    assert against[oak.index] == 0.0 and against[maple.index] == 1.0
    tie = right_chances([Card(oak, 4).id, Card(maple, 5).id], model)
    assert tie[oak.index] == 1.0 and tie[maple.index] == 1.0, "a tie keeps the right"


def test_unseen_cards_make_the_chances_uncertain() -> None:
    oak = Species.OAK
    unseen = (Card(oak, 6), Card(oak, 7), Card(Species.MAPLE, 8))
    model, _ = board((Card(oak, 5),), (), 1, unseen)
    chance = right_chances([Card(oak, 5).id], model)[oak.index]
    assert 0.0 < chance < 1.0
    assert right_chances([Card(oak, 5).id, Card(oak, 3).id], model)[oak.index] > chance


def test_the_eight_one_rule_in_expectation() -> None:
    """An 8 held while the opponent is known to hold its 1 counts nothing; holding the 1 makes
    the opponent's known 8 count nothing."""
    oak = Species.OAK
    model, other = board((), (Card(oak, 1),), 0, ())
    assert model.holds(Card(oak, 1).id, other) == 1.0
    # against their 1 alone: holding the 8 (worth 0 with their 1) is no better than a 1-less hand
    assert right_chances([Card(oak, 8).id], model)[oak.index] == 0.0
    assert right_chances([Card(oak, 2).id], model)[oak.index] == 1.0
    model, other = board((), (Card(oak, 8),), 0, ())
    assert right_chances([Card(oak, 1).id], model)[oak.index] == 1.0, "the 1 cancels their 8"
    assert right_chances([Card(oak, 7).id], model)[oak.index] == 0.0
