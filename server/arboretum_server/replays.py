"""Replay files: ``<replay dir>/<match_id>/game-<index>.json``, one per finished game.

The document is the engine's (:class:`arboretum.ReplayRecorder`) with the referee's additions:
``time_control``, ``fault_policy`` and, once the match is finished, ``match_seed`` (the files are
rewritten then). A game stopped before its end (cancel, drain, time cap) is written as
``game-<index>.partial.json``: the header and the steps so far, ``"complete": false`` and the
``"stopped"`` reason, and no result. Writes are atomic (a temporary file renamed into place).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

from arboretum import ReplayRecorder

__all__ = ["ReplayStore", "partial_document"]

log = logging.getLogger(__name__)


def partial_document(recorder: ReplayRecorder, reason: str = "") -> dict[str, Any]:
    """The replay of a game not over yet: the header and the steps so far, no result."""
    return recorder.partial_json(reason)


class ReplayStore:
    """Writes replay documents under a directory (or nowhere, when it is ``None``)."""

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def path(self, match_id: str, game_index: int, partial: bool = False) -> Path | None:
        if self.directory is None:
            return None
        suffix = ".partial.json" if partial else ".json"
        return self.directory / match_id / f"game-{game_index}{suffix}"

    async def write(
        self, match_id: str, game_index: int, doc: dict[str, Any], partial: bool = False
    ) -> None:
        path = self.path(match_id, game_index, partial)
        if path is None:
            return
        text = json.dumps(doc, indent=1) + "\n"
        try:
            await asyncio.to_thread(_write_atomic, path, text)
        except OSError as exc:
            log.error("match %s: cannot write the replay of game %d: %s", match_id, game_index, exc)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
