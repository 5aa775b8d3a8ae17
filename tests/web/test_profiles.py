"""Authors' pages through the real app: the public profile, the signed-in dashboard (faults
highlighted, each linking to its step in the replay viewer), their JSON, and the webhook's
endpoints."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import redis

from arboretum_web import authorlog, authors
from arboretum_web.demo import DemoData
from arboretum_worker import replays, store, webhooks


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _plant_fault(r: redis.Redis, demo: DemoData, bot: str) -> tuple[str, int, int]:
    """Give ``bot``'s seat of a finished match a fault in game 0 at one of its steps (as a
    worker stores a faulting bot's match): (match, seat, step)."""
    for mid in demo.matches:
        record = store.get_match(r, mid)
        assert record is not None
        seats = [s for s, vid in enumerate(record.seats) if demo.versions[vid] == bot]
        if seats:
            break
    seat = seats[0]
    result = store.get_result(r, mid)
    assert result is not None
    games = list(result.games)
    faults = list(games[0].faults)
    faults[seat] = 1
    games[0] = dataclasses.replace(games[0], faults=tuple(faults))
    r.set(store.Keys.result(mid), dataclasses.replace(result, games=tuple(games)).to_json())
    docs = {g: replays.get_replay(r, mid, g) or b"" for g in replays.replay_games(r, mid)}
    doc = json.loads(docs[0])
    step = next(i for i, s in enumerate(doc["steps"]) if s.get("seat") == seat and i > 3)
    doc["steps"][step]["fault"] = {"kind": "timeout", "reason": "no answer in time"}
    docs[0] = json.dumps(doc).encode()
    replays.drop_replays(r, mid)  # a replay is written once: the run's are replaced whole
    for game, raw in docs.items():
        replays.save_replay(r, mid, game, raw)
    return mid, seat, step


def test_public_profile(client: Any, r: redis.Redis, demo: DemoData) -> None:
    body = client.get("/api/v1/authors/alice").json()
    assert body["author"] == "alice"
    assert [b["name"] for b in body["bots"]] == ["oakheart"]
    assert [v["index"] for v in body["bots"][0]["versions"]] == [1, 2]
    assert {row["league"] for row in body["ratings"]} == {"demo"}
    assert {row["bot"] for row in body["ratings"]} == {"oakheart"}
    assert body["recent"] and all(m["status"] == "finished" for m in body["recent"])
    assert all(s["label"].startswith("oakheart@") for m in body["recent"] for s in m["mine"])
    html = client.get("/authors/alice").text
    assert '<a href="/bots/oakheart">oakheart</a>' in html
    assert 'id="author-ratings"' in html and 'id="author-recent"' in html
    for bad in ("nobody", "bad:name", "x" * 70):
        assert client.get(f"/api/v1/authors/{bad}").status_code == 404
        assert client.get(f"/authors/{bad}").status_code == 404
    # the owner's name links to the profile wherever it is shown
    assert '<a href="/authors/alice">alice</a>' in client.get("/bots").text
    assert '<a href="/authors/alice">alice</a>' in client.get("/bots/oakheart").text


def test_dashboard_highlights_faults_with_their_step(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    mid, seat, step = _plant_fault(r, demo, "oakheart")
    assert client.get("/me").status_code == 401
    assert client.get("/api/v1/me/dashboard").status_code == 401
    dash = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["alice"])).json()
    assert dash["author"] == "alice" and dash["bots"] == ["oakheart"]
    (faulted,) = dash["faulted"]
    assert faulted["id"] == mid
    (mine,) = [s for s in faulted["mine"] if s["seat"] == seat]
    assert mine["faults"] == 1
    assert mine["fault_url"] == f"/matches/{mid}/games/0#step={step}"
    running = {m["id"] for m in dash["running"]}
    record = store.get_match(r, demo.running or "")
    assert record is not None
    alice_plays = any(demo.versions[v] == "oakheart" for v in record.seats)
    assert (demo.running in running) == alice_plays
    assert all(m["status"] == "finished" for m in dash["finished"])
    assert dash["webhook"] == {"url": None, "deliveries": []}
    # bob sees his own, not alice's fault
    bob = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["bob"])).json()
    assert bob["bots"] == ["sapling"] and bob["faulted"] == []
    # the page, signed in by the cookie
    client.cookies.set("arena_token", demo.tokens["alice"])
    html = client.get("/me").text
    assert 'id="dash-faulted"' in html
    assert f'href="/matches/{mid}/games/0#step={step}"' in html
    assert re.search(r'<tr class="faulted">\s*<td class="mono"><a href="/matches/' + mid, html)
    assert '<a href="/me" class="active">My arena</a>' in html


