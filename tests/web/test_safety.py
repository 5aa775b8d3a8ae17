"""Web safety: security headers on every response, CSRF tokens on every state-changing form,
405 with ``Allow``, and error pages that know who is signed in."""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis

from arboretum_web import authors
from arboretum_web.demo import DemoData
from arboretum_web.safety import CONTENT_SECURITY_POLICY, SECURITY_HEADERS
from arboretum_worker import store

BOT = b"from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    pass\n"


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', html)
    assert found, "the page has no CSRF field"
    return found.group(1)


def _assert_headers(resp: Any) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert resp.headers.get(name) == value, (resp.request.url, name, resp.headers.get(name))


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/login",
        "/leagues/demo",
        "/nope",
        "/matches?page=x",
        "/api/v1/leaderboard",
        "/api/v1/openapi.json",
        "/api/v1/matches/nope",
        "/static/style.css",
        "/static/replay.js",
    ],
)
def test_every_response_has_the_security_headers(client: Any, demo: DemoData, path: str) -> None:
    _assert_headers(client.get(path))


def test_internal_errors_have_the_security_headers(client: Any, r: redis.Redis) -> None:
    r.hset(store.Keys.league("broken"), mapping={"name": "broken", "settings": "{not json"})
    r.sadd(store.Keys.LEAGUES, "broken")
    for path in ("/leagues/broken", "/api/v1/leagues/broken"):
        resp = client.get(path)
        assert resp.status_code == 500
        _assert_headers(resp)


def test_the_policy_allows_no_inline_script_or_style(client: Any, demo: DemoData) -> None:
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    for path in ("/", "/leagues", "/leagues/demo", "/bots", "/bots/oakheart", "/matches"):
        html = client.get(path).text
        assert " style=" not in html, path
        assert not re.search(r"<script(?![^>]*\bsrc=)", html), path
        assert not re.search(r"\son[a-z]+=", html), path


def test_login_needs_the_form_token(client: Any, demo: DemoData) -> None:
    alice = demo.tokens["alice"]
    # no token, a made-up one, one from another site
    assert client.post("/login", data={"token": alice}).status_code == 403
    token = csrf_of(client.get("/login").text)
    forged = client.post("/login", data={"token": alice, "csrf": "x" * 32})
    assert forged.status_code == 403 and "reload the page" in forged.text
    cross = client.post(
        "/login", data={"token": alice, "csrf": token}, headers={"Origin": "https://evil.example"}
    )
    assert cross.status_code == 403 and "another site" in cross.text
    assert "arena_token" not in client.cookies
    good = client.post("/login", data={"token": alice, "csrf": token}, follow_redirects=False)
    assert good.status_code == 303 and client.cookies.get("arena_token") == alice


def test_logout_needs_the_form_token(client: Any, demo: DemoData) -> None:
    client.cookies.set("arena_token", demo.tokens["alice"])
    page = client.get("/bots").text
    assert client.post("/logout", follow_redirects=False).status_code == 403
    assert ">alice<" in client.get("/bots").text  # still signed in
    out = client.post("/logout", data={"csrf": csrf_of(page)}, follow_redirects=False)
    assert out.status_code == 303 and 'arena_token=""' in out.headers["set-cookie"]


def test_the_csrf_cookie(client: Any) -> None:
    resp = client.get("/login")
    cookie = resp.headers["set-cookie"]
    assert cookie.startswith("arena_csrf=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # the same token for as long as the cookie lives
    again = client.get("/login")
    assert csrf_of(again.text) == csrf_of(resp.text) == client.cookies["arena_csrf"]
    assert "set-cookie" not in again.headers
    # a page without a form sets none
    client.cookies.clear()
    assert "set-cookie" not in client.get("/").headers


def test_the_upload_form(client: Any, r: redis.Redis) -> None:
    alice = authors.add_author(r, "alice")
    assert client.get("/upload").status_code == 401
    client.cookies.set("arena_token", alice)
    page = client.get("/upload")
    assert page.status_code == 200 and 'enctype="multipart/form-data"' in page.text
    token = csrf_of(page.text)
    files = {"file": ("mine.py", BOT)}
    refused = client.post("/upload", data={"name": "mine"}, files=files)
    assert refused.status_code == 403 and store.get_bot(r, "mine") is None
    done = client.post(
        "/upload", data={"name": "mine", "csrf": token}, files=files, follow_redirects=False
    )
    assert done.status_code == 303, done.text
    vid = store.bot_versions(r, "mine")[0]
    assert done.headers["location"] == f"/bots/mine?uploaded={vid}"
    shown = client.get(done.headers["location"]).text
    assert 'id="uploaded"' in shown and vid[:8] in shown and "Your upload is version v1" in shown
    # the same files again: no version added, and the page says so
    same = client.post(
        "/upload", data={"name": "mine", "csrf": token}, files=files, follow_redirects=False
    )
    assert same.headers["location"] == f"/bots/mine?uploaded={vid}&known=1"
    assert store.bot_versions(r, "mine") == [vid]
    shown = client.get(same.headers["location"]).text
    assert (
        "Your upload holds the same files as version v1" in shown
        and "no version was added" in shown
    )
    # a refusal is the form again, with the reason and the status
    bad = client.post(
        "/upload", data={"name": "mine", "csrf": token}, files={"file": ("x.txt", b"?")}
    )
    assert bad.status_code == 400 and 'id="upload-error"' in bad.text
    assert 'value="mine"' in bad.text
    bad_name = client.post("/upload", data={"name": "a b", "csrf": token}, files=files)
    assert bad_name.status_code == 400 and "invalid bot name" in bad_name.text


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("POST", "/", "GET, HEAD"),
        ("DELETE", "/bots/oakheart", "GET, HEAD"),
        ("GET", "/logout", "POST"),
        ("PUT", "/login", "GET, HEAD, POST"),
        ("POST", "/api/v1/leaderboard", "GET, HEAD"),
        ("DELETE", "/api/v1/bots/x/versions", "GET, HEAD, POST"),
        ("DELETE", "/api/v1/matches/x", "GET, HEAD"),
    ],
)
def test_405_says_what_is_allowed(
    client: Any, demo: DemoData, method: str, path: str, allow: str
) -> None:
    resp = client.request(method, path)
    assert resp.status_code == 405
    assert set(resp.headers["allow"].split(", ")) == set(allow.split(", "))
    if path.startswith("/api/"):
        assert resp.json()["error"]["status"] == 405
    else:
        assert '<span class="code">405</span>' in resp.text
    _assert_headers(resp)


def test_error_pages_know_the_signed_in_author(client: Any, demo: DemoData) -> None:
    client.cookies.set("arena_token", demo.tokens["alice"])
    page = client.get("/bots/nobody")
    assert page.status_code == 404
    assert 'id="signed-in"' in page.text and ">alice<" in page.text
    assert "Author sign-in" not in page.text
    client.cookies.clear()
    assert "Author sign-in" in client.get("/bots/nobody").text
