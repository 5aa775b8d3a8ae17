"""Authors' webhooks against a real HTTP receiver on loopback, delivered by a real rq worker:
the signature, the retry after a 500 with a doubling backoff, final refusals, and the notice of
a bot's fault in a league match."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import redis
from rq import Queue, SimpleWorker

from arboretum_worker import league, registry, store, webhooks


class Receiver:
    """A loopback HTTP server answering each POST with the next status of ``statuses``."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.got: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.got.append({"at": time.time(), "headers": dict(self.headers), "body": body})
                status = outer.statuses[min(len(outer.got), len(outer.statuses)) - 1]
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?x=1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver_of() -> Iterator[Any]:
    made: list[Receiver] = []

    def make(statuses: list[int]) -> Receiver:
        made.append(Receiver(statuses))
        return made[-1]

    yield make
    for rec in made:
        rec.close()


@pytest.fixture
def loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_WEBHOOK_PRIVATE", "1")
    monkeypatch.setenv("ARENA_WEBHOOK_BACKOFF", "0.3")
    monkeypatch.setenv("ARENA_WEBHOOK_ATTEMPTS", "3")


def _work(r: redis.Redis) -> None:
    """A real rq worker drains the webhook queue."""
    SimpleWorker([Queue(webhooks.webhook_queue(), connection=r)], connection=r).work(burst=True)


def test_signed_delivery_retried_after_a_500(
    r: redis.Redis, receiver_of: Any, loopback: None
) -> None:
    rec = receiver_of([500, 200])
    secret = webhooks.set_webhook(r, "alice", rec.url)
    assert secret.startswith("whsec_")
    delivery = webhooks.notify(r, "alice", "test.finished", {"test": "t1", "result": "H1"})
    assert delivery is not None
    _work(r)
    assert len(rec.got) == 2
    first, second = rec.got
    assert second["at"] - first["at"] >= 0.3  # the backoff
    for got in rec.got:
        h = got["headers"]
        assert h["X-Arena-Event"] == "test.finished"
        assert h["X-Arena-Delivery"] == delivery
        assert webhooks.verify(secret, h["X-Arena-Timestamp"], got["body"], h["X-Arena-Signature"])
        assert not webhooks.verify(
            "whsec_other", h["X-Arena-Timestamp"], got["body"], h["X-Arena-Signature"]
        )
        # a replayed request is stale past the tolerance
        later = int(h["X-Arena-Timestamp"]) + webhooks.TOLERANCE_S + 1
        assert not webhooks.verify(
            secret, h["X-Arena-Timestamp"], got["body"], h["X-Arena-Signature"], now=later
        )
    body = json.loads(second["body"])
    assert body["event"] == "test.finished" and body["author"] == "alice"
    assert body["delivery"] == delivery and body["data"] == {"test": "t1", "result": "H1"}
    (record,) = webhooks.deliveries(r, "alice")
    assert record["status"] == "delivered"
    assert [a["status"] for a in record["attempts"]] == [500, 200]


def test_backoff_doubles_and_gives_up(r: redis.Redis, receiver_of: Any, loopback: None) -> None:
    rec = receiver_of([503])
    webhooks.set_webhook(r, "alice", rec.url)
    webhooks.notify(r, "alice", "challenge.finished", {"challenge": "c1"})
    _work(r)
    assert len(rec.got) == 3
    gaps = [b["at"] - a["at"] for a, b in zip(rec.got, rec.got[1:], strict=False)]
    assert gaps[0] >= 0.3 and gaps[1] >= 0.6, gaps
    (record,) = webhooks.deliveries(r, "alice")
    assert record["status"] == "failed"
    assert [a["status"] for a in record["attempts"]] == [503, 503, 503]


def test_a_4xx_is_final_and_no_webhook_sends_nothing(
    r: redis.Redis, receiver_of: Any, loopback: None
) -> None:
    rec = receiver_of([410])
    assert webhooks.notify(r, "alice", "test.finished", {}) is None
    assert webhooks.deliveries(r, "alice") == []
    webhooks.set_webhook(r, "alice", rec.url)
    webhooks.notify(r, "alice", "test.finished", {})
    _work(r)
    assert len(rec.got) == 1
    assert webhooks.deliveries(r, "alice")[0]["status"] == "failed"


