"""Series matches (arboretum_worker.schedule.pack_series): how a league's games become matches.

A series is several deals of one combination in one seating, played by the same bot processes;
the other seatings of those deals are other matches. These tests check the packing against the
one-game-per-match schedule it is built from.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arboretum import derive_game_seed
from arboretum_worker import store
from arboretum_worker.schedule import (
    MAX_DEALS_PER_SERIES,
    MatchSpec,
    ScheduleError,
    deal_seed,
    match_id,
    pack_series,
    round_robin,
)


def bots(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def games_of(specs: list[MatchSpec]) -> Counter[tuple[tuple[str, ...], tuple[str, ...], int, int]]:
    """(combination, seats, deal, game seed) of every game the matches play."""
    return Counter(
        (s.combination, s.seats, deal, seed)
        for s in specs
        for deal, seed in zip(s.deals, s.game_seeds, strict=True)
    )


def check_series(specs: list[MatchSpec], per_series: int, league_seed: int) -> None:
    ids = [s.match_id for s in specs]
    assert len(set(ids)) == len(ids)
    by_id = {s.match_id: s for s in specs}
    for s in specs:
        # one seating, distinct deals in order, at most per_series of them
        assert 1 <= s.games <= per_series
        assert list(s.deals) == sorted(set(s.deals)) and s.deal == s.deals[0]
        assert s.seed == deal_seed(league_seed, s.combination, s.deals[0])
        for deal, seed in zip(s.deals, s.game_seeds, strict=True):
            assert seed == derive_game_seed(deal_seed(league_seed, s.combination, deal), 0)
        # the siblings are exactly the other matches that play one of its deals
        expected = {
            o.match_id
            for o in specs
            if o.match_id != s.match_id
            and o.combination == s.combination
            and set(o.deals) & set(s.deals)
        }
        assert set(s.siblings) == expected
        for sibling in s.siblings:
            assert by_id[sibling].seats != s.seats  # another seating: other processes
            assert s.match_id in by_id[sibling].siblings


@pytest.mark.parametrize(
    ("v", "p", "n", "per_series"),
    [(4, 2, 10, 10), (4, 2, 10, 3), (5, 3, 4, 2), (5, 4, 7, 5), (3, 2, 1, 10)],
)
def test_series_play_every_game_of_the_schedule_once(
    v: int, p: int, n: int, per_series: int
) -> None:
    games = round_robin("spring", bots(v), p, n, seed=11)
    specs = round_robin("spring", bots(v), p, n, seed=11, deals_per_series=per_series)
    assert games_of(specs) == games_of(games)
    assert max(games_of(specs).values()) == 1
    check_series(specs, per_series, 11)
    # fewer matches, each as long as the deals sharing its seating allow
    groups = Counter((g.combination, g.seats) for g in games)
    assert len(specs) == sum(-(-count // per_series) for count in groups.values())


def test_one_deal_series_are_the_one_game_schedule() -> None:
    """deals_per_series = 1 keeps every id, seed and the order of the one-game schedule (a league
    created before series reads as 1, so `league run` on it again schedules nothing new)."""
    specs = round_robin("spring", bots(5), 3, 2, seed=4, deals_per_series=1)
    for s in specs:
        assert s.deals == (s.deal,)
        assert s.match_id == match_id("spring", s.combination, s.deal, s.rotation)
        assert s.game_seeds == (derive_game_seed(s.seed, 0),)
    assert [(s.deal, s.rotation) for s in specs[:3]] == [(0, 0)] * 3
    assert pack_series(specs, 1) == specs


def test_a_two_player_league_of_ten_deals_is_one_series_per_seat_order() -> None:
    specs = round_robin("bench", bots(20), 2, 10, seed=1, deals_per_series=10)
    assert len(specs) == 380 and sum(s.games for s in specs) == 3800
    for s in specs:
        assert s.deals == tuple(range(10))
        (sibling,) = s.siblings
        other = next(o for o in specs if o.match_id == sibling)
        assert other.seats == tuple(reversed(s.seats))
        assert other.game_seeds == s.game_seeds  # the same ten deals in the other seat order


def test_series_ids_are_deterministic_and_name_their_deals() -> None:
    a = round_robin("spring", bots(6), 2, 6, seed=9, deals_per_series=4)
    assert a == round_robin("spring", list(reversed(bots(6))), 2, 6, seed=9, deals_per_series=4)
    b = round_robin("spring", bots(6), 2, 6, seed=9, deals_per_series=3)
    assert not {s.match_id for s in a if s.games > 1} & {s.match_id for s in b}
    # the same games whatever the packing
    assert games_of(a) == games_of(b)


@pytest.mark.parametrize("bad", [0, -1, MAX_DEALS_PER_SERIES + 1, 2.5, "3", True])
def test_deals_per_series_out_of_range_is_refused_by_name(bad: object) -> None:
    with pytest.raises(ScheduleError, match="deals_per_series must be a whole number from 1 to"):
        round_robin("spring", bots(3), 2, 1, seed=1, deals_per_series=bad)  # type: ignore[arg-type]
    with pytest.raises(store.StoreError, match="deals_per_series"):
        store.LeagueSettings(
            players=2,
            games_per_pairing=1,
            bots=("a", "b"),
            seed=1,
            deals_per_series=bad,  # type: ignore[arg-type]
        )


def test_league_settings_keep_deals_per_series_and_old_leagues_read_as_one() -> None:
    settings = store.LeagueSettings(players=2, games_per_pairing=3, bots=("a", "b"), seed=5)
    assert settings.deals_per_series == 10  # the default of a new league
    again = store.LeagueSettings.from_json(settings.to_json())
    assert again == settings
    old = json.loads(settings.to_json())
    del old["deals_per_series"]
    assert store.LeagueSettings.from_json(json.dumps(old)).deals_per_series == 1


@settings(max_examples=40, deadline=None)
@given(
    v=st.integers(min_value=2, max_value=9),
    p=st.integers(min_value=2, max_value=4),
    n=st.integers(min_value=1, max_value=7),
    per_series=st.integers(min_value=1, max_value=8),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_any_packing_plays_each_game_once_and_no_process_sees_a_deal_twice(
    v: int, p: int, n: int, per_series: int, seed: int
) -> None:
    if p > v:
        return
    games = round_robin("prop", bots(v), p, n, seed)
    specs = round_robin("prop", bots(v), p, n, seed, deals_per_series=per_series)
    assert games_of(specs) == games_of(games)
    check_series(specs, per_series, seed)
