"""Turn planning on determinized states (arboretum_sdk.bots.planning): the policy's moves are legal
in every phase and player count, it makes the plays and draws a path asks for, the plain margin is
that of scoring the candidate at once, and expert plays whole games with it, deterministically."""

from __future__ import annotations

import dataclasses
import random

import pytest

from arboretum import DECK, Arboretum, Card, Cell, DecisionKind, Draw, SeatView, derive_game_seed
from arboretum.scoring import final_totals
from arboretum_sdk.bots.expert import ExpertBot
from arboretum_sdk.bots.planning import TurnPlanner
from arboretum_sdk.local import play_game

from .support import positions


def late_views(players: int, count: int) -> list[SeatView]:
    found = []
    for seed in range(300):
        for view in positions(seed, players):
            if view.my_turn and 0 < view.deck_size <= 12:
                found.append(view)
                if len(found) >= count:
                    return found
    raise AssertionError("no late positions found")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_policy_plays_legally_to_the_end(players: int) -> None:
    """Every move of the policy passes the engine's validation (apply), from late positions of
    every kind to the end of the game."""
    moves = 0
    for view in late_views(players, 6):
        planner = TurnPlanner(view, replies=-1)
        det = view.determinize(random.Random(1))
        for decision in list(view.legal_decisions())[:4]:
            sim = det.copy()
            sim.apply(decision)
            planner.play_on(sim, sim.apply)  # apply raises on an illegal move
            moves += len(sim.events()) - 1
            assert sim.is_over
    assert moves > 0


def test_without_planning_the_margin_is_the_candidate_scored_at_once() -> None:
    for view in late_views(2, 8):
        planner = TurnPlanner(view, finish=False, replies=0)
        det = view.determinize(random.Random(2))
        for decision in view.legal_decisions()[:6]:
            sim = det.copy()
            sim.push(decision)
            totals = final_totals(sim)
            plain = totals[view.seat] - max(t for s, t in enumerate(totals) if s != view.seat)
            assert planner.margin(det, decision) == plain
            assert det.deck_size == view.deck_size, "the determinization is left as it was"


def _with(
    view: SeatView,
    *,
    arbs: dict[int, dict[Cell, Card]],
    hand: tuple[Card, ...],
    piles: dict[int, tuple[Card, ...]],
    kind: DecisionKind,
) -> SeatView:
    """``view`` with these arboretums, hand and piles, the deck and the other hands sized so that
    the hidden cards add up (each opponent holds 7 unseen cards)."""
    arboretums = tuple(Arboretum(arbs.get(s, {})) for s in range(view.players))
    pile_cards = tuple(piles.get(s, ()) for s in range(view.players))
    seen = {c.id for c in hand} | {c.id for a in arboretums for c in a.values()}
    seen |= {c.id for p in pile_cards for c in p}
    unseen = 8 * len(view.species) - len(seen)
    sizes = tuple(len(hand) if s == view.seat else 7 for s in range(view.players))
    return dataclasses.replace(
        view,
        kind=kind,
        current_seat=view.seat,
        arboretums=arboretums,
        hand=hand,
        hand_sizes=sizes,
        discard_piles=pile_cards,
        known_cards=tuple(() for _ in range(view.players)),
        deck_size=unseen - 7 * (view.players - 1),
        discard_required=True,
        last_turn=False,
    )


def test_the_policy_draws_and_plays_the_card_that_extends_its_row() -> None:
    """Oak 2-3-4 in a row and an Oak 5 on the opponent's pile: the policy draws it (not the
    deck), then plays it beside the row's Oak 4, and the planned draw is worth more than the same
    draw scored at once."""
    view = next(v for v in positions(4) if v.seat == 0 and v.my_turn)
    oak, *others = view.species
    row = {Cell(0, 0): Card(oak, 2), Cell(1, 0): Card(oak, 3), Cell(2, 0): Card(oak, 4)}
    hand = (Card(oak, 6), *(Card(s, v) for s in others[:3] for v in (1, 2)))
    view = _with(
        view,
        arbs={0: row, 1: {Cell(0, 0): Card(others[4], 3)}},
        hand=hand,
        piles={1: (Card(oak, 5),)},
        kind=DecisionKind.FIRST_DRAW,
    )
    planner = TurnPlanner(view, replies=0)
    rng = random.Random(3)
    det = view.determinize(rng)
    while det.deck[0].species is oak:  # the second draw (the deck's top) is no other Oak
        det = view.determinize(rng)
    assert planner.policy(det) == Draw(1)
    sim = det.copy()
    sim.push(Draw(1))
    sim.push(Draw(DECK))
    play = planner.policy(sim)
    assert play.card == Card(oak, 5) and play.cell in (Cell(3, 0), Cell(2, 1), Cell(2, -1)), play
    assert play.discard != Card(oak, 6), play
    plain = TurnPlanner(view, finish=False, replies=0)
    assert planner.margin(det, Draw(1)) > plain.margin(det, Draw(1))


def test_a_reply_takes_the_discard_that_extends_the_opponents_row() -> None:
    """The opponent has Oak 2-3-4 in a row; after a play that discards the Oak 5, the opponent's
    reply takes it from the pile and plays it beside its Oak 4: the margin of that play
    falls by the 5 points the opponent's row gains."""
    view = next(v for v in positions(4) if v.seat == 0 and v.my_turn)
    oak, *others = view.species
    row = {Cell(0, 0): Card(oak, 2), Cell(1, 0): Card(oak, 3), Cell(2, 0): Card(oak, 4)}
    hand = (Card(oak, 5), *(Card(s, v) for s in others[:3] for v in (1, 2)), Card(others[3], 4))
    view = _with(
        view,
        arbs={0: {Cell(0, 0): Card(others[4], 3)}, 1: row},
        hand=hand,
        piles={},
        kind=DecisionKind.PLAY,
    )
    det = view.determinize(random.Random(4))
    legal = view.legal_decisions()
    discard_oak = next(d for d in legal if d.discard == Card(oak, 5))
    planner = TurnPlanner(view, replies=1)
    sim = det.copy()
    sim.push(discard_oak)
    assert planner.policy(sim) == Draw(0)
    sim.push(Draw(0))
    sim.push(planner.policy(sim))
    planner.live = planner.tables
    play = planner.policy(sim)
    assert play.card == Card(oak, 5) and play.cell in (Cell(3, 0), Cell(2, 1), Cell(2, -1)), play
    # Oak 2-3-4 (3 points) becomes Oak 2-3-4-5 (8), the right to score it theirs.
    plain = TurnPlanner(view, finish=False, replies=0)
    assert planner.margin(det, discard_oak) <= plain.margin(det, discard_oak) - 5


@pytest.mark.parametrize("players", [2, 3])
def test_expert_with_planning_plays_whole_games_and_repeats_itself(players: int) -> None:
    seed = derive_game_seed(31, players)

    def bots() -> list[ExpertBot]:
        return [
            ExpertBot(s, compute="fixed", simulations=3, playout_deck=6) for s in range(players)
        ]

    first, second = play_game(bots(), seed), play_game(bots(), seed)  # apply() validates
    assert first.totals == second.totals and first.ranks == second.ranks
