"""A person's seat survives what a browser meets, end to end (real worker, real web server
process, headless Chromium): a reload and a web server that stops and starts again resume the
seat where it was; a game waits for a free table; an illegal decision is explained in words and
changes nothing; a resignation, confirmed first, ends the person's game ranked last. Every
message the page received is checked against the seat's view rebuilt from the replay.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from arboretum_web.app import WebSettings, create_app
from arboretum_web.screenshots import serve_in_thread
from arboretum_worker import league, registry
from arboretum_worker.casual import CasualSettings

from .casual_browser import (
    DESKTOP,
    WAIT,
    check_against_replay,
    chromium,
    open_table,
    play,
    play_to_end,
    start_game,
    stored_replay,
)
from .conftest import ARENA, Arena, kill_tree

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def web_process(arena: Arena, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``arena web`` on ``port``, answering; stopped (its whole tree) on exit."""
    proc = subprocess.Popen(
        [*ARENA, "web", "--port", str(port)],
        env=arena.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/play", timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (
                    "arena web did not start"
                )
                time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        kill_tree(proc.pid)


def test_a_reload_and_a_web_restart_resume_the_seat(arena: Arena) -> None:
    r = arena.r
    registry.add_version(
        r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )
    arena.start_worker()
    arena.wait_workers(1)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(11)
    with chromium() as browser:
        table = open_table(browser, base, DESKTOP)
        page = table.page
        with web_process(arena, port):
            start_game(table, 1)
            assert play(table, rng, decisions=3) == 3  # a whole turn
            page.wait_for_selector(WAIT, timeout=60_000)
            time.sleep(2.5)
            page.reload()
            page.wait_for_selector(WAIT, timeout=60_000)
            # the clock goes on from when the request was sent, not from the reload
            clock = page.locator("#play-clock").inner_text()
            assert re.search(r"Time: 1:5\d for this decision", clock), clock
            assert page.locator("#play-log li").count() >= 3  # the moves so far, read again
            assert play(table, rng, decisions=3) == 3  # the next turn, its play the last
        # the web server is gone while the bots play: the page says so, and waits
        page.wait_for_selector("#play-error:not([hidden])", timeout=30_000)
        assert "connection" in page.locator("#play-error").inner_text()
        time.sleep(2)
        with web_process(arena, port):
            page.wait_for_selector("#play-error", state="hidden", timeout=60_000)
            page.wait_for_selector(WAIT, timeout=60_000)
            play_to_end(table, rng)
            doc = stored_replay(table)
        seat = int(table.attr("seat") or -1)
        check_against_replay(table, doc, seat)
    # what the outage logged: only the failed connections, no error of the page's script
    unexpected = [e for e in table.errors if "net::ERR_" not in e]
    assert unexpected == [], unexpected


def test_waiting_table_illegal_decision_and_resignation(arena: Arena) -> None:
    r = arena.r
    registry.add_version(
        r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )
    app = create_app(WebSettings(redis_url=arena.url, check=lambda p: None), client=r)
    with serve_in_thread(app) as base, chromium() as browser:
        table = open_table(browser, base, DESKTOP)
        page = table.page
        # no worker yet: the game waits for a free table
        start_game(table, 2, seat=0)
        page.wait_for_selector("#play-status")
        assert "free table" in page.locator("#play-status").inner_text()
        time.sleep(1)
        assert table.attr("stage") == "wait"
        arena.start_worker()
        page.wait_for_selector('#play[data-stage="source"]', timeout=120_000)

        # an illegal decision (drawing from the person's own empty pile, sent as if the page
        # had offered it) is refused with the engine's words, and the person chooses again
        def tamper(route: Any) -> None:
            answer = json.loads(route.request.post_data)
            answer["draw"] = 0
            route.continue_(post_data=json.dumps(answer))

        page.route("**/decision", tamper)
        page.locator("#play-prompt [data-source]").first.click()
        page.locator("#play-confirm").click()
        page.wait_for_selector("#play-error:not([hidden])")
        said = page.locator("#play-error").inner_text()
        assert "refused" in said and "pile" in said, said
        assert "{" not in said  # words, not JSON
        page.unroute("**/decision")
        page.wait_for_selector('#play[data-stage="source"]')
        assert play(table, random.Random(2), decisions=3) == 3

        # resign: asked first; "keep playing" changes nothing
        page.wait_for_selector(WAIT)
        page.locator("#play-resign").click()
        assert page.locator("#play-resign-confirm").is_visible()
        page.locator("#play-resign-no").click()
        assert page.locator("#play-resign-confirm").is_hidden()
        assert table.attr("ended") == "0"
        page.locator("#play-resign").click()
        page.locator("#play-resign-yes").click()
        page.wait_for_selector('#play[data-ended="1"]', timeout=240_000)
        page.wait_for_selector("#play-scoring:not([hidden])")
        doc = stored_replay(table)
        assert doc["result"]["seats"][0]["forfeited"]
        assert doc["result"]["seats"][0]["rank"] == 3
        assert "(forfeited)" in page.locator("#scoring-table").inner_text()
        check_against_replay(table, doc, 0)
        # another browser (no key) sees no table, only that it is not seated, and the replay
        stranger = open_table(browser, base, DESKTOP)
        stranger.page.goto(page.url)
        assert "not seated" in stranger.page.locator("#play-status").inner_text()
        assert stranger.page.locator("#play-board > *").count() == 0
        assert stranger.page.locator("#play-replay-link").is_visible()
        assert not any(url.endswith(("/state", "/feed")) for url, _, _ in stranger.responses)
        assert stranger.errors == [], stranger.errors
    unexpected = [e for e in table.errors if "status of 400" not in e]
    assert unexpected == [], unexpected
    assert len(table.errors) == 1  # the one refused decision


