"""Transfer: HTML, JS, CSS and JSON gzipped when the browser accepts it (never the live feed),
static files cached by content hash (immutable) or revalidated by ETag."""

from __future__ import annotations

import http.client
import re
from typing import Any

import pytest
import redis

from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData
from arboretum_web.screenshots import serve_in_thread
from arboretum_web.transfer import IMMUTABLE
from arboretum_worker.live import LivePublisher, live_key

GZIP = {"Accept-Encoding": "gzip"}


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/", "text/html"),
        ("/matches", "text/html"),
        ("/static/replay.js", "javascript"),
        ("/static/style.css", "text/css"),
        ("/api/v1/matches", "application/json"),
    ],
)
def test_compressed_when_accepted(client: Any, demo: DemoData, path: str, kind: str) -> None:
    plain = client.get(path, headers={"Accept-Encoding": "identity"})
    assert plain.status_code == 200 and kind in plain.headers["content-type"]
    assert "content-encoding" not in plain.headers
    packed = client.get(path, headers=GZIP)
    assert packed.headers["content-encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["vary"]
    # (httpx decodes it; the bytes on the wire are the smaller ones)
    assert int(packed.headers["content-length"]) < len(plain.content) / 2
    assert packed.content == plain.content or path == "/"  # (the page's CSRF-free body is equal)


def test_pages_link_static_files_by_content_hash(client: Any, demo: DemoData) -> None:
    html = client.get("/").text
    links = re.findall(r"/static/([a-z]+\.(?:css|js))\?v=([0-9a-f]{12})", html)
    assert {name for name, _ in links} >= {"style.css", "site.js"}
    for name, digest in links:
        resp = client.get(f"/static/{name}?v={digest}")
        assert resp.headers["cache-control"] == IMMUTABLE
        assert resp.headers.get("etag")


def test_unversioned_or_stale_static_urls_revalidate(client: Any) -> None:
    for url in ("/static/style.css", "/static/style.css?v=000000000000"):
        resp = client.get(url)
        assert resp.status_code == 200 and resp.headers["cache-control"] == "no-cache"
        again = client.get(url, headers={"If-None-Match": resp.headers["etag"]})
        assert again.status_code == 304 and again.headers["cache-control"] == "no-cache"
    assert client.get("/static/nope.css?v=1").status_code == 404


def test_the_live_feed_is_never_gzipped(r: redis.Redis, demo: DemoData) -> None:
    mid = demo.running
    r.delete(live_key(mid))
    publisher = LivePublisher(r, mid)
    start = {"type": "start", "attempt": publisher.attempt, "players": 2, "games": 1,
             "seats": ["a", "b"], "pad": "x" * 2000}  # fmt: skip
    publisher.publish([start], False)
    app = create_app(WebSettings(check=lambda p: None), client=r)
    with serve_in_thread(app) as base:
        host, port = base.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=15)
        headers = {**GZIP, "Accept": "text/event-stream"}
        conn.request("GET", f"/api/v1/matches/{mid}/live", headers=headers)
        resp = conn.getresponse()
        assert resp.getheader("Content-Type").startswith("text/event-stream")
        assert resp.getheader("Content-Encoding") is None
        # the first event arrives while the stream stays open (nothing buffers it)
        lines = [resp.readline() for _ in range(5)]
        assert lines[0] == b"retry: 3000\n", lines
        assert any(line.startswith(b"data: ") and b'"pad"' in line for line in lines), lines
        conn.close()
