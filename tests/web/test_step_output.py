"""A seat's output per decision over the API: its author only (401 without a token, 403 for
another author), each step's lines at the replay's step numbers, and as a download."""

from __future__ import annotations

import json
from typing import Any

import redis

from arboretum_web.demo import DemoData
from arboretum_worker import botoutput, store

from .test_api import _err, _owned_seat


def test_output_per_step_only_for_the_author(client: Any, r: redis.Redis, demo: DemoData) -> None:
    mid, (seat, owner) = next(
        (m, found) for m in demo.matches if (found := _owned_seat(r, demo, m))
    )
    other = next(a for a in demo.tokens if a != owner)
    url = f"/api/v1/matches/{mid}/games/0/seats/{seat}/output"
    _err(client.get(url), 401)
    _err(client.get(url, headers={"Authorization": f"Bearer {demo.tokens[other]}"}), 403)
    mine = {"Authorization": f"Bearer {demo.tokens[owner]}"}
    ok = client.get(url, headers=mine)
    assert ok.status_code == 200, ok.text
    assert "no-store" in ok.headers["cache-control"]
    body = ok.json()
    assert body["match"] == mid and body["game"] == 0 and body["seat"] == seat
    assert body["stored"] is True and body["caps"]["decision_lines"] == botoutput.DECISION_LINES
    steps = demo.replays[mid]["steps"]
    assert body["steps"], "the demo's bots print during every fourth decision"
    for entry in body["steps"]:
        at = steps[entry["step"]]
        assert at["seat"] == seat and at["kind"] == entry["kind"] and at["turn"] == entry["turn"]
        assert f"considering {at.get('card') or at.get('source')}" in entry["lines"][0]
    down = client.get(url + "?download=1", headers=mine)
    assert down.status_code == 200
    assert down.headers["content-disposition"] == (
        f'attachment; filename="{mid}-game0-seat{seat}-output.json"'
    )
    assert json.loads(down.text) == body
    _err(client.get(f"/api/v1/matches/{mid}/games/9/seats/{seat}/output", headers=mine), 404)
    _err(client.get(f"/api/v1/matches/{mid}/games/0/seats/7/output", headers=mine), 404)
    # a match stored before output per decision was kept: an empty answer that says so
    r.delete(store.Keys.bot_output(mid, seat))
    old = client.get(url, headers=mine).json()
    assert old["stored"] is False and old["steps"] == [] and old["between"] == []
