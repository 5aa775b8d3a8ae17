"""The referee's exceptions: one tree, each error mapped to one gRPC status by the service layer.

::

    RefereeError
     ├── SettingsError          (also ValueError) invalid settings at start-up (no status: exit 2)
     ├── BindError              a listen address that cannot be bound (no status: exit 1)
     └── RequestError           an error answered to a client, with its gRPC status name
          ├── InvalidArgument   (also ValueError) INVALID_ARGUMENT: malformed message, bad config
          ├── Unauthenticated   UNAUTHENTICATED: Play without one token, or an unknown token
          ├── PermissionDenied  PERMISSION_DENIED: an admin call without the admin token
          ├── NotFound          NOT_FOUND: unknown match, or a game not started
          ├── AlreadyConnected  ALREADY_EXISTS: a second live stream for a seat
          ├── MatchExists       ALREADY_EXISTS: CreateMatch with a match id in use
          ├── MatchOver         FAILED_PRECONDITION: the match is over
          ├── Unavailable       UNAVAILABLE: the referee is draining or full
          └── Exhausted         RESOURCE_EXHAUSTED: a spectator too slow to follow its stream

Faults of a bot (timeout, malformed or illegal decision, ...) are not exceptions here: they are
recorded against the decision and told to the bot (see :mod:`arboretum_server.match`).
"""

from __future__ import annotations

import errno
import socket

__all__ = [
    "AlreadyConnected",
    "BindError",
    "Exhausted",
    "InvalidArgument",
    "MatchExists",
    "MatchOver",
    "NotFound",
    "PermissionDenied",
    "RefereeError",
    "RequestError",
    "SettingsError",
    "Unauthenticated",
    "Unavailable",
]


class RefereeError(Exception):
    """Base class of every error the referee raises."""


class SettingsError(RefereeError, ValueError):
    """A setting (environment variable or flag) that is missing or out of bounds."""


class BindError(RefereeError):
    """A listen address that cannot be bound (port in use, bad path, ...)."""

    @classmethod
    def of(cls, address: str, exc: OSError) -> BindError:
        """The error of binding ``address``, in words: ``cannot listen on 127.0.0.1:8080: the
        address is in use``."""
        if isinstance(exc, socket.gaierror):
            reason = f"the host is not known ({exc.strerror})"
        else:
            reason = _BIND_REASONS.get(exc.errno or 0) or exc.strerror or str(exc)
        return cls(f"cannot listen on {address}: {reason}")


_BIND_REASONS = {
    errno.EADDRINUSE: "the address is in use",
    errno.EACCES: "permission denied (a port below 1024 needs privileges)",
    errno.EADDRNOTAVAIL: "the address is not one of this machine",
}


class RequestError(RefereeError):
    """An error answered to a client. ``status`` is the name of a ``grpc.StatusCode``."""

    status = "INTERNAL"


class InvalidArgument(RequestError, ValueError):
    status = "INVALID_ARGUMENT"


class Unauthenticated(RequestError):
    status = "UNAUTHENTICATED"


class PermissionDenied(RequestError):
    status = "PERMISSION_DENIED"


class NotFound(RequestError):
    status = "NOT_FOUND"


class AlreadyConnected(RequestError):
    status = "ALREADY_EXISTS"


class MatchExists(RequestError):
    status = "ALREADY_EXISTS"


class MatchOver(RequestError):
    status = "FAILED_PRECONDITION"


class Unavailable(RequestError):
    status = "UNAVAILABLE"


class Exhausted(RequestError):
    status = "RESOURCE_EXHAUSTED"
