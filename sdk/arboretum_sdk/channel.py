"""A bot played over a channel of the wire's bytes, without gRPC: :func:`play_over`.

A referee may hold a seat in its own process for a player in another thread (the referee's
``MatchHandle.attach``: a casual game's person, whose relay runs beside the referee). The seat
is then a :class:`SeatChannel`: the referee's messages as serialized ``RefereeMessage`` s, the
answers as serialized ``BotMessage`` s, exactly the bytes of ``BotService.Play``. :func:`play_over`
drives a :class:`~arboretum_sdk.Bot` on it with the gRPC client's own message handling
(:mod:`arboretum_sdk.client`: the hooks, the checks of the bot's answers, a ``DecisionFailure``
for a bot that raises, ``Unanswered``, ``RefusedAnswer``, ``BotCrashed``), so that a bot sees the
same messages and sends the same answers either way. There is no reconnection: the stream of a
seat in the referee's process does not break; it ends with the match, or when the referee ends
it (a :class:`~arboretum_sdk.errors.StreamError` naming why).
"""

from __future__ import annotations

from typing import Any, Protocol

from .bot import Bot
from .client import Session, handle_message
from .errors import StreamError
from .info import MatchEnd

__all__ = ["SeatChannel", "play_over"]


class SeatChannel(Protocol):
    """One seat's stream as bytes (the referee's ``InProcessSeat`` is one)."""

    def receive(self) -> bytes | None:
        """The referee's next message, a serialized ``RefereeMessage``, waiting for it; None once
        the stream has ended."""

    def send(self, data: bytes) -> None:
        """Send an answer, a serialized ``BotMessage``."""

    def cancel(self) -> None:
        """End the stream from the bot's side (the seat is disconnected)."""

    @property
    def end_reason(self) -> str:
        """Once :meth:`receive` returned None: why the stream ended, empty when the referee ended
        it normally."""


def play_over(bot: Bot, channel: SeatChannel, *, exit_on_error: bool = False) -> MatchEnd:
    """Play one match for the seat of ``channel`` in this thread; returns how the match ended.

    Raises :class:`StreamError` (the stream ended before the match did, or the referee broke the
    protocol) and :class:`~arboretum_sdk.errors.BotCrashed` (``exit_on_error``, as
    :func:`~arboretum_sdk.client.run_bot`). The channel is left as it is: its owner detaches it."""
    from arboretum_proto.v1 import bot_pb2

    session = Session(bot)
    outbox: list[Any] = []
    writing = True
    while (data := channel.receive()) is not None:
        try:
            message = bot_pb2.RefereeMessage.FromString(data)
        except Exception as exc:  # the protobuf runtime raises DecodeError and others
            channel.cancel()
            raise StreamError(
                f"the referee sent a malformed message: it does not decode ({type(exc).__name__})"
            ) from None
        handle_message(message, session, outbox, channel, exit_on_error)
        if outbox:
            if writing:
                for answer in outbox:
                    channel.send(answer.SerializeToString())
            outbox.clear()
        if session.ended is not None:
            writing = False  # as the gRPC client half-closes: nothing more is sent
    if session.ended is not None:
        return session.ended
    why = channel.end_reason
    raise StreamError(
        "the referee closed the stream before the match ended" + (f" ({why})" if why else "")
    )
