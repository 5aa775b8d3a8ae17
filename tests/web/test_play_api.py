"""Casual games over HTTP before any worker takes them (docs/web.md, "Playing the bots"):
starting one (the form with its CSRF field, the script's JSON), the person's key in its cookie,
every refusal of a start (400, 429 per address and for a full queue), the key's checks on the
table's endpoints (403 no key, wrong key, another game's key; 404), a decision while nothing is
pending (409), CSRF on the cookie's posts, the rate limit that never counts a game's own moves,
the pages and the bot page's link. The games themselves are played by a real worker in
``test_play_games.py``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from rq import Queue
from starlette.testclient import TestClient

from arboretum_web import play_api
from arboretum_web.app import WebSettings, create_app
from arboretum_web.ratelimit import RateLimits
from arboretum_worker import registry
from arboretum_worker.bots import builtin_bot_files
from arboretum_worker.casual import CasualSettings, get_game
from arboretum_worker.keys import Keys

KEY = "X-Arena-Play-Key"


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)


def meta_csrf(html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([A-Za-z0-9_-]+)">', html)
    assert found, "no csrf-token meta on the table's page"
    return found.group(1)


@pytest.fixture
def bots(r: redis.Redis) -> dict[str, str]:
    """Two bots of the site: greedy and random (built-in, one version each)."""
    return {
        name: registry.add_version(r, name, builtin_bot_files(name))
        for name in ("greedy", "random")
    }


def _app(r: redis.Redis, limits: RateLimits | None = None, **casual: Any) -> Any:
    settings = WebSettings(check=lambda p: None, casual=CasualSettings(**casual))
    if limits is not None:
        settings.rate_limits = limits
    return create_app(settings, client=r)


@pytest.fixture
def play(r: redis.Redis, bots: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(_app(r, per_address=5), raise_server_exceptions=False) as c:
        yield c


def start(c: TestClient, opponents: list[str], seat: int | None = None) -> dict[str, Any]:
    resp = c.post("/api/play", json={"opponents": opponents, "seat": seat})
    assert resp.status_code == 201, resp.text
    return dict(resp.json())


def test_a_script_starts_a_game(play: TestClient, r: redis.Redis, bots: dict[str, str]) -> None:
    resp = play.post("/api/play", json={"opponents": ["greedy", "random"], "seat": 1})
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert set(body) == {"id", "url", "key"} and body["url"] == f"/play/{body['id']}"
    assert resp.headers["location"] == body["url"]
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith(f"arena_play_{body['id']}={body['key']};")
    assert f"Path=/play/{body['id']}" in cookie and "HttpOnly" in cookie
    assert "SameSite=strict" in cookie or "SameSite=Strict" in cookie
    game = get_game(r, body["id"])
    assert game.players == 3 and game.person_seat == 1 and game.status == "queued"
    assert game.seats == (bots["greedy"], "", bots["random"])
    assert f"arena-casual-{body['id']}" in Queue("arena-casual", connection=r).job_ids
    # the key is never stored as it is
    assert body["key"].encode() not in b"".join(r.hgetall(Keys.casual(body["id"])).values())


def test_the_form_starts_a_game_and_seats_its_browser(play: TestClient, r: redis.Redis) -> None:
    page = play.get("/play?bot=random")
    assert page.status_code == 200
    assert re.search(r'<option value="random" selected>random</option>', page.text)
    assert '<option value="greedy">greedy</option>' in page.text
    token = csrf_of(page.text)
    form = {"csrf": token, "opponent": ["greedy", "random", ""], "seat": "2"}
    resp = play.post("/play", data=form, follow_redirects=False)
    assert resp.status_code == 303, resp.text
    game_id = resp.headers["location"].removeprefix("/play/")
    game = get_game(r, game_id)
    assert (game.players, game.person_seat, game.names) == (3, 1, ("greedy", "you", "random"))
    table = play.get(f"/play/{game_id}")
    assert table.status_code == 200
    assert 'data-seated="1"' in table.text and f'data-state="/play/{game_id}/state"' in table.text
    assert f'data-game="{game_id}"' in table.text and 'data-seat="1"' in table.text
    assert meta_csrf(table.text) == play.cookies["arena_csrf"]
    assert "Waiting for a free table" in table.text
    assert "script-src 'self'" in table.headers["content-security-policy"]
    # the table's plain scripts, in the order each needs the one before
    scripts = re.findall(r'<script src="(/static/[^"?]+)\?v=', table.text)
    assert scripts[-3:] == ["/static/scoring.js", "/static/playtable.js", "/static/play.js"]
    assert all(play.get(src).status_code == 200 for src in scripts)
    # another browser sees the table, but is not seated
    with TestClient(play.app) as other:
        assert 'data-seated="0"' in other.get(f"/play/{game_id}").text
    # no CSRF field: refused, nothing started
    before = len(Queue("arena-casual", connection=r).job_ids)
    forged = play.post("/play", data={"opponent": "greedy", "seat": "random"})
    assert forged.status_code == 403
    assert len(Queue("arena-casual", connection=r).job_ids) == before


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"opponents": []}, "1 to 3 opponents"),
        ({"opponents": ["greedy"] * 4}, "1 to 3 opponents"),
        ({"opponents": ["nobody"]}, "no bot or bot version 'nobody'"),
        ({"opponents": ["greedy"], "seat": 2}, "seat must be 0 to 1"),
        ({"opponents": ["greedy"], "seat": "1"}, "seat is null"),
        ({"opponents": "greedy"}, "opponents is a list"),
        ([1, 2], "a JSON object"),
    ],
)
def test_a_bad_start_is_400_and_starts_nothing(
    play: TestClient, r: redis.Redis, body: Any, words: str
) -> None:
    resp = play.post("/api/play", json=body)
    assert resp.status_code == 400, resp.text
    assert words in resp.json()["error"]["message"]
    assert Queue("arena-casual", connection=r).job_ids == []


def test_a_bad_form_shows_the_form_again(play: TestClient) -> None:
    token = csrf_of(play.get("/play").text)
    resp = play.post("/play", data={"csrf": token, "opponent": "nobody", "seat": "random"})
    assert resp.status_code == 400
    assert 'id="play-form"' in resp.text and "no bot or bot version" in resp.text
    resp = play.post("/play", data={"csrf": token, "opponent": "greedy", "seat": "x"})
    assert resp.status_code == 400 and "the seat is random or a number from 1" in resp.text
    resp = play.post("/play", data={"csrf": token, "opponent": "greedy", "seat": "3"})
    assert resp.status_code == 400 and "a game of 2 players has seats 1 to 2" in resp.text
    assert '<option value="greedy" selected>greedy</option>' in resp.text  # kept


def test_too_many_games_from_one_address_is_429(r: redis.Redis, bots: dict[str, str]) -> None:
    with TestClient(_app(r, per_address=2), raise_server_exceptions=False) as c:
        start(c, ["greedy"])
        start(c, ["random"])
        resp = c.post("/api/play", json={"opponents": ["greedy"]})
        assert resp.status_code == 429
        assert int(resp.headers["retry-after"]) > 0
        assert "too many casual games from your address" in resp.json()["error"]["message"]
        # the form: the error page, with Retry-After
        token = csrf_of(c.get("/play").text)
        page = c.post("/play", data={"csrf": token, "opponent": "greedy", "seat": "random"})
        assert page.status_code == 429 and int(page.headers["retry-after"]) > 0
        assert "Too many games" in page.text and "at most 2 queued or playing" in page.text
        # another address may still play
        with TestClient(c.app, client=("192.0.2.7", 1234)) as other:
            start(other, ["greedy"])
    assert len(Queue("arena-casual", connection=r).job_ids) == 3


def test_a_full_queue_is_429(r: redis.Redis, bots: dict[str, str]) -> None:
    app = _app(r, per_address=3, max_queued=2)
    with (
        TestClient(app, client=("192.0.2.1", 1)) as a,
        TestClient(app, client=("192.0.2.2", 1)) as b,
    ):
        start(a, ["greedy"])
        start(b, ["greedy"])
        resp = a.post("/api/play", json={"opponents": ["greedy"]})
        assert resp.status_code == 429 and "the casual queue is full" in resp.text
        assert "retry-after" in resp.headers


def test_the_table_s_endpoints_need_the_game_s_key(play: TestClient) -> None:
    game = start(play, ["greedy"], seat=0)
    other = start(play, ["random"], seat=0)
    gid = game["id"]
    with TestClient(play.app, raise_server_exceptions=False) as stranger:
        for path in (f"/play/{gid}/state", f"/play/{gid}/feed"):
            resp = stranger.get(path)
            assert resp.status_code == 403 and "not your seat" in resp.json()["error"]["message"]
            for key in ("x" * 32, other["key"]):  # a wrong key; another game's key
                assert stranger.get(path, headers={KEY: key}).status_code == 403
        answer = {"id": 0, "draw": "deck"}
        refused = stranger.post(f"/play/{gid}/decision", json=answer, headers={KEY: other["key"]})
        assert refused.status_code == 403
        assert stranger.post(f"/play/{gid}/resign", headers={KEY: other["key"]}).status_code == 403
        state = stranger.get(f"/play/{gid}/state", headers={KEY: game["key"]})
        assert state.status_code == 200
    data = state.json()
    assert data["game"]["id"] == gid and data["game"]["status"] == "queued"
    assert data["game"]["names"] == ["you", "greedy"] and data["game"]["person_seat"] == 0
    assert data["pending"] is None
    assert [m["type"] for _, m in data["messages"]] == ["queued"]
    assert state.headers["cache-control"] == "no-store"
    # the cookie alone reads it too
    assert play.get(f"/play/{gid}/state").status_code == 200


@pytest.mark.parametrize(
    "path", ["/play/{g}/state", "/play/{g}/feed", "/play/{g}/replay.json", "/play/{g}"]
)
@pytest.mark.parametrize("game", ["0123456789abcdef", "no:such", "x" * 80])
def test_an_unknown_game_is_404(play: TestClient, path: str, game: str) -> None:
    resp = play.get(path.format(g=game))
    assert resp.status_code == 404
    if path.endswith("}"):
        assert "no such casual game" in resp.text
    else:
        assert "no such casual game" in resp.json()["error"]["message"]


@pytest.mark.parametrize("game", ["0123456789abcdef", "x" * 80])
def test_an_unknown_game_s_decision_and_resignation_are_404(play: TestClient, game: str) -> None:
    for path, body in ((f"/play/{game}/decision", {"id": 1, "draw": "deck"}),
                       (f"/play/{game}/resign", None)):  # fmt: skip
        resp = play.post(path, json=body, headers={KEY: "k" * 32})
        assert resp.status_code == 404, resp.text
        assert "no such casual game" in resp.json()["error"]["message"]


def test_the_table_s_json_endpoints_answer_every_error_as_the_api(play: TestClient) -> None:
    game = start(play, ["greedy"], seat=0)
    paths = [route.path.replace("{game_id}", game["id"]) for route in play_api.routes()]
    assert all(play_api.is_table_json(path) for path in paths)
    assert not play_api.is_table_json(f"/play/{game['id']}")  # the pages
    assert not play_api.is_table_json(f"/play/{game['id']}/replay")
    # an error the app answers (not the endpoint): JSON too, not the error page
    resp = play.get(f"/play/{game['id']}/decision", headers={KEY: game["key"]})
    assert resp.status_code == 405 and resp.headers["allow"] == "POST"
    assert resp.json()["error"]["status"] == 405
    assert "<span" in play.put(f"/play/{game['id']}").text  # a page's stays the page


def test_nothing_pending_is_409_and_bad_bodies_400(play: TestClient) -> None:
    game = start(play, ["greedy"], seat=0)
    url, headers = f"/play/{game['id']}/decision", {KEY: game["key"]}
    resp = play.post(url, json={"id": 0, "draw": "deck"}, headers=headers)
    assert resp.status_code == 409 and "it is not your turn" in resp.json()["error"]["message"]
    resp = play.post(url, content=b"{not json", headers=headers)
    # every JSON refusal of the table has the API's shape
    assert resp.status_code == 400
    assert resp.json() == {"error": {"status": 400, "message": "the request is not JSON"}}
    resp = play.post(url, content=b"[" + b"1," * 4000 + b"1]", headers=headers)
    assert resp.status_code == 400 and "over 4096 bytes" in resp.json()["error"]["message"]
    resp = play.post(url, json=["draw"], headers=headers)
    assert resp.status_code == 400 and "JSON object" in resp.json()["error"]["message"]
    assert play.get(f"/play/{game['id']}/replay.json").status_code == 404
    early = play.get(f"/play/{game['id']}/analysis")
    assert early.status_code == 404 and "not over" in early.json()["error"]["message"]
    assert play.post(f"/play/{game['id']}/analysis", headers=headers).status_code == 404


def test_the_cookie_s_posts_need_the_page_s_csrf_token(play: TestClient) -> None:
    token = csrf_of(play.get("/play").text)
    resp = play.post("/play", data={"csrf": token, "opponent": "greedy", "seat": "1"})
    gid = str(resp.url).rsplit("/", 1)[1]
    url = f"/play/{gid}/decision"
    answer = {"id": 0, "draw": "deck"}
    refused = play.post(url, json=answer)  # the cookie, no token
    assert refused.status_code == 403 and "security token" in refused.json()["error"]["message"]
    assert play.post(url, json=answer, headers={"X-CSRF-Token": "y" * 32}).status_code == 403
    evil = {"X-CSRF-Token": token, "Origin": "https://evil.example"}
    assert play.post(url, json=answer, headers=evil).status_code == 403
    ok = play.post(url, json=answer, headers={"X-CSRF-Token": token})
    assert ok.status_code == 409  # past the checks: nothing is pending yet
    assert play.post(f"/play/{gid}/resign", headers={"X-CSRF-Token": "z" * 32}).status_code == 403


def test_resigning_a_queued_game(play: TestClient, r: redis.Redis) -> None:
    game = start(play, ["greedy"], seat=0)
    resp = play.post(f"/play/{game['id']}/resign", headers={KEY: game["key"]})
    assert resp.status_code == 202 and resp.json() == {"resigned": True}
    again = play.post(f"/play/{game['id']}/resign", headers={KEY: game["key"]})
    assert again.status_code == 202  # twice changes nothing
    assert r.llen(Keys.casual_moves(game["id"])) == 1


def test_a_game_s_own_moves_are_not_rate_limited(r: redis.Redis, bots: dict[str, str]) -> None:
    limits = RateLimits(anonymous_writes=3, anonymous_reads=100)
    with TestClient(_app(r, limits, per_address=3), raise_server_exceptions=False) as c:
        game = start(c, ["greedy"])
        url, headers = f"/play/{game['id']}/decision", {KEY: game["key"]}
        for _ in range(10):
            resp = c.post(url, json={"id": 0, "draw": "deck"}, headers=headers)
            assert resp.status_code == 409 and "ratelimit-limit" not in resp.headers
        assert c.post(f"/play/{game['id']}/resign", headers=headers).status_code == 202
        start(c, ["greedy"])
        start(c, ["greedy"])  # the third write of the window
        throttled = c.post("/api/play", json={"opponents": ["greedy"]})
        assert throttled.status_code == 429 and "too many requests" in throttled.text


def test_the_bot_page_offers_a_game(play: TestClient) -> None:
    page = play.get("/bots/greedy")
    assert page.status_code == 200
    assert 'href="/play?bot=greedy"' in page.text and "Play against greedy" in page.text
    assert "No games against people yet." in page.text
    assert 'href="/play"' in play.get("/").text  # the menu


def test_an_author_may_play_their_own_versions(play: TestClient, r: redis.Redis) -> None:
    from arboretum_web.authors import add_author

    token = add_author(r, "alice")
    old = registry.add_version(r, "mine", builtin_bot_files("lookahead"), owner="alice")
    registry.add_version(r, "mine", builtin_bot_files("expert"), owner="alice")
    anonymous = play.post("/api/play", json={"opponents": [old]})
    assert anonymous.status_code == 403 and "only the bot's author" in anonymous.text
    signed = {"Authorization": f"Bearer {token}"}
    resp = play.post("/api/play", json={"opponents": [old]}, headers=signed)
    assert resp.status_code == 201, resp.text
    play.cookies.set("arena_token", token)
    form = play.get("/play")
    assert f'<option value="{old}">mine v1 {old[:8]}</option>' in form.text


def test_the_feed_ends_at_an_error_and_resumes_after_its_last_event_id(
    play: TestClient, r: redis.Redis
) -> None:
    from arboretum_worker.casual import feed

    game = start(play, ["greedy"], seat=0)
    gid, headers = game["id"], {KEY: game["key"]}
    feed.append(r, gid, {"type": "started"})
    feed.append(r, gid, {"type": "error", "reason": "the game could not be played"})
    whole = play.get(f"/play/{gid}/feed", headers=headers)
    assert whole.status_code == 200
    assert whole.headers["content-type"].startswith("text/event-stream")
    assert whole.headers["cache-control"] == "no-store"
    events = [block for block in whole.text.split("\n\n") if block.startswith("id: ")]
    assert [e.split("\n")[1] for e in events] == ["event: queued", "event: started", "event: error"]
    first = events[0].split("\n")[0].removeprefix("id: ")
    again = play.get(f"/play/{gid}/feed", headers={**headers, "Last-Event-ID": first})
    assert "event: queued" not in again.text and again.text.count("\nevent: ") == 2
    last = events[-1].split("\n")[0].removeprefix("id: ")
    ended = play.get(f"/play/{gid}/feed?after={last}", headers=headers)
    assert ended.status_code == 200 and "event: " not in ended.text  # nothing more: it ends
