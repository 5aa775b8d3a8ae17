"""The decision timer of a match: one timer, armed for the earliest deadline it may have to
enforce, that times the pending decision out.

A decision asked while the timer is armed for an earlier instant leaves it alone: when it fires,
it times the pending decision out or arms itself again for that decision's deadline. (Most
decisions are answered long before their deadline: none of them costs a timer.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .game import Pending, TimedOut

__all__ = ["DecisionTimer"]


class DecisionTimer:
    """Times out the decision that ``pending()`` returns (None: no decision is pending) once its
    deadline has passed. It runs on the loop given to :meth:`start`."""

    __slots__ = ("_at", "_handle", "_loop", "_pending")

    def __init__(self, pending: Callable[[], Pending | None]) -> None:
        self._pending = pending
        self._handle: asyncio.TimerHandle | None = None
        self._at = 0.0
        self._loop: asyncio.AbstractEventLoop

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def cover(self, deadline: float) -> None:
        """Make sure the timer fires by ``deadline`` (a decision was asked)."""
        if self._handle is None or self._at > deadline:
            self._arm(deadline)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _arm(self, at: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = at
        self._handle = self._loop.call_at(at, self._fire)

    def _fire(self) -> None:
        self._handle = None
        pending = self._pending()
        if pending is None or pending.future.done():
            return
        if self._loop.time() >= pending.deadline:
            pending.future.set_result(TimedOut())
        else:
            self._arm(pending.deadline)
