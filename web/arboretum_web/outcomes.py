"""What a match meant for each of its seats: won, lost or shared, its faults, and each game's
change of Elo, for the match list and the match page.

The outcome of a seat is read from its wins (games ranked first): more than every other seat
is ``won``, fewer than the best is ``lost``, level with the best is ``shared``. Fault counts are
private (``docs/web.md``): callers pass the seats the reader owns. The Elo change of a game is
the version's Elo after it (``ratings.history``) minus its Elo before (the entry before, or the
league's initial Elo): the live Elo, ``K`` per game, that the leaderboard's "Elo" column shows.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from arboretum_worker import ratings, store

if TYPE_CHECKING:
    import redis

__all__ = ["OUTCOMES", "elo_changes", "has_outcome", "seat_marks", "seat_outcome"]

OUTCOMES = ("won", "lost", "shared", "faulted")
"""The values of the match list's ``outcome`` filter (``faulted``: the reader's own bots)."""


def seat_outcome(result: store.MatchResult, seat: int) -> str:
    wins = [sum(1 for g in result.games if g.ranks[s] == 1) for s in range(len(result.seats))]
    best = max(wins)
    if wins[seat] < best:
        return "lost"
    return "won" if wins.count(best) == 1 else "shared"


def seat_marks(
    result: store.MatchResult | None, owned: Collection[int], seats: int
) -> list[dict[str, Any]]:
    """Per seat: ``outcome`` (None before the result) and ``faults`` (None unless owned)."""
    out: list[dict[str, Any]] = []
    for seat in range(seats):
        if result is None:
            out.append({"outcome": None, "faults": None})
            continue
        faults = sum(g.faults[seat] for g in result.games) if seat in owned else None
        out.append({"outcome": seat_outcome(result, seat), "faults": faults})
    return out


def has_outcome(
    result: store.MatchResult | None, seats: Iterable[int], outcome: str, owned: Collection[int]
) -> bool:
    """Whether one of ``seats`` (the filtered bot's) had ``outcome`` in this match."""
    if result is None:
        return False
    for seat in seats:
        if outcome == "faulted":
            if seat in owned and any(g.faults[seat] for g in result.games):
                return True
        elif seat_outcome(result, seat) == outcome:
            return True
    return False


def elo_changes(r: redis.Redis, record: store.MatchRecord, games: int) -> list[list[float | None]]:
    """Per seat, per game: the change of the version's Elo (None when not rated)."""
    league = store.get_league(r, record.league)
    initial = league.settings.elo.initial if league is not None else 1500.0
    out: list[list[float | None]] = []
    for vid in record.seats:
        history = ratings.history(r, record.league, vid)
        changes: dict[int, float] = {}
        before = initial
        for entry in history:
            if entry.match_id == record.id:
                changes[entry.game] = entry.rating - before
            before = entry.rating
        out.append([changes.get(g) for g in range(games)])
    return out
