"""The live stream of a running match (``GET /api/v1/matches/{id}/live``): the worker's events
written to Redis as its publisher writes them, read back through a real server as server-sent
events: in order, held back by the delay, restarted with a new attempt, resumed after
``Last-Event-ID``, ended when the match is over."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData
from arboretum_web.live import released_count
from arboretum_web.screenshots import serve_in_thread
from arboretum_worker import store
from arboretum_worker.live import LivePublisher, live_key
from sse_client import SSE


def _step(turn: int, seat: int, kind: str = "draw") -> dict[str, Any]:
    if kind == "draw":
        return {"turn": turn, "seat": seat, "kind": "draw", "source": "deck", "card": None}
    return {"turn": turn, "seat": seat, "kind": "play", "card": "OA1", "cell": [0, 0],
            "discard": "OA2"}  # fmt: skip


def _game(publisher: LivePublisher, game: int = 0) -> None:
    publisher.publish(
        [
            {
                "type": "game",
                "game": game,
                "players": 2,
                "species": [],
                "deck_size": 34,
                "seats": [{"seat": 0, "bot": "a"}, {"seat": 1, "bot": "b"}],
            },
        ],
        False,
    )


def _start(publisher: LivePublisher) -> None:
    publisher.publish(
        [
            {
                "type": "start",
                "attempt": publisher.attempt,
                "players": 2,
                "games": 1,
                "seats": ["a", "b"],
            }
        ],
        False,
    )


@pytest.fixture
def serve(r: redis.Redis) -> Iterator[Any]:
    def start(**settings: Any) -> Any:
        app = create_app(WebSettings(check=lambda p: None, **settings), client=r)
        return serve_in_thread(app)

    yield start


def test_unknown_match_is_404(client: Any) -> None:
    resp = client.get("/api/v1/matches/ffffffffffffffffffff/live")
    assert resp.status_code == 404 and resp.json()["error"]["status"] == 404


def test_events_arrive_as_they_are_published(r: redis.Redis, demo: DemoData, serve: Any) -> None:
    mid = demo.running
    r.delete(live_key(mid))  # (the demo's own stream of it)
    publisher = LivePublisher(r, mid)
    _start(publisher)
    with serve() as base:
        sse = SSE(base, f"/api/v1/matches/{mid}/live")
        assert sse.response.status == 200
        assert sse.response.getheader("Content-Type").startswith("text/event-stream")
        sse.wait(1)
        _game(publisher)
        sse.wait(2)
        for n in range(3):
            publisher.publish([{"type": "step", "game": 0, "step": _step(n, n % 2)}], False)
            sse.wait(3 + n)
        assert sse.steps() == [_step(n, n % 2) for n in range(3)]
        ids = [ident for _k, ident, _d in sse.events]
        assert ids == [f"{publisher.attempt}.{n}" for n in range(5)]
        # a stale attempt of the same match (a worker presumed dead) is ignored
        stale = LivePublisher(r, mid)
        stale.publish([{"type": "step", "game": 0, "step": _step(9, 0)}], False)
        publisher.publish([{"type": "end", "status": "finished", "games_finished": 1}], True)
        sse.wait(6)
        assert sse.events[-1][2]["type"] == "end" and len(sse.steps()) == 3
        # a viewer joining now gets everything from the start; one resuming only the rest
        late = SSE(base, f"/api/v1/matches/{mid}/live")
        assert [d for _k, _i, d in late.wait(6)] == [d for _k, _i, d in sse.events]
        resumed = SSE(base, f"/api/v1/matches/{mid}/live", last_event_id=ids[3])
        assert [d for _k, _i, d in resumed.wait(2)] == [d for _k, _i, d in sse.events[4:6]]
        # the match is recorded: the streams end
        store.set_match_status(r, mid, store.MatchStatus.CANCELLED, failure="test")
        for viewer in (sse, late, resumed):
            assert viewer.done.wait(15)
            assert viewer.events[-1][:1] == ("over",) and viewer.events[-1][2] == {
                "status": "cancelled"
            }
            viewer.close()


def test_a_new_attempt_resets_the_viewers(r: redis.Redis, demo: DemoData, serve: Any) -> None:
    mid = demo.running
    r.delete(live_key(mid))  # (the demo's own stream of it)
    first = LivePublisher(r, mid)
    _start(first)
    _game(first)
    first.publish([{"type": "step", "game": 0, "step": _step(0, 0)}], False)
    with serve() as base:
        sse = SSE(base, f"/api/v1/matches/{mid}/live")
        sse.wait(3)
        second = LivePublisher(r, mid)
        _start(second)
        _game(second)
        events = sse.wait(6)
        assert [k for k, _i, _d in events[3:]] == ["reset", "message", "message"]
        assert events[4][2]["attempt"] == second.attempt
        assert events[5][1] == f"{second.attempt}.1"
        sse.close()


def test_the_delay_holds_back_the_last_turns(r: redis.Redis, demo: DemoData, serve: Any) -> None:
    mid = demo.running
    r.delete(live_key(mid))  # (the demo's own stream of it)
    publisher = LivePublisher(r, mid)
    _start(publisher)
    _game(publisher)
    steps = [_step(t, t % 2, kind) for t in range(5) for kind in ("draw", "draw", "play")]
    publisher.publish([{"type": "step", "game": 0, "step": s} for s in steps], False)
    with serve(live_delay_turns=2) as base:
        sse = SSE(base, f"/api/v1/matches/{mid}/live")
        sse.wait(2 + 9)  # turns 0, 1 and 2 of 0..4
        time.sleep(0.5)
        assert sse.steps() == steps[:9]
        publisher.publish(
            [{"type": "step", "game": 0, "step": _step(5, 1)}], False
        )  # turn 5 begins: turn 3 is out
        sse.wait(2 + 12)
        time.sleep(0.3)
        assert sse.steps() == steps[:12]
        publisher.publish(
            [{"type": "game_end", "game": 0, "final_hands": [[], []], "result": {}}], False
        )
        events = sse.wait(2 + 17)
        assert sse.steps() == [*steps, _step(5, 1)]
        assert events[-1][2]["type"] == "game_end"
        sse.close()


def test_a_finished_match_ends_its_stream_at_once(client: Any, demo: DemoData) -> None:
    mid = demo.matches[0]
    resp = client.get(f"/api/v1/matches/{mid}/live")
    assert resp.status_code == 200
    assert resp.text.rstrip().endswith('event: over\ndata: {"status": "finished"}')


def test_released_count() -> None:
    game = {"type": "game", "game": 0}
    steps = [{"type": "step", "game": 0, "step": _step(t, 0)} for t in range(4)]
    events = [game, *steps]
    assert released_count(events, 0) == 5
    assert released_count(events, 1) == 4  # turn 3 waits for turn 4
    assert released_count(events, 3) == 2
    assert released_count(events, 9) == 1
    assert released_count([*events, {"type": "game_end", "game": 0}], 9) == 6
