"""The Arboretum Arena SDK: what a bot author installs.

Write a bot by subclassing :class:`Bot` (see :mod:`arboretum_sdk.bot`); the rules engine is the
package :mod:`arboretum`. Run it against a referee with ``arena bot run my_bot.py --server ADDR
--token-file T`` or :func:`run_bot`; try it in-process with :func:`arboretum_sdk.local.play_game`.

Importing this package is cheap: gRPC and protobuf are loaded only when a bot connects.
"""

from .bot import Bot
from .client import run_bot
from .errors import (
    BotCrashed,
    BotLoadError,
    ClientError,
    ConnectError,
    MatchUnavailable,
    SdkError,
    StreamError,
    TokenRejected,
)
from .info import (
    Clock,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    SeatSummary,
    TimeControl,
)
from .loader import builtin_bots, load_bot

__all__ = [
    "Bot",
    "BotCrashed",
    "BotLoadError",
    "ClientError",
    "Clock",
    "ConnectError",
    "FaultKind",
    "FaultNotice",
    "FaultPolicy",
    "GameEnd",
    "GameInfo",
    "MatchEnd",
    "MatchInfo",
    "MatchStatus",
    "MatchUnavailable",
    "SdkError",
    "SeatSummary",
    "StreamError",
    "TimeControl",
    "TokenRejected",
    "builtin_bots",
    "load_bot",
    "run_bot",
]
