"""Scoring (RULES.md "Scoring", "Winner and ranks") through the public API: ``GameState.result()``.

Every expected number here is worked out by hand from the rules; the property test at the end
compares the engine with the brute-force oracle in ``layouts.py``.
"""

from __future__ import annotations

from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arboretum import Card, Cell, GameResult, Species, SpeciesScore

from .layouts import (
    assert_valid_path,
    build_state,
    cards,
    grid,
    neighbours,
    oracle_score,
    species_cards,
)

OAK, JA, MA, WI = Species.OAK, Species.JACARANDA, Species.MAPLE, Species.WILLOW


def score_of(result: GameResult, seat: int, species: Species) -> SpeciesScore:
    [found] = [s for s in result.seats[seat].species if s.species is species]
    return found


def finished(arb0: str = "", arb1: str = "", hand0: str = "", hand1: str = "") -> GameResult:
    """The result of a 2-player game with these arboretums and final hands."""
    state = build_state(
        2,
        [cards(hand0), cards(hand1)],
        arbs=[grid(arb0) if arb0 else {}, grid(arb1) if arb1 else {}],
    )
    return state.result()


def oak_points(arb: str) -> int:
    """Seat 0's Oak points when nobody holds Oak (so seat 0 has the right)."""
    return score_of(finished(arb), 0, OAK).points


# --------------------------------------------------------------------------- worked examples


def test_worked_example_oak_1_4_5_6_scores_9() -> None:
    result = finished(
        """
        OA1 OA4
        .   OA5 OA6
        """,
        hand0="OA2",
    )
    oak = score_of(result, 0, OAK)
    assert oak.has_right and oak.hand_total == 2
    path = oak.path
    assert path is not None
    assert path.cells == (Cell(0, 0), Cell(1, 0), Cell(1, -1), Cell(2, -1))
    assert path.cards == tuple(cards("OA1 OA4 OA5 OA6"))
    assert path.card_points == 8  # 4 x 2
    assert path.doubled is True
    assert path.start_bonus == 1
    assert path.end_bonus == 0
    assert path.points == 9
    assert oak.points == 9
    assert result.seats[0].total == 9
    # Seat 1 holds no Oak: 0 < 2, no right, nothing scored.
    other = score_of(result, 1, OAK)
    assert (other.has_right, other.path, other.points) == (False, None, 0)


def test_worked_example_single_species_1_to_8_scores_19() -> None:
    result = finished(
        """
        OA1 OA2 OA3 OA4
        OA8 OA7 OA6 OA5
        """
    )
    oak = score_of(result, 0, OAK)
    assert oak.has_right and oak.hand_total == 0
    path = oak.path
    assert path is not None
    assert path.cells == (
        Cell(0, 0),
        Cell(1, 0),
        Cell(2, 0),
        Cell(3, 0),
        Cell(3, -1),
        Cell(2, -1),
        Cell(1, -1),
        Cell(0, -1),
    )
    assert path.cards == tuple(Card(OAK, v) for v in range(1, 9))
    assert (path.card_points, path.doubled, path.start_bonus, path.end_bonus) == (16, True, 1, 2)
    assert path.points == 19 == oak.points
    assert result.totals == (19, 0)


def test_worked_example_jacaranda_through_oaks_scores_7() -> None:
    result = finished(
        """
        JA3 OA4 OA5
        .   .   OA6
        .   .   JA8
        """
    )
    ja = score_of(result, 0, JA)
    path = ja.path
    assert path is not None
    assert path.cells == (Cell(0, 0), Cell(1, 0), Cell(2, 0), Cell(2, -1), Cell(2, -2))
    assert path.cards == tuple(cards("JA3 OA4 OA5 OA6 JA8"))
    assert (path.card_points, path.doubled, path.start_bonus, path.end_bonus) == (5, False, 0, 2)
    assert path.points == 7 == ja.points
    # The Oaks also form an Oak path on their own: 3 cards, not doubled.
    oak = score_of(result, 0, OAK)
    assert oak.path is not None and oak.path.cards == tuple(cards("OA4 OA5 OA6"))
    assert (oak.path.card_points, oak.path.doubled, oak.points) == (3, False, 3)
    assert result.seats[0].total == 10


# --------------------------------------------------------------------------- paths


def test_doubling_needs_four_cards() -> None:
    three = score_of(finished("OA2 OA3 OA4"), 0, OAK)
    assert three.path is not None
    assert (three.path.doubled, three.path.card_points, three.points) == (False, 3, 3)
    four = score_of(finished("OA2 OA3 OA4 OA5"), 0, OAK)
    assert four.path is not None
    assert (four.path.doubled, four.path.card_points, four.points) == (True, 8, 8)


