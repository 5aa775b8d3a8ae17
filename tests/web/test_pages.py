"""The HTML pages: every route renders, shows the stored data, and errors are pages, not
tracebacks."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
import redis

from arboretum_web.demo import DemoData
from arboretum_worker import fit, ratings, registry, replays, store


def _ok(resp: Any) -> str:
    assert resp.status_code == 200, resp.text[:500]
    assert resp.headers["content-type"].startswith("text/html")
    text: str = resp.text
    assert "Traceback" not in text
    return text


def test_leaderboard_page(client: Any, r: redis.Redis, demo: DemoData) -> None:
    html = _ok(client.get("/"))
    rows = re.findall(r'<tr data-version="([0-9a-f]{64})"', html)
    # led by the fitted rating, ranked by the lower end of its interval, as `arena leaderboard`
    fitted = {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "demo"))}
    expected = sorted(fitted, key=lambda v: (-fitted[v].lower, v))
    latest = {registry.latest(r, name) for name in ("oakheart", "sapling", "random")}
    assert rows == [v for v in expected if v in latest]
    live = {row.version: row.live for row in ratings.standings(r, "demo")}
    assert "Fitted rating (95%)" in html and "Live rating" in html
    assert "Rating (95%)" not in html.replace("Fitted rating (95%)", "")
    assert "ranked by the lower end" in html
    seq = int(r.get(store.Keys.elo_seq("demo")) or 0)
    assert f"it covers all {seq} results" in html  # the fit is fresh
    for vid in rows:
        assert f"{ratings.rating(r, 'demo', vid):.1f}" in html
        cells = {}
        for kind in ("live", "fit"):
            cell = re.search(
                rf'data-version="{vid}".*?<td class="num rating {kind}">(.*?)</td>', html, re.S
            )
            assert cell is not None
            cells[kind] = re.sub(r"<[^>]+>", "", cell.group(1))
        assert cells["live"] == f"{live[vid].mu:.0f} ± {live[vid].half_width:.0f}"
        half = (fitted[vid].upper - fitted[vid].lower) / 2
        assert cells["fit"] == f"{fitted[vid].elo:.0f}? ± {half:.0f}"  # provisional: few games
    all_rows = re.findall(r'<tr data-version="([0-9a-f]{64})"', _ok(client.get("/?all=1")))
    assert all_rows == expected
    assert _ok(client.get("/?league=demo")).count("data-version") == 3


def test_leaderboard_page_empty(client: Any) -> None:
    assert "No leagues yet" in _ok(client.get("/"))


def test_bots_and_bot_pages(client: Any, r: redis.Redis, demo: DemoData) -> None:
    html = _ok(client.get("/bots"))
    for name in ("oakheart", "sapling", "random"):
        assert f'href="/bots/{name}"' in html
    page = _ok(client.get("/bots/oakheart"))
    assert "<svg" in page and "polyline" in page
    for vid in registry.versions(r, "oakheart"):
        assert vid[:8] in page
    assert 'id="head-to-head"' in page
    assert _ok(client.get("/bots/oakheart?league=demo")) == page
    registry.add_version(r, "newcomer", b"class A: pass\n", owner="carol")
    fresh = _ok(client.get("/bots/newcomer"))
    assert "no games yet" in fresh and 'by <a href="/authors/carol">carol</a>' in fresh


def test_league_pages(client: Any, r: redis.Redis, demo: DemoData) -> None:
    assert 'href="/leagues/demo"' in _ok(client.get("/leagues"))
    html = _ok(client.get("/leagues/demo"))
    total = len(store.league_matches(r, "demo"))
    assert f"{total - 1}/{total}" in html
    assert 'id="standings"' in html


def test_counts_on_pages_take_their_plural_only_when_more_than_one(
    client: Any, r: redis.Redis
) -> None:
    from arboretum_worker import league

    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    for faults in (1, 2):
        league.create_league(
            r, f"f{faults}", ["random", "greedy"], players=2, faults_to_forfeit=faults
        )
    assert "<dt>Forfeit at</dt><dd>1 fault</dd>" in _ok(client.get("/leagues/f1"))
    assert "<dt>Forfeit at</dt><dd>2 faults</dd>" in _ok(client.get("/leagues/f2"))


def test_matches_page(client: Any, r: redis.Redis, demo: DemoData) -> None:
    html = _ok(client.get("/matches"))
    ids = re.findall(r'href="/matches/([0-9a-f]{20})"', html)
    assert ids == store.league_matches(r, "demo")
    running = _ok(client.get("/matches?status=running&league=demo&bot=oakheart"))
    assert re.findall(r'href="/matches/([0-9a-f]{20})"', running) in ([demo.running], [])


def test_match_and_replay_pages(client: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = demo.matches[0]
    html = _ok(client.get(f"/matches/{mid}"))
    assert f"/matches/{mid}/games/0" in html
    assert f"/api/v1/matches/{mid}/games/0/replay?download=1" in html
    viewer = _ok(client.get(f"/matches/{mid}/games/0"))
    assert f'data-src="/api/v1/matches/{mid}/games/0/replay"' in viewer
    scripts = re.findall(r'<script src="/static/([^"?]+)\?v=', viewer)
    assert scripts[-4:] == ["scoring.js", "replaymodel.js", "evalchart.js", "replay.js"]  # in order
    assert 'data-seat="1"' in _ok(client.get(f"/matches/{mid}/games/0?seat=1"))


def test_static_files(client: Any) -> None:
    assert client.get("/static/replay.js").status_code == 200
    assert client.get("/static/replaymodel.js").status_code == 200
    assert client.get("/static/evalchart.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200
    assert client.get("/static/nope.js").status_code == 404
    icon = client.get("/favicon.ico")  # what a browser asks for on the API's JSON
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
    assert icon.content.startswith(b"<svg")


def test_log_page_only_for_the_author(client: Any, r: redis.Redis, demo: DemoData) -> None:
    for mid in demo.matches:
        record = store.get_match(r, mid)
        owners = [store.get_bot(r, store.get_version(r, v).name).owner for v in record.seats]
        if "alice" in owners:
            break
    seat = owners.index("alice")
    url = f"/matches/{mid}/seats/{seat}/log"
    assert client.get(url).status_code == 401
    client.cookies.set("arena_token", demo.tokens["bob"])
    assert client.get(url).status_code == 403
    assert "log</a>" not in _ok(client.get(f"/matches/{mid}"))
    client.cookies.set("arena_token", demo.tokens["alice"])
    page = _ok(client.get(url))
    assert replays.get_bot_log(r, mid, seat).decode().strip().split("]")[0] in page
    assert f"/matches/{mid}/seats/{seat}/log" in _ok(client.get(f"/matches/{mid}"))
    client.cookies.clear()


def csrf_of(html: str) -> str:
    """The form token a page hands out (safety.py)."""
    found = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


def test_login_and_logout(client: Any, demo: DemoData) -> None:
    login = _ok(client.get("/login"))
    assert "Author sign-in" in login
    token = csrf_of(login)
    bad = client.post("/login", data={"token": "arena_nope", "csrf": token})
    assert bad.status_code == 401
    assert "the token is not valid: it is unknown, or was rotated or removed" in bad.text
    good = client.post(
        "/login", data={"token": demo.tokens["alice"], "csrf": token}, follow_redirects=False
    )
    assert good.status_code == 303
    cookie = good.headers["set-cookie"]
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    bots = _ok(client.get("/bots"))
    assert ">alice<" in bots
    out = client.post("/logout", data={"csrf": csrf_of(bots)}, follow_redirects=False)
    assert out.status_code == 303
    assert 'arena_token=""' in out.headers["set-cookie"]
    client.cookies.delete("arena_token")
    assert ">alice<" not in client.get("/").text


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/nope", 404),
        ("/bots/nobody", 404),
        ("/bots/bad%20name", 404),
        ("/bots/oakheart?league=nope", 404),
        ("/leagues/nope", 404),
        ("/leagues/a:b", 404),
        ("/matches/ffffffffffffffffffff", 404),
        ("/matches/a:b", 404),
        ("/matches/%20", 404),
        ("/matches?status=nope", 400),
        ("/matches?page=0", 400),
        ("/matches?page=x", 400),
        ("/matches?page=99", 404),
        ("/matches?league=nope", 404),
        ("/matches?bot=nobody", 404),
        ("/?all=perhaps", 400),
        ("/?league=nope", 404),
        ("/matches/MATCH/games/5", 404),
        ("/matches/MATCH/games/x", 404),
        ("/matches/MATCH/games/0?seat=9", 400),
        ("/matches/MATCH/games/0?seat=-1", 400),
        ("/matches/MATCH/seats/9/log", 404),
    ],
)
def test_error_pages(client: Any, demo: DemoData, path: str, status: int) -> None:
    resp = client.get(path.replace("MATCH", demo.matches[0]))
    assert resp.status_code == status, resp.text[:300]
    assert resp.headers["content-type"].startswith("text/html")
    assert f'<span class="code">{status}</span>' in resp.text
    assert "Traceback" not in resp.text


def test_internal_errors_are_pages_without_traceback(client: Any, r: redis.Redis) -> None:
    r.hset(store.Keys.league("broken"), mapping={"name": "broken", "settings": "{not json"})
    r.sadd(store.Keys.LEAGUES, "broken")
    resp = client.get("/leagues/broken")
    assert resp.status_code == 500
    assert "Traceback" not in resp.text and "internal error" in resp.text
    api = client.get("/api/v1/leagues/broken")
    assert api.status_code == 500 and api.json()["error"]["status"] == 500


def test_the_api_reference_page_lists_every_operation(client: Any) -> None:
    """``/docs/api`` is read from the OpenAPI document: every operation with its path, its token
    mark where it needs one, its parameters, and a link to each schema it answers with."""
    from arboretum_web.openapi import openapi_document

    page = client.get("/docs/api")
    assert page.status_code == 200
    text = html.unescape(page.text)
    document = openapi_document()
    operations = 0
    for path, item in document["paths"].items():
        for method, operation in item.items():
            operations += 1
            anchor = f"{method}-{path}".replace("/", "-").replace("{", "").replace("}", "")
            block = text.split(f'id="{anchor}"', 1)[1].split('class="api-op"', 1)[0]
            assert f'<code class="api-path">{path}</code>' in block, path
            assert operation["summary"] in block, path
            assert ("pill token" in block) == bool(operation.get("security")), path
            for param in operation.get("parameters", []):
                assert f"<code>{param['name']}</code>" in block, (path, param["name"])
    assert operations >= 40
    for name in document["components"]["schemas"]:
        assert f'id="schema-{name}"' in text, name
    assert 'href="#schema-Error"' in text and 'href="/api/v1/openapi.json"' in text
    assert 'href="/docs/api" class="active"' in text  # the menu's API tab
