"""A league's deals per combination balance its seat orders unless told otherwise: the default is
the smallest balancing number, (P-1)!, and a number that does not balance is refused (one line,
exit status 2) unless ``--allow-unbalanced``; the same rule where a league is created without the
command line. Against a real Redis, in-process, measured on the matches ``league run`` stores."""

from __future__ import annotations

from collections import Counter

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import league, registry, store


def _arena(url: str, *args: str) -> int:
    return main([*args, "--redis-url", url])


def _bots(r: redis.Redis, count: int) -> list[str]:
    source = b"from arboretum_sdk.bots.random_bot import RandomBot\n"
    return [registry.add_version(r, f"b{i}", source + f"# {i}\n".encode()) for i in range(count)]


def _before_counts(r: redis.Redis, name: str) -> Counter[tuple[str, str]]:
    """How often X sits directly before Y (Y moves right after X, cyclically) over every game
    of the league, from the matches ``league run`` stored."""
    counts: Counter[tuple[str, str]] = Counter()
    for match_id in store.league_matches(r, name):
        record = store.get_match(r, match_id)
        assert record is not None
        seats = record.seats
        for i, x in enumerate(seats):
            counts[x, seats[(i + 1) % len(seats)]] += record.games
    return counts


def test_a_four_player_league_is_balanced_by_default(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """8 bots, 4 players: by default every "X sits directly before Y" occurs as often as its
    reverse and as every other; with one deal per combination (only with --allow-unbalanced)
    some occur in every combination and their reverse never."""
    bots = _bots(r, 8)
    common = ["--bots", *bots, "--players", "4", "--seed", "3"]
    assert _arena(redis_url, "league", "create", "fair", *common) == 0
    out = capsys.readouterr().out
    assert "6 deals per combination" in out and "note:" not in out
    assert _arena(redis_url, "league", "run", "fair") == 0
    counts = _before_counts(r, "fair")
    pairs = [(x, y) for x in bots for y in bots if x != y]
    # a pair meets in C(6, 2) = 15 combinations; 6 deals seat X right before Y 4 * 2! times
    assert {counts[pair] for pair in pairs} == {15 * 8}
    assert sum(counts.values()) == 15 * 8 * len(pairs)

    unbalanced = ["--games-per-pairing", "1", "--allow-unbalanced"]
    assert _arena(redis_url, "league", "create", "skewed", *common, *unbalanced) == 0
    assert "note: 1 deal per combination leaves 4-player seat orders unbalanced" in (
        capsys.readouterr().out
    )
    assert _arena(redis_url, "league", "run", "skewed") == 0
    counts = _before_counts(r, "skewed")
    assert max(counts[x, y] - counts[y, x] for x, y in pairs) == 60
    assert any(counts[x, y] == 60 and counts[y, x] == 0 for x, y in pairs)


@pytest.mark.parametrize(("players", "default"), [(2, 1), (3, 2), (4, 6)])
def test_the_default_is_the_smallest_balanced_number(
    r: redis.Redis, redis_url: str, players: int, default: int
) -> None:
    bots = _bots(r, players + 1)
    assert (
        _arena(redis_url, "league", "create", "d", "--bots", *bots, "--players", str(players)) == 0
    )
    created = store.get_league(r, "d")
    assert created is not None and created.settings.games_per_pairing == default
    if players == 3:
        assert _arena(redis_url, "league", "run", "d") == 0
        counts = _before_counts(r, "d")
        assert len(set(counts.values())) == 1 and len(counts) == len(bots) * (len(bots) - 1)
    # A 2-player league is balanced with one deal: it plays the deal in both seatings.
    one = league.create_league(r, f"one{players}", bots, players=players, games_per_pairing=None)
    assert one.settings.games_per_pairing == default


def test_unbalanced_deals_are_refused_unless_allowed(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = _bots(r, 3)
    common = ["--bots", *bots, "--players", "3", "--seed", "1"]
    assert _arena(redis_url, "league", "create", "odd", *common, "--games-per-pairing", "3") == 2
    assert capsys.readouterr().err == (
        "arena: --games-per-pairing 3: 3 deals per combination leave 3-player seat orders "
        "unbalanced: each bot sits directly before each other equally often only over a "
        "multiple of 2 deals (use a multiple of 2, or --allow-unbalanced)\n"
    )
    assert store.get_league(r, "odd") is None
    assert _arena(redis_url, "league", "create", "even", *common, "--games-per-pairing", "4") == 0
    assert "note:" not in capsys.readouterr().out
    allowed = ["--games-per-pairing", "3", "--allow-unbalanced"]
    assert _arena(redis_url, "league", "create", "odd", *common, *allowed) == 0
    assert "note: 3 deals per combination leave 3-player seat orders unbalanced" in (
        capsys.readouterr().out
    )
    created = store.get_league(r, "odd")
    assert created is not None and created.settings.games_per_pairing == 3
    # 2 players: any number balances (each deal is played in both seatings)
    assert (
        _arena(redis_url, "league", "create", "duo", *common[:-4], "--games-per-pairing", "3") == 0
    )


def test_the_league_operation_applies_the_same_rule(r: redis.Redis) -> None:
    """Where a league is created without the command line (the demo, scripts)."""
    bots = _bots(r, 4)
    with pytest.raises(
        league.LeagueError, match=r"1 deal per combination leaves 4-player .* 6 deals"
    ):
        league.create_league(r, "x", bots, players=4, games_per_pairing=1)
    with pytest.raises(league.LeagueError, match="multiple of 2 deals"):
        league.create_league(r, "x", bots, players=3, games_per_pairing=5)
    assert store.get_league(r, "x") is None
    allowed = league.create_league(
        r, "x", bots, players=4, games_per_pairing=1, allow_unbalanced=True
    )
    assert allowed.settings.games_per_pairing == 1
    assert league.create_league(r, "y", bots, players=4).settings.games_per_pairing == 6
