"""A seat held in this process: one seat's stream of a match, without gRPC, for another thread.

:meth:`MatchHandle.attach <arboretum_server.runner.MatchHandle.attach>` gives an
:class:`InProcessSeat`: what ``BotService.Play`` does for a bot's stream
(:class:`~arboretum_server.service.BotServicer`), for a player that runs in a thread of the
referee's own process (a casual game's person, whose relay runs in the match job). The boundary is
still the wire's bytes: the seat receives each message as a serialized ``RefereeMessage``
(:func:`~arboretum_server.edge.referee_bytes`, the bytes ``Play`` writes) and answers with a
serialized ``BotMessage``, read by :func:`~arboretum_server.edge.inbound_from_bytes` as ``Play``
reads it, so a malformed answer is the same fault and the referee treats the seat as untrusted
input like any other. No socket, no codec of a transport and no event loop of its own: the
messages cross to the player's thread through a queue, the answers to the referee's loop with
``call_soon_threadsafe``.

The seat is attached on the referee's event loop; :meth:`InProcessSeat.receive`,
:meth:`~InProcessSeat.send`, :meth:`~InProcessSeat.cancel` and :meth:`~InProcessSeat.detach` are
called from any thread. It satisfies the SDK's :class:`~arboretum_sdk.channel.SeatChannel`, so
:func:`arboretum_sdk.channel.play_over` plays a bot on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from . import edge
from .seats import SeatStream, StreamEnd

if TYPE_CHECKING:
    from .match import Match

__all__ = ["InProcessSeat"]

log = logging.getLogger(__name__)

_T = TypeVar("_T")
_CANCELLED = "the seat's player cancelled its stream"
_DETACHED = "the seat's player detached its stream"


class InProcessSeat:
    """One live stream of a seat, read and answered from another thread (see the module)."""

    def __init__(self, match: Match, seat: int) -> None:
        """Attach a stream to ``seat`` (on the referee's loop; raises as ``Play`` does:
        ``MatchOver``, ``AlreadyConnected``)."""
        self._loop = asyncio.get_running_loop()
        self._match = match
        self.seat = seat
        self._messages: queue.SimpleQueue[bytes | StreamEnd] = queue.SimpleQueue()
        self._ended: StreamEnd | None = None
        """The player's side: how the stream ended, once :meth:`receive` returned None."""
        self._stream: SeatStream = match.connect(seat)
        self._reading = True
        """The referee's side: answers are taken (until the stream ends or an answer closed it)."""
        self._detached = False
        self._forwarder = self._loop.create_task(
            self._forward(), name=f"seat-{match.match_id}-{seat}"
        )

    # ------------------------------------------------------------------ the player's thread

    def receive(self, timeout: float | None = None) -> bytes | None:
        """The referee's next message (a serialized ``RefereeMessage``), waiting for it; None once
        the stream has ended (:attr:`end` says how). Raises :class:`queue.Empty` after
        ``timeout`` seconds without one."""
        if self._ended is not None:
            return None
        item = self._messages.get(timeout=timeout)
        if type(item) is bytes:
            return item
        assert isinstance(item, StreamEnd)
        self._ended = item
        return None

    @property
    def end(self) -> StreamEnd | None:
        """How the stream ended (None while :meth:`receive` has not returned None)."""
        return self._ended

    @property
    def end_reason(self) -> str:
        """Why the stream ended: empty when the referee ended it as it ends a match's streams,
        else the status and its message."""
        end = self._ended
        if end is None or end.status == "OK":
            return ""
        return f"{end.status}: {end.message}" if end.message else end.status

    def send(self, data: bytes) -> None:
        """Answer with a serialized ``BotMessage`` (dropped once the stream has ended)."""
        self._call(self._answer, data)

    def cancel(self) -> None:
        """End the stream from the player's side, as a bot's cancelled call does: the seat is
        disconnected (its decisions wait for its clock), and :meth:`receive` returns None."""
        self._messages.put(StreamEnd("CANCELLED", _CANCELLED))
        self._call(self._detach, _CANCELLED)

    def detach(self) -> None:
        """Let go of the seat (after the match's end, or to leave it): the seat is disconnected if
        it was not already, and :meth:`receive` returns None."""
        self._messages.put(StreamEnd("CANCELLED", _DETACHED))
        self._call(self._detach, _DETACHED)

    def _call(self, callback: Callable[[_T], None], arg: _T) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the match is gone
            self._loop.call_soon_threadsafe(callback, arg)

    # ------------------------------------------------------------------ the referee's loop

    async def _forward(self) -> None:
        """Hand the outbox's messages to the player's thread as the match puts them."""
        outbox = self._stream.outbox
        while not self._detached:
            await outbox.wait()
            self._flush()

    def _flush(self) -> None:
        """Everything in the outbox, as bytes, to the player's queue; at its end, detach."""
        outbox = self._stream.outbox
        put = self._messages.put
        while (item := outbox.take_message()) is not None:
            put(edge.referee_bytes(item))
        end = outbox.take_end()
        if end is not None:
            put(end)
            self._reading = False
            if end.status == "OK":
                self._detach("the match ended")
            else:
                self._detach(f"the referee ended the stream: {end.message}")

    def _answer(self, data: bytes) -> None:
        """One answer into the match; what it makes the match send this seat goes out at once
        (the outbox held meanwhile, as ``Play`` does, so the forwarder is not woken for it)."""
        stream = self._stream
        if not self._reading or stream.closed:
            return
        outbox = stream.outbox
        outbox.held = True
        try:
            self._match.receive(self.seat, stream, edge.inbound_from_bytes(data))
            if stream.closing is not None:  # the answer faulted the stream: read no more
                self._reading = False
            self._flush()
        except Exception:
            log.exception("match %s seat %d: an answer failed", self._match.match_id, self.seat)
            self._reading = False
        finally:
            outbox.release()

    def _detach(self, reason: str) -> None:
        if self._detached:
            return
        self._detached = True
        self._reading = False
        if self._forwarder is not asyncio.current_task():
            self._forwarder.cancel()
        self._match.disconnect(self.seat, self._stream, reason)
