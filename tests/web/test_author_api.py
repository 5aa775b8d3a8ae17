"""An author's own actions through the API: their bots and versions, joining and leaving a
ladder the operator opened to authors; every action on another author's bot refused (403) with
nothing changed."""

from __future__ import annotations

from typing import Any

import redis

from arboretum_web.demo import DemoData
from arboretum_worker import registry
from arboretum_worker.ladder import ops, state
from arboretum_worker.settings import WorkerSettings


def _bearer(demo: DemoData, author: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {demo.tokens[author]}"}


def _ladder(r: redis.Redis) -> dict[str, str]:
    port = r.connection_pool.connection_kwargs["port"]
    settings = WorkerSettings(redis_url=f"redis://127.0.0.1:{port}/0", queue="web-author-test")
    oak = registry.versions(r, "oakheart")[-1]
    rnd = registry.versions(r, "random")[-1]
    ops.create_ladder(r, "open1", [oak, rnd], settings, seed=3)
    return {"oakheart": oak, "random": rnd}


def test_an_author_lists_their_bots_and_a_bots_versions(client: Any, demo: DemoData) -> None:
    mine = client.get("/api/v1/me/bots", headers=_bearer(demo, "alice")).json()
    assert mine["author"] == "alice"
    assert [b["name"] for b in mine["bots"]] == ["oakheart"]
    assert mine["bots"][0]["versions"] == 2
    versions = client.get("/api/v1/bots/oakheart/versions").json()
    assert versions["owner"] == "alice" and [v["index"] for v in versions["versions"]] == [1, 2]
    assert mine["bots"][0]["latest"] == versions["versions"][-1]["id"]
    assert client.get("/api/v1/me/bots").status_code == 401
    assert client.get("/api/v1/bots/nosuchbot/versions").status_code == 404


def test_authors_join_and_leave_an_open_ladder_with_their_own_bots_only(
    client: Any, demo: DemoData, r: redis.Redis
) -> None:
    ids = _ladder(r)
    members = state.members(r, "open1")
    alice, bob = _bearer(demo, "alice"), _bearer(demo, "bob")
    url = "/api/v1/leagues/open1/members"

    shut = client.post(url, json={"bot": "sapling"}, headers=bob)
    assert shut.status_code == 403 and "not open to authors" in shut.json()["error"]["message"]
    ops.open_ladder(r, "open1")
    assert client.get(url).json()["open"] is True

    theirs = client.post(url, json={"bot": "sapling"}, headers=alice)
    assert theirs.status_code == 403 and "not yours" in theirs.json()["error"]["message"]
    gone = client.delete(f"{url}/oakheart", headers=bob)
    assert gone.status_code == 403
    assert state.members(r, "open1") == members  # nothing changed

    unknown = client.post(url, json={"bot": "nosuchbot"}, headers=bob)
    assert unknown.status_code == 404 and "nosuchbot" in unknown.json()["error"]["message"]
    assert client.post(url, json={"bot": 3}, headers=bob).status_code == 400
    assert client.post(url, content=b"not json", headers=bob).status_code == 400
    client.cookies.set("arena_token", "x")
    cookie_only = client.post(url, json={"bot": "sapling"})
    client.cookies.clear()
    assert cookie_only.status_code == 401

    joined = client.post(url, json={"bot": "sapling"}, headers=bob)
    assert joined.status_code == 201, joined.text
    sapling = registry.versions(r, "sapling")[-1]
    assert joined.json() == {
        "league": "open1", "bot": "sapling", "version": sapling, "replaced": None
    }  # fmt: skip
    assert state.members(r, "open1")["sapling"] == sapling
    again = client.post(url, json={"bot": "sapling"}, headers=bob)
    assert again.status_code == 409 and "already" in again.json()["error"]["message"]

    left = client.delete(f"{url}/oakheart", headers=alice)
    assert left.status_code == 200 and left.json()["version"] == ids["oakheart"]
    assert "oakheart" not in state.members(r, "open1")
    assert state.entries(r, "open1")[ids["oakheart"]].retired is not None
    assert client.delete(f"{url}/oakheart", headers=alice).status_code == 409

    round_robin = client.post(f"/api/v1/leagues/{demo.league}/members", json={"bot": "sapling"},
                              headers=bob)  # fmt: skip
    assert round_robin.status_code == 409
    ops.close_ladder(r, "open1")
    closed = client.post(url, json={"bot": "oakheart"}, headers=alice)
    assert closed.status_code == 409 and "closed" in closed.json()["error"]["message"]
