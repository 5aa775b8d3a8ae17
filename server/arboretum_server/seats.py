"""Seats: their secret tokens, their live stream (at most one), and what a stream sends in;
:class:`Seating`, a match's seats: who has arrived, who crashed, whose bot is restarting.

A :class:`SeatStream` is one open ``Play`` call seen from the match: an outbox of messages (the
service layer writes them to the wire in order) and a cursor into the game's event log, so that
each message carries the public events since the previous one on that stream. A seat's identity
comes only from its token: the stream is bound to its seat when it is attached, and whatever it
sends is taken as that seat's.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from arboretum import Decision, DecisionKind

from .messages import BotMessage

__all__ = [
    "Answer",
    "Failure",
    "InvalidMessage",
    "MalformedAnswer",
    "Outbox",
    "SeatSession",
    "SeatStream",
    "Seating",
    "StreamEnd",
    "new_token",
    "token_key",
]

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 1024
"""A stream whose bot does not read this many messages is dropped (the seat is disconnected)."""


def new_token() -> str:
    """A seat token: 32 URL-safe characters that never start with ``-``, so that it passes as
    ``--token TOKEN`` on a command line (argparse reads ``--token -x...`` as another option)."""
    while True:
        token = secrets.token_urlsafe(24)
        if not token.startswith("-"):
            return token


def token_key(token: str) -> bytes:
    """The key a token is looked up by: its SHA-256, so that lookups leak no timing about it."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


# ----------------------------------------------------------------------------- inbound


class Answer(NamedTuple):
    """A well-formed answer: ``kind`` is the kind of decision the bot answered. (A named tuple, not
    a dataclass: there is one per decision.)"""

    number: int
    kind: DecisionKind
    decision: Decision


@dataclass(frozen=True, slots=True)
class MalformedAnswer:
    """A valid stream message whose decision is not well-formed."""

    number: int
    reason: str


@dataclass(frozen=True, slots=True)
class Failure:
    """The bot says its code failed on decision ``number`` (a ``DecisionFailure``): the error's
    type and message, already on one line and cut (:func:`arboretum_sdk.wire.failure_from_pb`)."""

    number: int
    error_type: str
    message: str

    @property
    def reason(self) -> str:
        """The fault's reason: what the bot's code raised (or returned), in its own words."""
        said = f"{self.error_type}: {self.message}" if self.message else self.error_type
        return f"the bot's code failed: {said}"


@dataclass(frozen=True, slots=True)
class InvalidMessage:
    """A stream message that is not valid at all (undecodable, wrong version, no kind)."""

    reason: str


Inbound = Answer | MalformedAnswer | Failure | InvalidMessage


# ----------------------------------------------------------------------------- streams


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The last item of an outbox: end the call, with OK or with this status and message."""

    status: str = "OK"
    message: str = ""


class Outbox:
    """A stream's messages to write, in order (``bytes`` are serialized ``RefereeMessage`` s),
    then perhaps a :class:`StreamEnd`. The writer waits with :meth:`wait`; whoever writes takes
    the messages with :meth:`take_message` (see ``BotServicer``: two tasks may write, one at a
    time, so items are taken only by the task that writes them)."""

    __slots__ = ("_items", "_waiter", "held")

    def __init__(self) -> None:
        self._items: deque[BotMessage | bytes | StreamEnd] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.held = False
        """While set, :meth:`put` does not wake the writer: the task that set it writes what is
        put, then calls :meth:`release`."""

    def __len__(self) -> int:
        return len(self._items)

    def put(self, item: BotMessage | bytes | StreamEnd) -> None:
        self._items.append(item)
        if not self.held:
            self._wake()

    def release(self) -> None:
        """End :attr:`held`, and wake the writer for what is left."""
        self.held = False
        if self._items:
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take_message(self) -> BotMessage | bytes | None:
        """The first item if it is a message (not the end), else ``None``."""
        items = self._items
        if items and not isinstance(items[0], StreamEnd):
            return items.popleft()  # type: ignore[return-value]
        return None

    def take_end(self) -> StreamEnd | None:
        """The first item if it is the end, else ``None``."""
        items = self._items
        if items and isinstance(items[0], StreamEnd):
            return items.popleft()  # type: ignore[return-value]
        return None

    async def wait(self) -> None:
        """Return once there is an item."""
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class SeatStream:
    """One live ``Play`` stream of a seat."""

    __slots__ = ("closed", "closing", "cursor", "cursor_game", "outbox", "seat")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.outbox = Outbox()
        self.cursor_game = -1
        self.cursor = 0
        self.closed = False
        self.closing: StreamEnd | None = None
        """Set when the stream must end once the fault it caused has been told (see Match)."""

    def send(self, message: BotMessage | bytes) -> None:
        if self.closed:
            return
        if len(self.outbox) >= OUTBOX_LIMIT:
            log.warning("seat %d: the bot does not read its stream; dropping it", self.seat)
            self.end("RESOURCE_EXHAUSTED", "the bot does not read its stream")
            return
        self.outbox.put(message)

    def end(self, status: str = "OK", message: str = "") -> None:
        if not self.closed:
            self.closed = True
            self.outbox.put(StreamEnd(status, message))


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


class Seating:
    """The seats of one match (``sessions``, by seat): their streams attached and detached,
    their arrival before the first game, and crashes reported by the runner that launched a
    bot's process."""

    __slots__ = ("_restarting", "arrived", "sessions")

    def __init__(self, names: tuple[str, ...], tokens: list[str]) -> None:
        self.sessions = [SeatSession(i, names[i], tokens[i]) for i in range(len(names))]
        self.arrived = asyncio.Event()
        """Set once every seat has connected or has been reported crashed."""
        self._restarting: set[int] = set()
        """Crashed seats whose runner is starting a fresh process: crashed until the next game."""

    def attach(self, seat: int) -> tuple[SeatStream, bool]:
        """A new stream for ``seat`` (which has none) and whether the seat had one before."""
        session = self.sessions[seat]
        stream = SeatStream(seat)
        resumed = session.ever_connected
        session.stream = stream
        session.ever_connected = True
        session.crashed = None
        self._check_arrived()
        return stream, resumed

    def detach(self, seat: int, stream: SeatStream, reason: str) -> bool:
        """``stream`` ended; whether it was the seat's live stream (then the seat has none)."""
        stream.closed = True
        session = self.sessions[seat]
        if session.stream is not stream:
            return False
        session.stream = None
        session.last_disconnect = reason
        return True

    def crash(self, seat: int, reason: str) -> str:
        """The seat's bot process exited: the reason its decisions now fault with."""
        session = self.sessions[seat]
        session.crashed = reason or "the bot process exited"
        self._check_arrived()
        return session.crashed

    def restart(self, seat: int) -> bool:
        """The runner is starting a fresh process for ``seat``: whether the seat had crashed (it
        then stays crashed until :meth:`next_game`)."""
        if self.sessions[seat].crashed is None:
            return False
        self._restarting.add(seat)
        return True

    def next_game(self) -> None:
        """A game starts: a seat whose process was restarted is no longer crashed."""
        for seat in self._restarting:
            self.sessions[seat].crashed = None
        self._restarting.clear()

    async def wait(self, timeout_s: float) -> list[int]:
        """Wait until every seat has arrived, at most ``timeout_s``; the seats still absent."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                await self.arrived.wait()
        return [s.seat for s in self.sessions if not s.connected]

    def _check_arrived(self) -> None:
        if all(s.ever_connected or s.crashed is not None for s in self.sessions):
            self.arrived.set()
