"""A scripted person at a casual game's table in headless Chromium (static/play.js), and what
the page received: every feed message of the event stream (read from Chromium's own network
events) and every JSON body of the game's endpoints. The checks of those messages against the
person's seat view rebuilt from the finished replay (the referee's spy test, for a person).

Used by ``test_play_browser.py`` and ``test_play_resume.py`` (real worker, real sandboxes, the
real web app served by uvicorn), and by ``test_play_screenshots.py`` for its browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from arboretum import Card, GameState, Species
from arboretum.replay import step_to_decision, verify_replay
from arboretum_sdk.info import Clock
from arboretum_sdk.stdio import lines
from arboretum_web.app import WebSettings, create_app
from arboretum_web.screenshots import CHROMIUM_ARGS, chromium_path, serve_in_thread
from arboretum_worker import league, registry

from .conftest import Arena

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}
"""The narrowest screen the table is made for (docs/web.md)."""
CARD = re.compile(r"^(BS|CA|CB|DO|JA|MA|OA|RP|TP|WI)[1-8]$")
WAIT = '#play[data-stage="source"], #play[data-stage="card"], #play[data-ended="1"]'


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium (Debian's), or a skip (a failure in CI) without it or playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install playwright)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    exe = chromium_path()
    if exe is None:
        why = "chromium is not installed (apt-get install chromium)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def casual_site(arena: Arena, workers: int = 1) -> Iterator[str]:
    """The greedy bot registered, ``workers`` real workers and the web app; yields its URL."""
    r = arena.r
    registry.add_version(
        r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )
    for _ in range(workers):
        arena.start_worker()
    arena.wait_workers(workers)
    app = create_app(WebSettings(redis_url=arena.url, check=lambda p: None), client=r)
    with serve_in_thread(app) as base:
        yield base


@dataclass
class Table:
    """One browser tab at a casual game, with what it received."""

    page: Any
    errors: list[str] = field(default_factory=list)
    sse: list[tuple[str, str, str]] = field(default_factory=list)  # (event, id, data)
    responses: list[tuple[str, int, str]] = field(default_factory=list)  # (url, status, body)

    @property
    def game_id(self) -> str:
        return str(self.page.get_attribute("#play", "data-game"))

    def attr(self, name: str) -> str | None:
        value = self.page.get_attribute("#play", f"data-{name}")
        return None if value is None else str(value)


def open_table(browser: Any, base: str, viewport: dict[str, int], *, touch: bool = False) -> Table:
    """A new tab (a phone's touch screen with ``touch``) recording errors and what it receives."""
    context = browser.new_context(
        viewport=viewport, base_url=base, has_touch=touch, is_mobile=touch
    )
    page = context.new_page()
    table = Table(page)
    page.on("pageerror", lambda exc: table.errors.append(f"pageerror: {exc}"))
    page.on(
        "console",
        lambda msg: table.errors.append(f"console: {msg.text}") if msg.type == "error" else None,
    )
    page.on("response", lambda resp: _keep(table, resp))
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on(
        "Network.eventSourceMessageReceived",
        lambda ev: table.sse.append((ev["eventName"], ev["eventId"], ev["data"])),
    )
    return table


def _keep(table: Table, resp: Any) -> None:
    """A response of the game's URLs, with its body read at once (a reload drops the bodies of
    the page before); the event stream's messages come from the network events instead."""
    if "/play/" not in resp.url or "event-stream" in (resp.headers.get("content-type") or ""):
        return
    try:
        body = resp.text()
    except Exception:  # (a redirect has no body)
        body = ""
    table.responses.append((resp.url, resp.status, body))


def start_game(table: Table, opponents: int, seat: int | None = None, *, tap: bool = False) -> str:
    """Start a game from the Play page's form against ``opponents`` greedy bots."""
    page = table.page
    page.goto("/play")
    for n in range(opponents):
        page.select_option(f"#opponent-{n + 1}", label=_greedy_label(page, n + 1))
    if seat is not None:
        page.select_option("#play-seat", str(seat + 1))
    button = page.locator("#play-start")
    button.tap() if tap else button.click()
    page.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    return table.game_id


def _greedy_label(page: Any, n: int) -> str:
    labels = page.locator(f"#opponent-{n} option").all_inner_texts()
    return next(text for text in labels if text.startswith("greedy"))


_FOCUSED = "e => e === document.activeElement"
_OUTLINE = "() => getComputedStyle(document.activeElement).outlineStyle"


def press(locator: Any, how: str) -> None:
    """Press a control with the mouse, a tap, or the keyboard alone: Tab from where the focus
    is (the page puts it on the first option of each choice) to the control, then Enter; the
    focused control shows its focus."""
    if how == "tap":
        locator.tap()
    elif how == "keys":
        page = locator.page
        for _ in range(80):
            if locator.evaluate(_FOCUSED):
                break
            page.keyboard.press("Tab")
        assert locator.evaluate(_FOCUSED), "Tab never reached the control"
        assert page.evaluate(_OUTLINE) not in ("none", ""), "the focus is not shown"
        page.keyboard.press("Enter")
    else:
        locator.click()


def play(table: Table, rng: random.Random, how: str = "mouse", decisions: int = 10**6) -> int:
    """Answer requests with random legal choices through the page's controls until the game
    ends or ``decisions`` were made; the number made."""
    page = table.page
    made = 0
    while made < decisions:
        page.wait_for_selector(WAIT, timeout=240_000)
        if table.attr("ended") == "1":
            break
        if table.attr("stage") == "source":
            options = page.locator("#play-prompt [data-source]")
            press(options.nth(rng.randrange(options.count())), how)
        else:
            cards = page.locator("#play-me .hand-cards button")
            press(cards.nth(rng.randrange(cards.count())), how)
            page.wait_for_selector('#play[data-stage="cell"]')
            cells = page.locator("#play-me .cell-target")
            press(cells.nth(rng.randrange(cells.count())), how)
            if table.attr("stage") == "discard":
                rest = page.locator("#play-me .hand-cards button:not(.chosen)")
                press(rest.nth(rng.randrange(rest.count())), how)
        page.wait_for_selector('#play[data-stage="confirm"]')
        press(page.locator("#play-confirm"), how)
        made += 1
        page.wait_for_selector('#play:not([data-stage="confirm"])')
    return made


def play_to_end(table: Table, rng: random.Random, how: str = "mouse") -> int:
    """Play the whole game, then wait for the scoring and the replay's link."""
    made = play(table, rng, how)
    table.page.wait_for_selector("#play-scoring:not([hidden])", timeout=60_000)
    table.page.wait_for_selector("#play-after:not([hidden])", timeout=60_000)
    return made


def stored_replay(table: Table) -> dict[str, Any]:
    """The finished game's replay, as its page links it, verified by the engine."""
    resp = table.page.request.get(f"/play/{table.game_id}/replay.json")
    assert resp.status == 200, resp.text()
    doc: dict[str, Any] = resp.json()
    verify_replay(doc)
    return doc


# ---------------------------------------------------------------------------- the spy's checks


def received(table: Table) -> dict[str, dict[str, Any]]:
    """Every feed message the page received, by stream id: the event stream's and those in the
    JSON of /state (its list and its pending request). The same id always carried the same
    message."""
    out: dict[str, dict[str, Any]] = {}

    def add(ident: str, msg: dict[str, Any]) -> None:
        assert out.setdefault(ident, msg) == msg, f"message {ident} differs between responses"

    for event, ident, data in table.sse:
        msg = json.loads(data)
        assert msg["type"] == event
        add(ident, msg)
    pending = []
    for url, status, text in table.responses:
        if url.endswith("/state") and status == 200:
            body = json.loads(text)
            for ident, msg in body["messages"]:
                add(ident, msg)
            if body.get("pending"):
                pending.append(body["pending"])
    by_id = {m["id"]: m for m in out.values() if m["type"] == "request"}
    for p in pending:
        assert by_id.get(p["id"]) == p, "the pending request is not the feed's"
    return out


def other_bodies(table: Table) -> list[tuple[str, str]]:
    """The text of every other response of the game's URLs before its end (page, decisions)."""
    return [
        (url, text)
        for url, _status, text in table.responses
        if not url.endswith(("/state", "/replay.json", "/replay"))
    ]


def _cards(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(_cards(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards(v) for v in value)) if value else set()
    return set()


def seat_views(doc: dict[str, Any], seat: int) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """From the finished replay, with the engine: the seat's view at the deal; its request
    (view and options) before each decision it was asked, and, when it forfeited (resigned)
    while a decision of its own was due, that pending one last (its view as it was sent,
    before the forfeit); and how many it was surely asked (all but that last one)."""
    state = GameState.from_deck(
        doc["players"], [Species(s) for s in doc["species"]], [Card.parse(c) for c in doc["deck"]]
    )
    deal = lines.view_to_json(state.view(seat))
    asked: list[dict[str, Any]] = []
    sure = -1
    for step in doc["steps"]:
        if step.get("note"):
            continue
        if step["kind"] == "forfeit":
            if step["seat"] == seat and sure < 0:
                sure = len(asked)
                if state.current_seat == seat and not state.is_over:
                    asked.append(lines.request_message(0, 0, state.view(seat), Clock(0, 0)))
            state.forfeit(step["seat"])
            continue
        if step["seat"] == seat and not state.forfeited[seat]:
            view = state.view(seat)
            asked.append(lines.request_message(0, 0, view, Clock(0, 0)))
        state.apply(step_to_decision(step, "step"))
    return deal, asked, len(asked) if sure < 0 else sure


def public_steps(doc: dict[str, Any], seat: int) -> list[dict[str, Any]]:
    """The replay's steps as the seat may see them: another seat's card from the deck hidden."""
    out = []
    for step in doc["steps"]:
        if step.get("note"):
            continue
        s = {k: step[k] for k in ("seat", "kind") if k in step}
        if step["kind"] == "draw":
            s["source"] = step["source"]
            if step["source"] == "pile":
                s["pile"] = step["pile"]
            hidden = step["source"] == "deck" and step["seat"] != seat
            s["card"] = None if hidden else step["card"]
        elif step["kind"] == "play":
            s.update(card=step["card"], cell=step["cell"], discard=step["discard"])
        out.append(s)
    return out


def check_against_replay(table: Table, doc: dict[str, Any], seat: int) -> int:
    """Every message the page received is the seat's view rebuilt from the replay, and nothing
    the seat could not see reached the page before the game's end: no other hand, no card of
    the deck, no seed. Returns the number of requests checked."""
    messages = received(table)
    order = sorted(messages, key=lambda i: tuple(int(p) for p in i.split("-")))
    types = [messages[i]["type"] for i in order]
    assert types[0] == "queued" and types[-1] == "match_end", types
    assert "game_end" in types
    deal, asked, sure = seat_views(doc, seat)
    steps = public_steps(doc, seat)
    seen = _cards(deal)
    events: list[dict[str, Any]] = []
    k = 0
    seed = str(doc["seed"])
    for ident in order:
        msg = messages[ident]
        kind = msg["type"]
        text = json.dumps(msg)
        if kind == "game_end":
            assert msg["result"] == doc["result"]
            assert msg["final_hands"] == doc["final_hands"]
            events += msg.get("events", [])
            break
        assert seed not in text, f"the seed reached the page before the end: {ident}"
        assert "seed" not in msg and "deck" not in msg, msg.keys()
        if kind == "game_start":
            assert msg["view"] == deal
        elif kind == "request":
            assert k < len(asked), f"request {msg['id']}: no decision of the seat's is due"
            want = asked[k]
            k += 1
            assert msg["view"] == want["view"], f"request {msg['id']}: not the seat's view"
            for key in ("kind", "legal_sources", "legal_cells", "discard_required"):
                assert msg[key] == want[key], (key, msg[key], want[key])
            seen |= _cards(msg["view"])
            events += msg["events"]
        leaked = _cards(msg) - seen
        assert not leaked, f"{kind} {ident} carried cards the seat could not see: {leaked}"
    assert sure <= k <= len(asked), f"{len(asked)} decisions in the replay, {k} requests received"
    # the events, in order, are the replay's steps as the seat may see them
    assert events == steps[: len(events)], "the events differ from the replay's steps"
    assert len(events) >= len(steps) - 3 * doc["players"]
    for url, body in other_bodies(table):
        assert seed not in body, url
    return k


def assert_clean(table: Table) -> None:
    assert table.errors == [], table.errors