def test_private_addresses_are_refused_by_default(
    r: redis.Redis, receiver_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_WEBHOOK_PRIVATE", raising=False)
    rec = receiver_of([200])
    webhooks.set_webhook(r, "alice", rec.url)
    webhooks.notify(r, "alice", "test.finished", {})
    _work(r)
    assert rec.got == []
    (record,) = webhooks.deliveries(r, "alice")
    assert record["status"] == "failed" and len(record["attempts"]) == 1
    assert "private or local address (127.0.0.1)" in record["attempts"][0]["note"]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("", "is empty"),
        ("ftp://example.org/x", "must start with http:// or https://"),
        ("javascript:alert(1)", "must start with http://"),
        ("https:///path", "has no host"),
        ("https://user:pw@example.org/", "must not hold a user or password"),
        ("https://example.org/a b", "space or a control character"),
        ("https://example.org:99999/", "port"),
        ("https://example.org/" + "a" * 500, "at most 500"),
    ],
)
def test_bad_urls_are_refused(r: redis.Redis, url: str, why: str) -> None:
    with pytest.raises(webhooks.WebhookError, match=why):
        webhooks.set_webhook(r, "alice", url)
    assert webhooks.get_webhook(r, "alice") is None


def test_a_fault_in_a_league_match_notifies_the_owner(
    r: redis.Redis, receiver_of: Any, loopback: None
) -> None:
    rec = receiver_of([200])
    vid = registry.add_version(r, "faulty", league.builtin_bot_files("random"), owner="alice")
    other = registry.add_version(r, "greedy", league.builtin_bot_files("greedy"))
    secret = webhooks.set_webhook(r, "alice", rec.url)
    result = store.MatchResult(
        match_id="m0123456789abcdef012",
        league="main",
        seats=(other, vid),
        games=(
            store.GameOutcome(ranks=(1, 2), totals=(5, 0), faults=(0, 0)),
            store.GameOutcome(ranks=(1, 2), totals=(5, 0), faults=(0, 2)),
        ),
        finished=time.time(),
    )
    steps = [{"seat": 0, "kind": "draw"}, {"seat": 1, "kind": "draw", "fault": {"kind": "timeout"}}]
    docs = [json.dumps({"steps": []}), json.dumps({"steps": steps})]
    assert len(webhooks.notify_faults(r, result, docs)) == 1  # the unowned seat: nobody to tell
    _work(r)
    (got,) = rec.got
    h = got["headers"]
    assert webhooks.verify(secret, h["X-Arena-Timestamp"], got["body"], h["X-Arena-Signature"])
    data = json.loads(got["body"])["data"]
    assert data["bot"] == "faulty" and data["faults"] == 2 and data["faults_per_game"] == [0, 2]
    assert data["url"] == "/matches/m0123456789abcdef012/games/1#step=1"


def test_an_unreachable_or_unresolvable_host_is_recorded_not_raised(
    r: redis.Redis, loopback: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_WEBHOOK_BACKOFF", "0.01")
    free = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = free.server_address[1]
    free.server_close()  # nothing listens there now
    webhooks.set_webhook(r, "alice", f"http://127.0.0.1:{port}/")
    webhooks.notify(r, "alice", "test.finished", {})
    webhooks.set_webhook(r, "bob", "http://" + "a" * 70 + ".example/")  # a label too long
    webhooks.notify(r, "bob", "test.finished", {})
    _work(r)
    (alice,) = webhooks.deliveries(r, "alice")
    assert alice["status"] == "failed" and len(alice["attempts"]) == 3
    assert all("ConnectionRefusedError" in a["note"] for a in alice["attempts"])
    (bob,) = webhooks.deliveries(r, "bob")
    assert bob["status"] == "failed" and "label empty or too long" in bob["attempts"][0]["note"]
