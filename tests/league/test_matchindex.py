"""The match indexes: kept at write time with every status change, read a page at a time, and
built for matches stored before they existed (arboretum_worker.matchindex)."""

from __future__ import annotations

import json
import random
import threading
import zlib

import pytest
import redis

from arboretum_worker import indexsets, league, matchindex, registry, replays, store
from arboretum_worker.ratings import record_result
from arboretum_worker.schedule import round_robin
from arboretum_worker.store import (
    GameOutcome,
    Keys,
    LeagueSettings,
    MatchResult,
    MatchStatus,
)

BOTS = ("alpha", "beta", "gamma", "delta")


def _versions(r: redis.Redis) -> dict[str, str]:
    """One version per bot name, plus a second version of alpha: name -> [vids]."""
    out = {}
    for name in BOTS:
        out[name] = registry.add_version(r, name, f"# {name}\n".encode())
    out["alpha2"] = registry.add_version(r, "alpha", b"# alpha, second version\n")
    return out


def _league(r: redis.Redis, name: str, vids: list[str], players: int, deals: int, created: float):
    settings = LeagueSettings(players=players, games_per_pairing=deals, bots=tuple(vids), seed=3)
    store.create_league(r, name, settings, created=created)
    specs = round_robin(name, vids, players, deals, 3)
    store.create_matches(r, specs)
    return specs


def _scan(r: redis.Redis, leagues: list[str], bot: str | None, status: MatchStatus | None):
    """The reference: every match record read and filtered, as the pages did before."""
    wanted = set(registry.versions(r, bot)) if bot else None
    out = []
    for name in leagues:
        for match_id in store.league_matches(r, name):
            record = store.get_match(r, match_id)
            assert record is not None
            if status is not None and record.status is not status:
                continue
            if wanted is not None and not wanted.intersection(record.seats):
                continue
            out.append(match_id)
    return out


def _finish(r: redis.Redis, spec, rng: random.Random) -> None:
    ranks = tuple(rng.sample(range(1, spec.players + 1), spec.players))
    game = GameOutcome(ranks, tuple(10 - x for x in ranks), (0,) * spec.players)
    record_result(r, MatchResult(spec.match_id, spec.league, spec.seats, (game,), 1.0))


def _shuffle_statuses(r: redis.Redis, specs, rng: random.Random) -> None:
    """Every kind of status change, in a random order, as workers and commands make them."""
    for spec in specs:
        step = rng.random()
        if step < 0.15:
            continue  # stays queued
        store.start_match_attempt(r, spec.match_id, "w1")
        if step < 0.3:
            continue  # running
        if step < 0.45:
            store.set_match_status(r, spec.match_id, MatchStatus.QUEUED, failure="retrying")
        elif step < 0.55:
            store.set_match_status(r, spec.match_id, MatchStatus.FAILED, failure="bot crashed")
        elif step < 0.62:
            store.set_match_status(r, spec.match_id, MatchStatus.CANCELLED, failure="cancelled")
        else:
            _finish(r, spec, rng)
            if step > 0.9:  # a late failure callback or cancel changes nothing
                store.set_match_status(r, spec.match_id, MatchStatus.FAILED, failure="late")


def _check_all(r: redis.Redis, leagues: list[str]) -> None:
    for bot in (None, *BOTS):
        for status in (None, *MatchStatus):
            expected = _scan(r, leagues, bot, status)
            total, ids = matchindex.page(r, leagues, bot=bot, status=status, limit=10**6)
            assert (total, ids) == (len(expected), expected), (bot, status)
            for offset, limit in ((0, 7), (5, 3), (len(expected) - 2, 10), (len(expected), 5)):
                _, part = matchindex.page(
                    r, leagues, bot=bot, status=status, offset=offset, limit=limit
                )
                assert part == expected[max(offset, 0) : max(offset, 0) + limit]
    for name in leagues:
        total, counts = matchindex.league_counts(r, name)
        assert total == len(store.league_matches(r, name))
        for status in MatchStatus:
            assert counts[status] == len(_scan(r, [name], None, status))
        retrying = [
            m
            for m in _scan(r, [name], None, MatchStatus.QUEUED)
            if (rec := store.get_match(r, m)) is not None and rec.failure
        ]
        assert matchindex.members(r, Keys.league_retrying(name)) == retrying


def test_indexes_follow_every_status_change(r: redis.Redis) -> None:
    v = _versions(r)
    rng = random.Random(5)
    two = _league(r, "two", [v["alpha"], v["beta"], v["gamma"], v["alpha2"]], 2, 2, 1.0)
    three = _league(r, "three", [v["alpha"], v["beta"], v["gamma"], v["delta"]], 3, 1, 2.0)
    _check_all(r, ["three", "two"])  # all queued
    _shuffle_statuses(r, two, rng)
    _shuffle_statuses(r, three, rng)
    _check_all(r, ["three", "two"])
    # a match between two versions of one bot is listed once for that bot
    both = [s.match_id for s in two if {v["alpha"], v["alpha2"]} == set(s.seats)]
    assert both
    _, alpha = matchindex.page(r, ["two"], bot="alpha", limit=1000)
    assert len(alpha) == len(set(alpha)) and set(both) <= set(alpha)


