"""Turn mechanics through ``GameState.apply`` (RULES.md "A turn" and "End of the game")."""

from __future__ import annotations

import pytest

from arboretum import (
    DECK,
    Card,
    Cell,
    DecisionKind,
    Draw,
    GameState,
    IllegalDecisionError,
    Play,
    ReplayRecorder,
    Rule,
)

from .layouts import assert_cards_conserved, build_state, cards, grid

HANDS_2P = [cards("OA1 OA2 OA3 JA1 JA2 MA1 MA2"), cards("OA4 OA5 OA6 JA3 JA4 MA3 MA4")]
ARBS_2P = [grid("WI1 WI2"), grid("WI3 WI4")]


def first_draw_position(
    deck: list[Card], *, players: int = 2, seat: int = 0, filler: str = "piles"
) -> GameState:
    """Seat ``seat`` is about to draw; the deck holds exactly ``deck``."""
    if players == 2:
        hands, arbs = HANDS_2P, ARBS_2P if filler == "piles" else None
    else:
        hands = [
            cards("OA1 OA2 OA3 JA1 JA2 MA1 MA2"),
            cards("OA4 OA5 OA6 JA3 JA4 MA3 MA4"),
            cards("OA7 OA8 JA5 JA6 MA5 MA6 MA7"),
        ]
        arbs = [grid("WI1 WI2"), grid("WI3 WI4"), grid("WI5")]
    return build_state(
        players,
        hands,
        arbs=arbs,
        deck=deck,
        filler=filler,
        kind=DecisionKind.FIRST_DRAW,
        current_seat=seat,
        last_turn=False,
    )


def snapshot(state: GameState) -> tuple[object, ...]:
    return (
        state.deck,
        tuple(state.view(s) for s in range(state.players)),
        state.decision_kind,
        state.current_seat,
        state.turn,
    )


def top(state: GameState, seat: int) -> Card:
    return state.discard_pile(seat)[-1]


# --------------------------------------------------------------------------- ordinary turns


def test_a_turn_is_draw_draw_play_then_the_next_seat() -> None:
    state = GameState.new(3, 11)
    first_hand = state.hand(0)
    top_of_deck = state.deck[:2]
    assert state.apply(Draw(DECK)) is top_of_deck[0]
    assert state.decision_kind is DecisionKind.SECOND_DRAW and state.current_seat == 0
    assert state.hand_sizes() == (8, 7, 7)
    assert state.apply(Draw(DECK)) is top_of_deck[1]
    assert state.decision_kind is DecisionKind.PLAY and state.discard_required
    assert state.hand_sizes() == (9, 7, 7)
    hand = state.hand(0)
    assert sorted(hand) == sorted([*first_hand, *top_of_deck])
    assert state.apply(Play(hand[0], Cell(0, 0), top_of_deck[1])) is None
    assert dict(state.arboretum(0)) == {Cell(0, 0): hand[0]}
    assert state.discard_pile(0) == (top_of_deck[1],)  # a card just drawn may be discarded
    assert state.hand_sizes() == (7, 7, 7)
    assert (state.current_seat, state.turn, state.decision_kind) == (1, 1, DecisionKind.FIRST_DRAW)
    assert state.deck_size == 43 - 2


def test_seats_move_in_order_and_wrap_around() -> None:
    state = GameState.new(3, 5)
    for turn in range(7):
        assert state.current_seat == turn % 3 and state.turn == turn
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        state.apply(state.fallback_decision())


def test_both_draws_may_come_from_the_same_pile_top_first() -> None:
    state = GameState.new(2, 3)
    # Turn 0 (seat 0) and turn 1 (seat 1) each discard one card onto their own pile.
    for _ in range(2):
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        state.apply(state.fallback_decision())
    state.apply(Draw(DECK))
    state.apply(Draw(DECK))
    state.apply(state.fallback_decision())
    # Seat 1 now has a pile of one card and seat 0 a pile of two.
    pile0 = state.discard_pile(0)
    assert len(pile0) == 2
    assert state.current_seat == 1
    assert state.apply(Draw(0)) is pile0[1]
    assert state.apply(Draw(0)) is pile0[0]
    assert state.discard_pile(0) == ()
    assert set(pile0) <= set(state.hand(1))
    assert set(state.known_cards(1)) == set(pile0)
    # A player may also draw from their own pile.
    state.apply(state.fallback_decision())
    for _ in range(2):
        state.apply(Draw(DECK))
    state.apply(state.fallback_decision())
    assert state.current_seat == 1
    own_top = top(state, 1)
    assert state.apply(Draw(1)) is own_top


def test_placement_needs_an_orthogonal_neighbour() -> None:
    state = GameState.new(2, 8)
    for _ in range(2):  # seat 0 then seat 1 play their first card at the origin
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        hand = state.hand(state.current_seat)
        state.apply(Play(hand[0], Cell(0, 0), hand[1]))
    state.apply(Draw(DECK))
    state.apply(Draw(DECK))
    hand = state.hand(0)
    legal_cells = set(state.legal_decisions().cell_options())
    assert legal_cells == {Cell(1, 0), Cell(-1, 0), Cell(0, 1), Cell(0, -1)}
    state.apply(Play(hand[0], Cell(0, -1), hand[1]))
    assert set(state.arboretum(0)) == {Cell(0, 0), Cell(0, -1)}


# --------------------------------------------------------------------------- the last turn


