"""Seat views, public events and determinization (RULES.md "Public and hidden information")."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arboretum import (
    DECK,
    Arboretum,
    Card,
    Cell,
    DecisionKind,
    DeterminizationError,
    Draw,
    DrawEvent,
    ForfeitEvent,
    GameState,
    Play,
    PlayEvent,
    SeatView,
    determinize,
    random_decision,
)

from .layouts import (
    advance_random,
    assert_cards_conserved,
    cards_in,
    play_random_game,
    species_cards,
    visible_to,
)

game_settings = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def cards_reachable(obj: object) -> Iterator[Card]:
    """Every Card object held anywhere inside a view."""
    if isinstance(obj, Card):
        yield obj
    elif isinstance(obj, Arboretum):
        for cell, card in obj.items():
            yield from cards_reachable(cell)
            yield card
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            yield from cards_reachable(getattr(obj, f.name))
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from cards_reachable(item)


def known_from_public_events(state: GameState) -> list[set[Card]]:
    """Cards publicly known to be in each hand, rebuilt from the spectator's event history."""
    known: list[set[Card]] = [set() for _ in range(state.players)]
    for event in state.events(None):
        if isinstance(event, DrawEvent) and event.source != DECK:
            assert event.card is not None
            known[event.seat].add(event.card)
        elif isinstance(event, PlayEvent):
            known[event.seat].discard(event.card)
            if event.discard is not None:
                known[event.seat].discard(event.discard)
    return known


def random_position(players: int, seed: int, steps: int) -> GameState:
    return advance_random(GameState.new(players, seed), random.Random(seed + 1), steps)


# --------------------------------------------------------------------------- views


@game_settings
@given(st.sampled_from([2, 3, 4]), st.integers(0, 2**64 - 1), st.integers(0, 400))
def test_view_holds_own_hand_and_public_information_only(
    players: int, seed: int, steps: int
) -> None:
    state = random_position(players, seed, steps)
    known = known_from_public_events(state)
    for seat in range(players):
        view = state.view(seat)
        assert view.seat == seat and view.players == players and view.species == state.species
        assert view.hand == state.hand(seat)
        assert view.arboretum == state.arboretum(seat)
        assert view.arboretums == tuple(state.arboretum(s) for s in range(players))
        assert view.discard_piles == tuple(state.discard_pile(s) for s in range(players))
        assert view.deck_size == state.deck_size
        assert view.hand_sizes == state.hand_sizes()
        assert [set(k) for k in view.known_cards] == known
        assert all(set(k) <= set(state.hand(s)) for s, k in enumerate(view.known_cards))
        assert (view.turn, view.current_seat, view.kind) == (
            state.turn,
            state.current_seat,
            state.decision_kind,
        )
        assert view.discard_required == state.discard_required
        assert view.last_turn == state.last_turn
        assert view.my_turn == (seat == state.current_seat and not state.is_over)
        visible = visible_to(state, seat)
        assert set(cards_reachable(view)) <= visible
        assert cards_in(repr(view)) <= visible
        # The unseen cards are exactly the deck plus the unknown parts of the other hands.
        unseen = set(state.deck)
        for other in range(players):
            if other != seat:
                unseen |= set(state.hand(other)) - known[other]
        assert set(view.unseen_cards()) == unseen
        assert list(view.unseen_cards()) == sorted(unseen)


def test_events_show_deck_cards_only_to_the_drawer() -> None:
    state = GameState.new(3, 9)
    rng = random.Random(3)
    advance_random(state, rng, 60)
    full = state.events(state.current_seat)
    spectator = state.events(None)
    assert len(full) == len(spectator) == state.event_count
    saw_pile_draw = False
    for i, event in enumerate(spectator):
        if isinstance(event, DrawEvent):
            for seat in range(3):
                mine = state.events(seat)[i]
                assert isinstance(mine, DrawEvent)
                if event.source == DECK:
                    assert (mine.card is not None) == (seat == event.seat)
                else:
                    assert mine.card is not None and mine.card == event.card
            if event.source == DECK:
                assert event.card is None
            else:
                saw_pile_draw = True
        else:
            assert isinstance(event, PlayEvent | ForfeitEvent)
            assert all(state.events(s)[i] == event for s in range(3))
    assert saw_pile_draw
    # ``since`` returns the tail.
    assert state.events(1, since=10) == state.events(1)[10:]


def test_known_cards_follow_pile_draws_until_played_or_discarded() -> None:
    state = GameState.new(2, 30)
    for _ in range(2):  # each seat discards one card
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        state.apply(state.fallback_decision())
    taken = state.discard_pile(1)[-1]
    assert state.current_seat == 0
    state.apply(Draw(1))
    assert state.known_cards(0) == (taken,)
    assert state.view(1).known_cards[0] == (taken,)
    state.apply(Draw(DECK))
    hand = state.hand(0)
    discard = taken
    card = next(c for c in hand if c is not taken)
    state.apply(Play(card, state.legal_decisions().cell_options()[0], discard))
    assert state.known_cards(0) == ()
    assert state.view(1).known_cards[0] == ()


def test_forfeit_is_public() -> None:
    state = GameState.new(3, 1)
    state.forfeit(2)
    state.forfeit(2)  # idempotent
    assert state.forfeited == (False, False, True)
    assert all(state.view(s).forfeited == (False, False, True) for s in range(3))
    assert state.events(0) == [ForfeitEvent(2)]


