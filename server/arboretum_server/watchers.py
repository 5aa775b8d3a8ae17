"""Spectators of a match: a :class:`Watcher` is one subscription, a bounded queue of public
messages (``None`` at its end)."""

from __future__ import annotations

import asyncio

from .messages import (
    WatchMessage,
)

__all__ = ["Watcher"]

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