def test_an_idle_page_faults_then_forfeits_and_says_so(arena: Arena) -> None:
    """Short clocks (2 s a decision, 1 s of bank): a page left alone times out, the referee
    plays for the person and the page says so; the second fault forfeits, the bots finish."""
    r = arena.r
    registry.add_version(
        r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )
    arena.start_worker()
    arena.wait_workers(1)
    short = CasualSettings(decision_s=2, bank_s=1)  # (the game's clock is chosen at its start)
    settings = WebSettings(redis_url=arena.url, check=lambda p: None, casual=short)
    app = create_app(settings, client=r)
    with serve_in_thread(app) as base, chromium() as browser:
        table = open_table(browser, base, DESKTOP)
        page = table.page
        start_game(table, 1, seat=1)
        page.wait_for_selector('#play[data-stage="source"]', timeout=120_000)
        assert re.search(r"Time: 0:0[12] for", page.locator("#play-clock").inner_text())
        page.wait_for_selector("#play-error:not([hidden])", timeout=30_000)
        assert "time for a decision ran out" in page.locator("#play-error").inner_text()
        page.wait_for_selector('#play[data-ended="1"]', timeout=120_000)
        assert "You forfeited this game" in page.locator("#play-error").inner_text()
        # each fault stays in the moves' list, in words
        faults = page.locator("#play-log li.fault").all_inner_texts()
        assert len(faults) == 2, faults
        assert "the referee played for you" in faults[0] and "1 of 2 faults" in faults[0]
        assert "You forfeited this game" in faults[1]
        assert page.locator("#play-resign").is_hidden()
        page.wait_for_selector("#play-scoring:not([hidden])")
        doc = stored_replay(table)
        assert doc["result"]["seats"][1]["forfeited"]
        faults = [s["fault"]["kind"] for s in doc["steps"] if s.get("seat") == 1 and "fault" in s]
        assert faults[:2] == ["timeout", "timeout"]
        check_against_replay(table, doc, 1)
    assert table.errors == [], table.errors


def test_a_stale_page_is_told_and_catches_up(arena: Arena) -> None:
    """Two tabs at one game (the same key): the first answers; the second, cut off from the
    game's messages, still offers the old request, and its answer is refused (409) in words; it then
    reads the game again and shows the next request."""
    r = arena.r
    registry.add_version(
        r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )
    arena.start_worker()
    arena.wait_workers(1)
    app = create_app(WebSettings(redis_url=arena.url, check=lambda p: None), client=r)
    with serve_in_thread(app) as base, chromium() as browser:
        first = open_table(browser, base, DESKTOP)
        start_game(first, 1, seat=0)
        first.page.wait_for_selector('#play[data-stage="source"]', timeout=120_000)
        second = first.page.context.new_page()
        blocked = {"state": False}
        second.route("**/feed*", lambda route: route.abort())
        second.route(
            "**/state",
            lambda route: route.abort() if blocked["state"] else route.continue_(),
        )
        second.goto(first.page.url)
        second.wait_for_selector('#play[data-stage="source"]')
        blocked["state"] = True
        # the first tab draws; the second does not hear of it
        assert play(first, random.Random(1), decisions=1) == 1
        first.page.wait_for_selector('#play[data-stage="source"]')  # the second draw
        second.locator('#play-prompt [data-source="deck"]').click()
        second.locator("#play-confirm").click()
        told = second.locator("#play-error").filter(has_text=re.compile("stale|answered already"))
        told.wait_for(timeout=10_000)
        blocked["state"] = False
        # it read the game again: the request the first tab sees, its second draw
        second.wait_for_selector('#play[data-stage="source"]')
        assert second.locator("#play-log li").count() == first.page.locator("#play-log li").count()
    assert first.errors == [], first.errors
