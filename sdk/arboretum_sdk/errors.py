"""The SDK's exceptions, one tree::

    SdkError
     ├── WireError            (also ValueError; in arboretum_sdk.wire) a malformed protobuf message
     ├── BotLoadError         a bot that does not load: file missing, import error, no Bot class
     └── ClientError          the client could not play the match
          ├── ConnectError       the referee is unreachable
          ├── TokenRejected      the referee refused the token (UNAUTHENTICATED)
          ├── MatchUnavailable   the match is over, or the seat already has a live stream
          ├── StreamError        the stream broke for good, or the referee sent a bad message
          └── BotCrashed         the bot raised and the client was told to stop (exit_on_error),
                                 or a bot's child process (the line protocol) exited
    Unanswered               raised by ``choose`` to leave a decision unanswered on purpose
     └── RefusedAnswer         ... and have the referee record a malformed fault with a reason

Engine errors (:class:`arboretum.ArboretumError`) are a separate tree.
"""

from __future__ import annotations

__all__ = [
    "BotCrashed",
    "BotLoadError",
    "ClientError",
    "ConnectError",
    "MatchUnavailable",
    "RefusedAnswer",
    "SdkError",
    "StreamError",
    "TokenRejected",
    "Unanswered",
]


class SdkError(Exception):
    """Base class of every error the SDK raises."""


class BotLoadError(SdkError):
    """A bot spec that cannot be loaded; the message says why and what to do."""


class ClientError(SdkError):
    """The client could not play the match. The message is short and meant for the user."""


class ConnectError(ClientError):
    """The referee could not be reached."""


class TokenRejected(ClientError):
    """The referee refused the seat token."""


class MatchUnavailable(ClientError):
    """The match is over, or the seat already has a live stream."""


class StreamError(ClientError):
    """The stream failed (and reconnecting did not help), or the referee broke the protocol."""


class BotCrashed(ClientError):
    """The bot raised in ``choose`` and the client was told to stop (``exit_on_error``), or the
    bot's child process exited or closed its stdout (``arena bot run --cmd``)."""


class Unanswered(SdkError):
    """Raised by ``choose`` to send no answer for this decision, on purpose: the client logs the
    message (no traceback) and the referee times the decision out. The line-protocol bridge
    raises it when its child does not answer in time."""


class RefusedAnswer(Unanswered):
    """Raised by ``choose`` when the bot's answer cannot be made a decision: the client sends
    the message as ``DecisionAnswer.malformed_reason``, and the referee records a ``malformed``
    fault with it at once. The line-protocol bridge raises it for a bad line."""
