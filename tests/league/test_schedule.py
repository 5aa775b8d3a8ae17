"""Round-robin schedule (arboretum_worker.schedule): coverage, balance, fairness, determinism."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arboretum_worker.schedule import (
    MAX_FULL_COMBINATIONS,
    MatchSpec,
    ScheduleError,
    block_deals,
    cyclic_orders,
    design,
    league_order,
    pair_counts,
    round_robin,
    seating,
)


def bots(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def _adjacent(seats: tuple[str, ...]) -> list[tuple[str, str]]:
    """(X, Y) for every seat of X and the seat right after it (Y moves next, cyclically)."""
    return [(seats[i], seats[(i + 1) % len(seats)]) for i in range(len(seats))]


def _check_fair(specs: list[MatchSpec], players: int, deals: int) -> None:
    """Each (combination, deal) is P matches, one per rotation, same seed, fresh match ids;
    every bot of the combination sits in every seat once."""
    groups: dict[tuple[tuple[str, ...], int], list[MatchSpec]] = defaultdict(list)
    for s in specs:
        assert len(s.seats) == players == s.players
        assert sorted(s.seats) == list(s.combination)
        groups[s.combination, s.deal].append(s)
    combos = {c for c, _ in groups}
    assert len(groups) == len(combos) * deals
    for (combo, _deal), group in groups.items():
        assert sorted(s.rotation for s in group) == list(range(players))
        assert len({s.seed for s in group}) == 1
        for seat in range(players):
            assert sorted(s.seats[seat] for s in group) == list(combo)
        # the rotations of one deal keep one cyclic order: the same neighbours
        assert len({frozenset(_adjacent(s.seats)) for s in group}) == 1
    ids = [s.match_id for s in specs]
    assert len(set(ids)) == len(ids)
    # One deal per match: a match's processes never meet a deal twice, and no two deals of
    # different (combination, deal) pairs share a seed.
    assert len({s.seed for s in specs}) == len(groups)


@pytest.mark.parametrize(("v", "p", "n"), [(2, 2, 3), (5, 2, 2), (4, 3, 2), (6, 3, 1), (7, 4, 2)])
def test_small_leagues_play_every_combination(v: int, p: int, n: int) -> None:
    specs = round_robin("spring", bots(v), p, n, seed=42)
    assert len(specs) == math.comb(v, p) * n * p
    combos = {s.combination for s in specs}
    assert combos == set(itertools.combinations(bots(v), p))
    _check_fair(specs, p, n)


def test_twelve_bots_four_players_use_a_balanced_design() -> None:
    assert math.comb(12, 4) > MAX_FULL_COMBINATIONS
    specs = round_robin("big", bots(12), 4, 2, seed=1)
    combos = sorted({s.combination for s in specs})
    assert len(combos) < math.comb(12, 4)
    meetings = Counter()
    for combo in combos:
        for a, b in itertools.combinations(combo, 2):
            meetings[a, b] += 1
    assert len(meetings) == math.comb(12, 2)
    assert len(set(meetings.values())) == 1, meetings
    appearances = Counter(b for combo in combos for b in combo)
    assert len(set(appearances.values())) == 1  # every bot plays as many combinations
    _check_fair(specs, 4, 2)
    # games counted per pair (with rotations and deals) are equal too
    games = Counter()
    for s in specs:
        for a, b in itertools.combinations(sorted(s.seats), 2):
            games[a, b] += 1
    assert len(set(games.values())) == 1


@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("v", range(8, 31))
def test_designs_are_balanced(v: int, k: int) -> None:
    d = design(v, k)
    assert (d.v, d.k) == (v, k)
    assert len(set(d.blocks)) == len(d.blocks)
    assert all(len(set(b)) == k and all(0 <= x < v for x in b) for b in d.blocks)
    counts = pair_counts(d.blocks)
    assert len(counts) == v * (v - 1) // 2
    assert set(counts.values()) == {d.lam}
    if math.comb(v, k) > MAX_FULL_COMBINATIONS:
        assert d.method != "all"
        assert len(d.blocks) <= math.comb(v, k) // 2
    else:
        assert d.method == "all"


def test_two_players_always_play_every_pair() -> None:
    d = design(30, 2)
    assert d.method == "all" and len(d.blocks) == math.comb(30, 2) and d.lam == 1


def test_ids_and_seeds_are_deterministic() -> None:
    a = round_robin("spring", bots(12), 3, 2, seed=9)
    b = round_robin("spring", list(reversed(bots(12))), 3, 2, seed=9)
    assert a == b  # the order bots are listed in does not matter
    # Another seed: the same matches where every combination plays (ids name the combination,
    # deal and rotation), other deals.
    small = round_robin("spring", bots(6), 3, 2, seed=9)
    c = round_robin("spring", bots(6), 3, 2, seed=10)
    assert {s.match_id for s in c} == {s.match_id for s in small}
    by_id = {s.match_id: s.seed for s in small}
    assert all(by_id[s.match_id] != s.seed for s in c)
    d = round_robin("autumn", bots(12), 3, 2, seed=9)
    assert not {s.match_id for s in d} & {s.match_id for s in a}
    # More deals later keep the earlier deals' ids and seeds.
    more = round_robin("spring", bots(12), 3, 3, seed=9)
    assert {(s.match_id, s.seed) for s in a} < {(s.match_id, s.seed) for s in more}
    assert all(len(s.match_id) == 20 and 0 <= s.seed < 2**64 for s in a)
    first = a[0]
    assert (first.deal, first.rotation) == (0, 0)


def test_pinned_ids() -> None:
    s = round_robin("spring", ["a", "b"], 2, 1, seed=1)
    first = tuple(league_order(["a", "b"], 1))
    assert [(x.seats, x.rotation) for x in s] == [(first, 0), (first[::-1], 1)]
    assert s[0].seed == s[1].seed
    assert s[0].match_id != s[1].match_id
    assert s == round_robin("spring", ["b", "a"], 2, 1, seed=1)


@pytest.mark.parametrize(
    ("names", "p", "n", "seed"),
    [(["a", "b"], 3, 1, 1), (["a", "a", "b"], 2, 1, 1), (["a", "b"], 5, 1, 1),
     (["a", "b"], 2, 0, 1), (["a", "b"], 2, 1, -1)],
)  # fmt: skip
def test_invalid_schedules(names: list[str], p: int, n: int, seed: int) -> None:
    with pytest.raises(ScheduleError):
        round_robin("spring", names, p, n, seed)


@settings(max_examples=40, deadline=None)
@given(
    v=st.integers(min_value=2, max_value=13),
    p=st.integers(min_value=2, max_value=4),
    n=st.integers(min_value=1, max_value=3),
    seed=st.integers(min_value=0, max_value=2**64 - 1),
)
def test_any_league_is_fair_and_balanced(v: int, p: int, n: int, seed: int) -> None:
    if p > v:
        return
    specs = round_robin("prop", bots(v), p, n, seed)
    _check_fair(specs, p, n)
    meetings = pair_counts([tuple(int(b[3:]) for b in c) for c in {s.combination for s in specs}])
    assert len(meetings) == v * (v - 1) // 2
    assert len(set(meetings.values())) == 1


# --------------------------------------------------------------------------- seat orders


def test_cyclic_orders() -> None:
    assert cyclic_orders(2) == ((0, 1),)
    assert cyclic_orders(3) == ((0, 1, 2), (0, 2, 1))
    assert len(cyclic_orders(4)) == 6 == block_deals(4)
    assert [block_deals(p) for p in (2, 3, 4)] == [1, 2, 6]


def test_seating_rule() -> None:
    order = ("a", "b", "c", "d")
    assert seating(order, 0, 0) == ("a", "b", "c", "d")
    assert seating(order, 0, 1) == ("b", "c", "d", "a")
    assert seating(order, 1, 0) == ("a", "b", "d", "c")
    assert seating(order, 5, 2) == ("c", "b", "a", "d")  # order (0, 3, 2, 1), rotated by 2
    assert seating(order, 6, 0) == seating(order, 0, 0)  # blocks of 3! = 6 deals repeat
    with pytest.raises(ScheduleError):
        seating(order, 0, 4)
    with pytest.raises(ScheduleError):
        seating(order, -1, 0)


def _seat_tallies(
    specs: list[MatchSpec],
) -> tuple[dict[tuple[str, ...], Counter[tuple[int, str, str]]], Counter[tuple[str, int]]]:
    """Per combination: (seat of X, X, Y) for Y right after X; and (bot, seat) counts overall."""
    adjacency: dict[tuple[str, ...], Counter[tuple[int, str, str]]] = defaultdict(Counter)
    seats: Counter[tuple[str, int]] = Counter()
    for s in specs:
        for i, (x, y) in enumerate(_adjacent(s.seats)):
            adjacency[s.combination][i, x, y] += 1
        for i, v in enumerate(s.seats):
            seats[v, i] += 1
    return adjacency, seats


@pytest.mark.parametrize(
    ("v", "p"), [(3, 3), (4, 3), (5, 3), (9, 3), (4, 4), (5, 4), (6, 4), (12, 4), (2, 2), (5, 2)]
)
def test_every_neighbour_equally_often_over_each_block(v: int, p: int) -> None:
    """Every ordered pair X-before-Y of a combination, at every seat, equally often over each
    block of (P-1)! deals; every bot in every seat equally often (designs above 200 too)."""
    block = block_deals(p)
    for blocks in (1, 2):
        specs = round_robin("adj", bots(v), p, blocks * block, seed=5)
        adjacency, seats = _seat_tallies(specs)
        for combo, tally in adjacency.items():
            expected = {
                (i, x, y): blocks * math.factorial(p - 2)
                for i in range(p)
                for x in combo
                for y in combo
                if x != y
            }
            assert dict(tally) == expected, combo
        per_bot = Counter(b for combo in adjacency for b in combo)
        for (bot, _seat), count in seats.items():
            assert count == per_bot[bot] * blocks * block
        assert len(seats) == v * p
    if p > 2:
        # within one block, a deal short of it is unbalanced: the rule is per block
        adjacency, _ = _seat_tallies(round_robin("adj", bots(v), p, block - 1, seed=5))
        assert any(len(set(t.values())) > 1 or len(t) < p * p * (p - 1) for t in adjacency.values())


def test_balanced_designs_keep_balanced_seats() -> None:
    v, p = 13, 4
    assert math.comb(v, p) > MAX_FULL_COMBINATIONS
    specs = round_robin("big", bots(v), p, block_deals(p), seed=3)
    combos = {s.combination for s in specs}
    assert len(combos) < math.comb(v, p)
    adjacency, seats = _seat_tallies(specs)
    for tally in adjacency.values():
        assert set(tally.values()) == {math.factorial(p - 2)} and len(tally) == 48
    assert len(set(seats.values())) == 1


def test_no_author_controlled_value_chooses_a_neighbour() -> None:
    """Renaming a bot (its id changes) while keeping its rank among the ids keeps every seat:
    the order comes from the league seed and the bots' count; another seed reorders."""
    names = ["id-a", "id-m", "id-z"]
    renamed = ["id-a", "id-n", "id-z"]  # an author edits a comment: another id, same rank
    a = round_robin("s", names, 3, 1, seed=11)
    b = round_robin("s", renamed, 3, 1, seed=11)
    pos = {v: i for i, v in enumerate(names)}
    pos_b = {v: i for i, v in enumerate(renamed)}
    assert [[pos[v] for v in s.seats] for s in a] == [[pos_b[v] for v in s.seats] for s in b]
    orders = {tuple(league_order(bots(6), seed)) for seed in range(30)}
    assert len(orders) > 20  # the seed, not the ids, decides the order
    assert league_order(bots(6), 4) == league_order(list(reversed(bots(6))), 4)
