"""Casual games played whole over HTTP, with real parts: a redis-server of this module's own, a
real ``arena worker`` process on the casual queue (the referee in it, greedy in its sandbox), the
web app served by uvicorn on a real socket. A scripted person plays through the table's endpoints
(``/play/{id}/state``, ``/feed``, ``/decision``, ``/resign``) and meets every refusal of the
issue on the way: an illegal card or cell (400), a stale page (409), another game's key (403), a
game that is over (410). The feed, read live over a socket, is the state's messages exactly, and
resumes after ``Last-Event-ID``; the stored replay verifies with the engine; the bot's page lists
the game with its record."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue
from starlette.testclient import TestClient

from arboretum.replay import verify_replay
from arboretum_sdk.analysis import AnalysisConfig, analyse_replay
from arboretum_sdk.analysis.report import analysis_json
from arboretum_web.app import WebSettings, create_app
from arboretum_web.screenshots import serve_in_thread
from arboretum_worker import analysis_jobs, registry
from arboretum_worker.bots import builtin_bot_files
from arboretum_worker.casual import CasualSettings, get_game, record_for_version
from arboretum_worker.keys import Keys
from redis_server import find_redis_server, start_redis_server, stop_redis_server
from sse_client import SSE

from .test_play_api import csrf_of, meta_csrf

KEY = "X-Arena-Play-Key"
ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]
GAME_S = 120.0
"""The longest a game may take here (a loaded machine: bots start in their sandboxes)."""


class Answer:
    """An HTTP answer: status, headers (lower-case names), text, JSON."""

    def __init__(self, status: int, headers: dict[str, str], text: str) -> None:
        self.status_code, self.headers, self.text = status, headers, text

    def json(self) -> Any:
        return json.loads(self.text)


class Http:
    """A plain HTTP client of the served app (the standard library's, one connection a call)."""

    def __init__(self, base: str) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)

    def request(
        self, method: str, path: str, json_body: Any = None, headers: dict[str, str] | None = None
    ) -> Answer:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            body = None if json_body is None else json.dumps(json_body)
            sent = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, path, body=body, headers={**sent, **(headers or {})})
            resp = conn.getresponse()
            text = resp.read().decode()
            return Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, text)
        finally:
            conn.close()

    def get(self, path: str, headers: dict[str, str] | None = None) -> Answer:
        return self.request("GET", path, headers=headers)

    def post(self, path: str, json: Any = None, headers: dict[str, str] | None = None) -> Answer:
        return self.request("POST", path, json, headers)