def test_index_keys_stay_in_step_under_concurrent_writers(r: redis.Redis, redis_url: str) -> None:
    v = _versions(r)
    specs = _league(r, "busy", [v["alpha"], v["beta"], v["gamma"], v["delta"]], 2, 3, 1.0)
    errors: list[BaseException] = []
    done: list[int] = []

    def hammer(seed: int) -> None:
        try:
            with redis.Redis.from_url(redis_url) as client:
                _shuffle_statuses(client, specs, random.Random(seed))
            done.append(seed)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(done) == [0, 1, 2, 3]
    _check_all(r, ["busy"])


def _strip_indexes(r: redis.Redis, leagues: list[str]) -> None:
    """Make the data look as the store wrote it before the indexes existed."""
    for name in leagues:
        for match_id in store.league_matches(r, name):
            r.hdel(Keys.match(match_id), "position", "bots")
    for key in r.scan_iter(match="arena:league:*"):
        if b":status:" in key or b":bot:" in key or key.endswith(b":retrying"):
            r.delete(key)
    r.delete(Keys.INDEX_VERSION)


def test_backfill_indexes_old_data_once(r: redis.Redis) -> None:
    v = _versions(r)
    rng = random.Random(9)
    specs = _league(r, "old", [v["alpha"], v["beta"], v["gamma"]], 2, 2, 1.0)
    more = _league(r, "older", [v["beta"], v["gamma"], v["delta"]], 3, 2, 0.5)
    _shuffle_statuses(r, specs + more, rng)
    _strip_indexes(r, ["old", "older"])
    assert not matchindex.indexed(r)
    total, ids = matchindex.page(r, ["old"], status=MatchStatus.QUEUED)
    assert (total, ids) == (0, [])  # nothing indexed: the pages would be wrong
    assert league.prepare_store(r) == len(specs) + len(more)
    assert matchindex.indexed(r)
    _check_all(r, ["old", "older"])
    assert league.prepare_store(r) == 0  # one GET from now on
    # writes after the migration keep the indexes right
    _shuffle_statuses(r, specs, rng)
    _check_all(r, ["old", "older"])


def test_a_writer_that_read_before_the_backfill_tries_again(
    r: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    v = _versions(r)
    specs = _league(r, "race", [v["alpha"], v["beta"]], 2, 2, 1.0)
    _strip_indexes(r, ["race"])
    real = indexsets.match_index_keys
    calls: list[list[str]] = []

    def read_then_backfill(client: redis.Redis, match_id: str) -> list[str]:
        keys = real(client, match_id)
        if not calls:  # the writer reads "not indexed", then the backfill runs
            matchindex.ensure_indexes(client)
        calls.append(keys)
        return keys

    monkeypatch.setattr(indexsets, "match_index_keys", read_then_backfill)
    assert store.start_match_attempt(r, specs[0].match_id, "w1")
    assert calls[0] == [] and calls[1] != []  # refused with stale keys, done with fresh ones
    calls.clear()
    _finish(r, specs[1], random.Random(1))
    assert len(calls) == 1  # the index existed already
    monkeypatch.undo()
    _check_all(r, ["race"])


def test_backfill_waits_for_another_process_and_honours_its_lock(r: redis.Redis) -> None:
    v = _versions(r)
    _league(r, "locked", [v["alpha"], v["beta"]], 2, 1, 1.0)
    _strip_indexes(r, ["locked"])
    r.set(Keys.INDEX_LOCK, "someone-else", ex=30)
    assert matchindex.ensure_indexes(r, wait_s=0) == 0  # a worker does not wait
    with pytest.raises(store.StoreError, match="another process has been indexing"):
        matchindex.ensure_indexes(r, wait_s=0.5)
    r.delete(Keys.INDEX_LOCK)
    assert matchindex.ensure_indexes(r) == 2
    assert r.get(Keys.INDEX_LOCK) is None


def test_league_progress_reads_counts_and_caps_the_failures(r: redis.Redis) -> None:
    v = _versions(r)
    specs = _league(r, "prog", [v["alpha"], v["beta"], v["gamma"]], 2, 3, 1.0)
    for spec in specs[:7]:
        store.set_match_status(r, spec.match_id, MatchStatus.FAILED, failure=f"why {spec.deal}")
    for spec in specs[7:10]:
        store.set_match_status(r, spec.match_id, MatchStatus.QUEUED, failure="retry")
    progress = league.league_progress(r, "prog", details=5)
    assert progress.total == len(specs) == 18
    assert progress.counts["failed"] == 7 and progress.counts["queued"] == 11
    assert [m for m, _ in progress.failures] == [s.match_id for s in specs[:5]]
    assert progress.failures[0][1] == f"why {specs[0].deal}"
    assert progress.retries == 3 and [m for m, _ in progress.retrying] == [
        s.match_id for s in specs[7:10]
    ]
    assert not progress.complete


def test_replays_are_stored_compressed(r: redis.Redis) -> None:
    doc = json.dumps(
        {"steps": [{"kind": "play", "card": "OA5", "cell": [0, i]} for i in range(200)]}
    )
    assert replays.save_replay(r, "m1", 0, doc)
    raw = r.hget(Keys.replay("m1"), "0")
    assert raw is not None and zlib.decompress(raw) == doc.encode()
    assert len(raw) < len(doc) / 5
    assert replays.get_replay(r, "m1", 0) == doc.encode()
    r.hset(Keys.replay("m2"), "0", doc)  # stored before compression
    assert replays.get_replay(r, "m2", 0) == doc.encode()
    r.hset(Keys.replay("m3"), "0", b"\x00garbage")
    with pytest.raises(store.StoreError, match="neither JSON nor zlib"):
        replays.get_replay(r, "m3", 0)