def test_arboretum_is_a_mapping_equal_to_an_equal_dict() -> None:
    layout = {Cell(0, 0): Card.parse("OA1"), Cell(1, 0): Card.parse("JA2")}
    arb = Arboretum(layout)
    assert dict(arb) == layout and len(arb) == 2 and arb[Cell(1, 0)] is Card.parse("JA2")
    assert arb == Arboretum(dict(reversed(layout.items())))
    # collections.abc.Mapping semantics: equal items compare equal, whatever the mapping type.
    assert arb == layout


# --------------------------------------------------------------------------- determinization


@game_settings
@given(
    st.sampled_from([2, 3, 4]),
    st.integers(0, 2**64 - 1),
    st.integers(0, 400),
    st.integers(0, 3),
    st.integers(0, 2**32),
)
def test_determinized_state_matches_the_view(
    players: int, seed: int, steps: int, seat_choice: int, det_seed: int
) -> None:
    state = random_position(players, seed, steps)
    seat = seat_choice % players
    view = state.view(seat)
    det = determinize(view, random.Random(det_seed))
    # The seat cannot tell the two states apart ...
    assert det.view(seat) == view
    assert list(det.view(seat).legal_decisions()) == list(view.legal_decisions())
    # ... the hidden cards are the same cards, dealt again ...
    hidden_real = set(state.deck)
    hidden_det = set(det.deck)
    for other in range(players):
        if other != seat:
            hidden_real |= set(state.hand(other))
            hidden_det |= set(det.hand(other))
            # ... every opponent keeps the cards it is publicly known to hold.
            assert set(view.known_cards[other]) <= set(det.hand(other))
            assert det.known_cards(other) == view.known_cards[other]
    assert hidden_real == hidden_det
    assert_cards_conserved(det)
    # ... and the determinized state is a game that can be finished.
    rng = random.Random(det_seed)
    if not det.is_over and rng.random() < 0.5:
        det.apply(random_decision(det, rng))
    det.playout(rng)
    assert det.is_over and det.deck_size == 0
    assert_cards_conserved(det)
    assert len(det.result().totals) == players


def test_determinization_varies_the_hidden_cards() -> None:
    state = random_position(3, 12, 40)
    view = state.view(0)
    deals = {
        (determinize(view, random.Random(i)).deck, determinize(view, random.Random(i)).hand(1))
        for i in range(10)
    }
    assert len(deals) > 1
    assert view.determinize(random.Random(4)).view(0) == view


def test_views_of_states_differing_only_in_hidden_cards_are_equal() -> None:
    # A real game and its determinization from seat 1: hidden cards differ, seat 1's view does not.
    state = random_position(3, 5, 33)
    det = determinize(state.view(1), random.Random(8))
    assert det.view(1) == state.view(1)
    assert det.deck != state.deck or det.hand(0) != state.hand(0) or det.hand(2) != state.hand(2)
    # Seats other than 1 are not fooled.
    assert det.view(0) != state.view(0) or det.view(2) != state.view(2)


@pytest.mark.parametrize(
    "change",
    [
        {"deck_size": 99},
        {"deck_size": 0},
        {"hand_sizes": (7, 40, 7)},
    ],
)
def test_inconsistent_views_raise_determinization_error(change: dict[str, object]) -> None:
    view = random_position(3, 3, 20).view(0)
    with pytest.raises(DeterminizationError):
        determinize(dataclasses.replace(view, **change), random.Random(0))


def test_more_known_cards_than_hand_size_raise_determinization_error() -> None:
    view = GameState.new(2, 3).view(0)
    known = tuple(species_cards(view.species)[-3:])
    bad = dataclasses.replace(view, known_cards=((), known), hand_sizes=(7, 2))
    with pytest.raises(DeterminizationError):
        determinize(bad, random.Random(0))


def test_finished_game_determinizes_to_a_finished_game() -> None:
    state = play_random_game(2, 44, 45)
    view = state.view(1)
    assert view.kind is DecisionKind.GAME_OVER and not view.my_turn
    assert len(view.legal_decisions()) == 0
    det = determinize(view, random.Random(1))
    assert det.is_over and det.view(1) == view


def test_seat_view_is_frozen() -> None:
    view = GameState.new(2, 0).view(0)
    assert isinstance(view, SeatView)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.deck_size = 3  # type: ignore[misc]


@game_settings
@given(st.sampled_from([2, 3, 4]), st.integers(0, 2**64 - 1), st.integers(0, 400))
def test_is_legal_agrees_with_legal_decisions(players: int, seed: int, steps: int) -> None:
    state = random_position(players, seed, steps)
    for seat in range(players):
        view = state.view(seat)
        legal = view.legal_decisions()
        candidates: list[object] = [Draw(s) for s in range(-1, players + 1)]
        cards = (*view.hand, *state.deck[:2])
        cells = {Cell(x, y) for x in range(-3, 4) for y in range(-3, 4)}
        for arb in view.arboretums:
            cells |= {
                Cell(c.x + dx, c.y + dy) for c in arb for dx in (-1, 0, 1) for dy in (-1, 0, 1)
            }
        for card in cards:
            for cell in cells:
                candidates += [Play(card, cell, None), Play(card, cell, card)]
                candidates += [Play(card, cell, other) for other in cards[:3]]
        candidates += [None, "draw", Play]
        for decision in candidates:
            assert view.is_legal(decision) == (decision in legal), decision
        assert all(view.is_legal(d) for d in legal)
