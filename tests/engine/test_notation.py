"""Text forms: species, cards, cells and decisions round-trip; bad text raises NotationError."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arboretum import (
    ALL_CARDS,
    DECK,
    Card,
    Cell,
    Draw,
    NotationError,
    Play,
    Species,
    parse_decision,
)

CODES = {
    "BS": Species.BLUE_SPRUCE,
    "CA": Species.CASSIA,
    "CB": Species.CHERRY_BLOSSOM,
    "DO": Species.DOGWOOD,
    "JA": Species.JACARANDA,
    "MA": Species.MAPLE,
    "OA": Species.OAK,
    "RP": Species.ROYAL_POINCIANA,
    "TP": Species.TULIP_POPLAR,
    "WI": Species.WILLOW,
}


def test_ten_species_in_the_rules_order_with_documented_codes() -> None:
    assert [s.value for s in Species] == [
        "BLUE_SPRUCE",
        "CASSIA",
        "CHERRY_BLOSSOM",
        "DOGWOOD",
        "JACARANDA",
        "MAPLE",
        "OAK",
        "ROYAL_POINCIANA",
        "TULIP_POPLAR",
        "WILLOW",
    ]
    assert {s.code: s for s in Species} == CODES
    assert [s.index for s in Species] == list(range(10))
    assert all(Species.from_index(s.index) is s for s in Species)
    assert Species.ROYAL_POINCIANA.display == "Royal Poinciana"


@pytest.mark.parametrize("species", list(Species))
def test_species_parse_accepts_identifier_code_and_display_name(species: Species) -> None:
    for text in (
        species.value,
        species.code,
        species.display,
        species.code.lower(),
        species.display.upper(),
    ):
        assert Species.parse(text) is species


def test_eighty_cards_with_dense_ids() -> None:
    assert len(ALL_CARDS) == 80 == len(set(ALL_CARDS))
    assert [c.id for c in ALL_CARDS] == list(range(80))
    for card in ALL_CARDS:
        assert Card.from_id(card.id) is card
        assert 1 <= card.value <= 8
        assert card.id == card.species.index * 8 + card.value - 1
    assert {(c.species, c.value) for c in ALL_CARDS} == {
        (s, v) for s in Species for v in range(1, 9)
    }


@pytest.mark.parametrize("card", ALL_CARDS, ids=str)
def test_every_card_round_trips(card: Card) -> None:
    text = str(card)
    assert text == f"{card.species.code}{card.value}"
    assert Card.parse(text) is card
    assert Card(card.species, card.value) is card


def test_card_parse_accepts_the_documented_variants() -> None:
    oak5 = Card(Species.OAK, 5)
    for text in ("OA5", "OAK5", "OAK-5", "oak 5", "oak-5", " oa5 ", "Oak 5"):
        assert Card.parse(text) is oak5, text
    assert Card.parse("Royal Poinciana 8") is Card(Species.ROYAL_POINCIANA, 8)
    assert Card.parse("BLUE_SPRUCE1") is Card(Species.BLUE_SPRUCE, 1)


def test_cards_are_immutable_and_ordered_by_id() -> None:
    card = Card(Species.OAK, 5)
    with pytest.raises(AttributeError):
        card.value = 6  # type: ignore[misc]
    assert sorted([Card(Species.WILLOW, 1), Card(Species.BLUE_SPRUCE, 8), card]) == [
        Card(Species.BLUE_SPRUCE, 8),
        card,
        Card(Species.WILLOW, 1),
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("OA9", "OA9"),
        ("OA0", "OA0"),
        ("XX5", "XX"),
        ("5", "5"),
        ("", ""),
        ("OA", "OA"),
        ("OA55", "OA55"),
    ],
)
def test_bad_card_text_names_the_problem(text: str, named: str) -> None:
    with pytest.raises(NotationError) as info:
        Card.parse(text)
    assert repr(named) in str(info.value)


@pytest.mark.parametrize(
    ("species", "value"),
    [
        (Species.OAK, 0),
        (Species.OAK, 9),
        (Species.OAK, True),  # a bool is not a card value, even though True == 1
        (Species.OAK, 5.0),
        (Species.OAK, "5"),
        ("OAK", 5),  # a plain string is not a Species
        (None, 1),
    ],
)
def test_card_constructor_validates(species: object, value: object) -> None:
    with pytest.raises(NotationError):
        Card(species, value)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6))
def test_cells_round_trip_including_negatives(x: int, y: int) -> None:
    cell = Cell(x, y)
    assert str(cell) == f"{x},{y}"
    assert Cell.parse(str(cell)) == cell
    assert Cell.parse(f"({x}, {y})") == cell


def test_cell_neighbours_are_orthogonal() -> None:
    assert set(Cell(0, -1).neighbours()) == {Cell(1, -1), Cell(-1, -1), Cell(0, 0), Cell(0, -2)}


@pytest.mark.parametrize("text", ["", "1", "1,", ",2", "1;2", "a,b", "1,2,3", "1.5,2"])
def test_bad_cell_text_raises(text: str) -> None:
    with pytest.raises(NotationError) as info:
        Cell.parse(text)
    assert repr(text) in str(info.value)


# --------------------------------------------------------------------------- decisions


def test_decision_text_forms() -> None:
    oa5, ja3 = Card.parse("OA5"), Card.parse("JA3")
    assert str(Draw(DECK)) == "draw deck"
    assert str(Draw(2)) == "draw pile 2"
    assert str(Play(oa5, Cell(0, -1), ja3)) == "play OA5 0,-1 discard JA3"
    assert str(Play(oa5, Cell(0, -1), None)) == "play OA5 0,-1"
    assert Draw().source == DECK and Draw().from_deck and not Draw(0).from_deck


@pytest.mark.parametrize(
    "decision",
    [
        Draw(DECK),
        Draw(0),
        Draw(3),
        Play(Card.parse("OA5"), Cell(0, 0), Card.parse("JA3")),
        Play(Card.parse("WI8"), Cell(-3, 12), Card.parse("BS1")),
        Play(Card.parse("RP1"), Cell(7, -2), None),
    ],
    ids=str,
)
def test_decisions_round_trip(decision: Draw | Play) -> None:
    assert parse_decision(str(decision)) == decision
    assert parse_decision(decision.text()) == decision


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(ALL_CARDS),
    st.integers(-500, 500),
    st.integers(-500, 500),
    st.none() | st.sampled_from(ALL_CARDS),
    st.integers(-1, 3),
)
def test_any_decision_round_trips(
    card: Card, x: int, y: int, discard: Card | None, source: int
) -> None:
    play = Play(card, Cell(x, y), discard)
    assert parse_decision(str(play)) == play
    draw = Draw(source)
    assert parse_decision(str(draw)) == draw


def test_parse_decision_is_lenient_about_case_and_card_spelling() -> None:
    assert parse_decision("DRAW DECK") == Draw(DECK)
    assert parse_decision("Draw Pile 1") == Draw(1)
    assert parse_decision("play oak-5 (1,-1) DISCARD ja3") == Play(
        Card.parse("OA5"), Cell(1, -1), Card.parse("JA3")
    )


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "empty decision"),
        ("   ", "empty decision"),
        ("draw", "'draw'"),
        ("draw hand", "'draw hand'"),
        ("draw pile", "'draw pile'"),
        ("draw pile x", "'x'"),
        ("draw pile -1", "-1"),
        ("draw deck now", "'draw deck now'"),
        ("pass", "'pass'"),
        ("play", "'play'"),
        ("play OA5", "'play OA5'"),
        ("play OA9 0,0 discard JA3", "'OA9'"),
        ("play XX5 0,0 discard JA3", "'XX'"),
        ("play OA5 0;0 discard JA3", "'0;0'"),
        ("play OA5 0,0 toss JA3", "'play OA5 0,0 toss JA3'"),
        ("play OA5 0,0 discard", "'play OA5 0,0 discard'"),
        ("play OA5 0,0 discard ZZ1", "'ZZ'"),
    ],
)
def test_bad_decision_text_raises_notation_error_naming_the_problem(text: str, named: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_decision(text)
    assert named in str(info.value)
