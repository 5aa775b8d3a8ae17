"""The replay viewer and the pages around it, in headless Chromium at 1280 and 390 px: faults with
their kind (and, to the bot's author only, their reason) under the replay's own numbers, the URL
following the step, the speed, the keyboard, clocks, the games of a match, the match list's marks
and filter, each game's Elo change, and the live board from its first move.

The browser fixtures are :mod:`tests.web.test_browser`'s.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import redis

from arboretum_web.demo import DemoData
from arboretum_worker import ratings, replays, store
from arboretum_worker.live import LivePublisher, live_key

from .test_browser import PHONE, base_url, browser, page, phone  # noqa: F401 (fixtures)

pytestmark = pytest.mark.integration

REASON = "KeyError('OA5')"


@pytest.fixture(params=["desktop", "phone"])
def view(request: pytest.FixtureRequest) -> Any:
    """The page at 1280 px, then at 390 px."""
    return request.getfixturevalue("page" if request.param == "desktop" else "phone")


def _owned_match(r: redis.Redis, demo: DemoData, author: str) -> tuple[str, int]:
    """A finished match with a seat of ``author``'s bot: (match id, that seat)."""
    for mid in demo.matches:
        for seat, vid in enumerate(store.get_match(r, mid).seats):
            bot = store.get_bot(r, store.get_version(r, vid).name)
            if bot and bot.owner == author:
                return mid, seat
    raise AssertionError(f"no match of {author}")


def _plant_fault(r: redis.Redis, mid: str, seat: int) -> tuple[int, int]:
    """Mark one of ``seat``'s steps of game 0 as a fallback after a bot_error (the digest
    chain leaves faults out, so the replay still verifies). Returns (step, turn)."""
    doc = json.loads(replays.get_replay(r, mid, 0) or b"{}")
    index = next(i for i, s in enumerate(doc["steps"]) if s["seat"] == seat and i > 10)
    doc["steps"][index]["fault"] = {"kind": "bot_error", "reason": REASON}
    replays.drop_replays(r, mid)
    replays.save_replay(r, mid, 0, json.dumps(doc))
    return index, doc["steps"][index]["turn"]


def _sign_in(pg: Any, demo: DemoData, author: str) -> None:
    pg.goto("/login")
    pg.context.add_cookies([{"name": "arena_token", "value": demo.tokens[author], "url": pg.url}])


def test_a_fault_shows_its_kind_and_reason_to_its_author_only(
    view: Any, r: redis.Redis, demo: DemoData
) -> None:
    mid, seat = _owned_match(r, demo, "alice")
    step, turn = _plant_fault(r, mid, seat)
    # signed out: neither the kind nor the reason anywhere
    view.goto(f"/matches/{mid}/games/0#step={step}")
    view.wait_for_selector("#replay.ready")
    item = view.locator(f'#step-log li[data-i="{step}"]')
    assert "bot_error" not in item.inner_text() and REASON not in view.content()
    view.goto(f"/matches/{mid}")
    assert view.locator("#faults").count() == 0 and REASON not in view.content()
    # the author: the kind and the reason, by the replay's numbers, on every page
    _sign_in(view, demo, "alice")
    view.goto(f"/matches/{mid}/games/0#step={step}")
    view.wait_for_selector("#replay.ready")
    assert view.locator("#replay").get_attribute("data-pos") == str(step + 1)
    item = view.locator(f'#step-log li[data-i="{step}"]')
    assert item.locator(".fault-kind").inner_text() == "bot_error"
    assert item.locator(".fault-reason").inner_text() == REASON
    assert item.inner_text().startswith(f"step {step} · turn {turn}:")
    assert view.locator("#position").inner_text().startswith(f"step {step} · turn {turn} ·")
    faults = json.loads(view.request.get(f"/api/v1/matches/{mid}/seats/{seat}/faults").text())
    planted = [f for f in faults["faults"] if f["reason"] == REASON]
    assert planted and planted[0]["step"] == step and planted[0]["turn"] == turn
    for path, table in (
        (f"/matches/{mid}", f"#faults-{seat}"),
        (f"/matches/{mid}/seats/{seat}/log", "#fault-list"),
    ):
        view.goto(path)
        row = view.locator(f"{table} tbody tr").filter(has_text=REASON)
        assert row.count() == 1
        cells = row.locator("td").all_inner_texts()
        assert cells[:5] == ["0", str(step), str(turn), "bot_error", REASON]
        assert row.locator("a").get_attribute("href") == f"/matches/{mid}/games/0#step={step}"
        width = view.evaluate("document.documentElement.scrollWidth")
        assert width <= view.viewport_size["width"], f"{path} is {width} px wide"


