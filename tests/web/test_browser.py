"""End to end in headless Chromium: the app served by uvicorn on 127.0.0.1, driven by playwright.

Needs Debian's ``chromium`` and the ``playwright`` package (never ``playwright install``). Missing
either skips these tests on a developer's machine and fails them in CI (``CI`` set).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData
from arboretum_web.screenshots import CHROMIUM_ARGS, chromium_path, serve_in_thread
from arboretum_worker import ratings, registry, replays, store
from arboretum_worker.fit import fit_ratings

pytestmark = pytest.mark.integration


def _missing(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    exe = chromium_path()
    if exe is None:
        _missing("chromium is not installed (apt-get install chromium)")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def base_url(redis_server_url: str) -> Iterator[str]:
    client = redis.Redis.from_url(redis_server_url)
    app = create_app(WebSettings(redis_url=redis_server_url, check=lambda p: None), client=client)
    with serve_in_thread(app) as url:
        yield url
    client.close()


@pytest.fixture
def page(browser: Any, base_url: str, demo: DemoData) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=base_url)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    # a CSP violation (an inline style or script the policy refuses) is a console error
    # (an error status of the page itself is logged too: that one is expected)
    pg.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and not msg.text.startswith("Failed to load resource")
            else None
        ),
    )
    try:
        yield pg
    finally:
        context.close()
    assert errors == [], errors


def test_leaderboard_rows_match_the_stored_ratings(page: Any, r: redis.Redis) -> None:
    page.goto("/")
    rows = page.locator("#leaderboard tbody tr")
    latest = {registry.latest(r, n) for n in ("oakheart", "sapling", "random")}
    # ranked by the lower end of the fitted interval (the board of `arena leaderboard`)
    fitted = {f.version: f for f in fit_ratings(ratings.results_in_order(r, "demo"))}
    expected = sorted(latest, key=lambda v: (-fitted[v].lower, v))
    live = {row.version: row.live for row in ratings.standings(r, "demo")}
    assert rows.count() == len(expected)
    for i, vid in enumerate(expected):
        row = rows.nth(i)
        assert row.get_attribute("data-version") == vid
        st = ratings.stats(r, "demo", vid)
        shown = f"{live[vid].mu:.0f} ± {live[vid].half_width:.0f}"
        assert row.locator(".live").inner_text() == shown
        half = (fitted[vid].upper - fitted[vid].lower) / 2
        assert row.locator(".fit").inner_text() == f"{fitted[vid].elo:.0f}? ± {half:.0f}"
        assert row.locator(".elo").inner_text() == f"{ratings.rating(r, 'demo', vid):.1f}"
        assert row.locator(".games").inner_text() == str(st.games)
        assert row.locator(".rank").inner_text() == str(i + 1)
        assert row.locator(".bot").inner_text() == store.get_version(r, vid).name
    page.locator("#all-versions").check()
    page.wait_for_url(re.compile(r"all=1"))
    assert page.locator("#leaderboard tbody tr").count() == len(ratings.ratings(r, "demo"))


def test_bot_page(page: Any, r: redis.Redis) -> None:
    page.goto("/")
    page.get_by_role("link", name="oakheart").first.click()
    page.wait_for_url(re.compile(r"/bots/oakheart"))
    assert page.locator("h1").inner_text().startswith("oakheart")
    versions = registry.versions(r, "oakheart")
    assert page.locator("#versions tbody tr").count() == len(versions)
    assert page.locator("#rating-chart svg.wide polyline").count() == len(versions)
    assert page.locator("#rating-chart svg.narrow polyline").count() == len(versions)
    assert page.locator("#head-to-head tbody tr").count() > 0


def _revealed_match(page: Any, demo: DemoData) -> str:
    for mid in demo.matches:
        body = json.loads(page.request.get(f"/api/v1/matches/{mid}").text())
        if body["revealed"]:
            return mid
    raise AssertionError("no revealed match")


def test_replay_steps_to_the_final_scoring(page: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = _revealed_match(page, demo)
    doc = json.loads(replays.get_replay(r, mid, 0))
    page.goto(f"/matches/{mid}")
    page.get_by_role("link", name="Watch the replay").click()
    page.wait_for_selector("#replay.ready")
    root = page.locator("#replay")
    assert root.get_attribute("data-pos") == "0"
    # the deal: every seat holds 7 cards; the deck holds the rest
    dealt = sum(len(h) for h in doc["hands"])
    assert page.locator("#deck-size").inner_text() == str(len(doc["deck"]) - dealt)
    page.locator("#next").click()
    page.locator("#next").click()
    assert root.get_attribute("data-pos") == "2"
    page.keyboard.press("ArrowLeft")
    assert root.get_attribute("data-pos") == "1"
    page.keyboard.press("ArrowDown")  # to the end of the turn
    first_turn = sum(1 for s in doc["steps"] if s["turn"] == doc["steps"][0]["turn"])
    assert root.get_attribute("data-pos") == str(first_turn)
    # the label names the step just shown by the replay's numbers (from 0), not the one to come
    n = len(doc["steps"])
    shown = first_turn - 1
    label = f"step {shown} · turn {doc['steps'][shown]['turn']} · {first_turn} / {n} steps"
    assert page.locator("#position").inner_text() == label
    # one card in the first seat's arboretum after its first turn
    seat0 = page.locator('.seat[data-seat="0"] svg.arb g.tree')
    assert seat0.count() == 1
    # step through the whole game with the keyboard
    n = len(doc["steps"])
    while int(root.get_attribute("data-pos") or 0) < n:
        page.keyboard.press("ArrowRight")
    page.wait_for_selector("#scoring:not([hidden])")
    assert root.get_attribute("data-at-end") == "1"
    totals = doc["result"]["totals"]
    for seat, total in enumerate(totals):
        assert page.locator(f"#score-total-{seat}").inner_text() == str(total)
        badge = page.locator(f'[data-testid="seat-total-{seat}"]').inner_text()
        assert badge.startswith(f"{total} pts")
    # every counted path is drawn over its arboretum, on the cards of the path
    for seat, res in enumerate(doc["result"]["seats"]):
        scored = [sp for sp in res["species"] if sp["path"]]
        paths = page.locator(f'.seat[data-seat="{seat}"] svg.arb g.path')
        assert paths.count() == len(scored)
        on_path = {tuple(c) for sp in scored for c in sp["path"]["cells"]}
        assert page.locator(f'.seat[data-seat="{seat}"] g.tree.on-path').count() == len(on_path)
        for sp in res["species"]:
            if sp["path"] or sp["has_right"] or sp["hand_total"]:
                row = page.locator(f'tr.species-row[data-seat="{seat}"]').filter(
                    has_text=sp["species"].replace("_", " ").title()
                )
                assert row.locator(".points").inner_text() == str(sp["points"])
    winners = " and ".join(doc["seats"][w]["bot"] for w in doc["result"]["winners"])
    assert winners in page.locator("#winners").inner_text()
    # back to the start with Home
    page.keyboard.press("Home")
    assert root.get_attribute("data-pos") == "0"
    assert page.locator("#scoring").is_hidden()


def test_replay_seat_mode_hides_the_other_hands(page: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = _revealed_match(page, demo)
    page.goto(f"/matches/{mid}/games/0")
    page.wait_for_selector("#replay.ready")
    page.keyboard.press("ArrowDown")
    all_backs = page.locator(".card-chip.back").count()
    assert all_backs == 0
    page.select_option("#perspective", "0")
    assert page.locator('.seat[data-seat="0"] .hand .card-chip.back').count() == 0
    assert page.locator('.seat[data-seat="1"] .hand .card-chip.back').count() >= 6
    deck_draws = page.locator("#step-log li").filter(has_text="from the deck")
    doc = json.loads(replays.get_replay(r, mid, 0))
    for i, step in enumerate(doc["steps"][:8]):
        if step["kind"] == "draw" and step["source"] == "deck":
            text = page.locator(f'#step-log li[data-i="{i}"]').inner_text()
            assert ("a card" in text) == (step["seat"] != 0)
    assert deck_draws.count() > 0
    page.select_option("#perspective", "public")
    assert page.locator('.seat[data-seat="0"] .hand .card-chip.back').count() >= 6


def test_a_game_in_progress_shows_public_information(page: Any, demo: DemoData) -> None:
    assert demo.running is not None
    page.goto(f"/matches/{demo.running}/games/0")
    page.wait_for_selector("#replay.ready")
    assert "not over" in page.locator("#notice").inner_text()
    options = page.locator("#perspective option").all_inner_texts()
    assert options == ["Public"]
    page.keyboard.press("End")
    assert page.locator("#scoring").is_hidden()
    hidden = page.locator(".hand .card-chip.back").count()
    assert hidden > 0


def test_a_three_player_replay(page: Any, r: redis.Redis) -> None:
    from arboretum_web.demo import DEMO_BOTS, seed_demo

    trio = seed_demo(r, league="trio", players=3, bots=DEMO_BOTS[1:], limit=1)
    mid = trio.matches[0]
    doc = trio.replays[mid]
    page.goto(f"/matches/{mid}/games/0")
    page.wait_for_selector("#replay.ready")
    assert page.locator(".seat").count() == 3
    page.locator("#last").click()
    page.wait_for_selector("#scoring:not([hidden])")
    for seat, total in enumerate(doc["result"]["totals"]):
        assert page.locator(f"#score-total-{seat}").inner_text() == str(total)


def test_error_page_in_the_browser(page: Any) -> None:
    resp = page.goto("/matches/no-such-match")
    assert resp is not None and resp.status == 404
    assert "Not found" in page.locator("h1").inner_text()


# --------------------------------------------------------------------------- phones

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser: Any, base_url: str, demo: DemoData) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, base_url=base_url, has_touch=True)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield pg
    finally:
        context.close()
    assert errors == [], errors


def _phone_pages(demo: DemoData, r: redis.Redis) -> list[str]:
    mid = demo.matches[0]
    owners = [
        store.get_bot(r, store.get_version(r, v).name).owner for v in store.get_match(r, mid).seats
    ]
    seat = owners.index("alice") if "alice" in owners else 0
    return [
        "/", "/?all=1", "/leagues", "/leagues/demo", "/bots", "/bots/oakheart", "/matches",
        f"/matches/{mid}", f"/matches/{mid}/games/0", f"/matches/{demo.running}",
        f"/matches/{demo.running}/games/0", "/login", "/upload", f"/matches/{mid}/seats/{seat}/log",
        "/bots/nobody", "/authors/alice", "/me", "/docs/api",
    ]  # fmt: skip


def _every_page(pg: Any, demo: DemoData, r: redis.Redis) -> Iterator[str]:
    """Open each of :func:`_phone_pages` signed in as alice (the upload page and a bot's log
    too), a replay at its final scoring; yields its path once it is shown."""
    pg.goto("/")
    pg.context.add_cookies([{"name": "arena_token", "value": demo.tokens["alice"], "url": pg.url}])
    for path in _phone_pages(demo, r):
        pg.goto(path)
        pg.wait_for_load_state("networkidle")
        if "/games/" in path:
            pg.wait_for_selector("#replay.ready")
            pg.keyboard.press("End")
        yield path


def test_no_page_is_wider_than_a_phone(phone: Any, demo: DemoData, r: redis.Redis) -> None:
    """At 390 px every page fits the window: nothing sticks out, wide tables scroll inside
    their card."""
    for path in _every_page(phone, demo, r):
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{path} is {width} px wide"


# Each table's head cells against its first body row's: their left edges and widths, in px
# (a cell that spans columns is left out). A table laid out as anything but a table (a flex box)
# sizes its head and its body apart, and they drift apart.
_COLUMNS = """
() => [...document.querySelectorAll("table")].filter(t => t.tHead && t.tBodies[0]?.rows[0])
  .map(t => {
    const head = [...t.tHead.rows[0].cells];
    const row = [...t.tBodies[0].rows[0].cells];
    if (head.length !== row.length || [...head, ...row].some(c => c.colSpan > 1)) return null;
    return {id: t.id || t.className, pairs: head.map((h, i) => {
      const a = h.getBoundingClientRect(), b = row[i].getBoundingClientRect();
      return [Math.round(a.left), Math.round(b.left), Math.round(a.width), Math.round(b.width)];
    })};
  }).filter(Boolean)
