"""The league's console output, shared by ``arena`` commands and ``arena demo``: tables, the
progress of a league followed until it is done, and the leaderboard's rows."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arboretum_sdk.clitools import fail, leaderboard_cells

if TYPE_CHECKING:
    import redis

__all__ = ["follow", "leaderboard_rows", "print_progress", "version_label"]


def version_label(r: redis.Redis, vid: str) -> str:
    from . import store

    version = store.get_version(r, vid)
    return f"{version.name}@{vid[:8]}" if version else vid[:12]


def print_progress(progress: Any, *, failures: bool = True) -> None:
    print(f"league {progress.league.name} ({progress.league.status.value}): {progress.bar()}")
    print(f"  {progress.summary() or 'no matches scheduled yet (arena league run)'}")
    if failures and progress.failures:
        print(f"  failed matches ({progress.counts['failed']}):")
        for match_id, reason in progress.failures:
            print(f"    {match_id}: {reason}")
        if progress.counts["failed"] > len(progress.failures):
            print(f"    ... and {progress.counts['failed'] - len(progress.failures)} more")
    if failures and progress.retrying:
        print(f"  being retried ({progress.retries}):")
        for match_id, reason in progress.retrying:
            print(f"    {match_id}: {reason}")
        if progress.retries > len(progress.retrying):
            print(f"    ... and {progress.retries - len(progress.retrying)} more")


def follow(
    r: redis.Redis,
    name: str,
    interval: float = 0.5,
    *,
    problem: Callable[[], str | None] | None = None,
) -> int:
    """Show the progress until the league is done; a ``problem()`` message aborts it."""
    from .progress import league_progress

    tty = sys.stdout.isatty()
    last = ""
    while True:
        progress = league_progress(r, name)
        line = f"\r{progress.bar()}  {progress.summary()}"
        if tty:
            print(line.ljust(100), end="", flush=True)
        elif line != last:
            print(line.strip(), flush=True)
        last = line
        if progress.complete or progress.league.status.value == "cancelled":
            break
        trouble = problem() if problem is not None else None
        if trouble:
            if tty:
                print()
            return fail(trouble)
        time.sleep(interval)
    if tty:
        print()
    print_progress(progress)
    return 0 if not progress.failures else 1


def leaderboard_rows(r: redis.Redis, league: str, *, all_versions: bool = False) -> list[list[str]]:
    """The board (:func:`arboretum_worker.board.leaderboard`, its stored fit made again first when
    newer results exist): ranked by the lower end of the fitted 95% interval; the fitted rating
    ("?" after it while provisional) with the half-width of its interval and its lower end, the
    live rating, then Elo, games, wins, win share and mean rank. Each bot's row is its best
    established version (every version that played with ``all_versions``: the bots' rows marked
    ``*``)."""
    from . import board

    out = []
    for row in board.leaderboard(r, league, all_versions=all_versions).rows:
        fit = row.fit
        fields = {
            "rank": row.rank,
            "bot": row.bot,
            "version": row.version,
            "counted": row.counted,
            "provisional": row.provisional,
            "conservative": row.conservative,
            "fitted_rating": None if fit is None else fit.elo,
            "fitted_low": None if fit is None else fit.lower,
            "fitted_high": None if fit is None else fit.upper,
            "live_rating": row.live.mu,
            "elo": row.elo,
            "games": row.stats.games,
            "wins": row.stats.wins,
            "win_share": row.stats.win_share,
            "mean_rank": row.stats.mean_rank,
        }
        out.append(leaderboard_cells(fields, all_versions))
    return out
