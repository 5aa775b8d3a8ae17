"""Live games in the browser: the events a running league match publishes
(:mod:`arboretum_worker.live`), relayed to every viewer as server-sent events.

One :class:`LiveFeed` per match being watched in this process: a thread marks the match as
watched (the worker writes a match's stream only then, from its start; the mark is renewed while
the feed runs), reads the match's Redis stream (a blocking ``XREAD``) and hands the entries to
the event loop, where each event is formatted once and shared by every viewer, so a game watched
by hundreds costs Redis one reader.
A feed forgets a stale attempt (a retried match starts over: viewers get a ``reset``), holds back
the steps of the last ``delay`` turns of the game in progress (as broadcasts do; a game's end
releases them), and ends (``over``, with the match's status) once the match is finished, failed
or cancelled and its stream is read to the end. A feed nobody watches stops after a few seconds.

The stream (``GET /api/v1/matches/{id}/live``)::

    id: <attempt>.<n>
    data: {"type": "step", "game": 0, "step": {...}}      the worker's events, in order

    event: reset          the match started over: forget what came before
    event: over           data: {"status": "finished"}; the stream ends

A reconnecting browser sends ``Last-Event-ID`` and gets only what it has not seen.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from arboretum_worker import replays, store
from arboretum_worker.live import WATCHED_TTL_S, live_key, mark_watched

from .feeds import HEARTBEAT_S, Feed, FeedHub

if TYPE_CHECKING:
    import redis

__all__ = ["HEARTBEAT_S", "LiveFeed", "LiveHub", "released_count"]

_MARK_EVERY_S = WATCHED_TTL_S / 3
"""How often a running feed renews its match's watched mark (the worker writes a match only
while it is marked; :mod:`arboretum_worker.live`)."""
_STATUS_EVERY_S = 1.0
_REPLAYS_WAIT_S = 10.0
_OVER = {store.MatchStatus.FINISHED, store.MatchStatus.FAILED, store.MatchStatus.CANCELLED}


class _Progress:
    """How far each game of the events got: its latest step's turn, and whether it ended."""

    def __init__(self) -> None:
        self.latest: dict[Any, int] = {}
        self.ended: set[Any] = set()

    def see(self, event: dict[str, Any]) -> None:
        if event.get("type") == "step":
            game = event.get("game")
            self.latest[game] = max(self.latest.get(game, 0), int(event["step"].get("turn", 0)))
        elif event.get("type") == "game_end":
            self.ended.add(event.get("game"))

    def held_back(self, event: dict[str, Any], delay: int) -> bool:
        if event.get("type") != "step":
            return False
        game = event.get("game")
        return game not in self.ended and int(event["step"].get("turn", 0)) + delay > (
            self.latest.get(game, 0)
        )


def released_count(
    events: list[dict[str, Any]], delay: int, start: int = 0, progress: _Progress | None = None
) -> int:
    """How many of ``events`` (from the first) may be shown with a delay of ``delay`` turns: a
    step is held back until its game has reached ``delay`` turns further, or is over.
    (``progress``: what :class:`_Progress` saw of every event, if already known.)"""
    if delay <= 0:
        return len(events)
    if progress is None:
        progress = _Progress()
        for event in events:
            progress.see(event)
    count = start
    for event in events[start:]:
        if progress.held_back(event, delay):
            break
        count += 1
    return count


