"""Output per decision: the marker lines that tie what a bot prints to the decision in flight.

Under the arena (``ARENA_OUTPUT_NONCE`` set by the league's worker), ``arena bot run`` frames
each decision in the bot's output, which the sandbox captures from its stdout and stderr
together: before ``choose`` runs it flushes ``sys.stdout`` and ``sys.stderr`` and writes a
**begin marker** naming the referee's decision number, and once the decision is settled (the
answer sent, a failure logged) it flushes again and writes an **end marker**. A fault notice's
lines are framed the same way, under the decision that faulted. A marker is one line::

    \\x1f<nonce> <decision number>      begin
    \\x1f<nonce>                        end

The nonce is drawn by the worker per seat and match; :func:`take_framing` reads it and removes
it from the environment before the bot's code is loaded, so a line-protocol bot's child never
inherits it (and the bridge's memory is closed to the child: :mod:`arboretum_sdk.stdio.guard`).
The child's stderr is copied by the bridge, which frames it in the same process, so the child
cannot write a marker that counts. A Python bot runs in the process that knows the nonce and
could write markers of its own: at worst it moves its own lines to another of its own
decisions, in its own output, which only its owner sees. The worker keeps a marker only when
its nonce matches and its decision is one of that seat's (see ``docs/bot-runtime.md``).

Without the variable (a bot run by hand, ``arena play``) nothing is written.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterator

__all__ = [
    "MARK",
    "OUTPUT_ENV",
    "DecisionFraming",
    "parse_marker",
    "take_framing",
]

OUTPUT_ENV = "ARENA_OUTPUT_NONCE"
"""The environment variable that carries the marker's nonce (hex, 8 to 64 digits)."""
MARK = "\x1f"
"""The first character of a marker line (ASCII unit separator: never in ordinary text)."""
_NONCE = re.compile(r"[0-9a-f]{8,64}")


class DecisionFraming:
    """Writes the begin and end markers of decisions on file descriptor 2."""

    def __init__(self, nonce: str, fd: int = 2) -> None:
        if not _NONCE.fullmatch(nonce):
            raise ValueError(f"{OUTPUT_ENV} must be 8 to 64 lowercase hex digits")
        self.nonce = nonce
        self.fd = fd

    def _write(self, text: str) -> None:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        data = text.encode()
        with contextlib.suppress(OSError):
            while data:
                data = data[os.write(self.fd, data) :]

    def begin(self, number: int) -> None:
        self._write(f"\n{MARK}{self.nonce} {int(number)}\n")

    def end(self) -> None:
        self._write(f"\n{MARK}{self.nonce}\n")

    @contextlib.contextmanager
    def decision(self, number: int) -> Iterator[None]:
        """Frame what is written inside the block as decision ``number``'s output."""
        self.begin(number)
        try:
            yield
        finally:
            self.end()


_framing: DecisionFraming | None = None


def take_framing() -> DecisionFraming | None:
    """The framing the environment asks for (once: the variable is removed from the
    environment), or ``None``; later calls return the same."""
    global _framing
    value = os.environ.pop(OUTPUT_ENV, None)
    if value is not None and _framing is None:
        with contextlib.suppress(ValueError):
            _framing = DecisionFraming(value.strip())
    return _framing


@contextlib.contextmanager
def framed(number: int) -> Iterator[None]:
    """Decision ``number``'s frame when framing is on; nothing otherwise."""
    if _framing is None:
        yield
        return
    with _framing.decision(number):
        yield


def parse_marker(line: str, nonce: str) -> tuple[bool, int | None] | None:
    """``(True, number)`` for a begin marker with ``nonce``, ``(False, None)`` for an end
    marker, ``None`` for any other line (a marker with another nonce included)."""
    if not line.startswith(MARK) or not nonce:
        return None
    body = line[1:].rstrip("\r\n")
    head, _, rest = body.partition(" ")
    if head != nonce:
        return None
    if not rest:
        return (False, None)
    if rest.isdigit() and len(rest) < 19:
        return (True, int(rest))
    return None