def test_four_cards_with_another_species_inside_are_not_doubled() -> None:
    oak = score_of(finished("OA2 JA3 OA4 OA5"), 0, OAK)
    assert oak.path is not None
    assert oak.path.cards == tuple(cards("OA2 JA3 OA4 OA5"))
    assert (oak.path.doubled, oak.points) == (False, 4)


def test_path_turns_corners_and_runs_through_other_species() -> None:
    result = finished(
        """
        MA1 JA2 .
        .   OA3 .
        .   JA4 OA5
        .   .   MA7
        """
    )
    maple = score_of(result, 0, MA)
    assert maple.path is not None
    assert maple.path.cells == (
        Cell(0, 0),
        Cell(1, 0),
        Cell(1, -1),
        Cell(1, -2),
        Cell(2, -2),
        Cell(2, -3),
    )
    assert maple.path.cards == tuple(cards("MA1 JA2 OA3 JA4 OA5 MA7"))
    assert maple.points == 6 + 1
    # Jacaranda: JA2 -> OA3 -> JA4 (3 cards); Oak: OA3 -> JA4 -> OA5 (3 cards).
    assert score_of(result, 0, JA).points == 3
    assert score_of(result, 0, OAK).points == 3


def test_path_is_read_from_the_lowest_card() -> None:
    ja = score_of(finished("JA5 OA4 JA3"), 0, JA)
    assert ja.path is not None
    assert ja.path.cells == (Cell(2, 0), Cell(1, 0), Cell(0, 0))
    assert ja.path.cards == tuple(cards("JA3 OA4 JA5"))
    assert ja.points == 3


def test_path_must_start_and_end_with_the_scored_species() -> None:
    result = finished("JA2 OA3 OA4 JA5 MA6 MA7")
    # Jacaranda may not run on into the Maples: its path ends at JA5.
    ja = score_of(result, 0, JA)
    assert ja.path is not None and ja.path.cards == tuple(cards("JA2 OA3 OA4 JA5"))
    assert ja.points == 4
    assert score_of(result, 0, OAK).points == 2  # OA3 OA4
    assert score_of(result, 0, MA).points == 2  # MA6 MA7
    # A species with a single card on the path's ends only has no path at all.
    only_start = finished("JA3 OA4 OA5")
    assert score_of(only_start, 0, JA).path is None
    assert score_of(only_start, 0, JA).points == 0


def test_a_single_card_is_not_a_path() -> None:
    # A lone OA8 (it would be 1 + 2 as a one-card path) and a lone OA1 next to higher cards.
    result = finished("JA2 OA8", hand0="OA5")
    oak = score_of(result, 0, OAK)
    assert oak.has_right and oak.path is None and oak.points == 0
    result = finished("OA1 JA5")
    assert score_of(result, 0, OAK).path is None
    assert result.seats[0].total == 0


def test_values_must_strictly_increase_gaps_allowed() -> None:
    assert oak_points("OA2 JA2 OA5") == 0  # 2 -> 2 is not increasing
    assert oak_points("OA1 OA5") == 2 + 1  # gap 1 -> 5 is fine
    assert oak_points("OA3 JA7 OA5") == 0  # 3 -> 7 -> 5 goes down


def test_diagonal_cells_are_not_adjacent() -> None:
    result = finished(
        """
        OA1 JA8
        MA8 OA2
        """
    )
    oak = score_of(result, 0, OAK)
    assert oak.has_right and oak.path is None and oak.points == 0


def test_best_path_long_mixed_beats_short_doubled() -> None:
    # Top row: an 8-card mixed Oak path, 8 + 1 + 2 = 11. Bottom: OA3..OA6 doubled, 8.
    # WI1 joins the groups but no path can enter a 1.
    oak = score_of(
        finished(
            """
            OA1 JA2 MA3 JA4 MA5 JA6 MA7 OA8
            WI1 .   .   .   .   .   .   .
            OA3 OA4 OA5 OA6
            """
        ),
        0,
        OAK,
    )
    assert oak.path is not None
    assert oak.path.cells == tuple(Cell(x, 0) for x in range(8))
    assert (oak.path.doubled, oak.path.card_points, oak.points) == (False, 8, 11)


def test_best_path_short_doubled_beats_long_mixed() -> None:
    # Top: OA2..OA5 doubled, 8. Bottom: OA1 MA2 JA3 MA4 JA5 OA6 mixed, 6 + 1 = 7.
    # WI8 joins the groups but no path can leave an 8.
    oak = score_of(
        finished(
            """
            OA2 OA3 OA4 OA5
            WI8 .   .   .
            OA1 MA2 JA3 MA4 JA5 OA6
            """
        ),
        0,
        OAK,
    )
    assert oak.path is not None
    assert oak.path.cards == tuple(cards("OA2 OA3 OA4 OA5"))
    assert (oak.path.doubled, oak.points) == (True, 8)


