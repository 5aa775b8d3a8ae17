"""The event loop that the referee and the bot client run on: uvloop when it is installed.

Both sides of a match spend much of each decision in the event loop itself (a stream message is a
few loop iterations on each side), and uvloop runs those iterations several times cheaper than the
standard loop. It is an optional speed-up with the same behaviour: uvloop is a dependency of the
SDK where it exists (not on Windows), and everything falls back to asyncio's own loop when it is
not importable.

``ARENA_EVENT_LOOP`` chooses: ``auto`` (the default: uvloop if importable), ``uvloop`` (the same,
but a missing uvloop is an error) or ``asyncio`` (the standard loop).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["EVENT_LOOP_ENV", "loop_factory", "new_event_loop", "run"]

EVENT_LOOP_ENV = "ARENA_EVENT_LOOP"
_CHOICES = ("auto", "uvloop", "asyncio")

_T = TypeVar("_T")

log = logging.getLogger(__name__)


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """What makes a new event loop, as ``ARENA_EVENT_LOOP`` says (see the module docstring);
    ``None`` for asyncio's own (then :func:`run` is exactly :func:`asyncio.run`)."""
    choice = os.environ.get(EVENT_LOOP_ENV, "").strip().lower() or "auto"
    if choice not in _CHOICES:
        log.warning(
            "%s=%r is not one of %s; using auto", EVENT_LOOP_ENV, choice, ", ".join(_CHOICES)
        )
        choice = "auto"
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise RuntimeError(f"{EVENT_LOOP_ENV}=uvloop but uvloop is not installed") from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop of the chosen kind (not set as the thread's current loop)."""
    factory = loop_factory()
    return asyncio.new_event_loop() if factory is None else factory()


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    """:func:`asyncio.run` on a loop of the chosen kind."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(coro)
