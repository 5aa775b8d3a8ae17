"""``LegalDecisions``: the lazy sequence of options agrees with itself, with ``apply`` and with the
rules, counted independently."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arboretum import (
    DECK,
    Card,
    Cell,
    DecisionKind,
    Draw,
    GameState,
    IllegalDecisionError,
    LegalDecisions,
    Play,
    random_decision,
)

from .layouts import (
    advance_random,
    build_state,
    cards,
    cards_in,
    neighbours,
    species_cards,
    visible_to,
)

settings_games = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def deck_turns(state: GameState, turns: int) -> GameState:
    """Play ``turns`` turns that draw twice from the deck and play the fallback decision."""
    for _ in range(turns):
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        state.apply(state.fallback_decision())
    return state


def expected_cells(state: GameState) -> set[Cell]:
    arb = state.arboretum(state.current_seat)
    if not arb:
        return {Cell(0, 0)}
    return {n for c in arb for n in neighbours(c) if n not in arb}


def expected_options(state: GameState) -> set[object]:
    """Every legal decision, enumerated from the rules and the public accessors."""
    seat = state.current_seat
    if state.decision_kind is DecisionKind.PLAY:
        hand = state.hand(seat)
        if state.discard_required:
            return {
                Play(card, cell, discard)
                for card in hand
                for cell in expected_cells(state)
                for discard in hand
                if discard is not card
            }
        return {Play(card, cell, None) for card in hand for cell in expected_cells(state)}
    if state.decision_kind is DecisionKind.GAME_OVER:
        return set()
    sources = [DECK] if state.deck_size else []
    sources += [s for s in range(state.players) if state.discard_pile(s)]
    return {Draw(s) for s in sources}


def check_sequence(legal: LegalDecisions, state: GameState, *, full_index: bool) -> None:
    options = list(legal)
    assert len(options) == len(legal)
    assert len(set(options)) == len(options), "duplicate options"
    assert set(options) == expected_options(state)
    for i, option in enumerate(options):
        assert legal[i] == option
        assert legal[i - len(options)] == option
        assert option in legal
    assert legal[1:4] == options[1:4]
    if full_index or len(options) < 50:
        assert all(legal.index(o) == i for i, o in enumerate(options))
    else:
        rng = random.Random(len(options))
        for i in rng.sample(range(len(options)), 20):
            assert legal.index(options[i]) == i
    for bad in (len(options), len(options) + 5):
        with pytest.raises(IndexError):
            legal[bad]


def test_play_count_is_hand_times_cells_times_discards() -> None:
    state = GameState.new(2, 21)
    rng = random.Random(2)
    # Advance to seat 0's third play, so the arboretum has several cards.
    while not (state.turn >= 4 and state.decision_kind is DecisionKind.PLAY):
        state.apply(random_decision(state, rng))
    legal = state.legal_decisions()
    h = len(state.hand(state.current_seat))
    cells = len(expected_cells(state))
    assert h == 9
    assert len(legal) == h * cells * (h - 1)
    assert legal.kind is DecisionKind.PLAY
    assert set(legal.cards()) == set(state.hand(state.current_seat))
    assert set(legal.cell_options()) == expected_cells(state)
    assert list(legal.cell_options()) == sorted(legal.cell_options())
    check_sequence(legal, state, full_index=False)


def test_first_play_goes_to_the_origin_only() -> None:
    state = GameState.new(3, 2)
    state.apply(Draw(DECK))
    state.apply(Draw(DECK))
    legal = state.legal_decisions()
    assert legal.cell_options() == (Cell(0, 0),)
    assert len(legal) == 9 * 1 * 8
    check_sequence(legal, state, full_index=True)


def test_draw_options() -> None:
    state = GameState.new(3, 2)
    assert list(state.legal_decisions()) == [Draw(DECK)]
    check_sequence(state.legal_decisions(), state, full_index=True)
    deck_turns(state, 3)  # every pile now holds one card
    assert state.decision_kind is DecisionKind.FIRST_DRAW
    assert list(state.legal_decisions()) == [Draw(DECK), Draw(0), Draw(1), Draw(2)]
    check_sequence(state.legal_decisions(), state, full_index=True)


def test_skipped_discard_count_is_hand_times_cells() -> None:
    state = build_state(
        2,
        [cards("OA1 OA2 OA3 OA4 OA5 OA6 OA7"), cards("JA1 JA2 JA3 JA4 JA5 JA6 JA7")],
        deck=cards("MA1"),
        filler="arboretums",
        kind=DecisionKind.FIRST_DRAW,
        last_turn=False,
    )
    state.apply(Draw(DECK))
    legal = state.legal_decisions()
    assert len(legal) == 8 * len(expected_cells(state))
    check_sequence(legal, state, full_index=True)


@pytest.mark.parametrize(("turns", "draws"), [(0, 0), (3, 0), (0, 2), (3, 2)])
def test_index_below_minus_len_raises_index_error(turns: int, draws: int) -> None:
    # Sequence semantics: valid indices are -len .. len-1, anything else is an IndexError.
    # (0, 0): one draw option; (3, 0): four (every pile filled); (x, 2): play options.
    state = deck_turns(GameState.new(3, 2), turns)
    for _ in range(draws):
        state.apply(Draw(DECK))
    legal = state.legal_decisions()
    n = len(legal)
    assert n >= 1
    assert legal[-n] == legal[0]
    for bad in (-n - 1, -2 * n, -n - 3):
        with pytest.raises(IndexError):
            legal[bad]


def test_game_over_has_no_options() -> None:
    state = build_state(2, [[], []])
    legal = state.legal_decisions()
    assert len(legal) == 0 and list(legal) == []
    assert Draw(DECK) not in legal
    with pytest.raises(IndexError):
        legal[0]


@settings_games
@given(st.sampled_from([2, 3, 4]), st.integers(0, 2**64 - 1), st.integers(0, 300))
def test_legal_decisions_agree_with_the_rules_and_with_the_view(
    players: int, seed: int, steps: int
) -> None:
    state = advance_random(GameState.new(players, seed), random.Random(seed ^ 1), steps)
    legal = state.legal_decisions()
    check_sequence(legal, state, full_index=False)
    seat = state.current_seat
    if not state.is_over:
        # The seat's own view offers the same options in the same order.
        mine = state.view(seat).legal_decisions()
        assert list(mine) == list(legal)
        for other in range(players):
            if other != seat:
                assert len(state.view(other).legal_decisions()) == 0
    # Every option applies legally (a sample, for large play sets).
    rng = random.Random(steps)
    picks = (
        list(legal) if len(legal) <= 30 else [legal[rng.randrange(len(legal))] for _ in range(30)]
    )
    for option in picks:
        copy = state.copy()
        copy.apply(option)


@settings_games
@given(
    st.sampled_from([2, 3, 4]),
    st.integers(0, 2**64 - 1),
    st.integers(0, 300),
    st.randoms(use_true_random=False),
)
def test_apply_accepts_exactly_the_legal_options(
    players: int, seed: int, steps: int, rng: random.Random
) -> None:
    """Random candidate decisions, legal or not: ``apply`` succeeds iff the decision is ``in`` the
    legal options; a refusal changes nothing and shows no card the seat cannot see."""
    state = advance_random(GameState.new(players, seed), random.Random(seed), steps)
    if state.is_over:
        return
    legal = state.legal_decisions()
    seat = state.current_seat
    pool = species_cards(state.species)
    hand = list(state.hand(seat))
    for _ in range(25):
        if state.decision_kind is DecisionKind.PLAY:
            card = rng.choice(hand) if rng.random() < 0.8 else rng.choice(pool)
            discard: Card | None = rng.choice([*hand, *pool[:3], None])
            cell = Cell(rng.randint(-3, 3), rng.randint(-3, 3))
            decision: Draw | Play = Play(card, cell, discard)
        else:
            decision = Draw(rng.randint(-1, players))
        copy = state.copy()
        before = copy.view(seat)
        try:
            copy.apply(decision)
        except IllegalDecisionError as error:
            assert decision not in legal, (decision, error)
            assert copy.view(seat) == before
            named = {
                c
                for c in (getattr(decision, "card", None), getattr(decision, "discard", None))
                if c
            }
            assert cards_in(str(error)) <= visible_to(state, seat) | named
        else:
            assert decision in legal, decision


def test_push_trusts_engine_decisions_like_apply() -> None:
    a, b = GameState.new(4, 77), GameState.new(4, 77)
    rng = random.Random(5)
    while not a.is_over:
        decision = random_decision(a, rng)
        assert a.apply(decision) == b.push(decision)
    assert b.is_over
    assert a.result() == b.result()
