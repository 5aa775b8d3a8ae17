"""Casual games' records, limits and the checks of a person's decisions, on a real Redis.

The games themselves, played by a real worker with the bots in their sandboxes, are in
``tests/integration/test_casual.py``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
import redis

from arboretum import DECK, Card, Cell, Draw, GameState, Play
from arboretum_sdk.info import Clock
from arboretum_sdk.stdio import lines
from arboretum_worker import registry
from arboretum_worker.bots import builtin_bot_files
from arboretum_worker.casual import (
    CasualError,
    CasualGame,
    CasualSettings,
    check_key,
    games_for_version,
    get_game,
    pending,
    read_feed,
    record_for_version,
    resign,
    seat_game,
    start_game,
    submit,
)
from arboretum_worker.casual.feed import append
from arboretum_worker.casual.games import explain_illegal, release
from arboretum_worker.casual.records import Status, set_pending, store_result
from arboretum_worker.keys import Keys
from arboretum_worker.settings import SettingsError

SETTINGS = CasualSettings(per_address=3, max_queued=50)


@pytest.fixture
def bots(r: redis.Redis) -> dict[str, str]:
    return {
        name: registry.add_version(r, name, builtin_bot_files(name), owner=owner)
        for name, owner in (("greedy", None), ("random", "ann"))
    }


def start(r: redis.Redis, *opponents: str, seat: int | None = 0, address: str = "10.0.0.1",
          author: str | None = None, settings: CasualSettings = SETTINGS):  # fmt: skip
    return start_game(
        r, opponents=list(opponents), seat=seat, address=address, author=author, settings=settings
    )


def refused(status: int, call, *args, **kwargs) -> CasualError:  # type: ignore[no-untyped-def]
    with pytest.raises(CasualError) as info:
        call(*args, **kwargs)
    assert info.value.status == status, str(info.value)
    return info.value


def test_a_game_is_recorded_queued_and_enqueued(r: redis.Redis, bots: dict[str, str]) -> None:
    game, key = start(r, "greedy", "random", seat=1)
    assert game.players == 3 and game.person_seat == 1 and game.status == Status.QUEUED
    assert game.seats == (bots["greedy"], "", bots["random"])
    assert game.names == ("greedy", "you", "random")
    assert (game.per_decision_ms, game.bank_ms, game.faults_to_forfeit) == (120_000, 600_000, 2)
    assert get_game(r, game.game_id) == game
    # The key is stored as its SHA-256 only, and the address too.
    record = {k.decode(): v.decode() for k, v in r.hgetall(Keys.casual(game.game_id)).items()}
    assert record["key"] == hashlib.sha256(key.encode()).hexdigest()
    assert "10.0.0.1" not in json.dumps(record) and key not in json.dumps(record)
    assert [m for _, m in read_feed(r, game.game_id)] == [{"type": "queued"}]
    from rq import Queue

    queue = Queue("arena-casual", connection=r)
    assert queue.job_ids == [f"arena-casual-{game.game_id}"]
    job = queue.fetch_job(queue.job_ids[0])
    assert job.func_name == "arboretum_worker.casual.job.casual_game"
    assert job.args == (game.game_id,)


def test_a_random_seat_is_one_of_the_game(r: redis.Redis, bots: dict[str, str]) -> None:
    seats = {start(r, "greedy", seat=None, address=f"a{i}")[0].person_seat for i in range(30)}
    assert seats == {0, 1}


def test_bad_starts_are_refused_in_words(r: redis.Redis, bots: dict[str, str]) -> None:
    assert "1 to 3 opponents" in str(refused(400, start, r))
    assert "not 4" in str(refused(400, start, r, "greedy", "greedy", "greedy", "greedy"))
    assert "no bot or bot version 'nobody'" in str(refused(400, start, r, "nobody"))
    assert "no bot or bot version" in str(refused(400, start, r, "a:b c"))
    assert "seat must be 0 to 1" in str(refused(400, start, r, "greedy", seat=2))
    refused(400, start, r, "greedy", seat=True)
    refused(400, start_game, r, opponents="greedy", seat=0, address="x", author=None,
            settings=SETTINGS)  # fmt: skip
    assert r.zcard(Keys.CASUAL_QUEUED) == 0  # nothing was admitted


def test_an_authors_private_versions_are_theirs_alone(r: redis.Redis, bots: dict[str, str]) -> None:
    old = bots["random"]
    registry.add_version(r, "random", b"from arboretum_sdk.bots.random_bot import *\n", owner="ann")
    assert registry.latest(r, "random") != old
    err = refused(403, start, r, old)
    assert "only the bot's author" in str(err)
    refused(403, start, r, old, author="bob")
    game, _ = start(r, old, author="ann")
    assert game.seats[1] == old and game.names[1] == f"random@{old[:8]}"
    # The current version by id is anyone's.
    game, _ = start(r, registry.latest(r, "random") or "", address="other")
    assert game.names[1] == "random"


def test_games_per_address_and_queued_are_limited(r: redis.Redis, bots: dict[str, str]) -> None:
    games = [start(r, "greedy", address="1.2.3.4")[0] for _ in range(3)]
    err = refused(429, start, r, "greedy", address="1.2.3.4")
    assert err.retry_after and err.retry_after > 0
    assert "at most 3" in str(err)
    start(r, "greedy", address="5.6.7.8")  # another address is not held up
    release(r, games[0].game_id)
    start(r, "greedy", address="1.2.3.4")
    small = CasualSettings(max_queued=4)  # 4 queued now
    err = refused(429, start, r, "greedy", address="9.9.9.9", settings=small)
    assert "queue is full" in str(err) and err.retry_after


def test_settings_from_the_environment() -> None:
    s = CasualSettings.from_env(
        {"ARENA_CASUAL_DECISION_S": "2", "ARENA_CASUAL_BANK_S": "0.5", "ARENA_CASUAL_PER_ADDRESS":
         "5", "ARENA_QUEUE": "q"}
    )  # fmt: skip
    assert (s.per_decision_ms, s.bank_ms, s.per_address, s.queue) == (2000, 500, 5, "q")
    with pytest.raises(SettingsError, match="ARENA_CASUAL_MAX_QUEUED"):
        CasualSettings.from_env({"ARENA_CASUAL_MAX_QUEUED": "many"})
    with pytest.raises(SettingsError, match="per_address"):
        CasualSettings(per_address=0)


def test_unknown_games_and_wrong_keys(r: redis.Redis, bots: dict[str, str]) -> None:
    refused(404, get_game, r, "0123456789abcdef")
    refused(404, get_game, r, "../x")
    game, key = start(r, "greedy")
    check_key(r, game, key)
    for wrong in (None, "", key + "x", "a" * 32):
        assert "not your seat" in str(refused(403, check_key, r, game, wrong))
    _other, other_key = start(r, "greedy")
    refused(403, check_key, r, game, other_key)  # a key of another seat
    # the person's own calls read the record once and say the same
    assert seat_game(r, game.game_id, key) == game
    for call, args in ((seat_game, ()), (resign, ()), (submit, ({"id": 1, "draw": "deck"},))):
        for unknown in ("0123456789abcdef", "../x", "x" * 80):
            assert "no such casual game" in str(refused(404, call, r, unknown, key, *args))
        assert "not your seat" in str(refused(403, call, r, game.game_id, other_key, *args))


def _request(game: CasualGame, r: redis.Redis, number: int = 1) -> tuple[GameState, dict]:
    state = GameState.new(game.players, seed=5)
    assert state.current_seat == game.person_seat == 0
    request = lines.request_message(number, 0, state.view(0), Clock(120_000, 600_000))
    request["events"] = []
    set_pending(r, game.game_id, request)
    return state, request


class _Counting(redis.Redis):
    """A client that notes each command it sends (each one round trip: no pipeline here)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands: list[str] = []

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.commands.append(str(args[0]).upper())
        return super().execute_command(*args, **options)


