"""Seats: their secret tokens, their live stream (at most one), and what a stream sends in.

A :class:`SeatStream` is one open ``Play`` call seen from the match: an outbox of messages (the
service layer writes them to the wire in order) and a cursor into the game's event log, so that
each message carries the public events since the previous one on that stream. A seat's identity
comes only from its token: the stream is bound to its seat when it is attached, and whatever it
sends is taken as that seat's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from dataclasses import dataclass

from arboretum import Decision, DecisionKind

from .messages import BotMessage

__all__ = [
    "Answer",
    "InvalidMessage",
    "MalformedAnswer",
    "SeatSession",
    "SeatStream",
    "StreamEnd",
    "new_token",
    "token_key",
]

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 1024
"""A stream whose bot does not read this many messages is dropped (the seat is disconnected)."""


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_key(token: str) -> bytes:
    """The key a token is looked up by: its SHA-256, so that lookups leak no timing about it."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


# ----------------------------------------------------------------------------- inbound


@dataclass(frozen=True, slots=True)
class Answer:
    """A well-formed answer: ``kind`` is the kind of decision the bot answered."""

    number: int
    kind: DecisionKind
    decision: Decision


@dataclass(frozen=True, slots=True)
class MalformedAnswer:
    """A valid stream message whose decision is not well-formed."""

    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class InvalidMessage:
    """A stream message that is not valid at all (undecodable, wrong version, no kind)."""

    reason: str


Inbound = Answer | MalformedAnswer | InvalidMessage


# ----------------------------------------------------------------------------- streams


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The last item of an outbox: end the call, with OK or with this status and message."""

    status: str = "OK"
    message: str = ""


class SeatStream:
    """One live ``Play`` stream of a seat."""

    __slots__ = ("closed", "closing", "cursor", "cursor_game", "outbox", "seat")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.outbox: asyncio.Queue[BotMessage | bytes | StreamEnd] = asyncio.Queue()
        """Messages to write, in order; ``bytes`` are serialized ``RefereeMessage`` s."""
        self.cursor_game = -1
        self.cursor = 0
        self.closed = False
        self.closing: StreamEnd | None = None
        """Set when the stream must end once the fault it caused has been told (see Match)."""

    def send(self, message: BotMessage | bytes) -> None:
        if self.closed:
            return
        if self.outbox.qsize() >= OUTBOX_LIMIT:
            log.warning("seat %d: the bot does not read its stream; dropping it", self.seat)
            self.end("RESOURCE_EXHAUSTED", "the bot does not read its stream")
            return
        self.outbox.put_nowait(message)

    def end(self, status: str = "OK", message: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.outbox.put_nowait(StreamEnd(status, message))


class SeatSession:
    """A seat of a match: its name, its token's key and its live stream, if any."""

    __slots__ = ("crashed", "ever_connected", "last_disconnect", "name", "seat", "stream", "token")

    def __init__(self, seat: int, name: str, token: str) -> None:
        self.seat = seat
        self.name = name
        self.token = token
        self.stream: SeatStream | None = None
        self.ever_connected = False
        self.last_disconnect = "never connected"
        self.crashed: str | None = None

    @property
    def connected(self) -> bool:
        return self.stream is not None