def test_the_url_follows_the_step(view: Any, demo: DemoData) -> None:
    mid = demo.matches[0]
    view.goto(f"/matches/{mid}/games/0")
    view.wait_for_selector("#replay.ready")
    assert view.evaluate("location.hash") == ""
    for _ in range(3):
        view.locator("#next").click()
    assert view.evaluate("location.hash") == "#step=2"
    view.locator("#last").click()
    n = int(view.locator("#replay").get_attribute("data-pos") or 0)
    assert view.evaluate("location.hash") == f"#step={n - 1}"
    view.goto(f"/matches/{mid}/games/0#step=7")
    view.reload()
    view.wait_for_selector("#replay.ready")
    assert view.locator("#replay").get_attribute("data-pos") == "8"
    assert view.locator('#step-log li[data-i="7"]').get_attribute("class").endswith("current")
    view.locator('[data-act="first"]').click()
    assert view.evaluate("location.hash") == ""


def test_speed_space_and_tab(view: Any, demo: DemoData) -> None:
    view.goto(f"/matches/{demo.matches[0]}/games/0")
    view.wait_for_selector("#replay.ready")
    root = view.locator("#replay")
    # Space on a focused button presses that button, never starts playback
    view.locator("#next").focus()
    view.keyboard.press(" ")
    assert root.get_attribute("data-pos") == "1"
    assert view.locator("#play").inner_text() == "play"
    # the step items are reached with Tab (the list itself can take focus to scroll)
    view.locator("#step-log").focus()
    view.keyboard.press("Tab")
    focused = view.evaluate("document.activeElement.closest('li')?.dataset.i")
    assert focused == "0"
    view.keyboard.press("Tab")
    view.keyboard.press("Enter")
    assert root.get_attribute("data-pos") == "2"
    # the speed: 8x plays 8 steps in the time 1x plays one (450 ms)
    for control in view.locator(".replay .controls select, .replay .buttons button").all():
        box = control.bounding_box()
        if box:
            assert box["height"] >= 40, box
    view.select_option("#speed", "8")
    view.locator("#play").click()
    view.wait_for_timeout(1200)
    view.locator("#play").click()
    assert int(root.get_attribute("data-pos") or 0) >= 2 + 8


def test_clocks_and_time_per_decision(view: Any, demo: DemoData) -> None:
    mid = demo.matches[0]
    doc = demo.replays[mid]
    view.goto(f"/matches/{mid}/games/0#step=5")
    view.wait_for_selector("#replay.ready")
    ms = doc["steps"][5]["ms"]
    item = view.locator('#step-log li[data-i="5"] .ms').inner_text()
    assert item == f"{round(ms)} ms"
    seat = doc["steps"][5]["seat"]
    used = sum(s["ms"] for s in doc["steps"][:6] if s["seat"] == seat)
    clock = view.locator(f'[data-testid="clock-{seat}"]').inner_text()
    assert f"thinking time {round(used)} ms" in clock and f"last decision {round(ms)} ms" in clock