def test_decisions_are_checked_before_they_reach_the_relay(
    r: redis.Redis, bots: dict[str, str]
) -> None:
    game, key = start(r, "greedy")
    gid, moves = game.game_id, Keys.casual_moves(game.game_id)
    assert "not your turn" in str(refused(409, submit, r, gid, key, {"id": 1, "draw": "deck"}))
    _request(game, r, number=7)
    assert pending(r, game.game_id)["id"] == 7
    refused(403, submit, r, gid, "nope", {"id": 7, "draw": "deck"})
    assert "stale" in str(refused(409, submit, r, gid, key, {"id": 6, "draw": "deck"}))
    assert '"id"' in str(refused(400, submit, r, gid, key, {"draw": "deck"}))
    refused(400, submit, r, gid, key, ["draw"])
    assert 'has "play"' in str(refused(400, submit, r, gid, key, {"id": 7, "play": "J1"}))
    err = refused(400, submit, r, gid, key, {"id": 7, "draw": 1})
    assert "discard pile of seat 1 is empty" in str(err)
    assert "seats are 0 to 1" in str(refused(400, submit, r, gid, key, {"id": 7, "draw": 3}))
    assert r.llen(moves) == 0  # nothing reached the relay
    counted = _Counting(connection_pool=r.connection_pool)
    submit(counted, gid, key, {"id": 7, "source": "deck"})  # the alias of "draw"
    # the record read once, then the push (a Redis that does not know the push's script yet is
    # sent it, and asked again)
    loaded_first = ["HMGET", "EVALSHA", "SCRIPT LOAD", "EVALSHA"]
    assert counted.commands in (["HMGET", "EVALSHA"], loaded_first)
    assert [json.loads(m) for m in r.lrange(moves, 0, -1)] == [
        {"type": "answer", "answer": {"id": 7, "draw": "deck"}}
    ]
    assert "answered already" in str(refused(409, submit, r, gid, key, {"id": 7, "draw": "deck"}))