"""


def test_every_tables_head_lines_up_with_its_rows(
    page: Any, demo: DemoData, r: redis.Redis
) -> None:
    """On a desktop each table's column heads stand over their columns (a form's layout rule
    once made the tables flex boxes, and the heads drifted off their columns)."""
    seen = 0
    for path in _every_page(page, demo, r):
        for table in page.evaluate(_COLUMNS):
            seen += 1
            for column, (head_left, row_left, head_width, row_width) in enumerate(table["pairs"]):
                where = f"{path} {table['id']} column {column}"
                assert abs(head_left - row_left) <= 1, (
                    f"{where}: head at {head_left}, row at {row_left}"
                )
                assert abs(head_width - row_width) <= 1, (
                    f"{where}: {head_width} against {row_width} px"
                )
    assert seen >= 10, seen  # the board, the lists, the seats, the scoring, ...


def test_the_menu_is_one_line_on_a_desktop_signed_in(page: Any, demo: DemoData) -> None:
    page.goto("/")
    page.context.add_cookies(
        [{"name": "arena_token", "value": demo.tokens["alice"], "url": page.url}]
    )
    page.goto("/upload")
    tops = page.evaluate(
        "[...document.querySelectorAll('header.top nav a, header.top .who a')]"
        ".map(a => Math.round(a.getBoundingClientRect().top))"
    )
    assert len(tops) >= 10 and max(tops) - min(tops) <= 2, tops
    assert page.locator("header.top a.active").inner_text() == "Upload"


def test_the_ladder_page_fits_a_phone_and_lists_what_is_playing(
    phone: Any, page: Any, r: redis.Redis
) -> None:
    """A ladder's page (tests/web/test_ladder.py seeds it) at 390 px and at 1280 px: nothing
    wider than the window, and the pairings being played link to their matches."""
    from arboretum_worker.ladder.scheduler import in_flight

    from .test_ladder import seed_ladder

    seed_ladder(r)
    playing = {m.id for m in in_flight(r, "ladder1")}
    for pg, width in ((phone, PHONE["width"]), (page, 1280)):
        pg.goto("/leagues/ladder1")
        pg.wait_for_load_state("networkidle")
        assert pg.evaluate("document.documentElement.scrollWidth") <= width
        links = pg.locator("#playing a.mono").all()
        assert {link.get_attribute("href").rsplit("/", 1)[1] for link in links} == playing
        assert pg.locator("#standings tbody tr").count() == 4
    phone.locator("#playing a.mono").first.tap()
    phone.wait_for_url(re.compile(r"/matches/[0-9a-f]+$"))


def test_the_menu_folds_on_a_phone(phone: Any) -> None:
    phone.goto("/")
    nav = phone.locator("#site-menu nav")
    toggle = phone.locator("#menu-toggle")
    assert toggle.is_visible() and not nav.is_visible()
    toggle.tap()
    assert nav.is_visible() and toggle.get_attribute("aria-expanded") == "true"
    phone.get_by_role("link", name="Matches").tap()
    phone.wait_for_url(re.compile(r"/matches$"))


def test_the_replay_is_playable_by_touch(phone: Any, demo: DemoData) -> None:
    phone.goto(f"/matches/{demo.matches[0]}/games/0")
    phone.wait_for_selector("#replay.ready")
    for button in phone.locator(".replay .buttons button").all():
        box = button.bounding_box()
        assert box is not None and box["height"] >= 40 and box["width"] >= 40, box
    # the seats are stacked: each panel as wide as the page's content
    panels = phone.locator("#seats .seat").all()
    lefts = {round(p.bounding_box()["x"]) for p in panels}
    assert len(panels) == 2 and len(lefts) == 1
    phone.locator("#next").tap()
    phone.locator("#next").tap()
    assert phone.locator("#replay").get_attribute("data-pos") == "2"
    phone.locator("#last").tap()
    phone.wait_for_selector("#scoring:not([hidden])")


def test_the_chart_is_drawn_for_a_phone(phone: Any) -> None:
    phone.goto("/bots/oakheart")
    assert phone.locator("#rating-chart svg.narrow").is_visible()
    assert not phone.locator("#rating-chart svg.wide").is_visible()
    heights = [t.bounding_box()["height"] for t in phone.locator("svg.narrow text.axis").all()]
    assert heights and min(heights) >= 9, heights  # readable labels, not 4 px


def test_a_running_match_page_follows_it_live(page: Any, demo: DemoData) -> None:
    """The demo publishes the running match's events so far, as its worker would have."""
    page.goto(f"/matches/{demo.running}")
    page.wait_for_selector("#replay.live.ready")
    steps = [s for s in demo.replays[demo.running]["steps"] if not s.get("note")]
    log = page.locator("#step-log li")
    assert log.count() == len(steps)
    assert page.locator("#replay").get_attribute("data-pos") == str(len(steps))  # follows
    assert page.locator("#match-seats tbody tr").count() == 2
    assert page.locator("#replay #seats .seat").count() == 2
    assert page.locator("#live-status").text_content() == "live"
