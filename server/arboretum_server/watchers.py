"""Spectators of a match: a :class:`Watcher` is one subscription, a bounded queue of public
messages (``None`` at its end); :class:`Spectators`, a match's watchers, to which it publishes."""

from __future__ import annotations

import asyncio

from .messages import (
    WatchMessage,
)

__all__ = ["Spectators", "Watcher"]

WATCHER_QUEUE_LIMIT = 4096


class Watcher:
    """A spectator's subscription: a queue of public messages, ``None`` at the end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[WatchMessage | None] = asyncio.Queue()
        self.overflowed = False
        self.closed = False

    def put(self, message: WatchMessage | None) -> None:
        if self.closed:
            return
        if message is not None and self.queue.qsize() >= WATCHER_QUEUE_LIMIT:
            self.overflowed = True
            message = None
        if message is None:
            self.closed = True
        self.queue.put_nowait(message)


class Spectators:
    """The watchers of one match. ``watchers`` is tested before building a message to publish
    (most matches have none): it is always the same set."""

    __slots__ = ("watchers",)

    def __init__(self) -> None:
        self.watchers: set[Watcher] = set()

    def add(self, watcher: Watcher) -> None:
        self.watchers.add(watcher)

    def remove(self, watcher: Watcher) -> None:
        """The spectator left: nothing more is put on its queue."""
        self.watchers.discard(watcher)
        watcher.closed = True

    def publish(self, message: WatchMessage) -> None:
        """Put ``message`` on every queue; a watcher that overflowed (and closed) is dropped."""
        watchers = self.watchers
        for watcher in list(watchers):
            watcher.put(message)
            if watcher.closed:
                watchers.discard(watcher)

    def close(self) -> None:
        """The match is over: end every queue."""
        for watcher in list(self.watchers):
            watcher.put(None)
        self.watchers.clear()
