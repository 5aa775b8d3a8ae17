"""What a match has played so far (:class:`MatchRecord`): the outcomes of its finished games,
their replays (complete, or partial for a game that was stopped), and the per-seat totals; and
the replay files it writes (:class:`ReplayStore`).

Replay files: ``<replay dir>/<match_id>/game-<index>.json``, one per finished game. The document
is the engine's (:class:`arboretum.ReplayRecorder`) with the referee's additions:
``time_control``, ``fault_policy`` and, once the match is finished, ``match_seed`` (the files are
rewritten then). A game stopped before its end (cancel, drain, time cap) is written as
``game-<index>.partial.json``: the header and the steps so far, ``"complete": false`` and the
``"stopped"`` reason, and no result (``ReplayRecorder.partial_json``). Writes are atomic (a
temporary file renamed into place).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from arboretum import ReplayRecorder

from .messages import Board, GameEnd, MatchEnd, MatchStatus, MatchSummary, SeatSummary

__all__ = ["MatchRecord", "ReplayStore"]

log = logging.getLogger(__name__)


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


class MatchRecord:
    """The finished games of one match. ``outcomes`` only grows, so the summary is kept and
    only the games finished since the last call are added (status calls stay cheap however
    long the series)."""

    def __init__(
        self, match_id: str, seat_names: tuple[str, ...] | list[str], store: ReplayStore
    ) -> None:
        self.match_id = match_id
        self.store = store
        self.seat_names = tuple(seat_names)
        self.outcomes: list[GameEnd] = []
        self.final_boards: list[Board] = []
        """The public board at the end of each game of ``outcomes``."""
        self.replays: dict[int, dict[str, Any]] = {}
        self.partial_replays: dict[int, dict[str, Any]] = {}
        self._summary: MatchSummary | None = None

    def finished(self, outcome: GameEnd, final_board: Board, replay: dict[str, Any]) -> None:
        """A game is over: its result, its board at the end and its complete replay."""
        self.replays[outcome.game_index] = replay
        self.outcomes.append(outcome)
        self.final_boards.append(final_board)

    async def save(self, game_index: int) -> None:
        """Write a finished game's replay file."""
        await self.store.write(self.match_id, game_index, self.replays[game_index])

    async def stopped(self, game_index: int, recorder: ReplayRecorder, reason: str) -> None:
        """A game was stopped before its end (for ``reason``): its partial replay, kept and
        written."""
        doc = recorder.partial_json(reason)
        self.partial_replays[game_index] = doc
        await self.store.write(self.match_id, game_index, doc, partial=True)

    async def reveal_match_seed(self, match_seed: int) -> None:
        """The match is finished: its seed goes into every replay, and the files are rewritten."""
        for index, doc in sorted(self.replays.items()):
            doc["match_seed"] = str(match_seed)
            await self.store.write(self.match_id, index, doc)

    def replay(self, game_index: int) -> tuple[dict[str, Any], bool] | None:
        """A finished or stopped game's replay and whether it is complete."""
        if game_index in self.replays:
            return self.replays[game_index], True
        if game_index in self.partial_replays:
            return self.partial_replays[game_index], False
        return None

    def summary(self) -> MatchSummary:
        """Per-seat totals over the finished games."""
        cached = self._summary
        if cached is not None and cached.games_finished == len(self.outcomes):
            return cached
        if cached is None:
            names = self.seat_names
            seats = [SeatSummary(s, names[s], 0, 0, 0, 0, 0) for s in range(len(names))]
            done = 0
        else:
            seats, done = list(cached.seats), cached.games_finished
        for outcome in self.outcomes[done:]:
            for score in outcome.result.seats:
                old = seats[score.seat]
                seats[score.seat] = replace(
                    old,
                    total_points=old.total_points + score.total,
                    first_places=old.first_places + (score.rank == 1),
                    rank_sum=old.rank_sum + score.rank,
                    faults=old.faults + outcome.faults[score.seat],
                    forfeits=old.forfeits + score.forfeited,
                )
        self._summary = MatchSummary(len(self.outcomes), tuple(seats))
        return self._summary

    def end_message(self, status: MatchStatus, reason: str, match_seed: int | None) -> MatchEnd:
        """The message that ends the match: its status and the totals of its finished games
        (the match seed once it is revealed)."""
        summary = self.summary()
        return MatchEnd(
            status=status,
            match_seed=match_seed,
            games_finished=summary.games_finished,
            seats=summary.seats,
            reason=reason,
        )
