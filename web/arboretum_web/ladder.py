"""A ladder (``arena league create NAME --ladder``, docs/league.md "Ladders") on the web: its
page (``/leagues/{name}`` of a ladder) and the ``ladder`` part of ``/api/v1/leagues/{name}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arboretum_worker import store
from arboretum_worker.ladder import state
from arboretum_worker.ladder.scheduler import in_flight

from . import queries

if TYPE_CHECKING:
    import redis

__all__ = ["ladder_json"]


def ladder_json(r: redis.Redis, league: store.League, fits: queries.FitCache) -> dict[str, Any]:
    """Its settings, every version that was a member (scheduled or retired) with its fitted
    rating and 95% interval and its games, best first, and the matches being played."""
    ls = league.settings
    assert ls.ladder is not None
    entries = state.entries(r, league.name)
    rows = {
        row.version: row for row in queries.leaderboard(r, league.name, fits, all_versions=True)
    }
    flying = in_flight(r, league.name)
    labels = dict(queries.version_labels(r, sorted({v for m in flying for v in m.seats})))
    versions: list[dict[str, Any]] = []
    for vid, entry in entries.items():
        row = rows.get(vid)
        fit = row.fit if row else None
        versions.append(
            {
                "bot": entry.bot,
                "version": vid,
                "version_index": row.version_index if row else None,
                "state": "scheduled" if entry.active else "retired",
                "joined": entry.joined,
                "retired": entry.retired,
                "games": row.games if row else 0,
                "rating": None if fit is None else fit.rating,
                "rating_low": None if fit is None else fit.low,
                "rating_high": None if fit is None else fit.high,
            }
        )
    versions.sort(key=lambda v: (v["rating"] is None, -(v["rating"] or 0.0), v["version"]))
    for rank, v in enumerate(versions, 1):
        v["rank"] = rank
    playing = [
        {
            "match": m.id,
            "status": m.status.value,
            "seats": [{"version": v, "label": labels.get(v, v[:12])} for v in m.seats],
            "deals": list(m.deals),
        }
        for m in flying
    ]
    tick = state.last_tick(r, league.name)
    return {
        "depth": ls.ladder.depth,
        "new_games": ls.ladder.new_games,
        "unit_deals": ls.deals_per_series,
        "versions": versions,
        "playing": playing,
        "last_tick": None
        if tick is None
        else {
            "at": float(tick["at"]),
            "status": str(tick["status"]),
            "matches": int(tick["matches"]),
        },
    }
