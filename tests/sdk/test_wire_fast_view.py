"""``wire.seat_view_from_pb`` decodes a well-formed view on a fast path (no field names, other seats
reused while unchanged) and falls back to the step-by-step decoder when a check fails. The fast path
must accept exactly what the step-by-step decoder accepts, with the same result."""

from __future__ import annotations

import random

import pytest

from arboretum import DecisionKind, GameState, Species, random_decision
from arboretum_proto.v1 import game_pb2
from arboretum_sdk import wire
from arboretum_sdk.wire import WireError
from arboretum_sdk.wire.views import _seat_view_checked, _seat_view_fast


def _compare(
    pb: game_pb2.SeatView,
    species: tuple[Species, ...],
    kind: DecisionKind | None,
    discard_required: bool | None,
) -> None:
    try:
        slow = _seat_view_checked(pb, species=species, kind=kind, discard_required=discard_required)
    except WireError:
        slow = None
    fast = _seat_view_fast(pb, species, kind, discard_required)
    if slow is None:
        assert fast is None
        with pytest.raises(WireError):
            wire.seat_view_from_pb(
                pb, species=species, kind=kind, discard_required=discard_required
            )
    else:
        assert fast == slow


def _mutated(pb: game_pb2.SeatView, rng: random.Random) -> game_pb2.SeatView:
    pb = game_pb2.SeatView.FromString(pb.SerializeToString())
    state = pb.board.seats[rng.randrange(len(pb.board.seats))]
    r = rng.randrange(10)
    if r == 0 and pb.hand:
        pb.hand[rng.randrange(len(pb.hand))].value = rng.choice([0, 1, 8, 9])
    elif r == 1 and pb.hand:
        pb.hand[rng.randrange(len(pb.hand))].species = rng.randrange(12)
    elif r == 2 and state.arboretum:
        state.arboretum[rng.randrange(len(state.arboretum))].cell.x += rng.choice([-1, 1])
    elif r == 3:
        state.hand_size += rng.choice([-1, 1])
    elif r == 4 and state.discard_pile:
        state.discard_pile.append(state.discard_pile[0])
    elif r == 5 and pb.hand:
        state.known_hand_cards.append(pb.hand[0])
    elif r == 6:
        state.seat = (state.seat + 1) % 5
    elif r == 7:
        pb.board.deck_size += 1
    elif r == 8 and state.arboretum:
        state.arboretum[rng.randrange(len(state.arboretum))].ClearField("cell")
    elif r == 9 and state.arboretum and state.discard_pile:
        state.discard_pile[0].CopyFrom(state.arboretum[0].card)
    return pb


@pytest.mark.parametrize("seed", range(6))
def test_fast_view_decoding_matches_the_checked_one(seed: int) -> None:
    rng = random.Random(seed)
    players = 2 + seed % 3
    state = GameState.new(players, seed)
    while not state.is_over:
        for seat in range(players):
            pb = wire.seat_view_to_pb(state.view(seat), bank_left_ms=[5] * players)
            kind = state.decision_kind if seat == state.current_seat else None
            required = state.discard_required if kind is DecisionKind.PLAY else None
            _compare(pb, state.species, kind, required)
            _compare(_mutated(pb, rng), state.species, kind, required)
            if rng.random() < 0.05:
                other = rng.choice([DecisionKind.FIRST_DRAW, DecisionKind.PLAY])
                _compare(pb, state.species, other, rng.choice([True, False]))
        state.apply(random_decision(state.view(state.current_seat), rng))
