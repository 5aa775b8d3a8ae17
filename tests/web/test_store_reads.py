"""How the web app reads a big store: match lists from the match indexes (built at the first
request for data stored before them), and the rating fit that never makes a page wait twice."""

from __future__ import annotations

import json
from typing import Any

import redis

from arboretum_web.demo import DemoData
from arboretum_web.queries import FitCache
from arboretum_worker import fit, matchindex, ratings, registry, store
from arboretum_worker.store import GameOutcome, Keys, MatchResult


def _strip_indexes(r: redis.Redis) -> None:
    """Make the store look as the league wrote it before the match indexes existed."""
    for key in list(r.scan_iter(match="arena:match:*")):
        r.hdel(key, "position", "bots")
    for key in list(r.scan_iter(match="arena:league:*")):
        if b":status:" in key or b":bot:" in key or key.endswith(b":retrying"):
            r.delete(key)
    r.delete(Keys.INDEX_VERSION)


def _expected(r: redis.Redis, bot: str | None, status: str | None) -> list[str]:
    wanted = set(registry.versions(r, bot)) if bot else None
    out = []
    for mid in store.league_matches(r, "demo"):
        record = store.get_match(r, mid)
        assert record is not None
        if status and record.status.value != status:
            continue
        if wanted is not None and not wanted & set(record.seats):
            continue
        out.append(mid)
    return out


def test_lists_of_old_data_are_indexed_at_the_first_request(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    _strip_indexes(r)
    assert not matchindex.indexed(r)
    body = client.get("/api/v1/matches?bot=random&status=finished&limit=200").json()
    assert matchindex.indexed(r)
    expected = _expected(r, "random", "finished")
    assert expected and body["total"] == len(expected)
    assert [m["id"] for m in body["matches"]] == expected
    for bot in ("random", "oakheart", "sapling"):
        for status in ("", "finished", "running", "queued"):
            query = f"bot={bot}&status={status}&limit=200"
            ids = [m["id"] for m in client.get(f"/api/v1/matches?{query}").json()["matches"]]
            assert ids == _expected(r, bot, status or None), query
    league = client.get("/api/v1/leagues/demo").json()
    counts = league["progress"]["counts"]
    assert counts["finished"] == len(_expected(r, None, "finished"))
    assert counts["running"] == 1 and league["progress"]["total"] == len(_expected(r, None, None))


def test_a_page_shows_the_last_fit_while_the_new_one_is_computed(
    r: redis.Redis, demo: DemoData
) -> None:
    cache = FitCache()
    before = cache.get(r, "demo")
    assert before == cache.get(r, "demo")  # same sequence number: the cached fit
    # A new result: the next page gets the last fit at once, and a refresh starts.
    seats = tuple(registry.latest(r, name) for name in ("random", "sapling"))
    result = MatchResult("extra-match", "demo", seats, (GameOutcome((2, 1), (3, 30), (0, 0)),))
    ratings.record_result(r, result)
    assert cache.get(r, "demo") is before
    cache.wait()
    after = cache.get(r, "demo")
    refit = {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "demo"))}
    assert after[seats[1]].rating == refit[seats[1]].elo != before[seats[1]].rating
    assert json.dumps(sorted(after)) == json.dumps(sorted(refit))