def test_best_path_is_the_best_of_several_branches() -> None:
    # From OA1 OA2 OA3: up to OA8 (4 cards: 8 + 1 + 2 = 11), down OA4 OA5 then up to OA8
    # (6 cards: 12 + 1 + 2 = 15) or on OA6 OA7 (7 cards: 14 + 1 = 15).
    layout = """
        OA1 OA2 OA3 OA8
        .   .   OA4 OA5 OA6 OA7
        """
    oak = score_of(finished(layout), 0, OAK)
    assert oak.points == 15
    assert oak.path is not None and oak.path.doubled
    assert_valid_path(grid(layout), OAK, oak.path)


def test_start_and_end_bonus_are_not_doubled() -> None:
    # OA1 OA2 OA3 OA8: 4 x 2 + 1 + 2 = 11 (not (4 + 1 + 2) x 2).
    assert oak_points("OA1 OA2 OA3 OA8") == 11
    # Mixed 1 -> 8: 2 + 1 + 2.
    assert oak_points("OA1 OA8") == 5


# --------------------------------------------------------------------------- the right to score


def test_tie_at_zero_everyone_has_the_right() -> None:
    result = finished("OA2 OA3", "OA5 OA7 OA8", hand0="JA1 JA2", hand1="MA4")
    for seat, points in ((0, 2), (1, 3 + 2)):
        oak = score_of(result, seat, OAK)
        assert oak.hand_total == 0 and oak.has_right and oak.points == points


def test_highest_hand_total_has_the_right_alone() -> None:
    result = finished("OA2 OA3", "OA5 OA7", hand0="OA4", hand1="OA1 OA6")
    # Seat 0 holds 4, seat 1 holds 1 + 6 = 7.
    assert [score_of(result, s, OAK).hand_total for s in (0, 1)] == [4, 7]
    assert score_of(result, 0, OAK).has_right is False
    assert score_of(result, 0, OAK).points == 0 and score_of(result, 0, OAK).path is None
    assert score_of(result, 1, OAK).has_right is True
    assert score_of(result, 1, OAK).points == 2


def test_tie_above_zero_shares_the_right() -> None:
    result = finished("OA3 OA5", "OA7 OA8", hand0="OA6", hand1="OA2 OA4")
    for seat, points in ((0, 2), (1, 2 + 2)):
        oak = score_of(result, seat, OAK)
        assert oak.hand_total == 6 and oak.has_right and oak.points == points


def test_eight_counts_zero_when_an_opponent_holds_the_one() -> None:
    result = finished("OA3 OA4", "OA5 OA6", hand0="OA8", hand1="OA1 OA2")
    # Without the rule seat 0 would win the right 8 to 3.
    assert [score_of(result, s, OAK).hand_total for s in (0, 1)] == [0, 1 + 2]
    assert score_of(result, 0, OAK).has_right is False
    assert score_of(result, 0, OAK).points == 0
    assert score_of(result, 1, OAK).has_right is True
    assert score_of(result, 1, OAK).points == 2
    assert result.totals == (0, 2)


def test_eight_keeps_eight_when_the_same_seat_holds_the_one() -> None:
    result = finished("OA3 OA4", "OA5 OA6", hand0="OA8 OA1", hand1="OA7")
    assert [score_of(result, s, OAK).hand_total for s in (0, 1)] == [9, 7]
    assert score_of(result, 0, OAK).has_right is True
    assert score_of(result, 0, OAK).points == 2
    assert score_of(result, 1, OAK).has_right is False
    assert result.totals == (2, 0)


def test_eight_one_rule_with_three_players_and_other_species() -> None:
    state = build_state(
        3,
        [cards("OA8 JA8"), cards("OA6 JA7"), cards("OA1")],
        arbs=[grid("OA2 OA3"), grid("OA4 OA5"), {}],
    )
    result = state.result()
    # Oak: seat 0's 8 counts 0 (seat 2 holds OA1), so 0, 6, 1: seat 1 alone has the right.
    assert [score_of(result, s, OAK).hand_total for s in range(3)] == [0, 6, 1]
    assert [score_of(result, s, OAK).has_right for s in range(3)] == [False, True, False]
    # Jacaranda: nobody holds JA1, so seat 0's JA8 counts 8.
    assert [score_of(result, s, JA).hand_total for s in range(3)] == [8, 7, 0]
    assert result.totals == (0, 2, 0)


def test_the_right_without_a_path_scores_zero() -> None:
    result = finished("OA2 JA3 MA4", hand0="OA8 OA7")
    oak = score_of(result, 0, OAK)
    assert (oak.hand_total, oak.has_right, oak.path, oak.points) == (15, True, None, 0)
    assert result.totals == (0, 0)


# --------------------------------------------------------------------------- winner and ranks