def test_next_and_previous_game_of_a_match(view: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = demo.matches[0]
    replays.save_replay(r, mid, 1, replays.get_replay(r, mid, 0) or b"")
    view.goto(f"/matches/{mid}/games/0")
    assert view.locator("#game-nav a[rel=prev]").count() == 0
    view.locator("#game-nav a[rel=next]").click()
    view.wait_for_url(re.compile(rf"/matches/{mid}/games/1$"))
    view.wait_for_selector("#replay.ready")
    assert view.locator("#game-nav a[rel=next]").count() == 0
    box = view.locator("#game-nav a[rel=prev]").bounding_box()
    assert box and box["height"] >= 40
    view.locator("#game-nav a[rel=prev]").click()
    view.wait_for_url(re.compile(rf"/matches/{mid}/games/0$"))


def test_the_match_list_marks_outcomes_and_filters_by_them(
    view: Any, r: redis.Redis, demo: DemoData
) -> None:
    def marks() -> list[set[str]]:
        rows = view.locator("#matches tbody tr").filter(has=view.locator(".status.finished")).all()
        tag = "span.seat.filtered .tag.outcome"
        return [set(row.locator(tag).all_inner_texts()) for row in rows]

    view.goto("/matches?bot=oakheart")
    every = marks()
    assert every and all(every), every  # (two versions of a bot may meet: a set per row)
    for outcome in ("won", "lost"):
        view.select_option("select[name=outcome]", outcome)
        view.locator("#match-filters button").click()
        view.wait_for_url(re.compile(rf"outcome={outcome}"))
        shown = marks()
        assert shown and all(outcome in row for row in shown), shown
        assert len(shown) == sum(1 for row in every if outcome in row)
    resp = view.request.get("/matches?outcome=won")
    assert resp.status == 400 and "with a bot chosen" in resp.text()


def test_each_game_shows_its_elo_change(view: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = demo.matches[-1]
    record = store.get_match(r, mid)
    view.goto(f"/matches/{mid}")
    cells = view.locator("#match-seats td.elo-change").all_inner_texts()
    expected = []
    for vid in record.seats:
        before = 1500.0
        for entry in ratings.history(r, record.league, vid):
            if entry.match_id == mid:
                expected.append(f"{entry.rating - before:+.1f}")
            before = entry.rating
    assert cells == expected
    assert "Elo change" in (view.locator("#match-seats thead").text_content() or "")


def test_the_live_board_waits_for_the_first_move(view: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = demo.running
    r.delete(live_key(mid))
    publisher = LivePublisher(r, mid)
    start = {"type": "start", "attempt": publisher.attempt, "players": 2, "games": 1,
             "seats": ["a", "b"]}  # fmt: skip
    game = {"type": "game", "game": 0, "players": 2, "species": [], "deck_size": 34,
            "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"}]}  # fmt: skip
    publisher.publish([start, game], False)
    view.goto(f"/matches/{mid}")
    view.wait_for_selector("#replay.live.ready")
    badge = view.locator("#live-status")
    view.wait_for_selector("#live-status:not(:text-is('connecting'))")
    assert badge.inner_text().lower() == "waiting for the first move"
    assert "on" not in (badge.get_attribute("class") or "").split()
    step = {"turn": 0, "seat": 0, "kind": "draw", "source": "deck", "card": None}
    publisher.publish([{"type": "step", "game": 0, "step": step}], False)
    view.wait_for_selector('#replay[data-started="1"]')
    assert badge.inner_text().lower() == "live"
    assert "on" in (badge.get_attribute("class") or "").split()
    # the live board comes first on the page, before the seats and details
    top = view.locator("#live").bounding_box()
    seats = view.locator("#match-seats").bounding_box()
    assert top and seats and top["y"] < seats["y"]
    assert top["y"] < 300


def test_the_live_page_keeps_its_facts_up_to_date(
    view: Any, r: redis.Redis, demo: DemoData
) -> None:
    mid = demo.running
    r.delete(live_key(mid))
    store.set_match_status(r, mid, store.MatchStatus.QUEUED)
    view.goto(f"/matches/{mid}")
    assert view.locator("#match-status").inner_text() == "queued"
    # a worker takes it: the page says so without a reload, with the attempt and its start
    store.start_match_attempt(r, mid, "w1")
    attempts = store.get_match(r, mid).attempts
    publisher = LivePublisher(r, mid)
    start = {"type": "start", "attempt": publisher.attempt, "players": 2, "games": 2,
             "seats": ["a", "b"]}  # fmt: skip
    game = {"type": "game", "game": 1, "players": 2, "species": [], "deck_size": 34,
            "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"}]}  # fmt: skip
    publisher.publish([start, game], False)
    view.wait_for_selector('#replay[data-facts="running"]')
    assert view.locator("#match-status").inner_text() == "running"
    assert view.locator("#match-attempts").inner_text() == str(attempts)
    assert view.locator("#match-started").inner_text() != "-"
    assert view.locator("#live-game-no").inner_text().startswith("Playing game 1")
    assert view.locator("#live-game option").all_inner_texts() == ["Game 1"]
    assert "queued" not in view.locator("main").inner_text()


