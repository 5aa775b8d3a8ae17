"""A stored game's analysis over the API: queued by its seats' authors only, read back with its
status (the job itself runs in tests/league/test_analysis_jobs.py)."""

from __future__ import annotations

from typing import Any

import redis
from rq import Queue

from arboretum_web.demo import DemoData
from arboretum_worker import analysis_jobs, store


def _owners(r: redis.Redis, mid: str) -> list[str | None]:
    record = store.get_match(r, mid)
    assert record is not None
    out: list[str | None] = []
    for vid in record.seats:
        version = store.get_version(r, vid)
        bot = store.get_bot(r, version.name) if version else None
        out.append(bot.owner if bot else None)
    return out


def _owned(r: redis.Redis, demo: DemoData) -> tuple[str, str]:
    for mid in demo.matches:
        for owner in _owners(r, mid):
            if owner:
                return mid, owner
    raise AssertionError("the demo has a match with an author's bot")


def test_only_a_seats_author_queues_it_and_it_is_read_back(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    mid, owner = _owned(r, demo)
    owners = set(_owners(r, mid))
    other = next(a for a in demo.tokens if a not in owners)
    url = f"/api/v1/matches/{mid}/games/0/analysis"
    assert client.get(url).json() == {"match": mid, "game": 0, "status": "none"}
    assert client.post(url).status_code == 401
    refused = client.post(url, headers={"Authorization": f"Bearer {demo.tokens[other]}"})
    assert refused.status_code == 403
    assert "only the authors of this match's bots" in refused.json()["error"]["message"]
    assert Queue("arena-analysis", connection=r).count == 0
    done = client.post(url, headers={"Authorization": f"Bearer {demo.tokens[owner]}"})
    assert done.status_code == 202, done.text
    assert done.json()["status"] == "queued"
    assert Queue("arena-analysis", connection=r).count == 1
    again = client.post(url, headers={"Authorization": f"Bearer {demo.tokens[owner]}"})
    assert again.json()["status"] == "queued"
    assert Queue("arena-analysis", connection=r).count == 1
    read = client.get(url).json()
    assert read["status"] == "queued" and read["requested"] > 0
    assert analysis_jobs.get_analysis(r, mid, 0)["status"] == "queued"


def test_no_such_game_or_match_is_404(client: Any, demo: DemoData) -> None:
    mid = demo.matches[0]
    assert client.get(f"/api/v1/matches/{mid}/games/99/analysis").status_code == 404
    assert client.get("/api/v1/matches/nope/games/0/analysis").status_code == 404
    token = next(iter(demo.tokens.values()))
    resp = client.post(
        f"/api/v1/matches/{mid}/games/99/analysis", headers={"Authorization": f"Bearer {token}"}
    )
    assert resp.status_code == 404


def test_the_operator_queues_it_with_the_cli(
    r: redis.Redis, demo: DemoData, redis_server_url: str, capsys: Any
) -> None:
    from arboretum_sdk.cli import main

    mid = demo.matches[0]
    assert main(["match", "analyze", mid, "--redis-url", redis_server_url]) == 0
    out = capsys.readouterr().out
    assert f"analysis of match {mid} game 0: queued on queue 'arena-analysis'" in out
    assert Queue("arena-analysis", connection=r).count == 1
    assert main(["match", "analyze", "nope", "--redis-url", redis_server_url]) == 1
    assert "arena: no match 'nope'" in capsys.readouterr().err
