"""A league's progress: how many of its matches are in each state, its failed and retried
matches, and the step that marks a league finished once its last match has ended (and makes its
stored rating fit cover every result, so that the leaderboard reads it as it is)."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from . import matchindex, store

if TYPE_CHECKING:
    import redis

__all__ = [
    "PROGRESS_DETAILS",
    "LeagueError",
    "LeagueProgress",
    "get_league",
    "league_progress",
    "mark_finished_if_done",
    "prepare_store",
]

log = logging.getLogger(__name__)


class LeagueError(ValueError):
    """A league operation is refused (the message says why)."""


def get_league(r: redis.Redis, name: str) -> store.League:
    league = store.get_league(r, name)
    if league is None:
        raise LeagueError(f"no league named {name!r}")
    return league


PROGRESS_DETAILS = 100
"""How many failed (and retried) matches a progress lists by id; the counts cover all."""


@dataclass
class LeagueProgress:
    league: store.League
    total: int
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(match id, reason) of the first failed matches (at most ``PROGRESS_DETAILS``; their
    number is ``counts["failed"]``)."""
    retrying: list[tuple[str, str]] = field(default_factory=list)
    """(match id, reason of the last failed attempt) of the first queued matches that failed
    before (at most ``PROGRESS_DETAILS``; their number is ``retries``)."""
    retries: int = 0

    @property
    def done(self) -> int:
        return self.counts["finished"] + self.counts["failed"] + self.counts["cancelled"]

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.done == self.total

    def bar(self, width: int = 40) -> str:
        if self.total == 0:
            return "[" + " " * width + "]   0/0"
        filled = int(width * self.counts["finished"] / self.total)
        failed = int(width * (self.counts["failed"] + self.counts["cancelled"]) / self.total)
        failed = min(failed, width - filled)
        rest = width - filled - failed
        pct = 100 * self.done / self.total
        return f"[{'#' * filled}{'x' * failed}{'.' * rest}] {self.done}/{self.total} ({pct:.0f}%)"

    def summary(self) -> str:
        order = ("finished", "running", "queued", "failed", "cancelled")
        return ", ".join(f"{self.counts[k]} {k}" for k in order if self.counts[k])


def _reasons(r: redis.Redis, key: str, limit: int, missing: str) -> list[tuple[str, str]]:
    ids = matchindex.members(r, key, limit)
    records = store.get_matches(r, ids)
    return [(rec.id, rec.failure or missing) for rec in records if rec is not None]


def league_progress(
    r: redis.Redis, name: str, *, details: int = PROGRESS_DETAILS, counts_only: bool = False
) -> LeagueProgress:
    """The league's counts per status (from the match indexes, whatever its size) and its
    first ``details`` failed and retried matches with their reasons (none with
    ``counts_only``)."""
    league = get_league(r, name)
    total, counts = matchindex.league_counts(r, name)
    progress = LeagueProgress(league=league, total=total)
    for status, n in counts.items():
        if n:
            progress.counts[status.value] = n
    if counts_only:
        return progress
    if counts[store.MatchStatus.FAILED]:
        key = store.Keys.league_status(name, store.MatchStatus.FAILED)
        progress.failures = _reasons(r, key, details, "(no reason recorded)")
    progress.retries = int(r.zcard(store.Keys.league_retrying(name)))
    if progress.retries:
        progress.retrying = _reasons(r, store.Keys.league_retrying(name), details, "")
    return progress


def mark_finished_if_done(r: redis.Redis, name: str) -> bool:
    """Set a running league FINISHED once none of its matches is queued or running (never a
    ladder: it runs until it is closed), then store the fit of all its results
    (``board.refresh_fit``): the leaderboard reads that fit and makes none of its own. A fit
    that fails is left to the leaderboard's reader (it fits when the stored fit is stale)."""
    league = store.get_league(r, name)
    if league is None or league.status is not store.LeagueStatus.RUNNING:
        return False
    if league.settings.ladder is not None:
        return False
    if not league_progress(r, name, counts_only=True).complete:
        return False
    store.set_league_status(r, name, store.LeagueStatus.FINISHED)
    from . import board

    try:
        board.refresh_fit(r, name)
    except Exception as exc:  # the league is finished all the same
        log.warning("league %s: the rating fit was not stored: %s", name, exc)
    return True


def prepare_store(r: redis.Redis, *, wait_s: float = 600.0) -> int:
    """Index matches stored before the match indexes existed (``matchindex.ensure_indexes``,
    one ``GET`` once done), then finish the leagues whose last match ended meanwhile. Returns
    how many matches were indexed."""
    count = matchindex.ensure_indexes(r, wait_s=wait_s)
    if count:
        for name in store.list_leagues(r):
            mark_finished_if_done(r, name)
    return count
