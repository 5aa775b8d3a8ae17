"""A league's state through ``arena league run``, ``retry`` and ``cancel``, against a real Redis,
in-process: a league whose matches are all over is finished, and stays finished."""

from __future__ import annotations

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import board, league, ratings, registry, store

NAME = "done"
REFUSED = f"arena: league {NAME} is finished already; there is nothing to cancel\n"


def _arena(url: str, *args: str) -> int:
    return main([*args, "--redis-url", url])


@pytest.fixture
def finished(r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """A two-bot league whose matches were all played (their results recorded as a worker
    records them); the ids of its matches."""
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    assert _arena(redis_url, "league", "create", NAME, "--bots", "random", "greedy") == 0
    assert _arena(redis_url, "league", "run", NAME) == 0
    ids = store.league_matches(r, NAME)
    assert ids
    for record in store.get_matches(r, ids):
        assert record is not None
        games = tuple(store.GameOutcome((1, 2), (9, 3), (0, 0)) for _ in record.deals or (0,))
        ratings.record_result(r, store.MatchResult(record.id, NAME, record.seats, games))
    assert league.mark_finished_if_done(r, NAME)  # what the job of the last match does
    capsys.readouterr()
    return ids


def test_the_last_match_stores_the_fit_the_leaderboard_reads(
    r: redis.Redis, finished: list[str]
) -> None:
    """Marking the league finished stores the fit of all its results: the board is read as it
    is stored, without a fit of its own."""
    found = board.read_board(r, NAME)
    assert found.fresh and found.results == found.fitted == len(finished)
    assert all(row.fit is not None for row in found.rows)


def _statuses(r: redis.Redis, ids: list[str]) -> list[store.MatchStatus]:
    return [m.status for m in store.get_matches(r, ids) if m is not None]


def _league_status(r: redis.Redis) -> store.LeagueStatus:
    found = store.get_league(r, NAME)
    assert found is not None
    return found.status


def test_cancel_refuses_a_finished_league_and_leaves_it_as_it_is(
    r: redis.Redis, redis_url: str, finished: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "cancel", NAME) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", REFUSED)
    assert _league_status(r) is store.LeagueStatus.FINISHED
    assert _statuses(r, finished) == [store.MatchStatus.FINISHED] * len(finished)


@pytest.mark.parametrize("command", ["retry", "run"])
def test_retry_or_run_with_nothing_to_play_leave_a_finished_league_finished(
    r: redis.Redis,
    redis_url: str,
    finished: list[str],
    command: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The guide's sequence: the league is over, `arena league retry` finds no failed match,
    then `arena league cancel` (before, retry and run set the league running again for good,
    and the cancel that followed marked it cancelled)."""
    assert _arena(redis_url, "league", command, NAME) == 0
    assert _league_status(r) is store.LeagueStatus.FINISHED
    capsys.readouterr()
    assert _arena(redis_url, "league", "cancel", NAME) == 1
    assert capsys.readouterr().err == REFUSED
    assert _league_status(r) is store.LeagueStatus.FINISHED
    assert _statuses(r, finished) == [store.MatchStatus.FINISHED] * len(finished)


def test_cancel_finds_a_league_left_running_after_its_last_match_finished(
    r: redis.Redis, redis_url: str, finished: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A league stored as running although none of its matches is queued or running (so left
    by an earlier version) is finished, not cancelled."""
    store.set_league_status(r, NAME, store.LeagueStatus.RUNNING)
    assert _arena(redis_url, "league", "cancel", NAME) == 1
    assert capsys.readouterr().err == REFUSED
    assert _league_status(r) is store.LeagueStatus.FINISHED
    assert _statuses(r, finished) == [store.MatchStatus.FINISHED] * len(finished)


def test_cancel_still_cancels_a_league_with_matches_to_play(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    assert _arena(redis_url, "league", "create", NAME, "--bots", "random", "greedy") == 0
    assert _arena(redis_url, "league", "run", NAME) == 0
    ids = store.league_matches(r, NAME)
    capsys.readouterr()
    assert _arena(redis_url, "league", "cancel", NAME) == 0
    assert capsys.readouterr().out.startswith(f"league {NAME}: cancelled, ")
    assert _league_status(r) is store.LeagueStatus.CANCELLED
    assert _statuses(r, ids) == [store.MatchStatus.CANCELLED] * len(ids)


def test_retry_neither_starts_nor_resumes_a_league(
    r: redis.Redis, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A league never run, and a cancelled one, are refused by ``retry`` as ``run`` refuses a
    cancelled one (before, retry marked the first running with nothing to play, for good, and
    played the cancelled one's matches again)."""
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    assert _arena(redis_url, "league", "create", NAME, "--bots", "random", "greedy") == 0
    capsys.readouterr()
    assert _arena(redis_url, "league", "retry", NAME) == 1
    assert capsys.readouterr().err == (
        f"arena: league {NAME!r} has not run yet (arena league run {NAME})\n"
    )
    assert _league_status(r) is store.LeagueStatus.CREATED
    assert _arena(redis_url, "league", "run", NAME) == 0
    # no worker in this test: the run says how to start one
    assert "note: no worker listens on queue 'arena' yet: start one with: arena worker" in (
        capsys.readouterr().out
    )
    assert _arena(redis_url, "league", "cancel", NAME) == 0
    capsys.readouterr()
    ids = store.league_matches(r, NAME)
    for command in ("retry", "run"):
        assert _arena(redis_url, "league", command, NAME) == 1
        assert capsys.readouterr().err.startswith(f"arena: league {NAME!r} was cancelled")
    assert _league_status(r) is store.LeagueStatus.CANCELLED
    assert set(_statuses(r, ids)) == {store.MatchStatus.CANCELLED}