def test_plays_are_checked_with_the_engines_words(r: redis.Redis) -> None:
    state = GameState.new(2, seed=5)
    for _ in range(2):
        state.apply(Draw(DECK))
    view = state.view(0)
    hand = view.hand
    assert explain_illegal(view, Play(hand[0], Cell(0, 0), hand[1])) is None
    assert "first card" in (explain_illegal(view, Play(hand[0], Cell(1, 0), hand[1])) or "")
    missing = next(c for c in (Card.parse(f"{s.value}{v}") for s in view.species
                               for v in range(1, 9)) if c not in hand)  # fmt: skip
    assert "not in your hand" in (explain_illegal(view, Play(missing, Cell(0, 0), hand[1])) or "")
    assert "discard" in (explain_illegal(view, Play(hand[0], Cell(0, 0), None)) or "")
    assert "not your turn" in (explain_illegal(state.view(1), Draw(DECK)) or "")


def test_resigning_and_a_game_over(r: redis.Redis, bots: dict[str, str]) -> None:
    game, key = start(r, "greedy")
    refused(403, resign, r, game.game_id, None)
    resign(r, game.game_id, key)
    resign(r, game.game_id, key)  # twice: one resignation
    assert [json.loads(m) for m in r.lrange(Keys.casual_moves(game.game_id), 0, -1)] == [
        {"type": "resign"}
    ]
    over = CasualGame(**{**game.to_json(), "status": Status.OVER, "ended": 5.0,
                         "seats": game.seats, "names": game.names})  # fmt: skip
    store_result(r, over, keep_s=60)
    assert "over" in str(refused(410, submit, r, game.game_id, key, {"id": 1, "draw": "deck"}))
    refused(410, resign, r, game.game_id, key)
    assert 0 < r.ttl(Keys.casual(game.game_id)) <= 60


