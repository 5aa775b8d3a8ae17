"""A ladder's page and API (``/leagues/{name}`` of a ladder, ``/api/v1/leagues/{name}``): a
ladder stored and ticked by the league's own modules (its matches recorded here, no workers),
with one bot's version retired by a newer one."""

from __future__ import annotations

import random
from typing import Any

import redis

from arboretum_worker import registry, store
from arboretum_worker.ladder import ops, state
from arboretum_worker.ladder.scheduler import in_flight, tick
from arboretum_worker.league import builtin_bot_files
from arboretum_worker.ratings import record_result
from arboretum_worker.settings import WorkerSettings


def _play_all(r: redis.Redis, rng: random.Random) -> None:
    for match in in_flight(r, "ladder1"):
        games = tuple(
            store.GameOutcome(
                ranks=(1, 2) if rng.random() < 0.6 else (2, 1), totals=(20, 10), faults=(0, 0)
            )
            for _ in match.deals
        )
        record_result(
            r, store.MatchResult(match.id, "ladder1", match.seats, games), store.EloSettings()
        )


def seed_ladder(r: redis.Redis) -> dict[str, str]:
    """Ladder ``ladder1`` of greedy, random and twin; random's first version retired by a
    second one; some matches played, some in flight. Returns the version ids by role."""
    port = r.connection_pool.connection_kwargs["port"]
    settings = WorkerSettings(redis_url=f"redis://127.0.0.1:{port}/0", queue="web-ladder-test")
    ids = {
        "greedy": registry.add_version(r, "greedy", builtin_bot_files("greedy")),
        "old": registry.add_version(r, "random", builtin_bot_files("random")),
        "twin": registry.add_version(r, "twin", builtin_bot_files("greedy") + b"\n# twin\n"),
    }
    ops.create_ladder(
        r, "ladder1", [ids["greedy"], ids["old"], ids["twin"]], settings, depth=4,
        deals_per_series=3, seed=11,
    )  # fmt: skip
    rng = random.Random(4)
    for _ in range(3):
        tick(r, "ladder1", settings)
        _play_all(r, rng)
    ids["new"] = registry.add_version(r, "random", builtin_bot_files("random") + b"\n# v2\n")
    tick(r, "ladder1", settings)  # the new version enters, and its matches are queued
    return ids


def test_the_ladder_page_shows_standings_games_and_what_is_playing(
    client: Any, r: redis.Redis
) -> None:
    ids = seed_ladder(r)
    data = client.get("/api/v1/leagues/ladder1").json()
    assert data["status"] == "running"
    ladder = data["ladder"]
    by_version = {v["version"]: v for v in ladder["versions"]}
    assert set(by_version) == set(ids.values())
    assert by_version[ids["old"]]["state"] == "retired" and by_version[ids["old"]]["games"] > 0
    assert by_version[ids["new"]]["state"] == "scheduled" and by_version[ids["new"]]["games"] == 0
    rated = [v for v in ladder["versions"] if v["rating"] is not None]
    assert [v["rank"] for v in ladder["versions"]] == list(range(1, 5))
    assert all(v["rating_low"] < v["rating"] < v["rating_high"] for v in rated)
    assert [v["rating"] for v in rated] == sorted((v["rating"] for v in rated), reverse=True)
    flying = {m.id for m in in_flight(r, "ladder1")}
    assert {m["match"] for m in ladder["playing"]} == flying and flying
    assert all(ids["new"] in [s["version"] for s in m["seats"]] for m in ladder["playing"])
    assert ladder["last_tick"]["status"] == "scheduled"

    html = client.get("/leagues/ladder1").text
    assert "Ladder ladder1" in html and "retired" in html and "scheduled" in html
    for match in flying:
        assert f'href="/matches/{match}"' in html
    for v in rated:
        assert f"± {(v['rating_high'] - v['rating_low']) / 2:.0f}" in html
    assert html.count("<tr class=") == 4  # one row per version, retired included
    # the members on record are the versions the page calls scheduled
    scheduled = {v["version"] for v in ladder["versions"] if v["state"] == "scheduled"}
    assert scheduled == set(state.members(r, "ladder1").values())


def test_a_closed_ladder_says_so(client: Any, r: redis.Redis) -> None:
    seed_ladder(r)
    ops.close_ladder(r, "ladder1")
    html = client.get("/leagues/ladder1").text
    assert "Nothing queued or running (the ladder is closed)" in html
    assert client.get("/api/v1/leagues/ladder1").json()["ladder"]["playing"] == []
