"""Arboretum Arena referee: the gRPC server that runs matches between bots.

Public API (see ``docs/referee.md``)::

    referee = await start_referee(Settings(listen=("127.0.0.1:0",)))   # in a running loop
    referee.address, referee.admin_token                               # where and how to reach it
    referee.report_crash(match_id, seat, reason)                       # a runner's bot process died
    await referee.shutdown()      # drain: NOT_SERVING, games finish, stop
    await referee.stop(grace)     # stop now

    with RefereeThread(settings) as referee: ...                       # from synchronous code
    serve(settings) -> int                                             # `arena serve`

    runner = await MatchRunner.start(settings)                         # drive matches in-process
    handle = await runner.create(config); await handle.wait(); handle.outcome()

Modules: ``config`` (settings), ``clock``, ``seats`` (tokens, streams), ``match`` (the match loop),
``registry``, ``messages`` (what is sent, as plain values), ``edge`` (protobuf assembly),
``service`` (thin servicers and the interceptor), ``replays``, ``server``, ``runner`` (the
in-process match API), ``remote`` (the same API over gRPC), ``errors``, ``cli``.
"""

from .config import Settings, settings_from
from .errors import (
    AlreadyConnected,
    BindError,
    InvalidArgument,
    MatchOver,
    NotFound,
    PermissionDenied,
    RefereeError,
    RequestError,
    SettingsError,
    Unauthenticated,
    Unavailable,
)
from .match import Match
from .matchconfig import MatchConfig
from .registry import Registry
from .runner import MatchHandle, MatchOutcome, MatchRunner
from .server import Referee, RefereeThread, serve, start_referee

__all__ = [
    "AlreadyConnected",
    "BindError",
    "InvalidArgument",
    "Match",
    "MatchConfig",
    "MatchHandle",
    "MatchOutcome",
    "MatchOver",
    "MatchRunner",
    "NotFound",
    "PermissionDenied",
    "Referee",
    "RefereeError",
    "RefereeThread",
    "Registry",
    "RequestError",
    "Settings",
    "SettingsError",
    "Unauthenticated",
    "Unavailable",
    "serve",
    "settings_from",
    "start_referee",
]