def test_tie_on_total_is_broken_by_species_count() -> None:
    # Both score Oak 2 (nobody holds Oak); seat 0 has 3 species in its arboretum, seat 1 has 2.
    result = finished("OA2 OA3 JA8 MA8", "OA5 OA6 JA1")
    assert result.totals == (2, 2)
    assert [s.species_in_arboretum for s in result.seats] == [3, 2]
    assert result.ranks == (1, 2)
    assert result.winners == (0,)
    assert result.shared is False


def test_total_comes_before_species_count() -> None:
    result = finished("OA2 OA3 JA8 MA8", "OA5 OA6 OA7 JA1")
    assert result.totals == (2, 3)
    assert result.ranks == (2, 1)
    assert result.winners == (1,)


def test_equal_total_and_species_count_is_a_shared_win() -> None:
    result = finished("OA2 OA3 JA8 MA8", "OA5 OA6 JA1 MA1")
    assert result.totals == (2, 2)
    assert [s.species_in_arboretum for s in result.seats] == [3, 3]
    assert result.ranks == (1, 1)
    assert result.winners == (0, 1)
    assert result.shared is True


def test_competition_ranks_with_three_players() -> None:
    state = build_state(
        3,
        [[], [], []],
        arbs=[grid("OA2 OA3 JA8"), grid("OA5 OA6 JA1"), grid("OA7 OA8")],
    )
    result = state.result()
    # Totals 2, 2, 4 (OA7 OA8: 2 + 2); seats 0 and 1 share second place.
    assert result.totals == (2, 2, 4)
    assert result.ranks == (2, 2, 1)
    assert result.winners == (2,)


def test_forfeited_seats_rank_last() -> None:
    state = build_state(
        4,
        [[], [], [], []],
        arbs=[grid("OA1 OA2 OA3 OA4"), grid("JA2 JA3"), {}, grid("MA2 MA3 MA4")],
    )
    assert state.result().totals == (9, 2, 0, 3)
    assert state.result().ranks == (1, 3, 4, 2)
    state.forfeit(0)
    state.forfeit(3)
    result = state.result()
    assert result.totals == (9, 2, 0, 3)  # forfeiting changes ranks, not points
    assert [s.forfeited for s in result.seats] == [True, False, False, True]
    # Seats that did not forfeit first (2 before 0), then the forfeited ones (9 before 3).
    assert result.ranks == (3, 1, 2, 4)
    assert result.winners == (1,)


def test_result_reveals_every_hand() -> None:
    state = build_state(2, [cards("OA8 JA1"), cards("MA3")], arbs=[grid("OA2 OA3"), {}])
    assert state.result().hands == ((Card(JA, 1), Card(OAK, 8)), (Card(MA, 3),))


# --------------------------------------------------------------------------- against the oracle

POOL = species_cards([OAK, JA, MA])


@st.composite
def layouts(draw: st.DrawFn, chosen: list[Card]) -> dict[Cell, Card]:
    """A connected arboretum of ``chosen``, grown one legal placement at a time."""
    layout: dict[Cell, Card] = {}
    for card in chosen:
        if not layout:
            layout[Cell(0, 0)] = card
            continue
        frontier = sorted({n for c in layout for n in neighbours(c) if n not in layout})
        layout[frontier[draw(st.integers(0, len(frontier) - 1))]] = card
    return layout


@st.composite
def positions(draw: st.DrawFn) -> tuple[list[list[Card]], list[dict[Cell, Card]]]:
    shuffled = draw(st.permutations(POOL))
    n0 = draw(st.integers(0, 14))
    n1 = draw(st.integers(0, 8))
    h0 = draw(st.integers(0, 4))
    h1 = draw(st.integers(0, 4))
    cut = [0, n0, n0 + n1, n0 + n1 + h0, n0 + n1 + h0 + h1]
    parts = [shuffled[a:b] for a, b in pairwise(cut)]
    arbs = [draw(layouts(parts[0])), draw(layouts(parts[1]))]
    return [parts[2], parts[3]], arbs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(positions())
def test_scoring_matches_a_brute_force_oracle(position: tuple[list, list]) -> None:
    hands, arbs = position
    state = build_state(
        2, hands, arbs=arbs, species=[OAK, JA, MA, WI, Species.CASSIA, Species.DOGWOOD]
    )
    result = state.result()
    totals, per_species, ranks = oracle_score(state)
    assert list(result.totals) == totals
    assert list(result.ranks) == ranks
    for seat in range(2):
        for sp in result.seats[seat].species:
            assert sp.points == per_species[seat][sp.species], (seat, sp)
            if sp.path is not None:
                assert sp.has_right
                assert_valid_path(arbs[seat], sp.species, sp.path)
            else:
                assert sp.points == 0