def test_game_ends_when_the_last_deck_card_is_drawn_second() -> None:
    deck = cards("BS1 BS2")
    state = first_draw_position(deck)
    other_hand, other_pile = state.hand(1), state.discard_pile(1)
    assert state.apply(Draw(DECK)) in deck
    assert state.deck_size == 1 and not state.last_turn
    assert state.decision_kind is DecisionKind.SECOND_DRAW
    assert state.apply(Draw(DECK)) in deck
    assert state.deck_size == 0 and state.last_turn
    # The drawer finishes the turn normally, discard included ...
    assert state.decision_kind is DecisionKind.PLAY and state.discard_required
    assert state.view(0).last_turn and state.view(1).last_turn
    hand = state.hand(0)
    turn = state.turn
    state.apply(Play(hand[0], Cell(2, 0), hand[1]))
    # ... and then the game is over: nobody else moves.
    assert state.is_over and state.decision_kind is DecisionKind.GAME_OVER
    assert state.current_seat == 0 and state.turn == turn
    assert state.hand_sizes() == (7, 7)
    assert state.hand(1) == other_hand and state.discard_pile(1) == other_pile
    assert len(state.legal_decisions()) == 0
    for decision in (Draw(DECK), Draw(1), Play(hand[2], Cell(3, 0), hand[3])):
        with pytest.raises(IllegalDecisionError) as info:
            state.apply(decision)
        assert info.value.rule is Rule.GAME_OVER
    assert_cards_conserved(state)
    state.result()


def test_last_card_drawn_by_a_middle_seat_ends_the_game_for_everyone() -> None:
    state = first_draw_position(cards("BS1"), players=3, seat=1)
    before = [state.hand(0), state.hand(2)]
    state.apply(Draw(1))  # the top of its own pile
    state.apply(Draw(DECK))  # the last deck card
    assert state.last_turn and state.decision_kind is DecisionKind.PLAY
    hand = state.hand(1)
    state.apply(Play(hand[0], Cell(2, 0), hand[1]))
    assert state.is_over and state.current_seat == 1
    assert [state.hand(0), state.hand(2)] == before
    assert state.hand_sizes() == (7, 7, 7)


def test_last_deck_card_as_first_draw_forces_a_pile_for_the_second() -> None:
    state = first_draw_position(cards("BS1"))
    assert state.apply(Draw(DECK)) is Card.parse("BS1")
    assert state.deck_size == 0 and state.last_turn
    assert state.decision_kind is DecisionKind.SECOND_DRAW
    # The deck is no longer a source; both (non-empty) piles are.
    assert list(state.legal_decisions()) == [Draw(0), Draw(1)]
    assert state.view(0).legal_decisions().sources == state.legal_decisions().sources
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError) as info:
        state.apply(Draw(DECK))
    assert info.value.rule is Rule.EMPTY_SOURCE
    assert snapshot(state) == before
    expected = top(state, 1)
    assert state.apply(Draw(1)) is expected
    assert state.decision_kind is DecisionKind.PLAY and state.discard_required
    hand = state.hand(0)
    state.apply(Play(hand[0], Cell(-1, 0), hand[1]))
    assert state.is_over and state.hand_sizes() == (7, 7)


def test_second_draw_is_skipped_when_no_source_is_left() -> None:
    # Deck of one card, every discard pile empty: the other 33 cards are in the arboretums.
    state = first_draw_position(cards("BS1"), filler="arboretums")
    assert all(state.discard_pile(s) == () for s in range(2))
    assert state.apply(Draw(DECK)) is Card.parse("BS1")
    # No second draw: straight to the play, without a discard.
    assert state.decision_kind is DecisionKind.PLAY
    assert state.discard_required is False
    assert state.view(0).discard_required is False and state.view(1).discard_required is False
    assert state.hand_sizes() == (8, 7)
    hand = state.hand(0)
    legal = state.legal_decisions()
    assert len(legal) == len(hand) * len(legal.cell_options())
    assert all(d.discard is None for d in legal)  # type: ignore[union-attr]
    cell = legal.cell_options()[0]
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError) as info:
        state.apply(Play(hand[0], cell, hand[1]))
    assert info.value.rule is Rule.DISCARD_NOT_ALLOWED
    assert snapshot(state) == before
    state.apply(Play(hand[0], cell, None))
    assert state.is_over
    assert state.hand_sizes() == (7, 7)
    assert state.discard_pile(0) == ()
    assert_cards_conserved(state)


def test_skipped_second_draw_is_recorded_without_discard() -> None:
    state = first_draw_position(cards("BS1"), filler="arboretums")
    recorder = ReplayRecorder(state, match_id="t", seats=["a", "b"])
    recorder.apply(Draw(DECK))
    hand = state.hand(0)
    recorder.apply(Play(hand[0], state.legal_decisions().cell_options()[0], None))
    assert [s["kind"] for s in recorder.steps] == ["draw", "play"]
    assert recorder.steps[-1]["discard"] is None
    assert state.events()[-1].discard is None  # type: ignore[union-attr]


def test_fallback_decision_in_the_last_turn() -> None:
    state = first_draw_position(cards("BS1"))
    assert state.fallback_decision() == Draw(DECK)
    state.apply(state.fallback_decision())
    assert state.fallback_decision() == Draw(0)  # lowest non-empty pile; the deck is empty
    state.apply(state.fallback_decision())
    state.apply(state.fallback_decision())
    assert state.is_over
