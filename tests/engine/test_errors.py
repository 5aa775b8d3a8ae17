"""Illegal and malformed decisions: every ``Rule``, ``NotationError``, what messages may reveal."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arboretum import (
    DECK,
    ArboretumError,
    Card,
    Cell,
    ConfigError,
    Decision,
    DecisionKind,
    DeterminizationError,
    Draw,
    GameState,
    IllegalDecisionError,
    NotationError,
    Play,
    ReplayError,
    Rule,
    Species,
)

from .layouts import build_state, cards, cards_in, grid, visible_to


def named_in(decision: object) -> set[Card]:
    if isinstance(decision, Play):
        return {c for c in (decision.card, decision.discard) if isinstance(c, Card)}
    return set()


def snapshot(state: GameState) -> tuple[object, ...]:
    return (
        state.deck,
        tuple(state.view(s) for s in range(state.players)),
        tuple(state.hand(s) for s in range(state.players)),
        state.event_count,
    )


# --------------------------------------------------------------------------- positions


def fresh() -> GameState:
    return GameState.new(2, 4)


def at_first_play() -> GameState:
    state = fresh()
    state.apply(Draw(DECK))
    state.apply(Draw(DECK))
    return state


def at_second_play() -> GameState:
    """Seat 0's second play: its arboretum holds one card at the origin; both piles hold one."""
    state = fresh()
    for _ in range(2):
        state.apply(Draw(DECK))
        state.apply(Draw(DECK))
        hand = state.hand(state.current_seat)
        state.apply(Play(hand[0], Cell(0, 0), hand[1]))
    state.apply(Draw(DECK))
    state.apply(Draw(DECK))
    assert state.current_seat == 0 and state.decision_kind is DecisionKind.PLAY
    return state


def finished() -> GameState:
    return build_state(2, [cards("OA1 OA2"), cards("JA1")], arbs=[grid("OA3 OA4"), grid("JA2")])


def deck_empty_at_second_draw() -> GameState:
    state = build_state(
        2,
        [cards("OA1 OA2 OA3 OA4 OA5 OA6 OA7"), cards("JA1 JA2 JA3 JA4 JA5 JA6 JA7")],
        deck=cards("MA1"),
        kind=DecisionKind.FIRST_DRAW,
        last_turn=False,
    )
    state.apply(Draw(DECK))
    assert state.decision_kind is DecisionKind.SECOND_DRAW and state.deck_size == 0
    return state


def skipped_second_draw() -> GameState:
    state = build_state(
        2,
        [cards("OA1 OA2 OA3 OA4 OA5 OA6 OA7"), cards("JA1 JA2 JA3 JA4 JA5 JA6 JA7")],
        deck=cards("MA1"),
        filler="arboretums",
        kind=DecisionKind.FIRST_DRAW,
        last_turn=False,
    )
    state.apply(Draw(DECK))
    assert state.decision_kind is DecisionKind.PLAY and not state.discard_required
    return state


def hand(state: GameState, i: int) -> Card:
    return state.hand(state.current_seat)[i]


def hidden_card(state: GameState) -> Card:
    """A card of the next seat's hand that the current seat cannot see."""
    other = (state.current_seat + 1) % state.players
    return next(c for c in state.hand(other) if c not in visible_to(state, state.current_seat))


Case = tuple[Rule, Callable[[], GameState], Callable[[GameState], Decision]]

CASES: list[Case] = [
    (Rule.GAME_OVER, finished, lambda s: Draw(DECK)),
    (Rule.GAME_OVER, finished, lambda s: Play(hand(s, 0), Cell(1, 0), hand(s, 1))),
    (Rule.WRONG_DECISION, fresh, lambda s: Play(hand(s, 0), Cell(0, 0), hand(s, 1))),
    (Rule.WRONG_DECISION, at_first_play, lambda s: Draw(DECK)),
    (Rule.WRONG_DECISION, at_first_play, lambda s: Draw(0)),
    (Rule.EMPTY_SOURCE, fresh, lambda s: Draw(0)),
    (Rule.EMPTY_SOURCE, fresh, lambda s: Draw(1)),
    (Rule.EMPTY_SOURCE, deck_empty_at_second_draw, lambda s: Draw(DECK)),
    (Rule.NO_SUCH_PILE, fresh, lambda s: Draw(2)),
    (Rule.NO_SUCH_PILE, fresh, lambda s: Draw(-2)),
    (Rule.NO_SUCH_PILE, fresh, lambda s: Draw(99)),
    (Rule.NO_SUCH_PILE, fresh, lambda s: Draw("1")),  # type: ignore[arg-type]
    (Rule.CARD_NOT_IN_HAND, at_first_play, lambda s: Play(hidden_card(s), Cell(0, 0), hand(s, 0))),
    (Rule.CARD_NOT_IN_HAND, at_first_play, lambda s: Play(s.deck[-1], Cell(0, 0), hand(s, 0))),
    (
        Rule.CARD_NOT_IN_HAND,
        at_first_play,
        lambda s: Play(
            next(c for c in map(Card.from_id, range(80)) if c.species not in s.species),
            Cell(0, 0),
            hand(s, 0),
        ),
    ),
    (Rule.FIRST_CARD_AT_ORIGIN, at_first_play, lambda s: Play(hand(s, 0), Cell(1, 0), hand(s, 1))),
    (Rule.FIRST_CARD_AT_ORIGIN, at_first_play, lambda s: Play(hand(s, 0), Cell(0, -1), hand(s, 1))),
    (Rule.CELL_OCCUPIED, at_second_play, lambda s: Play(hand(s, 0), Cell(0, 0), hand(s, 1))),
    (Rule.CELL_NOT_ADJACENT, at_second_play, lambda s: Play(hand(s, 0), Cell(1, 1), hand(s, 1))),
    (Rule.CELL_NOT_ADJACENT, at_second_play, lambda s: Play(hand(s, 0), Cell(-1, -1), hand(s, 1))),
    (Rule.CELL_NOT_ADJACENT, at_second_play, lambda s: Play(hand(s, 0), Cell(0, 2), hand(s, 1))),
    (
        Rule.CELL_NOT_ADJACENT,
        at_second_play,
        lambda s: Play(hand(s, 0), Cell(10**9, 0), hand(s, 1)),
    ),
    (
        Rule.CELL_NOT_ADJACENT,
        at_second_play,
        lambda s: Play(hand(s, 0), Cell(0, -(2**40)), hand(s, 1)),
    ),
    (Rule.DISCARD_REQUIRED, at_first_play, lambda s: Play(hand(s, 0), Cell(0, 0), None)),
    (Rule.DISCARD_REQUIRED, at_second_play, lambda s: Play(hand(s, 0), Cell(1, 0), None)),
    (
        Rule.DISCARD_NOT_ALLOWED,
        skipped_second_draw,
        lambda s: Play(hand(s, 0), s.legal_decisions().cell_options()[0], hand(s, 1)),
    ),
    (Rule.DISCARD_NOT_IN_HAND, at_first_play, lambda s: Play(hand(s, 0), Cell(0, 0), hand(s, 0))),
    (
        Rule.DISCARD_NOT_IN_HAND,
        at_first_play,
        lambda s: Play(hand(s, 0), Cell(0, 0), hidden_card(s)),
    ),
    (Rule.DISCARD_NOT_IN_HAND, at_second_play, lambda s: Play(hand(s, 0), Cell(1, 0), s.deck[0])),
]


