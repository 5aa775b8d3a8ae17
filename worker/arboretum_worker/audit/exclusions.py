"""Pairs an operator left out of a league's fit, recorded with who and when.

``arena league audit NAME --exclude A B`` records that the games in which versions A and B sat
together no longer count in the league's batch fit (``Keys.league_excluded``: one hash field per
pair, its sorted ids ``a/b``, holding ``{"by": ..., "at": ...}``); ``--include A B`` counts them
again. The results themselves stay stored (the live ratings and Elo, updated game by game, keep
them). The fit of ``arena ratings``, of the audit and of a ladder's scheduler leave them out
(:func:`results_for_fit`), and the ratings output, the leaderboard and the audit page say so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..keys import Keys, StoreError
from ..store import MatchResult, as_text
from .stats import pair_key

if TYPE_CHECKING:
    import redis

__all__ = ["Exclusion", "exclude", "excluded", "include", "note", "results_for_fit", "without"]


@dataclass(frozen=True, slots=True)
class Exclusion:
    """Pair (a, b), sorted, whose games are left out of the fit; by whom, when (Unix time)."""

    a: str
    b: str
    by: str
    at: float

    @property
    def when(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.at))


def _field(a: str, b: str) -> str:
    if a == b:
        raise StoreError("a pair is two different versions")
    x, y = pair_key(a, b)
    return f"{x}/{y}"


def exclude(
    r: redis.Redis, league: str, a: str, b: str, by: str, at: float | None = None
) -> Exclusion:
    """Leave the games of a and b together out of the league's fit (recorded once: a second call
    keeps the first record)."""
    x, y = pair_key(a, b)
    record = Exclusion(x, y, by, time.time() if at is None else at)
    r.hsetnx(Keys.league_excluded(league), _field(a, b), json.dumps({"by": by, "at": record.at}))
    return next(e for e in excluded(r, league) if (e.a, e.b) == (x, y))


def include(r: redis.Redis, league: str, a: str, b: str) -> bool:
    """Count the pair's games in the fit again; False if they were not left out."""
    return bool(r.hdel(Keys.league_excluded(league), _field(a, b)))


def excluded(r: redis.Redis, league: str) -> list[Exclusion]:
    """The league's excluded pairs, oldest record first."""
    out = []
    for field, raw in r.hgetall(Keys.league_excluded(league)).items():
        a, _, b = as_text(field).partition("/")
        data = json.loads(raw)
        out.append(Exclusion(a, b, str(data["by"]), float(data["at"])))
    return sorted(out, key=lambda e: (e.at, e.a, e.b))


def without(results: Iterable[MatchResult], exclusions: Sequence[Exclusion]) -> list[MatchResult]:
    """The results in which no excluded pair sat together."""
    pairs = {(e.a, e.b) for e in exclusions}
    if not pairs:
        return list(results)
    return [
        result
        for result in results
        if not any(
            pair_key(a, b) in pairs
            for i, a in enumerate(result.seats)
            for b in result.seats[i + 1 :]
        )
    ]


def results_for_fit(r: redis.Redis, league: str) -> tuple[list[MatchResult], list[Exclusion]]:
    """The league's results in sequence order without the excluded pairs', and the exclusions."""
    from ..ratings import results_in_order

    exclusions = excluded(r, league)
    return without(results_in_order(r, league), exclusions), exclusions


def note(exclusions: Sequence[Exclusion], label: Any = None) -> list[str]:
    """One line per exclusion, for the outputs that show the fit (``label``: id -> text)."""
    name = label or (lambda vid: vid[:12])
    return [
        f"the games of {name(e.a)} and {name(e.b)} are left out of the fit (by {e.by}, {e.when})"
        for e in exclusions
    ]
