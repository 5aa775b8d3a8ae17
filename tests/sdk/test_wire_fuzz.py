"""Never trust a message: arbitrary decisions and mutated views raise WireError or decode cleanly.

A decoded decision then goes to the engine, which accepts it or raises IllegalDecisionError: no
other exception can come out of a bot's answer.
"""

from __future__ import annotations

import contextlib
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arboretum import DecisionKind, GameState, IllegalDecisionError, SeatView, random_decision
from arboretum_proto.v1 import common_pb2, game_pb2
from arboretum_sdk import wire
from arboretum_sdk.wire import WireError

u32 = st.integers(0, 2**32 - 1)
s32 = st.integers(-(2**31), 2**31 - 1)
cards = st.builds(
    common_pb2.Card, species=st.integers(0, 2**31 - 1) | st.integers(0, 11), value=u32
)
small_cards = st.builds(common_pb2.Card, species=st.integers(0, 11), value=st.integers(0, 9))
cells = st.builds(common_pb2.Cell, x=s32 | st.integers(-3, 3), y=s32 | st.integers(-3, 3))
sources = st.one_of(
    st.just(common_pb2.DrawSource()),
    st.just(common_pb2.DrawSource(deck=common_pb2.Deck())),
    st.builds(common_pb2.DrawSource, discard_seat=u32 | st.integers(0, 3)),
)


@st.composite
def decisions(draw: Any) -> common_pb2.Decision:
    which = draw(st.sampled_from(["none", "first_draw", "second_draw", "play"]))
    msg = common_pb2.Decision()
    if which in ("first_draw", "second_draw"):
        getattr(msg, which).CopyFrom(draw(sources))
    elif which == "play":
        play = msg.play
        if draw(st.booleans()):
            play.card.CopyFrom(draw(cards | small_cards))
        if draw(st.booleans()):
            play.cell.CopyFrom(draw(cells))
        if draw(st.booleans()):
            play.discard.CopyFrom(draw(cards | small_cards))
    return msg


def _states() -> list[GameState]:
    out = []
    rng = random.Random(5)
    for steps in (0, 1, 2, 14):
        state = GameState.new(2, 3)
        for _ in range(steps):
            state.apply(random_decision(state, rng))
        out.append(state)
    return out


STATES = _states()


@settings(max_examples=600, deadline=None)
@given(decisions(), st.integers(0, len(STATES) - 1))
def test_any_decision_is_malformed_illegal_or_applied(pb: common_pb2.Decision, index: int) -> None:
    state = STATES[index].copy()
    kind = state.decision_kind
    required = state.discard_required if kind is DecisionKind.PLAY else None
    try:
        decision = wire.decision_from_pb(pb, kind, discard_required=required)
    except WireError:
        return
    with contextlib.suppress(IllegalDecisionError):
        state.apply(decision)


def _mutate(msg: Any, rng: random.Random) -> None:
    """One random change somewhere in the message tree."""
    fields = list(msg.DESCRIPTOR.fields)
    rng.shuffle(fields)
    for f in fields:
        if f.is_repeated:
            items = getattr(msg, f.name)
            if not items:
                continue
            if f.message_type is not None:
                if rng.random() < 0.3:
                    del items[rng.randrange(len(items))]
                else:
                    _mutate(items[rng.randrange(len(items))], rng)
            else:
                items[rng.randrange(len(items))] = (
                    "x" if f.type == f.TYPE_STRING else rng.choice([0, 1, 5, 11, 2**31 - 1])
                )
            return
        if f.message_type is not None:
            if msg.HasField(f.name) and rng.random() < 0.8:
                _mutate(getattr(msg, f.name), rng)
            else:
                msg.ClearField(f.name)
            return
        if f.type == f.TYPE_BOOL:
            setattr(msg, f.name, not getattr(msg, f.name))
        elif f.type == f.TYPE_STRING:
            setattr(msg, f.name, "")
        elif f.type == f.TYPE_SINT32:
            setattr(msg, f.name, rng.choice([-(2**31), -1, 0, 1, 2, 2**31 - 1]))
        else:
            setattr(msg, f.name, rng.choice([0, 1, 2, 3, 7, 8, 9, 11, 2**31 - 1]))
        return


def test_mutated_views_raise_wire_error_or_decode() -> None:
    rng = random.Random(0)
    decoded = 0
    for i in range(1500):
        state = STATES[i % len(STATES)]
        good = wire.seat_view_to_pb(state.view(i % 2))
        pb = game_pb2.SeatView()
        pb.CopyFrom(good)
        for _ in range(rng.randint(1, 3)):
            _mutate(pb, rng)
        try:
            view = wire.seat_view_from_pb(pb, species=state.species)
        except WireError:
            continue
        decoded += 1
        assert isinstance(view, SeatView)
        view.legal_decisions()  # usable by a bot
    assert decoded < 1500


def _finished() -> GameState:
    state = GameState.new(3, 8)
    rng = random.Random(8)
    while not state.is_over:
        state.apply(random_decision(state, rng))
    return state


def test_mutated_results_game_starts_and_events_raise_wire_error_or_decode() -> None:
    from arboretum_proto.v1 import bot_pb2
    from arboretum_sdk.info import FaultPolicy, TimeControl

    rng = random.Random(1)
    done = _finished()
    result = wire.game_result_to_pb(done.result(), game_index=0, seed=8, turns=done.turn + 1)
    mid = STATES[-1]
    full = [
        mine if mine.seat == 0 else theirs
        for mine, theirs in zip(mid.events(seat=0), mid.events(seat=1), strict=True)
    ]
    start = bot_pb2.GameStart(
        setup=wire.game_setup_to_pb(
            game_index=0,
            game_count=1,
            species=mid.species,
            seat_names=["a", "b"],
            time_control=TimeControl(),
            fault_policy=FaultPolicy(),
        ),
        seat=0,
        view=wire.seat_view_to_pb(mid.view(0)),
        events=wire.EventEncoder().encode_all(full),
        resumed=True,
    )
    cases: list[tuple[Any, Any]] = [
        (result, wire.game_result_from_pb),
        (start, wire.game_start_from_pb),
        (bot_pb2.GameEnd(result=result), wire.game_end_from_pb),
    ]
    for original, decode in cases:
        for _ in range(700):
            pb = type(original)()
            pb.CopyFrom(original)
            for _ in range(rng.randint(1, 3)):
                _mutate(pb, rng)
            with contextlib.suppress(WireError):
                decode(pb)