def test_webhook_endpoints(client: Any, r: redis.Redis, demo: DemoData) -> None:
    alice = _bearer(demo.tokens["alice"])
    assert client.get("/api/v1/me/webhook").status_code == 401
    assert client.put("/api/v1/me/webhook", json={"url": "x"}).status_code == 401
    for body, why in (
        ({"url": "ftp://example.org/"}, "must start with http:// or https://"),
        ({"url": 5}, "and nothing else"),
        ({}, "and nothing else"),
        ({"url": "https://example.org/", "x": 1}, "and nothing else"),
        ({"url": "https://example.org/" + "a" * 600}, "at most 500"),
    ):
        resp = client.put("/api/v1/me/webhook", json=body, headers=alice)
        assert resp.status_code == 400 and why in resp.json()["error"]["message"]
    assert client.put("/api/v1/me/webhook", content=b"[1]", headers=alice).status_code == 400
    resp = client.put("/api/v1/me/webhook", json={"url": "https://example.org/hook"}, headers=alice)
    assert resp.status_code == 200
    secret = resp.json()["secret"]
    assert secret.startswith("whsec_")
    hook = webhooks.get_webhook(r, "alice")
    assert hook is not None and hook.secret == secret
    got = client.get("/api/v1/me/webhook", headers=alice).json()
    assert got["url"] == "https://example.org/hook" and "secret" not in got
    assert got["events"] == ["test.finished", "challenge.finished", "match.fault"]
    assert webhooks.get_webhook(r, "bob") is None  # one author's setting only
    assert client.delete("/api/v1/me/webhook", headers=alice).json() == {"url": None}
    assert client.delete("/api/v1/me/webhook", headers=alice).status_code == 404
    actions = [(e.action, e.result) for e in authorlog.read(r, "alice")]
    assert ("PUT /api/v1/me/webhook", "200") in actions
    assert ("DELETE /api/v1/me/webhook", "404") in actions


def test_dashboard_webhook_form(client: Any, r: redis.Redis, demo: DemoData) -> None:
    client.cookies.set("arena_token", demo.tokens["alice"])
    page = client.get("/me").text
    found = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', page)
    assert found is not None
    csrf = found.group(1)
    # no token, no post
    assert client.post("/me/webhook", data={"url": "https://example.org/h"}).status_code == 403
    assert webhooks.get_webhook(r, "alice") is None
    bad = client.post("/me/webhook", data={"url": "ftp://example.org/", "csrf": csrf})
    assert bad.status_code == 400 and 'id="webhook-error"' in bad.text
    assert "must start with http:// or https://" in bad.text
    done = client.post("/me/webhook", data={"url": "https://example.org/h", "csrf": csrf})
    assert done.status_code == 200
    hook = webhooks.get_webhook(r, "alice")
    assert hook is not None and hook.url == "https://example.org/h"
    assert f"<code>{hook.secret}</code>" in done.text  # shown this once
    again = client.get("/me").text
    assert hook.secret not in again and 'value="https://example.org/h"' in again
    client.post("/me/webhook", data={"action": "remove", "csrf": csrf})
    assert webhooks.get_webhook(r, "alice") is None
    entries = [(e.action, e.result) for e in authorlog.read(r, "alice")]
    assert ("POST /me/webhook", "200") in entries and ("POST /me/webhook", "400") in entries


def test_dashboard_lists_my_challenges(client: Any, r: redis.Redis, demo: DemoData) -> None:
    from arboretum_worker.challenges import create_challenge

    made = create_challenge(r, "alice", "oakheart", ["sapling"], deals=1, seed=3)
    dash = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["alice"])).json()
    (listed,) = dash["challenges"]
    assert listed["id"] == made.id and listed["status"] == "queued"
    assert listed["matches"] == made.matches and listed["done"] == 0
    assert [e.split("@")[0] for e in listed["entrants"]] == ["oakheart", "sapling"]
    # bob's bot is challenged: it is on his dashboard too; an author not involved sees nothing
    bob = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["bob"])).json()
    assert [c["id"] for c in bob["challenges"]] == [made.id]
    carol = authors.add_author(r, "carol")
    assert client.get("/api/v1/me/dashboard", headers=_bearer(carol)).json()["challenges"] == []
    client.cookies.set("arena_token", demo.tokens["alice"])
    assert f'href="/challenges/{made.id}"' in client.get("/me").text


def test_dashboard_lists_my_tests(client: Any, r: redis.Redis, demo: DemoData) -> None:
    from arboretum_worker import registry
    from arboretum_worker.sprt.authors import create_author_test

    old, new = registry.versions(r, "oakheart")
    test = create_author_test(
        r, "alice", f"oakheart@{new[:12]}", f"oakheart@{old[:12]}", max_pairs=10, seed=1
    )
    dash = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["alice"])).json()
    assert dash["tests"] == [
        {
            "id": test.id,
            "status": "running",
            "new": f"oakheart@{new[:8]}",
            "old": f"oakheart@{old[:8]}",
            "verdict": None,
        }
    ]
    bob = client.get("/api/v1/me/dashboard", headers=_bearer(demo.tokens["bob"])).json()
    assert bob["tests"] == []
    client.cookies.set("arena_token", demo.tokens["alice"])
    assert f'href="/sprt/{test.id}"' in client.get("/me").text
