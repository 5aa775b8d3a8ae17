"""The worker's private referee: ``arboretum_server`` in-process, bots on a unix socket.

A thin adapter over the server's in-process match API (:mod:`arboretum_server.runner`), so the
rest of the league depends on one function.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arboretum_server.runner import MatchRunner

__all__ = ["start_private_referee"]

log = logging.getLogger(__name__)


async def start_private_referee(socket_path: Path) -> MatchRunner:
    """Start a referee listening only on ``unix:<socket_path>`` (for the bots' streams) and
    return the runner that drives its matches in this process.

    It writes no replay files (``handle.replays()`` reads them from the referee's memory, and
    files in the match directory would be deleted with it unread). Its admin service is there
    but unused: its token is random and known to nobody (a generated one would be written to a
    file)."""
    from arboretum_server import Settings
    from arboretum_server.runner import MatchRunner

    settings = Settings(
        listen=(f"unix:{socket_path}",),
        admin_token=secrets.token_urlsafe(24),
        replay_dir=None,
        max_matches=4,
        keep_finished=16,
    )
    runner = await MatchRunner.start(settings)
    log.debug("private referee listening on unix:%s", socket_path)
    return runner
