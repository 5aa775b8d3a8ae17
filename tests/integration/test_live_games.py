"""Watching a league game live, end to end: a real `arena worker` plays the match (private
referee, bots in the sandbox) and publishes its events through Redis; the web app relays them;
headless Chromium shows the moves on the match page while the game runs. What the stream held
is then compared with the public replay: the same steps, final hands and scoring, nothing more.

Needs Debian's ``chromium`` and ``playwright`` (skipped without them on a developer's machine,
failed in CI).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import pytest

from arboretum_web.app import WebSettings, create_app
from arboretum_web.replays import seat_view, strip_faults
from arboretum_web.screenshots import CHROMIUM_ARGS, chromium_path, serve_in_thread
from arboretum_worker import league, registry, replays, store
from sse_client import SSE

from .conftest import BOTS, Arena

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

CLOCK = ["--per-decision-ms", "1000", "--bank-ms", "5000", "--faults-to-forfeit", "3"]
ALLOWED_KEYS = {
    "type", "attempt", "players", "games", "seats", "game", "species", "seat", "bot",
    "deck_size", "step", "turn", "kind", "source", "pile", "card", "cell", "discard",
    "final_hands", "result", "status", "games_finished",
    # the scoring explanation (docs/replay-format.md), revealed at each game's end
    "totals", "ranks", "winners", "total", "rank", "species_in_arboretum", "forfeited",
    "hand_total", "has_right", "points", "path", "cells", "cards", "card_points", "doubled",
    "start_bonus", "end_bonus",
}  # fmt: skip


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _public_steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps the public replay shows, without notes and timings (the stream has neither)."""
    public = strip_faults(seat_view(doc, None), set())
    return [
        {k: v for k, v in step.items() if k != "ms"}
        for step in public["steps"]
        if not step.get("note")
    ]


def _browser() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install playwright)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    if chromium_path() is None:
        why = "chromium is not installed (apt-get install chromium)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    return sync_playwright()


def test_a_running_game_is_watched_live(arena: Arena) -> None:
    r = arena.r
    registry.add_version(
        r, "random", league.builtin_bot_files("random"), check=league.sandbox_check("auto")
    )
    arena.run("bot", "submit", str(BOTS / "slow.py"), "--name", "slow")
    arena.run(
        "league", "create", "live", "--bots", "random", "slow", "--players", "2",
        "--games-per-pairing", "1", "--seed", "11", *CLOCK,
    )  # fmt: skip
    app = create_app(WebSettings(redis_url=arena.url, check=lambda p: None), client=r)
    with _browser() as pw, serve_in_thread(app) as base:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        arena.run("league", "run", "live")
        first = store.league_matches(r, "live")[0]
        sse = SSE(base, f"/api/v1/matches/{first}/live")
        page.goto(f"{base}/matches/{first}")
        assert page.locator("#replay.live").count() == 1  # queued or running: the live viewer
        # the match starts only now, with the page open: on a slow or busy machine the browser's
        # start could otherwise take most of the game (about 5 s of the slow bot's decisions)
        assert store.get_match(r, first).status is store.MatchStatus.QUEUED
        arena.start_worker()
        arena.wait_workers(1)

        # moves appear while the game runs
        # (polled from here: the page's CSP allows no evaluated string, wait_for_function's way)
        steps = page.locator("#step-log li")
        deadline = time.monotonic() + 60
        while steps.count() < 4:
            assert time.monotonic() < deadline, "no move showed up"
            time.sleep(0.1)
        assert store.get_match(r, first).status is store.MatchStatus.RUNNING
        seen = page.locator("#step-log li").count()
        time.sleep(1.5)
        assert store.get_match(r, first).status is store.MatchStatus.RUNNING
        assert page.locator("#step-log li").count() > seen
        assert page.locator("#live-status").text_content() == "live"
        assert page.locator("#replay #seats .seat").count() == 2  # the viewer's own seat panels
        assert page.evaluate("document.documentElement.scrollWidth") <= 390

        # at the end the page reloads and shows the stored replays
        page.wait_for_selector("text=Watch the replay", timeout=90_000)
        assert sse.done.wait(30)
        browser.close()
        assert errors == [], errors
    arena.wait_league("live", timeout=120)

    # what the stream held is exactly what the public replay shows
    assert sse.events[-1] == ("over", None, {"status": "finished"})
    data = [d for kind, _i, d in sse.events if kind == "message"]
    assert _keys(data) <= ALLOWED_KEYS, _keys(data) - ALLOWED_KEYS
    assert [d["type"] for d in data[:2]] == ["start", "game"]
    assert data[-2]["type"] == "game_end" and data[-1]["type"] == "end"
    raw = replays.get_replay(r, first, 0)
    assert raw is not None
    doc = json.loads(raw)
    public = seat_view(doc, None)
    steps = [d["step"] for d in data if d["type"] == "step"]
    assert steps == _public_steps(doc)
    assert data[-2]["final_hands"] == public["final_hands"]
    assert data[-2]["result"] == public["result"]
    assert data[1]["deck_size"] == public["deck_size"]
    assert all(s["card"] is None for s in steps if s["kind"] == "draw" and s["source"] == "deck")
