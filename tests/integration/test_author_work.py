"""Authors' challenges and sequential tests end to end: a real redis-server, real `arena worker`
processes (rq) on every queue, real bots in the sandbox. Each runs to its end as the author's
units on its own queue, unrated, its games linked, its worker time charged to its author."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from rq.job import Job

from arboretum_worker import queues, registry, replays, webhooks
from arboretum_worker.challenges import (
    ChallengeStatus,
    NotYours,
    cancel_challenge,
    challenge_matches,
    challenge_visible,
    create_challenge,
    get_challenge,
    list_challenges,
    set_bot_prefs,
)
from arboretum_worker.league import builtin_bot_files, sandbox_check
from arboretum_worker.settings import WorkerSettings
from arboretum_worker.sprt import authors
from arboretum_worker.sprt import league as sprt_league
from arboretum_worker.sprt.league import get_test

from .conftest import Arena

pytestmark = pytest.mark.integration


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, object]]]]:
    """A real HTTP receiver on loopback: the URL, and the JSON bodies it was sent."""
    bodies: list[dict[str, object]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", bodies
    finally:
        server.shutdown()


def _events(bodies: list[dict[str, object]]) -> list[object]:
    return [b["event"] for b in bodies]


def _submit(arena: Arena, name: str, files_of: str, owner: str) -> str:
    return registry.add_version(
        arena.r, name, builtin_bot_files(files_of), owner=owner, check=sandbox_check("auto")
    )


def _wait(what: str, done: object, arena: Arena, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not done():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"{what} not done\n" + arena.worker_logs()
        time.sleep(0.2)


def test_a_challenge_runs_unrated_on_its_queue_and_is_seen_by_whom_it_may(
    arena: Arena, receiver: tuple[str, list[dict[str, object]]]
) -> None:
    r = arena.r
    arena.env["ARENA_WEBHOOK_PRIVATE"] = "1"  # the receiver is on loopback
    webhooks.set_webhook(r, "alice", receiver[0])
    ws = WorkerSettings.from_env(arena.env)
    _submit(arena, "alpha", "greedy", "alice")
    _submit(arena, "beta", "random", "bob")
    arena.start_worker()
    challenge = create_challenge(r, "alice", "alpha", ["beta"], deals=2, worker_settings=ws)
    assert (challenge.players, challenge.matches, challenge.status) == (2, 2, "queued")
    assert [c.id for c in list_challenges(r, "bob")] == [challenge.id]  # bob is involved

    def ended() -> bool:
        current = get_challenge(r, challenge.id)
        return current is not None and current.status in ("finished", "failed")

    _wait("challenge", ended, arena)
    done = get_challenge(r, challenge.id)
    assert done is not None and done.status is ChallengeStatus.FINISHED, done
    # Every seat order played the same two deals; each entrant played 4 games.
    matches = challenge_matches(r, challenge.id)
    assert sorted(m.seats for m in matches) == sorted(
        [tuple(challenge.entrants), tuple(reversed(challenge.entrants))]
    )
    assert [row["games"] for row in done.standings] == [4, 4]
    assert sum(row["wins"] for row in done.standings) >= 4
    for m in matches:
        assert replays.replay_games(r, m.id) == [0, 1]
        job = Job.fetch(f"arena-{m.id}", connection=r)
        assert job.origin == "arena-challenges"
    # Unrated: no league, no rating, no result of a league match.
    assert not r.keys("arena:elo:*") and not r.keys("arena:result:*")
    _wait("webhook", lambda: "challenge.finished" in _events(receiver[1]), arena, 60)
    body = receiver[1][0]
    assert body["data"]["challenge"] == challenge.id and body["data"]["status"] == "finished"  # type: ignore[index]
    usage = queues.author_usage(r, "alice")
    assert usage.active_matches == 0 and usage.total_s > 0 and usage.used_today_s > 0

    assert challenge_visible(r, done, "bob") and challenge_visible(r, done, None)
    set_bot_prefs(r, "bob", "beta", public_results=False)
    assert not challenge_visible(r, done, "carol") and challenge_visible(r, done, "bob")
    with pytest.raises(NotYours):
        set_bot_prefs(r, "alice", "beta", accept_challenges=False)
    with pytest.raises(NotYours, match="only its challenger cancels it"):
        cancel_challenge(r, "bob", challenge.id)


def test_an_authors_test_runs_on_the_tests_queue_and_can_be_cancelled(
    arena: Arena, receiver: tuple[str, list[dict[str, object]]]
) -> None:
    r = arena.r
    arena.env["ARENA_WEBHOOK_PRIVATE"] = "1"  # the receiver is on loopback
    webhooks.set_webhook(r, "alice", receiver[0])
    ws = WorkerSettings.from_env(arena.env)
    v1 = _submit(arena, "alpha", "random", "alice")
    v2 = _submit(arena, "alpha", "greedy", "alice")
    arena.start_worker()
    arena.start_worker()
    limits = authors.TestLimits(batch=2, window=2)
    new, old = f"alpha@{v2[:8]}", f"alpha@{v1[:8]}"
    test = authors.create_author_test(
        r, "alice", new, old, elo0=0, elo1=100, max_pairs=4, limits=limits, worker_settings=ws
    )
    assert test.author == "alice"
    _wait("test", lambda: get_test(r, test.id).status is not sprt_league.TestStatus.RUNNING, arena)  # type: ignore[union-attr]
    ended = get_test(r, test.id)
    assert ended is not None and ended.status is sprt_league.TestStatus.FINISHED, ended
    played = authors.sprt_matches(r, test.id)
    assert [(m.batch, m.seating) for m in played] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all(len(m.ranks) == 2 and m.replays for m in played)
    assert replays.replay_games(r, played[0].id) == [0, 1]
    assert Job.fetch(f"arena-sprt-{test.id}-0", connection=r).origin == "arena-tests"
    assert [t.id for t in authors.list_author_tests(r, "alice")] == [test.id]
    assert r.hget(f"arena:sprt:{test.id}", "notified") == b"1"
    _wait("webhook", lambda: "test.finished" in _events(receiver[1]), arena, 60)

    # A long test, cancelled by its author (not by another): its units end, its slots free.
    long = authors.create_author_test(
        r,
        "alice",
        f"alpha@{v2[:8]}",
        f"alpha@{v1[:8]}",
        max_pairs=2000,
        limits=limits,
        worker_settings=ws,
    )
    with pytest.raises(NotYours):
        authors.cancel_author_test(r, "bob", long.id)
    assert (
        authors.cancel_author_test(r, "alice", long.id).status is sprt_league.TestStatus.CANCELLED
    )
    _wait("units ended", lambda: queues.author_usage(r, "alice").running_units == 0, arena, 60)
    assert queues.author_usage(r, "alice").active_matches == 0
    _wait("webhooks", lambda: _events(receiver[1]).count("test.finished") == 2, arena, 60)