def test_every_rule_has_a_case() -> None:
    assert {rule for rule, _, _ in CASES} == set(Rule)


@pytest.mark.parametrize(
    ("rule", "make", "decide"), CASES, ids=[f"{c[0].value}-{i}" for i, c in enumerate(CASES)]
)
def test_illegal_decision_names_its_rule(
    rule: Rule, make: Callable[[], GameState], decide: Callable[[GameState], Decision]
) -> None:
    state = make()
    decision = decide(state)
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError) as info:
        state.apply(decision)
    error = info.value
    assert error.rule is rule
    assert isinstance(error, ValueError) and isinstance(error, ArboretumError)
    assert not isinstance(error, NotationError)
    assert rule.value in str(error)
    # A refused decision changes nothing.
    assert snapshot(state) == before
    # The message never shows a card the acting seat cannot see (beyond those it named itself).
    leaked = cards_in(str(error)) - visible_to(state, state.current_seat) - named_in(decision)
    assert not leaked, f"{error} reveals {leaked}"
    # ... and the legal options agree that the decision is not among them.
    assert decision not in state.legal_decisions()


def test_rules_have_distinct_stable_identifiers_and_texts() -> None:
    assert len({r.value for r in Rule}) == len(Rule)
    assert all(r.text and r.value in str(IllegalDecisionError(r)) for r in Rule)
    assert "extra detail" in str(IllegalDecisionError(Rule.CELL_OCCUPIED, "extra detail"))


def test_result_before_the_end_is_refused() -> None:
    with pytest.raises(IllegalDecisionError) as info:
        fresh().result()
    assert info.value.rule is Rule.WRONG_DECISION


def test_fallback_after_the_end_is_refused() -> None:
    with pytest.raises(IllegalDecisionError) as info:
        finished().fallback_decision()
    assert info.value.rule is Rule.GAME_OVER


@pytest.mark.parametrize(
    ("make", "decide"),
    [
        (fresh, lambda s: "draw deck"),
        (fresh, lambda s: None),
        (fresh, lambda s: (DECK,)),
        (at_first_play, lambda s: Play(str(hand(s, 0)), Cell(0, 0), hand(s, 1))),  # type: ignore[arg-type]
        (at_first_play, lambda s: Play(hand(s, 0), "0,0", hand(s, 1))),  # type: ignore[arg-type]
        (at_first_play, lambda s: Play(hand(s, 0), (0,), hand(s, 1))),  # type: ignore[arg-type]
        (at_first_play, lambda s: Play(hand(s, 0), Cell(0.0, 0), hand(s, 1))),  # type: ignore[arg-type]
        (at_first_play, lambda s: Play(hand(s, 0), Cell(0, 0), str(hand(s, 1)))),  # type: ignore[arg-type]
    ],
)
def test_malformed_decisions_raise_notation_error(
    make: Callable[[], GameState], decide: Callable[[GameState], object]
) -> None:
    state = make()
    before = snapshot(state)
    with pytest.raises(NotationError) as info:
        state.apply(decide(state))  # type: ignore[arg-type]
    assert not isinstance(info.value, IllegalDecisionError)
    assert snapshot(state) == before


def test_error_hierarchy() -> None:
    for cls in (NotationError, IllegalDecisionError, ConfigError):
        assert issubclass(cls, ValueError) and issubclass(cls, ArboretumError)
    for cls in (DeterminizationError, ReplayError):
        assert issubclass(cls, ArboretumError)
    assert not issubclass(NotationError, IllegalDecisionError)
    assert not issubclass(IllegalDecisionError, NotationError)
    assert NotationError is not IllegalDecisionError


def test_card_of_a_species_not_in_play_is_not_in_hand() -> None:
    state = at_first_play()
    absent = [s for s in Species if s not in state.species]
    assert absent
    with pytest.raises(IllegalDecisionError) as info:
        state.apply(Play(Card(absent[0], 3), Cell(0, 0), hand(state, 0)))
    assert info.value.rule is Rule.CARD_NOT_IN_HAND
