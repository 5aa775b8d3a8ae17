"""A casual game's feed in the browser: the messages its person's seat received
(:mod:`arboretum_worker.casual`), relayed as server-sent events.

One :class:`PlayFeed` per game being followed in this process: a thread of its own (never one of
the request thread pool's, so fifty open games cannot starve the pages) reads the game's Redis
stream with a blocking read and hands the messages to the event loop, where each is formatted once
and shared by every tab the person has open on the game. The feed ends after ``match_end`` or
``error``, or within about 25 s after the game's record says it is over with nothing more (a worker
that died before its last message); a feed nobody follows stops after a few seconds.

The stream (``GET /play/{id}/feed``)::

    id: <stream id>
    event: <the message's type>          request, fault, accepted, game_end, match_end, ...
    data: {"type": "request", ...}

A reconnecting browser sends ``Last-Event-ID`` (a stream id) and gets only what came after it.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from arboretum_worker import casual

from .feeds import HEARTBEAT_S, Feed, FeedHub

if TYPE_CHECKING:
    import redis

__all__ = ["FINAL_TYPES", "HEARTBEAT_S", "PlayFeed", "PlayFeeds", "stream", "stream_id_key"]

FINAL_TYPES = frozenset({"match_end", "error"})
"""The messages after which a game's feed has nothing more."""
_BLOCK_MS = 5000
"""A game's feed waits minutes for its person: a read blocks 5 s (not the live feeds' second), so
fifty open tables do not wake the web and Redis fifty times a second for nothing."""
_STATUS_EVERY_S = 10.0
_OVER_GRACE_S = 5.0
"""A game over whose feed has no final message ends its stream after this long (a worker that
died before it wrote one)."""
_OVER = frozenset({"over", "failed"})


def stream_id_key(stream_id: str) -> tuple[int, int]:
    """A Redis stream id (``MS-SEQ``) as a pair that sorts as the stream does; (-1, -1) when it
    is not one."""
    ms, _, seq = stream_id.partition("-")
    if not ms.isdigit() or not (seq or "0").isdigit():
        return (-1, -1)
    return (int(ms), int(seq or "0"))


def frame(stream_id: str, message: dict[str, Any]) -> bytes:
    """One message as a server-sent event."""
    kind = str(message.get("type", "message"))
    data = json.dumps(message, separators=(",", ":"))
    return f"id: {stream_id}\nevent: {kind}\ndata: {data}\n\n".encode()


class PlayFeed(Feed):
    """One game's messages in this process (see the module's docstring)."""

    _reads = "the feed"
    block_ms = _BLOCK_MS

    def __init__(self, hub: PlayFeeds, game_id: str) -> None:
        self.game_id = game_id
        self.ids: list[tuple[int, int]] = []
        self.frames: list[bytes] = []
        self.ended = False
        # (the reader thread's)
        self._last = "0"
        self._checked = time.monotonic()
        self._over_since: float | None = None
        super().__init__(hub, game_id, f"play {game_id}")

    # ------------------------------------------------------------------ on the event loop

    def _add(self, entries: list[tuple[str, dict[str, Any]]], end: bool) -> None:
        for stream_id, message in entries:
            self.ids.append(stream_id_key(stream_id))
            self.frames.append(frame(stream_id, message))
        self.ended = self.ended or end
        self._notify()

    def first_after(self, last_event_id: str | None) -> int:
        """The index of the first message after ``last_event_id`` (0 without one)."""
        if not last_event_id:
            return 0
        last = stream_id_key(last_event_id.strip())
        return sum(1 for key in self.ids if key <= last)

    # ------------------------------------------------------------------ the reader thread

    def _read(self) -> bool:
        r = self.hub.redis
        entries = casual.read_feed(r, self.game_id, after=self._last, block_ms=self.block_ms)
        if entries:
            self._last = entries[-1][0]
            end = any(m.get("type") in FINAL_TYPES for _, m in entries)
            self._loop.call_soon_threadsafe(self._add, entries, end)
            return end
        if time.monotonic() - self._checked < _STATUS_EVERY_S:
            return False
        checked = self._checked = time.monotonic()
        if not self._over(r):
            self._over_since = None
            return False
        # (the record says over a moment before the feed's last message is written)
        over_since = self._over_since = self._over_since or checked
        if checked - over_since >= _OVER_GRACE_S:
            self._loop.call_soon_threadsafe(self._add, [], True)
            return True
        return False

    def _over(self, r: redis.Redis) -> bool:
        try:
            return casual.get_game(r, self.game_id).status in _OVER
        except casual.CasualError:
            return True  # the record is gone (expired): nothing more will come


class PlayFeeds(FeedHub[PlayFeed]):
    """The casual games' feeds of one app (on its event loop)."""

    def _new(self, feed_id: str) -> PlayFeed:
        return PlayFeed(self, feed_id)


async def stream(feed: PlayFeed, last_event_id: str | None) -> AsyncIterator[bytes]:
    """One tab's server-sent events, from after its ``Last-Event-ID``."""
    feed.subscribe()
    try:
        yield b"retry: 3000\n\n"
        sent = feed.first_after(last_event_id)
        resume = last_event_id
        while True:
            if resume is not None:
                # (the feed may still be reading what came before the resume point)
                sent = max(sent, feed.first_after(resume))
            if sent < len(feed.frames):
                chunk = b"".join(feed.frames[sent:])
                sent = len(feed.frames)
                resume = None
                yield chunk
                continue
            if feed.ended:
                return
            if not await feed.changed(HEARTBEAT_S):
                yield b": keepalive\n\n"
    finally:
        feed.unsubscribe()
