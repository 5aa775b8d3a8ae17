"""The sequential tests' pages and API (``/sprt``, ``/api/v1/sprt``): a test stored and taken
to its verdict by the league's own modules (no workers), shown with its LLR, bounds and verdict."""

from __future__ import annotations

import random
from typing import Any

import pytest
import redis

from arboretum_worker import registry
from arboretum_worker.league import builtin_bot_files
from arboretum_worker.settings import WorkerSettings
from arboretum_worker.sprt import league as sprt
from arboretum_worker.sprt.stats import SprtSettings


def _finished_test(r: redis.Redis) -> sprt.LeagueTest:
    registry.add_version(r, "greedy", builtin_bot_files("greedy"))
    registry.add_version(r, "random", builtin_bot_files("random"))
    url = f"redis://127.0.0.1:{r.connection_pool.connection_kwargs['port']}/0"
    test = sprt.create_test(
        r,
        "greedy",
        "random",
        SprtSettings(elo0=0, elo1=40),
        WorkerSettings(redis_url=url, queue="web-sprt-test"),
        seed=3,
        batch=4,
        window=1,
    )
    rng = random.Random(2)
    batch = 0
    while (current := sprt.advance(r, test.id)) and current.status is sprt.TestStatus.RUNNING:
        scores = [(float(rng.random() < 0.8), float(rng.random() < 0.8)) for _ in range(4)]
        sprt.record_batch(r, test.id, batch, scores)
        batch += 1
    return test


def test_test_page_shows_the_llr_chart_bounds_and_verdict(client: Any, r: redis.Redis) -> None:
    test = _finished_test(r)
    data = client.get(f"/api/v1/sprt/{test.id}").json()
    assert data["status"] == "finished" and data["verdict"] == "H1"
    assert data["llr"] >= data["upper_bound"] == pytest.approx(2.944, abs=1e-3)
    assert len(data["llr_history"]) == data["pairs"] == sum(data["pentanomial"])
    assert data["new"]["bot"] == "greedy" and data["old"]["bot"] == "random"

    page = client.get(f"/sprt/{test.id}")
    assert page.status_code == 200
    html = page.text
    assert "H1 accepted" in html and "greedy is stronger than random" in html
    assert f"LLR {data['llr']:+.2f}, bounds -2.94 (H0) and +2.94 (H1)" in html
    # The chart: one point per pair (and the start), the two bounds drawn as lines.
    assert html.count('class="bound"') == 4  # wide and narrow chart
    polyline = html.split('class="series llr" points="', 1)[1].split('"', 1)[0]
    assert len(polyline.split()) == data["pairs"] + 1
    assert f"LL {data['pentanomial'][0]} " in html

    listed = client.get("/sprt").text
    assert f'href="/sprt/{test.id}"' in listed and "finished" in listed
    assert client.get("/api/v1/sprt").json()["tests"][0]["id"] == test.id


def test_unknown_test_is_a_404(client: Any) -> None:
    assert client.get("/sprt/000000000000").status_code == 404
    resp = client.get("/api/v1/sprt/nope:nope")
    assert resp.status_code == 404 and "no sequential test" in resp.json()["error"]["message"]
    assert "No tests yet" in client.get("/sprt").text