def test_the_bots_record_against_people(r: redis.Redis, bots: dict[str, str]) -> None:
    vid = bots["greedy"]

    def finish(ranks: list[int], ended: float) -> CasualGame:
        game, _ = start(r, "greedy", "greedy", address=str(ended))
        over = CasualGame(**{**game.to_json(), "seats": game.seats, "names": game.names,
                             "status": Status.OVER, "ended": ended,
                             "result": {"ranks": ranks}})  # fmt: skip
        store_result(r, over, keep_s=60)
        return over

    first = finish([3, 1, 2], 10.0)  # the person last: both greedy seats win
    second = finish([1, 1, 3], 20.0)  # a shared first place: half a win, and a loss
    assert record_for_version(r, vid) == (2.5, 4)
    assert record_for_version(r, bots["random"]) == (0.0, 0)
    assert [g.game_id for g in games_for_version(r, vid)] == [second.game_id, first.game_id]
    assert [g.game_id for g in games_for_version(r, vid, offset=1, limit=5)] == [first.game_id]
    # The summary outlives the record.
    r.delete(Keys.casual(first.game_id))
    assert get_game(r, first.game_id).result == {"ranks": [3, 1, 2]}
    # A failed game counts for nobody.
    game, _ = start(r, "greedy", address="f")
    store_result(r, CasualGame(**{**game.to_json(), "seats": game.seats, "names": game.names,
                                  "status": Status.FAILED}), keep_s=60)  # fmt: skip
    assert record_for_version(r, vid) == (2.5, 4)


def test_the_feed_reads_in_order_and_from_a_point(r: redis.Redis) -> None:
    ids = [append(r, "g1", {"type": "request", "id": i}) for i in range(5)]
    assert [m["id"] for _, m in read_feed(r, "g1")] == [0, 1, 2, 3, 4]
    assert [m["id"] for _, m in read_feed(r, "g1", after=ids[2])] == [3, 4]
    assert [sid for sid, _ in read_feed(r, "g1", count=2)] == ids[:2]
    assert read_feed(r, "g1", after=ids[-1], block_ms=50) == []


def test_a_game_resigned_while_queued_is_never_played(
    r: redis.Redis, bots: dict[str, str], redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arboretum_worker.casual.job import casual_game

    monkeypatch.setenv("REDIS_URL", redis_url)
    game, key = start(r, "greedy")
    resign(r, game.game_id, key)
    assert casual_game(game.game_id)["played"] is False
    failed = get_game(r, game.game_id)
    assert failed.status == Status.FAILED
    assert failed.reason == "you resigned before the game started"
    assert read_feed(r, game.game_id)[-1][1] == {"type": "error", "reason": failed.reason}
    assert r.zcard(Keys.CASUAL_QUEUED) == 0  # its address and the queue are free again
    assert record_for_version(r, bots["greedy"]) == (0.0, 0)
    # A second run of the job (rq ran it twice) does nothing.
    assert casual_game(game.game_id) == {
        "game": game.game_id,
        "played": False,
        "reason": "not waiting to be played",
    }


def test_a_failed_job_ends_its_game(r: redis.Redis, bots: dict[str, str]) -> None:
    from arboretum_worker.casual.job import on_casual_failure

    class Job:
        args = ()

    game, _ = start(r, "greedy")
    on_casual_failure(Job(), r)  # no game: nothing to do
    Job.args = (game.game_id,)
    on_casual_failure(Job(), r, TimeoutError, TimeoutError("x"))
    failed = get_game(r, game.game_id)
    assert failed.status == Status.FAILED and "could not be played" in failed.reason
    assert read_feed(r, game.game_id)[-1][1]["type"] == "error"
    on_casual_failure(Job(), r, TimeoutError, TimeoutError("again"))  # once only
    assert [m["type"] for _, m in read_feed(r, game.game_id)].count("error") == 1
    # Three more from the same address are admitted: the failed one no longer counts.
    for _ in range(3):
        start(r, "greedy")


def test_a_casual_game_looks_at_its_bots_less_often_than_a_league_match() -> None:
    """A casual table holds a worker for minutes: its match job looks at the bots' processes
    every 5 s, not every 50 ms as under the league's default clock (docs/benchmarks.md,
    "Casual games under load")."""
    from arboretum_sdk.info import DEFAULT_PER_DECISION_MS
    from arboretum_worker.casual import CasualSettings as Settings
    from arboretum_worker.play import POLL_INTERVAL_S, POLL_MAX_S, poll_interval_s

    assert poll_interval_s(DEFAULT_PER_DECISION_MS) == POLL_INTERVAL_S == 0.05
    assert poll_interval_s(int(Settings().decision_s * 1000)) == POLL_MAX_S == 5.0
    assert poll_interval_s(10_000) == pytest.approx(0.5)
    assert poll_interval_s(1) == POLL_INTERVAL_S
