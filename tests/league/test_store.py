"""Key layout and typed access of the league store (arboretum_worker.store)."""

from __future__ import annotations

import pytest
import redis

from arboretum_worker import replays, store
from arboretum_worker.ratings import record_result
from arboretum_worker.schedule import round_robin
from arboretum_worker.store import (
    GameOutcome,
    Keys,
    LeagueSettings,
    LeagueStatus,
    MatchResult,
    MatchStatus,
    StoreError,
)


def test_key_layout_is_pinned() -> None:
    assert Keys.PREFIX == "arena:"
    assert Keys.BOTS == "arena:bots"
    assert Keys.bot("alpha") == "arena:bot:alpha"
    assert Keys.bot_versions("alpha") == "arena:bot:alpha:versions"
    assert Keys.version("ab12") == "arena:version:ab12"
    assert Keys.version_files("ab12") == "arena:version:ab12:files"
    assert Keys.LEAGUES == "arena:leagues"
    assert Keys.league("spring") == "arena:league:spring"
    assert Keys.league_matches("spring") == "arena:league:spring:matches"
    assert Keys.league_status("spring", "failed") == "arena:league:spring:status:failed"
    assert Keys.league_retrying("spring") == "arena:league:spring:retrying"
    assert Keys.league_bot("spring", "alpha") == "arena:league:spring:bot:alpha"
    assert (
        Keys.league_bot_status("spring", "alpha", "queued")
        == "arena:league:spring:bot:alpha:status:queued"
    )
    assert Keys.INDEX_VERSION == "arena:index:version"
    assert Keys.match("m1") == "arena:match:m1"
    assert Keys.result("m1") == "arena:result:m1"
    assert Keys.replay("m1") == "arena:replay:m1"
    assert Keys.bot_log("m1", 2) == "arena:log:m1:2"
    assert Keys.elo_ratings("spring") == "arena:elo:spring:ratings"
    assert Keys.elo_seq("spring") == "arena:elo:spring:seq"
    assert Keys.elo_applied("spring") == "arena:elo:spring:applied"
    assert Keys.elo_stats("spring", "v1") == "arena:elo:spring:stats:v1"
    assert Keys.elo_history("spring", "v1") == "arena:elo:spring:history:v1"


@pytest.mark.parametrize("bad", ["", "a:b", "a b", "x\n"])
def test_key_for_refuses_ids_that_could_collide(bad: str) -> None:
    with pytest.raises(StoreError):
        Keys.match(bad)


@pytest.mark.parametrize("bad", ["", "-x", "a:b", "a/b", "x" * 65, "é"])
def test_names_are_validated(bad: str) -> None:
    with pytest.raises(StoreError):
        store.validate_name("bot", bad)


def test_all_keys_written_are_under_the_prefix(r: redis.Redis) -> None:
    settings = LeagueSettings(players=2, games_per_pairing=1, bots=("a", "b"), seed=1)
    store.create_league(r, "spring", settings)
    store.create_matches(r, round_robin("spring", ["a", "b"], 2, 1, 1))
    assert all(k.startswith(b"arena:") for k in r.keys("*"))


def _settings() -> LeagueSettings:
    return LeagueSettings(players=3, games_per_pairing=2, bots=("a", "b", "c", "d"), seed=7)


def test_league_round_trip_and_duplicate(r: redis.Redis) -> None:
    league = store.create_league(r, "spring", _settings(), created=12.5)
    assert store.get_league(r, "spring") == league
    assert league.status is LeagueStatus.CREATED
    assert store.list_leagues(r) == ["spring"]
    with pytest.raises(StoreError, match="already exists"):
        store.create_league(r, "spring", _settings())
    store.set_league_status(r, "spring", LeagueStatus.RUNNING)
    got = store.get_league(r, "spring")
    assert got is not None and got.status == "running"
    assert store.get_league(r, "autumn") is None


def test_league_settings_are_validated() -> None:
    with pytest.raises(StoreError):
        LeagueSettings(players=5, games_per_pairing=1, bots=("a",) * 5, seed=1)
    with pytest.raises(StoreError):
        LeagueSettings(players=2, games_per_pairing=1, bots=("a", "a"), seed=1)
    with pytest.raises(StoreError):
        LeagueSettings(players=3, games_per_pairing=1, bots=("a", "b"), seed=1)
    s = _settings()
    assert LeagueSettings.from_json(s.to_json()) == s


