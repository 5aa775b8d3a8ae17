"""The leaderboard (arboretum_worker.board) against a real Redis: led by the stored batch fit,
ranked by the lower end of its interval, provisional versions marked, each bot by its best
established version, in a bounded number of round trips."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest
import redis

from arboretum_worker import board, fit, ratings, registry
from arboretum_worker.store import GameOutcome, Keys, MatchResult

LEAGUE = "lb"


def _version(r: redis.Redis, bot: str, n: int = 0) -> str:
    return registry.add_version(r, bot, f"# {bot} version {n}\n".encode())


def _play(r: redis.Redis, a: str, b: str, wins: int, losses: int, draws: int = 0) -> None:
    """One match of ``a`` against ``b``: ``wins`` games a won, then ``losses``, then draws."""
    ranks = [(1, 2)] * wins + [(2, 1)] * losses + [(1, 1)] * draws
    games = tuple(GameOutcome(rk, (0, 0), (0, 0)) for rk in ranks)
    seq = int(r.get(Keys.elo_seq(LEAGUE)) or 0)
    ratings.record_result(r, MatchResult(f"m{seq}-{a[:6]}-{b[:6]}", LEAGUE, (a, b), games))


def _fitted(r: redis.Redis) -> dict[str, fit.FitRating]:
    return {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, LEAGUE))}


def _rows(found: board.Board) -> list[tuple[str, str]]:
    return [(row.bot, row.version) for row in found.rows]


def test_led_by_the_fit_and_ranked_by_the_lower_end_of_its_interval(r: redis.Redis) -> None:
    steady, lucky = _version(r, "steady"), _version(r, "lucky")
    others = [_version(r, f"other{i}") for i in range(5)]
    for _ in range(4):
        for i, a in enumerate(others):
            _play(r, steady, a, 30, 20)
            _play(r, a, others[i - 1], 25, 25)
    _play(r, lucky, others[0], 3, 0)  # three wins: a high rating, and a wide interval
    found = board.leaderboard(r, LEAGUE)
    fitted = _fitted(r)
    assert found.fresh and found.results == found.fitted == 41
    assert [row.version for row in found.rows] == sorted(
        fitted, key=lambda v: (-fitted[v].lower, v)
    )
    row = {row.version: row for row in found.rows}
    assert row[lucky].fit == fitted[lucky] and row[steady].fit == fitted[steady]
    assert fitted[lucky].elo > fitted[steady].elo  # leads by its rating...
    assert row[lucky].rank > row[steady].rank  # ...but ranks below: its lower end is lower
    assert row[lucky].conservative == fitted[lucky].lower
    assert row[lucky].provisional and not row[steady].provisional
    assert (fitted[steady].upper - fitted[steady].lower) / 2 <= board.PROVISIONAL_HALF_WIDTH
    assert [r.rank for r in found.rows] == list(range(1, 8))
    live = {s.version: s for s in ratings.standings(r, LEAGUE)}
    for vid, shown in row.items():
        assert shown.live == live[vid].live and shown.elo == live[vid].elo
        assert shown.stats == live[vid].stats


def test_the_fit_is_stored_and_made_again_only_for_newer_results(r: redis.Redis) -> None:
    a, b = _version(r, "a"), _version(r, "b")
    _play(r, a, b, 3, 1)
    assert board.stored_fit(r, LEAGUE) is None
    first = board.read_board(r, LEAGUE)  # reading never fits: the fit is not seen yet
    assert (first.results, first.fitted, first.fresh) == (1, 0, False)
    assert all(row.fit is None and row.provisional for row in first.rows)
    assert [row.conservative for row in first.rows] == sorted(
        (row.live.lower for row in first.rows), reverse=True
    )
    made = board.refresh_fit(r, LEAGUE)
    assert made == board.stored_fit(r, LEAGUE) == board.StoredFit(1, _fitted(r))
    _play(r, a, b, 0, 4)
    stale = board.read_board(r, LEAGUE)
    assert (stale.results, stale.fitted) == (2, 1)
    assert {row.version: row.fit for row in stale.rows} == made.ratings  # the stored fit
    fresh = board.leaderboard(r, LEAGUE)
    assert fresh.fresh and {row.version: row.fit for row in fresh.rows} == _fitted(r)
    # a fit of fewer results never replaces a newer one
    r.hset(Keys.elo_fit(LEAGUE), "seq", 99)
    board.refresh_fit(r, LEAGUE)
    assert int(r.hget(Keys.elo_fit(LEAGUE), "seq") or 0) == 99


def test_a_bot_row_is_its_best_established_version_not_its_newest(r: redis.Redis) -> None:
    first = _version(r, "alpha", 1)
    reroll = _version(r, "alpha", 2)  # the same bot again: a new version with fresh luck
    x, y = _version(r, "x"), _version(r, "y")
    for _ in range(3):
        _play(r, x, y, 40, 40)
        _play(r, first, x, 40, 40)
        _play(r, first, y, 40, 40)
        _play(r, reroll, x, 44, 36)  # luckier, within the noise
        _play(r, reroll, y, 44, 36)
    found = board.leaderboard(r, LEAGUE)
    fitted = _fitted(r)
    assert fitted[reroll].elo > fitted[first].elo and fitted[reroll].lower <= fitted[first].upper
    rows = {row.version: row for row in board.leaderboard(r, LEAGUE, all_versions=True).rows}
    assert not rows[first].provisional and not rows[reroll].provisional
    assert rows[first].counted and not rows[reroll].counted and rows[reroll].latest
    assert ("alpha", first) in _rows(found) and ("alpha", reroll) not in _rows(found)
    # a version better beyond doubt (its interval wholly above) takes the row
    better = _version(r, "alpha", 3)
    for _ in range(3):
        _play(r, better, x, 70, 10)
        _play(r, better, y, 70, 10)
    found = board.leaderboard(r, LEAGUE)
    fitted = _fitted(r)
    assert fitted[better].lower > fitted[first].upper
    assert ("alpha", better) in _rows(found) and len(found.rows) == 3
    # a newest version still provisional does not take the row from an established one
    newest = _version(r, "alpha", 4)
    _play(r, newest, x, 5, 0)
    found = board.leaderboard(r, LEAGUE)
    assert ("alpha", better) in _rows(found)
    everything = board.leaderboard(r, LEAGUE, all_versions=True)
    assert len(everything.rows) == 6 and sum(row.counted for row in everything.rows) == 3
    assert {row.version for row in everything.rows if row.latest} == {newest, x, y}


def test_a_bot_without_an_established_version_shows_its_newest(r: redis.Redis) -> None:
    old, new = _version(r, "fresh", 1), _version(r, "fresh", 2)
    other = _version(r, "other")
    _play(r, old, other, 6, 0)
    _play(r, new, other, 1, 2)
    found = board.leaderboard(r, LEAGUE)
    assert ("fresh", new) in _rows(found) and ("fresh", old) not in _rows(found)
    assert all(row.provisional for row in found.rows)


class CountingRedis(redis.Redis):
    """A client that counts its round trips (a command, or a pipeline's execute)."""

    trips = 0

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.trips += 1
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        def counted(raise_on_error: bool = True) -> Sequence[Any]:
            self.trips += 1
            return execute(raise_on_error)

        pipe.execute = counted  # type: ignore[method-assign]
        return pipe


@pytest.mark.parametrize("bots", [2, 12])
def test_reading_the_board_takes_three_round_trips_whatever_its_size(
    r: redis.Redis, redis_url: str, bots: int
) -> None:
    vids = [_version(r, f"bot{i}", v) for i in range(bots) for v in range(2)]
    for a, b in itertools.pairwise(vids):
        _play(r, a, b, 2, 1)
    board.refresh_fit(r, LEAGUE)
    counting = CountingRedis.from_url(redis_url)
    try:
        found = board.read_board(counting, LEAGUE, all_versions=True)
        assert counting.trips == 3
    finally:
        counting.close()
    assert len(found.rows) == len(vids) and found.fresh


def test_a_pair_left_out_of_the_fit_is_left_out_of_the_board(r: redis.Redis) -> None:
    from arboretum_worker.audit import exclusions

    a, b, c = _version(r, "a"), _version(r, "b"), _version(r, "c")
    _play(r, a, b, 20, 0)  # a thrown pair: b lost everything to a
    _play(r, a, c, 10, 10)
    _play(r, b, c, 10, 10)
    first = board.leaderboard(r, LEAGUE)
    assert first.fresh
    exclusions.exclude(r, LEAGUE, a, b, by="operator")
    stale = board.read_board(r, LEAGUE)
    assert not stale.current and not stale.fresh and stale.fitted == stale.results
    fresh = board.leaderboard(r, LEAGUE)
    assert fresh.fresh and fresh.current
    without = [res for res in ratings.results_in_order(r, LEAGUE) if set(res.seats) != {a, b}]
    assert len(without) == 2
    expected = {f.version: f for f in fit.fit_ratings(without)}
    assert {row.version: row.fit for row in fresh.rows} == expected
    exclusions.include(r, LEAGUE, a, b)
    assert not board.read_board(r, LEAGUE).fresh
    assert {row.version: row.fit for row in board.leaderboard(r, LEAGUE).rows} == _fitted(r)