def test_the_games_being_played_now(view: Any, r: redis.Redis, demo: DemoData) -> None:
    from sse_client import SSE

    mid = demo.running
    view.goto("/live")
    base = view.url.rsplit("/live", 1)[0]
    row = view.locator(f'#playing-now tr[data-match="{mid}"]')
    assert row.count() == 1
    assert row.locator(".spectators").inner_text() == "0"
    assert row.locator(".game").inner_text() == "0"  # the demo's running match plays game 0
    watcher = SSE(base, f"/api/v1/matches/{mid}/live")
    try:
        watcher.wait(1)
        for _ in range(20):  # (the server counts the viewer once its stream is open)
            view.reload()
            if row.locator(".spectators").inner_text() == "1":
                break
            view.wait_for_timeout(250)
        assert row.locator(".spectators").inner_text() == "1"
    finally:
        watcher.close()
    row.locator("a.button").click()
    view.wait_for_url(re.compile(rf"/matches/{mid}#live$"))
    assert view.evaluate("document.documentElement.scrollWidth") <= view.viewport_size["width"]


def test_the_analysis_marks_the_steps_and_draws_the_evaluation(
    view: Any, r: redis.Redis, demo: DemoData
) -> None:
    """A stored analysis (the real engine, little compute, low thresholds so that marks exist):
    its marks tag their steps and the graph draws each analysed seat's evaluation."""
    from arboretum_sdk.analysis import AnalysisConfig, analyse_replay
    from arboretum_sdk.analysis.report import analysis_json
    from arboretum_worker.keys import Keys

    mid = demo.matches[0]
    doc = json.loads(replays.get_replay(r, mid, 0) or b"{}")
    config = AnalysisConfig(samples=2, alternatives=1, inaccuracy=0.5, mistake=1.0, blunder=2.0)
    report = analysis_json(doc, analyse_replay(doc, [0], config, steps=range(40)), config)
    marked = {d["step"]: d["mark"] for d in report["decisions"] if d["mark"]}
    assert marked, "the thresholds are low enough to mark some decision"
    view.goto(f"/matches/{mid}/games/0")
    view.wait_for_selector("#replay.ready")
    assert view.locator("#eval").is_hidden() and view.locator(".tag.mark").count() == 0
    r.hset(Keys.analysis(mid, 0), mapping={"status": "done", "document": json.dumps(report)})
    view.reload()
    view.wait_for_selector('#replay[data-analysed="1"]')
    assert view.locator("#eval").is_visible()
    for step, mark in marked.items():
        tag = view.locator(f'#step-log li[data-i="{step}"] .tag.mark')
        assert tag.inner_text().endswith(mark), (step, mark)
    assert view.locator(".tag.mark").count() == len(marked)
    assert view.locator("#eval svg polyline").count() == len(report["seats"])
    assert view.locator("#eval circle.eval-mark").count() == len(marked)
    legend = view.locator("#eval .eval-legend").inner_text()
    assert f"accuracy {report['seats'][0]['accuracy']:.1f}%" in legend
    box = view.locator("#eval svg").bounding_box()
    assert box and box["x"] + box["width"] <= view.viewport_size["width"]
