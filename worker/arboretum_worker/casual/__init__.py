"""Casual games: a person plays against 1 to 3 bots in the browser (docs/play.md).

A casual game is one game on a worker's private referee, played by the rq job
:func:`arboretum_worker.casual.job.casual_game` on the ``casual`` queue, the bots in their
sandboxes as in a league match. The person's seat is a seat like any other: the job's relay
(:mod:`.relay`) holds its token and speaks for the person through Redis, so the clocks, the
rules, the fault policy and the hidden information are the referee's own. The web server
starts games, reads their feed and pushes the person's decisions through :mod:`.games`.
"""

from __future__ import annotations

from .feed import read_feed
from .games import check_key, get_game, pending, resign, seat_game, start_game, submit
from .records import (
    CasualError,
    CasualGame,
    CasualSettings,
    Status,
    games_for_version,
    record_for_version,
    replay_url,
)

__all__ = [
    "CasualError",
    "CasualGame",
    "CasualSettings",
    "Status",
    "check_key",
    "games_for_version",
    "get_game",
    "pending",
    "read_feed",
    "record_for_version",
    "replay_url",
    "resign",
    "seat_game",
    "start_game",
    "submit",
]