class Site:
    """This module's installation: Redis, one casual worker, the served app."""

    def __init__(self, url: str, base: str, worker: subprocess.Popen[bytes], log: Path) -> None:
        self.r = redis.Redis.from_url(url)
        self.base = base
        self.http = Http(base)
        self.worker = worker
        self.log = log
        self.app: Any = None

    def logs(self) -> str:
        return self.log.read_text(errors="replace")[-6000:]

    def start(self, opponents: list[str], seat: int | None = 0) -> tuple[str, dict[str, str]]:
        resp = self.http.post("/api/play", json={"opponents": opponents, "seat": seat})
        assert resp.status_code == 201, resp.text
        body = resp.json()
        return body["id"], {KEY: body["key"]}

    def state(self, game_id: str, key: dict[str, str]) -> dict[str, Any]:
        resp = self.http.get(f"/play/{game_id}/state", headers=key)
        assert resp.status_code == 200, resp.text
        return dict(resp.json())

    def wait(self, game_id: str, key: dict[str, str], want: str) -> dict[str, Any]:
        """The state once a request is pending (``want="pending"``) or the game is over."""
        deadline = time.monotonic() + GAME_S
        while True:
            state = self.state(game_id, key)
            last = state["messages"][-1][1]["type"] if state["messages"] else ""
            over = state["game"]["status"] in ("over", "failed")
            if over and last in ("match_end", "error"):
                return state  # (the record says over a moment before the feed's last message)
            if want == "pending" and state["pending"] is not None and not over:
                return state
            assert time.monotonic() < deadline, f"no {want} after {GAME_S} s\n{self.logs()}"
            time.sleep(0.02)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    if find_redis_server() is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    tmp = tmp_path_factory.mktemp("play")
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    client = redis.Redis.from_url(url)
    for name in ("greedy", "random"):
        registry.add_version(client, name, builtin_bot_files(name))
    env = dict(os.environ, REDIS_URL=url, ARENA_QUEUES="casual", ARENA_MATCH_ROOT=str(tmp / "m"))
    log = tmp / "worker.log"
    with open(log, "wb") as out:
        worker = subprocess.Popen(
            [*ARENA, "worker", "--name", f"test-play-{os.getpid()}"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    settings = WebSettings(check=lambda p: None, casual=CasualSettings(per_address=20))
    app = create_app(settings, client=client)
    try:
        with serve_in_thread(app) as base:
            site = Site(url, base, worker, log)
            site.app = app
            yield site
    finally:
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)  # (its own session: it and its work horse)
            worker.wait(5)
        client.close()
        stop_redis_server(redis_proc)


def legal_answer(request: dict[str, Any]) -> dict[str, Any]:
    """The first legal answer to a request (the line protocol's answer)."""
    if request["kind"] != "play":
        return {"id": request["id"], "draw": request["legal_sources"][0]}
    hand = request["view"]["hand"]
    answer = {"id": request["id"], "play": hand[0], "cell": request["legal_cells"][0]}
    if request["discard_required"]:
        answer["discard"] = hand[1]
    return answer


def _refusals(site: Site, game_id: str, key: dict[str, str], request: dict[str, Any]) -> None:
    """Every wrong answer to a pending play: refused with its status and words, nothing taken."""
    url = f"/play/{game_id}/decision"
    good = legal_answer(request)
    other, other_key = site.start(["random"])  # another game's key
    # (resigned at once, so that the one worker is soon free for the next test)
    assert site.http.post(f"/play/{other}/resign", headers=other_key).status_code == 202
    hand = request["view"]["hand"]
    seen = set(hand) | {c["card"] for arb in request["view"]["arboretums"] for c in arb}
    absent = next(
        f"{s}{v}" for s in ("OA", "WI", "JA", "CA") for v in range(1, 9) if f"{s}{v}" not in seen
    )
    cases = [
        ({**good, "play": absent}, key, 400, "not in your hand"),
        ({**good, "cell": [40, 40]}, key, 400, "cell"),
        ({**good, "play": "ZZ9"}, key, 400, ""),
        ({**good, "id": good["id"] - 1}, key, 409, "stale"),
        ({**good, "id": good["id"] + 5}, key, 409, "stale"),
        (good, other_key, 403, "not your seat"),
    ]
    if request["discard_required"]:
        cases.append(({k: v for k, v in good.items() if k != "discard"}, key, 400, "discard"))
    for answer, headers, status, words in cases:
        resp = site.http.post(url, json=answer, headers=headers)
        assert resp.status_code == status, (answer, resp.text)
        error = resp.json()["error"]
        assert error["status"] == status, (answer, error)
        message = error["message"]
        assert words in message, (answer, message)
        assert site.state(game_id, key)["pending"]["id"] == request["id"]  # nothing changed


def play_through(
    site: Site, game_id: str, key: dict[str, str], refuse: bool = False
) -> dict[str, Any]:
    """Answer every request with its first legal answer until the game is over."""
    tried = False
    while True:
        state = site.wait(game_id, key, "pending")
        if state["game"]["status"] in ("over", "failed"):
            return state
        request = state["pending"]
        view = request["view"]
        if refuse and not tried and request["kind"] == "play" and view["arboretums"][view["seat"]]:
            _refusals(site, game_id, key, request)
            tried = True
        resp = site.http.post(f"/play/{game_id}/decision", json=legal_answer(request), headers=key)
        if resp.status_code == 409 and "answered already" in resp.text:
            continue  # (the state was read before the relay took the answer)
        assert resp.status_code == 202, resp.text
        assert resp.json() == {"accepted": request["id"]}
        while (site.state(game_id, key)["pending"] or {}).get("id") == request["id"]:
            time.sleep(0.01)


def test_a_person_plays_a_whole_game(site: Site) -> None:
    game_id, key = site.start(["greedy"], seat=0)
    feed = SSE(site.base, f"/play/{game_id}/feed", headers=key)
    try:
        state = play_through(site, game_id, key, refuse=True)
        assert feed.done.wait(30), "the feed did not end after the game"
    finally:
        feed.close()
    game = state["game"]
    assert game["status"] == "over", site.logs()
    assert game["replay_url"] == f"/play/{game_id}/replay"
    assert sorted(game["result"]["ranks"]) in ([1, 2], [1, 1])
    types = [m["type"] for _, m in state["messages"]]
    assert types[0] == "queued" and types[-1] == "match_end" and "game_end" in types
    assert "accepted" in types and "request" in types
    # the live feed is the state's messages, in order, with their stream ids
    assert [(i, d) for _k, i, d in feed.events] == [tuple(m) for m in state["messages"]]
    assert [k for k, _i, _d in feed.events] == types
    # the seat's messages hold its view only: no seed, no other hand
    for _, message in state["messages"]:
        if message["type"] == "game_start":
            assert "seed" not in message
        if message["type"] == "request":
            assert message["view"]["seat"] == 0 and "hands" not in message["view"]
    # over: no more decisions, no resignation
    last = {"id": 999, "draw": "deck"}
    assert site.http.post(f"/play/{game_id}/decision", json=last, headers=key).status_code == 410
    assert site.http.post(f"/play/{game_id}/resign", headers=key).status_code == 410
    # the stored replay verifies, and the viewer's page loads it
    doc = site.http.get(f"/play/{game_id}/replay.json").json()
    verify_replay(doc)
    assert doc["seats"][0] == {"seat": 0, "bot": "person"}
    page = site.http.get(f"/play/{game_id}/replay")
    assert page.status_code == 200 and f'data-src="/play/{game_id}/replay.json"' in page.text
    # to anyone else the person is "a person", and the replay opens on all of it; the person
    # playing is "you", and their replay opens on their seat's view
    assert 'data-seat=""' in page.text and ": a person, <a" in page.text
    theirs = site.http.get(f"/play/{game_id}/replay", headers=key).text
    assert 'data-seat="0"' in theirs and ": you, <a" in theirs
    assert "<strong>a person</strong>" in site.http.get(f"/play/{game_id}").text
    assert "<strong>you</strong>" in site.http.get(f"/play/{game_id}", headers=key).text
    # the bot's page: its record against people and the game's replay
    bot = site.http.get("/bots/greedy").text
    assert f'href="/play/{game_id}/replay"' in bot
    assert "a person" in bot and ">you<" not in bot
    wins, games = record_for_version(site.r, get_game(site.r, game_id).seats[1])
    assert games >= 1
    assert f"greedy won {wins:g} of {games} game" in bot
    assert get_game(site.r, game_id).status == "over"
    _analysis(site, game_id, key, doc)


def _analysis(site: Site, game_id: str, key: dict[str, str], doc: dict[str, Any]) -> None:
    """The game's analysis: none, queued, then (done with a small budget) linked from the table
    and drawn by the replay's viewer."""
    url = f"/play/{game_id}/analysis"
    replay_id = get_game(site.r, game_id).replay_id
    assert replay_id is not None
    assert site.http.get(url).json() == {"match": replay_id, "game": 0, "status": "none"}
    assert site.http.post(url).status_code == 403  # the person's key only
    asked = site.http.post(url, headers=key)
    assert asked.status_code == 202 and asked.json()["status"] == "queued"
    assert analysis_jobs.analysis_queue() == "arena-analysis"
    assert analysis_jobs.job_id(replay_id, 0) in Queue("arena-analysis", connection=site.r).job_ids
    assert site.http.get(url).json()["status"] == "queued"
    assert site.http.post(url, headers=key).json()["status"] == "queued"  # once
    assert "analysis_url" not in site.state(game_id, key)["game"]
    # the job's work with a small budget (the job itself: tests/league/test_analysis_jobs.py)
    config = AnalysisConfig(samples=1, alternatives=1)
    report = analysis_json(doc, analyse_replay(doc, None, config), config)
    done = {"status": "done", "document": json.dumps(report), "finished": repr(time.time())}
    site.r.hset(Keys.analysis(replay_id, 0), mapping=done)
    assert site.state(game_id, key)["game"]["analysis_url"] == url
    body = site.http.get(url).json()
    assert body["status"] == "done" and body["analysis"]["seats"]
    table = site.http.get(f"/play/{game_id}", headers=key).text
    assert f'data-analysis="{url}"' in table
    assert f'data-analysis="{url}"' in site.http.get(f"/play/{game_id}/replay").text


def test_the_feed_resumes_after_the_last_event_id(site: Site) -> None:
    game_id, key = site.start(["greedy"], seat=1)
    state = play_through(site, game_id, key)
    messages = state["messages"]
    middle = len(messages) // 2
    feed = SSE(site.base, f"/play/{game_id}/feed", last_event_id=messages[middle][0], headers=key)
    try:
        assert feed.done.wait(30)
    finally:
        feed.close()
    assert [i for _k, i, _d in feed.events] == [sid for sid, _ in messages[middle + 1 :]]
    after = site.http.get(f"/play/{game_id}/feed?after={messages[-2][0]}", headers=key)
    assert after.status_code == 200 and after.text.count("\nevent: ") == 1
    assert "event: match_end" in after.text


def test_a_person_resigns(site: Site) -> None:
    game_id, key = site.start(["greedy", "random"], seat=2)
    site.wait(game_id, key, "pending")
    resp = site.http.post(f"/play/{game_id}/resign", headers=key)
    assert resp.status_code == 202
    deadline = time.monotonic() + GAME_S
    while (state := site.state(game_id, key))["game"]["status"] not in ("over", "failed"):
        assert time.monotonic() < deadline, site.logs()
        time.sleep(0.05)
    game = state["game"]
    assert game["status"] == "over", site.logs()
    assert game["result"]["ranks"][2] == 3  # the resigned seat ranks last
    assert site.http.post(f"/play/{game_id}/resign", headers=key).status_code == 410
    doc = site.http.get(f"/play/{game_id}/replay.json").json()
    verify_replay(doc)
    assert any(step.get("kind") == "forfeit" and step.get("seat") == 2 for step in doc["steps"])
    assert (
        json.dumps(doc).count('"kind": "forfeit"') + json.dumps(doc).count('"kind":"forfeit"') >= 1
    )


def test_a_browser_plays_with_its_cookie_and_the_page_s_csrf_token(site: Site) -> None:
    """The form's way: the key in the game's cookie, each post with the page's CSRF token."""
    with TestClient(site.app) as browser:
        token = csrf_of(browser.get("/play").text)
        form = {"csrf": token, "opponent": "random", "seat": "1"}
        started = browser.post("/play", data=form, follow_redirects=False)
        assert started.status_code == 303, started.text
        game_id = started.headers["location"].removeprefix("/play/")
        table = browser.get(f"/play/{game_id}").text
        assert 'data-seated="1"' in table
        csrf = {"X-CSRF-Token": meta_csrf(table)}
        deadline = time.monotonic() + GAME_S
        while (state := browser.get(f"/play/{game_id}/state").json())["pending"] is None:
            assert time.monotonic() < deadline, site.logs()
            time.sleep(0.02)
        answer = legal_answer(state["pending"])
        assert browser.post(f"/play/{game_id}/decision", json=answer).status_code == 403
        taken = browser.post(f"/play/{game_id}/decision", json=answer, headers=csrf)
        assert taken.status_code == 202 and taken.json() == {"accepted": answer["id"]}
        assert browser.post(f"/play/{game_id}/resign", headers=csrf).status_code == 202
        while (state := browser.get(f"/play/{game_id}/state").json())["messages"][-1][1][
            "type"
        ] != "match_end":
            assert time.monotonic() < deadline, site.logs()
            time.sleep(0.05)
        assert state["game"]["status"] == "over"
        assert "accepted" in [m["type"] for _, m in state["messages"]]
