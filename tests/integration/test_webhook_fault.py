"""Webhooks end to end: real `arena worker` processes play a league in which the bot of an author
with a webhook faults, and a challenge of that author; the workers POST a signed ``match.fault``
notice (linking to the fault's step in the replay viewer) and a signed ``challenge.finished`` to
a real HTTP receiver on loopback."""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from arboretum_worker import league, registry, replays, store, webhooks

from .conftest import BOTS, Arena
from .test_league import CLOCK, submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def _receiver(got: list[dict[str, Any]]) -> ThreadingHTTPServer:
    """A loopback HTTP server that keeps every POST in ``got`` and answers 200."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append({"headers": dict(self.headers), "body": body})
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_league_fault_is_posted_to_the_owners_webhook(arena: Arena) -> None:
    got: list[dict[str, Any]] = []
    server = _receiver(got)
    try:
        r = arena.r
        submit_builtin(arena, "random")
        vid = registry.add_version(
            r, "firstfault", (BOTS / "firstfault.py").read_bytes(), owner="alice"
        )
        secret = webhooks.set_webhook(
            r, "alice", f"http://127.0.0.1:{server.server_address[1]}/arena"
        )
        arena.env["ARENA_WEBHOOK_PRIVATE"] = "1"  # the receiver is on loopback
        arena.start_worker()
        arena.wait_workers(1)
        arena.run(
            "league", "create", "faults", "--bots", "random", "firstfault",
            "--players", "2", "--games-per-pairing", "1", "--seed", "3", *CLOCK,
        )  # fmt: skip
        arena.run("league", "run", "faults")
        assert arena.wait_league("faults", timeout=150) == {"finished": 2}, arena.worker_logs()
        deadline = time.monotonic() + 30
        while len(got) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(got) == 2, (webhooks.deliveries(r, "alice"), arena.worker_logs())
    finally:
        server.shutdown()
        server.server_close()
    matches = set(store.league_matches(r, "faults"))
    for item in got:
        h = item["headers"]
        assert h["X-Arena-Event"] == "match.fault"
        assert webhooks.verify(secret, h["X-Arena-Timestamp"], item["body"], h["X-Arena-Signature"])
        data = json.loads(item["body"])["data"]
        assert data["match"] in matches and data["league"] == "faults"
        assert data["bot"] == "firstfault" and data["version"] == vid
        assert data["faults"] == 1 and data["step"] is not None
        assert re.fullmatch(rf"/matches/{data['match']}/games/0#step={data['step']}", data["url"])
        doc = json.loads(replays.get_replay(r, data["match"], 0) or b"{}")
        step = doc["steps"][data["step"]]
        assert step["seat"] == data["seat"] and "fault" in step
    assert {d["status"] for d in webhooks.deliveries(r, "alice")} == {"delivered"}


def test_a_finished_challenge_is_posted_to_the_challengers_webhook(arena: Arena) -> None:
    from arboretum_worker.challenges import create_challenge, get_challenge

    got: list[dict[str, Any]] = []
    server = _receiver(got)
    try:
        r = arena.r
        registry.add_version(r, "mine", league.builtin_bot_files("greedy"), owner="alice")
        secret = webhooks.set_webhook(
            r, "alice", f"http://127.0.0.1:{server.server_address[1]}/arena"
        )
        arena.env["ARENA_WEBHOOK_PRIVATE"] = "1"
        arena.start_worker()
        arena.wait_workers(1)
        challenge = create_challenge(r, "alice", "mine", ["random"], deals=1, seed=5)
        deadline = time.monotonic() + 150
        while not got and time.monotonic() < deadline:
            time.sleep(0.3)
        assert got, (get_challenge(r, challenge.id), arena.worker_logs())
    finally:
        server.shutdown()
        server.server_close()
    (item,) = got
    h = item["headers"]
    assert h["X-Arena-Event"] == "challenge.finished"
    assert webhooks.verify(secret, h["X-Arena-Timestamp"], item["body"], h["X-Arena-Signature"])
    body = json.loads(item["body"])
    assert body["author"] == "alice"
    assert body["data"]["challenge"] == challenge.id and body["data"]["status"] == "finished"
    ended = get_challenge(r, challenge.id)
    assert ended is not None and ended.status.value == "finished"