class LiveFeed(Feed):
    """One match's events in this process (see the module's docstring)."""

    def __init__(self, hub: LiveHub, match_id: str) -> None:
        self.match_id = match_id
        self.delay = hub.delay
        self.attempt = ""
        self.generation = 0
        """Changes when the match starts over (a new attempt)."""
        self.events: list[dict[str, Any]] = []
        self._progress = _Progress()
        self.frames: list[bytes] = []
        """The SSE frames of the events released so far."""
        self.over: str | None = None
        """The match's final status, once the stream is read to its end."""
        # (the reader thread's)
        self._key = live_key(match_id)
        self._last = "0-0"
        self._checked = 0.0
        self._since_over = time.monotonic()
        self._marked = -_MARK_EVERY_S
        super().__init__(hub, match_id, f"live {match_id}")

    # ------------------------------------------------------------------ on the event loop

    @property
    def released(self) -> int:
        return len(self.frames)

    def _add(self, entries: list[tuple[str, str]]) -> None:
        for attempt, raw in entries:
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if event.get("type") == "start" and attempt != self.attempt:
                self.attempt, self.events, self.frames = attempt, [], []
                self._progress = _Progress()
                self.generation += 1
            if attempt != self.attempt:
                continue  # a stale attempt of the match, still running somewhere
            self.events.append(event)
            self._progress.see(event)
        self._release(released_count(self.events, self.delay, self.released, self._progress))

    def _release(self, count: int) -> None:
        for n in range(self.released, count):
            data = json.dumps(self.events[n], separators=(",", ":"))
            self.frames.append(f"id: {self.attempt}.{n}\ndata: {data}\n\n".encode())
        self._notify()

    def _finish(self, status: str) -> None:
        self.over = status
        self._release(len(self.events))  # the match is over: nothing is held back

    # ------------------------------------------------------------------ the reader thread

    def _read(self) -> bool:
        r = self.hub.redis
        if time.monotonic() - self._marked >= _MARK_EVERY_S:
            mark_watched(r, self.match_id)
            self._marked = time.monotonic()
        got: Any = r.xread({self._key: self._last}, count=500, block=self.block_ms)
        if got:
            entries = got[0][1]
            self._last = entries[-1][0]
            batch = [
                (fields.get(b"a", b"").decode(), fields.get(b"e", b"").decode())
                for _id, fields in entries
            ]
            self._loop.call_soon_threadsafe(self._add, batch)
            return False
        if time.monotonic() - self._checked < _STATUS_EVERY_S:
            return False
        self._checked = time.monotonic()
        record = store.get_match(r, self.match_id)
        if record is None or record.status in _OVER:
            if (
                record is not None
                and record.status is store.MatchStatus.FINISHED
                and not replays.replay_games(r, self.match_id)
                and time.monotonic() - self._since_over < _REPLAYS_WAIT_S
            ):
                return False  # recorded, its replays are being stored: the page needs them
            status = "gone" if record is None else record.status.value
            self._loop.call_soon_threadsafe(self._finish, status)
            return True
        self._since_over = time.monotonic()
        return False


class LiveHub(FeedHub[LiveFeed]):
    """The live feeds of one app (on its event loop); ``delay``: the turns held back."""

    def __init__(self, r: redis.Redis, delay: int = 0, max_viewers: int = 2000) -> None:
        self.delay = delay
        super().__init__(r, max_viewers)

    def _new(self, feed_id: str) -> LiveFeed:
        return LiveFeed(self, feed_id)


def _resume_point(last_event_id: str | None) -> tuple[str, int] | None:
    """(attempt, first event not seen yet) from a ``Last-Event-ID``, if it is one of ours."""
    if not last_event_id:
        return None
    attempt, _, n = last_event_id.rpartition(".")
    if not attempt or not n.isdigit():
        return None
    return attempt, int(n) + 1


async def stream(feed: LiveFeed, last_event_id: str | None) -> AsyncIterator[bytes]:
    """One viewer's server-sent events (from where its ``Last-Event-ID`` says it was)."""
    feed.subscribe()
    try:
        yield b"retry: 3000\n\n"
        generation = -1
        sent = 0
        resume = _resume_point(last_event_id)
        while True:
            if feed.generation != generation:
                # (a new attempt, or the first events of this feed)
                if sent > 0 or (resume is not None and feed.attempt and resume[0] != feed.attempt):
                    yield b"event: reset\ndata: {}\n\n"
                    resume = None
                generation, sent = feed.generation, 0
            if resume is not None and feed.attempt == resume[0]:
                sent = max(sent, min(resume[1], feed.released))
                if sent >= resume[1]:
                    resume = None
            if sent < feed.released:
                chunk = b"".join(feed.frames[sent : feed.released])
                sent = feed.released
                yield chunk
                continue
            if feed.over is not None:
                yield f"event: over\ndata: {json.dumps({'status': feed.over})}\n\n".encode()
                return
            if not await feed.changed(HEARTBEAT_S):
                yield b": keepalive\n\n"
    finally:
        feed.unsubscribe()