def test_matches_are_created_once_and_change_status(r: redis.Redis) -> None:
    specs = round_robin("spring", ["a", "b", "c"], 3, 2, 7)
    assert store.create_matches(r, specs) == len(specs) == 6
    assert store.create_matches(r, specs) == 0
    assert store.league_matches(r, "spring") == [s.match_id for s in specs]
    spec = specs[1]
    m = store.get_match(r, spec.match_id)
    assert m is not None
    assert (m.seats, m.deal, m.rotation, m.seed) == (
        spec.seats,
        spec.deal,
        spec.rotation,
        spec.seed,
    )
    assert m.status is MatchStatus.QUEUED and m.attempts == 0

    assert store.start_match_attempt(r, spec.match_id, "worker-1")
    assert store.set_match_status(r, spec.match_id, MatchStatus.FAILED, failure="bot crashed")
    assert store.start_match_attempt(r, spec.match_id, "worker-2")
    m = store.get_match(r, spec.match_id)
    assert m is not None
    assert (m.status, m.attempts, m.worker, m.failure) == ("running", 2, "worker-2", "bot crashed")
    assert m.started is not None

    result = MatchResult(
        spec.match_id, "spring", spec.seats, (GameOutcome((1, 2, 3), (9, 5, 2), (0, 0, 1)),), 3.0
    )
    record_result(r, result)
    m = store.get_match(r, spec.match_id)
    assert m is not None and m.status is MatchStatus.FINISHED and m.finished == 3.0
    assert m.failure is None
    # A finished match stays finished.
    assert not store.set_match_status(r, spec.match_id, MatchStatus.CANCELLED)
    assert not store.start_match_attempt(r, spec.match_id, "worker-3")
    m = store.get_match(r, spec.match_id)
    assert m is not None and m.status is MatchStatus.FINISHED
    with pytest.raises(StoreError):
        store.set_match_status(r, spec.match_id, MatchStatus.FINISHED)
    with pytest.raises(StoreError):
        store.set_match_status(r, "nosuchmatch", MatchStatus.FAILED)
    assert store.get_result(r, spec.match_id) == result
    # Several at once, in one round trip each (the web's match lists).
    ids = [spec.match_id, specs[0].match_id, "nosuchmatch"]
    assert store.match_statuses(r, ids) == {ids[0]: "finished", ids[1]: "queued", ids[2]: None}
    assert store.get_results(r, ids) == {ids[0]: result, ids[1]: None, ids[2]: None}
    assert store.get_results(r, []) == {}


def test_results_are_validated() -> None:
    game = GameOutcome((1, 2), (5, 3), (0, 0))
    with pytest.raises(StoreError):
        MatchResult("m", "l", ("a", "a"), (game,))
    with pytest.raises(StoreError):
        MatchResult("m", "l", ("a", "b"), ())
    with pytest.raises(StoreError):
        MatchResult("m", "l", ("a", "b", "c"), (game,))
    with pytest.raises(StoreError, match="competition ranks"):
        MatchResult("m", "l", ("a", "b", "c"), (GameOutcome((1, 1, 2), (5, 5, 3), (0, 0, 0)),))
    ok = MatchResult("m", "l", ("a", "b", "c"), (GameOutcome((1, 1, 3), (5, 5, 3), (0, 0, 0)),))
    assert MatchResult.from_json(ok.to_json()) == ok


def test_replays_first_write_wins(r: redis.Redis) -> None:
    assert replays.save_replay(r, "m1", 0, b'{"v": 1}')
    assert not replays.save_replay(r, "m1", 0, b'{"v": 2}')
    assert replays.save_replay(r, "m1", 1, "{}")
    assert replays.get_replay(r, "m1", 0) == b'{"v": 1}'
    assert replays.get_replay(r, "m1", 5) is None
    assert replays.replay_games(r, "m1") == [0, 1]
    replays.drop_replays(r, "m1")  # a stale run's, before the recorded run's are stored
    assert replays.replay_games(r, "m1") == []
    assert replays.save_replay(r, "m1", 0, b'{"v": 2}')
    assert replays.get_replay(r, "m1", 0) == b'{"v": 2}'


def test_bot_logs_are_capped(r: redis.Redis) -> None:
    assert replays.append_bot_log(r, "m1", 0, b"abc", cap=8) == 3
    assert replays.append_bot_log(r, "m1", 0, b"defghij", cap=8) == 5
    assert replays.append_bot_log(r, "m1", 0, b"more", cap=8) == 0
    assert replays.get_bot_log(r, "m1", 0) == b"abcdefgh"
    assert replays.get_bot_log(r, "m1", 1) == b""
    big = bytes(range(256)) * 1000
    replays.append_bot_log(r, "m2", 3, big)
    assert replays.get_bot_log(r, "m2", 3) == big[: replays.BOT_LOG_CAP]


def test_a_bot_log_set_twice_is_stored_once(r: redis.Redis) -> None:
    # What a client sends again after a broken connection must not store the log twice.
    assert replays.set_bot_log(r, "m1", 0, b"abcdefghij", cap=8) == 8
    assert replays.set_bot_log(r, "m1", 0, b"abcdefghij", cap=8) == 8
    assert replays.get_bot_log(r, "m1", 0) == b"abcdefgh"
    assert replays.set_bot_log(r, "m1", 0, b"") == 0
    assert replays.get_bot_log(r, "m1", 0) == b""
