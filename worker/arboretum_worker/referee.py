"""The worker's private referee: ``arboretum_server`` in-process, on a unix socket.

A thin adapter over the server's in-process API, so the rest of the league depends on one function.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Protocol

__all__ = ["PrivateReferee", "start_private_referee"]

log = logging.getLogger(__name__)


class PrivateReferee(Protocol):
    async def stop(self, grace: float | None) -> Any: ...

    def report_crash(self, match_id: str, seat: int, reason: str = "") -> None: ...

    def report_restart(self, match_id: str, seat: int) -> None: ...

    async def wait_match(self, match_id: str, timeout: float) -> bool: ...

    def watch(self, match_id: str) -> Any: ...

    def unwatch(self, match_id: str, watcher: Any) -> None: ...


async def start_private_referee(socket_path: Path, admin_token: str) -> PrivateReferee:
    """Start a referee listening only on ``unix:<socket_path>``, with this admin token.

    It writes no replay files: whoever needs a game's replay fetches it over gRPC (``GetReplay``)
    from the referee's memory (a match job does, and stores it in Redis), and files in the match
    directory would be deleted with it unread."""
    from arboretum_server import Settings, start_referee

    settings = Settings(
        listen=(f"unix:{socket_path}",),
        admin_token=admin_token,
        replay_dir=None,
        max_matches=4,
        keep_finished=16,
    )
    referee: PrivateReferee = await start_referee(settings)
    log.debug("private referee listening on unix:%s", socket_path)
    return referee
