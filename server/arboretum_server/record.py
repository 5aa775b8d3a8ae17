"""What a match has played so far (:class:`MatchRecord`): the outcomes of its finished games,
their replays (complete, or partial for a game that was stopped), and the per-seat totals."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .messages import Board, GameEnd, MatchEnd, MatchStatus, MatchSummary, SeatSummary

__all__ = ["MatchRecord"]


class MatchRecord:
    """The finished games of one match. ``outcomes`` only grows, so the summary is kept and
    only the games finished since the last call are added (status calls stay cheap however
    long the series)."""

    def __init__(self, seat_names: tuple[str, ...] | list[str]) -> None:
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

    def stopped(self, game_index: int, replay: dict[str, Any]) -> None:
        """A game was stopped before its end: its partial replay."""
        self.partial_replays[game_index] = replay

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
