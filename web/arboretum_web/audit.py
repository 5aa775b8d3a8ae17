"""The operator's audit page of a league (``/leagues/{name}/audit``): the collusion audit of
``arena league audit`` (:mod:`arboretum_worker.audit`) and the pairs left out of the fit, with
who and when; and the notes of those pairs that the leaderboard shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arboretum_worker import store
from arboretum_worker.audit import exclusions
from arboretum_worker.audit.stats import audit
from arboretum_worker.fit import FitError, games_of
from arboretum_worker.ratings import results_in_order

from . import queries

if TYPE_CHECKING:
    import redis

__all__ = ["audit_context", "exclusion_notes"]


def _labels(r: redis.Redis, versions: set[str]) -> dict[str, str]:
    return dict(queries.version_labels(r, sorted(versions)))


def exclusion_notes(r: redis.Redis, league: str | None) -> list[dict[str, Any]]:
    """The league's pairs left out of the fit: labels, who and when (none without a league)."""
    if not league:
        return []
    found = exclusions.excluded(r, league)
    labels = _labels(r, {v for e in found for v in (e.a, e.b)})
    return [
        {"a": labels.get(e.a, e.a[:12]), "b": labels.get(e.b, e.b[:12]), "by": e.by, "at": e.at}
        for e in found
    ]


def audit_context(r: redis.Redis, league: store.League) -> dict[str, Any]:
    """What the audit page shows: the flagged pairs (from the side of the one below its level),
    the bots far below their level, the pairs left out, or why there is no audit."""
    results = results_in_order(r, league.name)
    excluded = exclusions.excluded(r, league.name)
    context: dict[str, Any] = {
        "excluded": exclusion_notes(r, league.name),
        "results": len(results),
        "audit": None,
        "problem": None,
    }
    games = games_of(exclusions.without(results, excluded))
    if not results:
        context["problem"] = "No results yet: there is nothing to audit."
        return context
    if not games:
        context["problem"] = "Every result is left out of the fit: there is nothing to audit."
        return context
    try:
        found = audit(games)
    except FitError as exc:
        context["problem"] = f"The fit failed: {exc}."
        return context
    labels = _labels(r, {v for t in found.tests for v in (t.a, t.b)})
    flagged = []
    for t in found.flagged:
        low, high, score, expected = t.a, t.b, t.score, t.expected
        if score > expected:
            low, high, score, expected = high, low, t.games - score, t.games - expected
        flagged.append(
            {
                "low": labels.get(low, low[:12]),
                "high": labels.get(high, high[:12]),
                "games": t.games,
                "score": score,
                "expected": expected,
                "adjusted": t.adjusted,
            }
        )
    context["audit"] = {
        "games": found.games,
        "pairs": found.pairs,
        "level": found.alpha,
        "flagged": flagged,
        "below": [
            {
                "version": labels.get(b.version, b.version[:12]),
                "opponent": labels.get(b.opponent, b.opponent[:12]),
                "elo": b.elo,
            }
            for b in found.below
        ],
    }
    return context
