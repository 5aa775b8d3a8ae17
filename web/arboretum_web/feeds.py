"""What the web's server-sent feeds share: one Redis stream followed in this process by a reader
thread of its own, its frames shared by every viewer on the event loop.

A :class:`Feed` is one followed stream: a thread (never one of the request thread pool's, so
open feeds cannot starve the pages) reads it with a blocking read and hands what it read to the
event loop (``loop.call_soon_threadsafe``), where it is formatted once; each viewer's stream waits
on :meth:`Feed.changed`. A feed nobody follows stops ``IDLE_S`` after its last viewer left. A
:class:`FeedHub` keeps one feed per id for an app. The live games of a league
(:mod:`.live`) and a casual game's seat (:mod:`.playfeed`) are the two kinds: each says what its
thread reads and how a viewer's stream is framed. The thread's handling of errors is the feed's:
a Redis error is logged and the read tried again ``RETRY_S`` later, and an error of the app
stopping ends the thread quietly.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Generic, TypeVar

import redis

__all__ = ["BLOCK_MS", "HEARTBEAT_S", "IDLE_S", "RETRY_S", "Feed", "FeedHub"]

HEARTBEAT_S = 15.0
"""A comment line this often keeps proxies from closing a quiet stream."""
IDLE_S = 5.0
"""A feed nobody follows stops after this long."""
BLOCK_MS = 1000
"""How long one blocking read of a feed's thread waits (so it sees a stop within a second)."""
RETRY_S = 1.0
"""How long a feed's thread waits after a Redis error before it reads again."""


class Feed:
    """One followed stream (see the module's docstring). A subclass sets its own state (its
    thread's too), then calls ``super().__init__``, which starts the thread; the thread calls
    :meth:`_read` until it says the feed has nothing more or the feed stops."""

    _reads = "the stream"
    """What the thread reads, as its log names it."""
    block_ms = BLOCK_MS
    """How long one blocking read waits: the longest the thread takes to see a stop."""

    def __init__(self, hub: FeedHub[Any], feed_id: str, thread_name: str) -> None:
        self.hub = hub
        self.feed_id = feed_id
        self.viewers = 0
        self._wake = asyncio.Event()
        self._stop = threading.Event()
        self._idle: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._follow, name=thread_name, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ on the event loop

    async def changed(self, timeout: float) -> bool:
        """Wait until something changes (True) or ``timeout`` passes (False)."""
        wake = self._wake
        try:
            await asyncio.wait_for(wake.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _notify(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()

    def subscribe(self) -> None:
        self.viewers += 1
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    def unsubscribe(self) -> None:
        self.viewers -= 1
        if self.viewers == 0:
            self._idle = self._loop.call_later(IDLE_S, self._close_if_idle)

    def _close_if_idle(self) -> None:
        self._idle = None
        if self.viewers == 0:
            self.close()

    def close(self) -> None:
        self._stop.set()
        self.hub.forget(self)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    # ------------------------------------------------------------------ the reader thread

    def _follow(self) -> None:
        while not self._stop.is_set():
            try:
                if self._read():
                    return
            except Exception as exc:
                if self._stop.is_set() or isinstance(exc, RuntimeError):
                    return  # the app is stopping (its loop or its client closed)
                if not isinstance(exc, redis.RedisError):
                    raise
                log = logging.getLogger(type(self).__module__)
                log.warning("%s: reading %s: %s", self._thread.name, self._reads, exc)
                self._stop.wait(RETRY_S)

    def _read(self) -> bool:
        """One blocking read (of at most ``block_ms``) and what follows from it: True when the
        feed has nothing more (its thread ends)."""
        raise NotImplementedError


F = TypeVar("F", bound=Feed)


class FeedHub(Generic[F]):
    """One app's feeds of a kind, one per id (on its event loop); a subclass makes a new one
    (:meth:`_new`)."""

    def __init__(self, r: redis.Redis, max_viewers: int = 2000) -> None:
        self.redis = r
        self.max_viewers = max_viewers
        self.feeds: dict[str, F] = {}

    def _new(self, feed_id: str) -> F:
        raise NotImplementedError

    @property
    def viewers(self) -> int:
        return sum(feed.viewers for feed in self.feeds.values())

    def feed(self, feed_id: str) -> F:
        feed = self.feeds.get(feed_id)
        if feed is None:
            feed = self.feeds[feed_id] = self._new(feed_id)
        return feed

    def forget(self, feed: Feed) -> None:
        if self.feeds.get(feed.feed_id) is feed:
            del self.feeds[feed.feed_id]

    def close(self) -> None:
        feeds = list(self.feeds.values())
        for feed in feeds:
            feed.close()
        for feed in feeds:
            feed.join(2 * BLOCK_MS / 1000)
