"""Accessibility and phones, in headless Chromium at 1280 and 390 px: axe-core (the PyPI package
``axe-playwright-python``, which ships axe-core) finds no serious or critical violation on any
page; no text is under 12 px but the marks on card faces; at 390 px every control is at least
40 px tall, and the leaderboard, the head-to-head and the final scoring reflow into stacked rows
with every column on screen.

The browser fixtures are :mod:`tests.web.test_browser`'s.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from arboretum_web.demo import DemoData
from arboretum_worker import challenges, store

from .test_browser import PHONE, _missing, base_url, browser  # noqa: F401 (fixtures)
from .test_challenge_pages import play_challenge

pytestmark = pytest.mark.integration

WIDTHS = (1280, PHONE["width"])


def _pages(r: redis.Redis, demo: DemoData) -> list[str]:
    mid = demo.matches[0]
    owners = [
        store.get_bot(r, store.get_version(r, v).name).owner for v in store.get_match(r, mid).seats
    ]
    seat = owners.index("alice") if "alice" in owners else 0
    return [
        "/", "/?all=1", "/leagues", f"/leagues/{demo.league}", "/bots", "/bots/oakheart",
        "/matches", "/matches?bot=oakheart", f"/matches/{mid}", f"/matches/{mid}/games/0",
        f"/matches/{demo.running}", f"/matches/{demo.running}/games/0", "/login", "/upload",
        f"/matches/{mid}/seats/{seat}/log", "/bots/nobody", "/sprt", "/live",
        "/play?bot=oakheart", "/docs/api",
    ]  # fmt: skip


@pytest.fixture(params=WIDTHS, ids=["desktop", "phone"])
def signed_in(
    request: pytest.FixtureRequest,
    browser: Any,  # noqa: F811
    base_url: str,  # noqa: F811
    demo: DemoData,
) -> Iterator[Any]:
    """A page at the width, signed in as alice (her logs and faults too). The policy is
    bypassed for axe's own script only (the pages' policy is tested elsewhere)."""
    width = request.param
    context = browser.new_context(
        viewport={"width": width, "height": 900}, base_url=base_url, bypass_csp=True
    )
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.goto("/login")
    context.add_cookies([{"name": "arena_token", "value": demo.tokens["alice"], "url": pg.url}])
    try:
        yield pg
    finally:
        context.close()
    assert errors == [], errors


def _open(pg: Any, path: str) -> None:
    pg.goto(path)
    pg.wait_for_load_state("networkidle")
    if "/games/" in path:
        pg.wait_for_selector("#replay.ready")
        pg.keyboard.press("End")  # the final scoring too


def test_axe_finds_nothing_serious(signed_in: Any, r: redis.Redis, demo: DemoData) -> None:
    try:
        from axe_playwright_python.sync_playwright import Axe
    except ImportError:
        _missing("axe-playwright-python is not installed (requirements-dev.txt)")
    axe = Axe()
    found = []
    # the author's profile and dashboard, and the operator's audit page, too
    extra = ["/me", "/authors/alice", f"/leagues/{demo.league}/audit"]
    # a challenge of hers, played: its page, a game in the viewer, the list
    made = challenges.create_challenge(r, "alice", "oakheart", ["sapling"], deals=1, seed=7)
    play_challenge(r, made)
    extra += [f"/challenges/{made.id}", f"/challenges/{made.id}/matches/0/games/0", "/challenges"]
    for path in _pages(r, demo) + extra:
        _open(signed_in, path)
        for v in axe.run(signed_in).response["violations"]:
            if v["impact"] in ("serious", "critical"):
                first = v["nodes"][0]
                found.append(f"{path}: {v['id']} x{len(v['nodes'])}: {first['target']}")
    assert found == [], "\n".join(found)


# text under 12 px: none but the species marks on card faces (docs/web.md)
_SMALL_TEXT = """() => {
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest(".card-chip, svg.arb") || !el.getClientRects().length) continue;
    const own = Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own) continue;
    const size = parseFloat(getComputedStyle(el).fontSize);
    const box = el.getBoundingClientRect();
    const text = el.textContent.trim().slice(0, 30);
    const what = `${el.tagName}.${el.className} ${size}px: ${text}`;
    if (size < 12 && box.width && box.height) out.push(what);
  }
  return out;
}"""

_SMALL_CONTROLS = """() => {
  const out = [];
  const sel = "button, select, input:not([type=hidden]), a.button, table.board a, .pager a, "
    + ".game-nav a";
  for (const el of document.querySelectorAll(sel)) {
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height || getComputedStyle(el).visibility === "hidden") continue;
    if (el.closest("#step-log") && !el.closest("li.current")) continue;  // (one suffices)
    const what = `${el.tagName}#${el.id}.${el.className} ${box.height.toFixed(1)}px`;
    if (box.height < 39.5) out.push(what + ": " + el.textContent.trim().slice(0, 20));
  }
  return out;
}"""


def test_text_is_at_least_12_px(signed_in: Any, r: redis.Redis, demo: DemoData) -> None:
    found = []
    for path in _pages(r, demo):
        _open(signed_in, path)
        found += [f"{path}: {t}" for t in signed_in.evaluate(_SMALL_TEXT)]
    assert found == [], "\n".join(found)


def test_every_control_is_40_px_on_a_phone(signed_in: Any, r: redis.Redis, demo: DemoData) -> None:
    if signed_in.viewport_size["width"] != PHONE["width"]:
        pytest.skip("a phone's rule (the desktop keeps its compact tables)")
    found = []
    for path in _pages(r, demo):
        _open(signed_in, path)
        if "/games/" in path:
            signed_in.keyboard.press("Home")
            signed_in.keyboard.press("ArrowRight")
        found += [f"{path}: {t}" for t in signed_in.evaluate(_SMALL_CONTROLS)]
    assert found == [], "\n".join(found)


_OFF_SCREEN = """(selector) => {
  const out = [];
  for (const td of document.querySelectorAll(selector + " tbody td")) {
    const box = td.getBoundingClientRect();
    if (!td.textContent.trim()) continue;
    const what = (td.dataset.label || "?") + ": " + td.textContent.trim().slice(0, 20);
    if (!box.width || box.right > window.innerWidth + 0.5) out.push(what);
  }
  return out;
}"""


def test_tables_reflow_on_a_phone(signed_in: Any, demo: DemoData) -> None:
    """Every cell of the leaderboard, the head-to-head and the final scoring is on screen at
    390 px, labelled with its column (at 1280 px they are plain tables, wholly on screen)."""
    phone = signed_in.viewport_size["width"] == PHONE["width"]
    for path, table in (
        ("/", "#leaderboard"),
        ("/bots/oakheart", "#head-to-head"),
        (f"/matches/{demo.matches[0]}/games/0", "#scoring-table"),
    ):
        _open(signed_in, path)
        assert signed_in.locator(f"{table} tbody td").count() > 0, path
        assert signed_in.evaluate(_OFF_SCREEN, table) == [], path
        if phone:
            labels = signed_in.locator(f"{table} tbody tr").first.locator("td[data-label]")
            assert labels.count() >= 3, path
    if phone:
        _open(signed_in, "/")
        # the columns a desktop shows beside the ratings are there too, in the stacked row
        row = signed_in.locator("#leaderboard tbody tr").first
        for cls in ("games", "winrate", "elo", "live"):
            assert row.locator(f"td.{cls}").is_visible(), cls
        # the live board is near the top of a running match's page
        _open(signed_in, f"/matches/{demo.running}")
        box = signed_in.locator("#live").bounding_box()
        assert box is not None and box["y"] < 300, box
