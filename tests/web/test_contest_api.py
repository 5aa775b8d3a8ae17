"""Challenges and authors' sequential tests through the API (created, shown, listed and
cancelled; the workers that play them are the integration tests'): another author's things are
refused (403) with nothing changed, and bad input gets a clear error."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from arboretum_web.demo import DemoData
from arboretum_worker import challenges, registry
from arboretum_worker.sprt.league import get_test


def _bearer(demo: DemoData, author: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {demo.tokens[author]}"}


def _error(answer: Any, status: int, says: str) -> None:
    assert answer.status_code == status, answer.text
    assert says in answer.json()["error"]["message"], answer.text


def test_a_challenge_is_made_seen_and_cancelled_by_its_author_only(
    client: Any, demo: DemoData, r: redis.Redis
) -> None:
    alice, bob = _bearer(demo, "alice"), _bearer(demo, "bob")
    made = client.post(
        "/api/v1/challenges",
        json={"bot": "oakheart", "opponents": ["sapling"], "deals": 2},
        headers=alice,
    )
    assert made.status_code == 201, made.text
    c = made.json()
    assert c["author"] == "alice" and c["status"] == "queued" and c["total"] == 2
    assert [b["name"].split("@")[0] for b in c["bots"]] == ["oakheart", "sapling"]
    assert made.headers["location"] == c["url"] == f"/api/v1/challenges/{c['id']}"

    assert client.get(c["url"], headers=bob).json()["id"] == c["id"]  # involved
    assert client.get(c["url"]).status_code == 200  # public
    mine = client.get("/api/v1/challenges", headers=bob).json()["challenges"]
    assert [x["id"] for x in mine] == [c["id"]]

    _error(client.post(f"{c['url']}/cancel", headers=bob), 403, "not yours")
    assert challenges.get_challenge(r, c["id"]).status.value == "queued"  # nothing changed
    done = client.post(f"{c['url']}/cancel", headers=alice)
    assert done.status_code == 200 and done.json()["status"] == "cancelled"
    _error(client.get("/api/v1/challenges/nosuch"), 404, "no challenge")


def test_challenges_refuse_bad_input_and_declined_bots(
    client: Any, demo: DemoData, r: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = _bearer(demo, "alice"), _bearer(demo, "bob")
    url = "/api/v1/challenges"
    _error(client.post(url, json={"bot": "sapling", "opponents": ["random"]}, headers=alice), 403,
           "not yours")  # fmt: skip
    _error(client.post(url, json={"bot": "oakheart", "opponents": ["nosuch"]}, headers=alice), 404,
           "nosuch")  # fmt: skip
    _error(client.post(url, json={"bot": "oakheart", "opponents": ["oakheart"]}, headers=alice),
           400, "itself")  # fmt: skip
    _error(client.post(url, json={"bot": "oakheart", "deals": 0, "opponents": ["random"]},
                       headers=alice), 400, "deals")  # fmt: skip
    _error(client.post(url, json={"bot": "oakheart", "opponents": "random"}, headers=alice),
           400, "opponents")  # fmt: skip
    _error(client.post(url, json={"bot": "oakheart", "opponents": ["random"]}), 401, "Bearer")
    assert challenges.list_challenges(r) == []

    _error(client.put("/api/v1/bots/sapling/prefs", json={"accept_challenges": False},
                      headers=alice), 403, "not yours")  # fmt: skip
    declined = client.put(
        "/api/v1/bots/sapling/prefs", json={"accept_challenges": False}, headers=bob
    )
    assert declined.json() == {"bot": "sapling", "accept_challenges": False, "public_results": True}
    assert client.get("/api/v1/bots/sapling/prefs").json()["accept_challenges"] is False
    _error(client.post(url, json={"bot": "oakheart", "opponents": ["sapling"]}, headers=alice),
           403, "declines")  # fmt: skip

    monkeypatch.setenv("ARENA_AUTHOR_MAX_MATCHES", "1")
    quota = client.post(url, json={"bot": "oakheart", "opponents": ["random"]}, headers=alice)
    _error(quota, 429, "matches")
    assert int(quota.headers["retry-after"]) >= 1
    assert challenges.list_challenges(r) == []


def test_an_author_tests_two_of_their_versions_within_the_limits(
    client: Any, demo: DemoData, r: redis.Redis
) -> None:
    alice, bob = _bearer(demo, "alice"), _bearer(demo, "bob")
    v1, v2 = registry.versions(r, "oakheart")
    body = {"new": f"oakheart@{v2[:8]}", "old": f"oakheart@{v1[:8]}", "max_pairs": 20}
    _error(client.post("/api/v1/sprt", json={**body, "max_pairs": 10**6}, headers=alice), 400,
           "max_pairs")  # fmt: skip
    _error(client.post("/api/v1/sprt", json={**body, "elo1": 1}, headers=alice), 400, "elo1")
    _error(client.post("/api/v1/sprt", json={**body, "old": "sapling"}, headers=alice), 403,
           "not yours")  # fmt: skip
    _error(client.post("/api/v1/sprt", json={**body, "old": body["new"]}, headers=alice), 400,
           "same version")  # fmt: skip
    _error(client.post("/api/v1/sprt", json={k: v for k, v in body.items() if k != "max_pairs"},
                       headers=alice), 400, "max_pairs")  # fmt: skip
    assert client.get("/api/v1/sprt?mine=1", headers=alice).json()["tests"] == []

    made = client.post("/api/v1/sprt", json=body, headers=alice)
    assert made.status_code == 201, made.text
    test = made.json()
    assert test["author"] == "alice" and test["status"] == "running"
    assert test["new"]["version"] == v2 and test["max_pairs"] == 20 and test["matches"] == []
    shown = client.get(f"/api/v1/sprt/{test['id']}").json()
    assert shown["id"] == test["id"] and "llr_history" in shown
    assert [t["id"] for t in client.get("/api/v1/sprt?mine=1", headers=alice).json()["tests"]] == [
        test["id"]
    ]
    assert client.get("/api/v1/sprt?mine=1", headers=bob).json()["tests"] == []

    _error(client.post(f"/api/v1/sprt/{test['id']}/cancel", headers=bob), 403, "not yours")
    assert get_test(r, test["id"]).status.value == "running"  # nothing changed
    done = client.post(f"/api/v1/sprt/{test['id']}/cancel", headers=alice)
    assert done.status_code == 200 and done.json()["status"] == "cancelled"
