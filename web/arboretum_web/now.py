"""The page of the games being played now (``/live``): every running match, the game it is on
and how many people watch it.

The game is read from the match's live stream (the newest ``game`` event of its latest attempt;
the worker writes the stream only while someone watches, so an unwatched match shows "-"). The
spectators are the viewers of this web process's live feed (:class:`.live.LiveHub`): behind
several web processes, each counts its own.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arboretum_worker import store
from arboretum_worker.live import live_key

from . import queries
from .identity import request_author
from .resources import match_json, redis_of
from .safety import CSRF_FIELD, LazyToken

if TYPE_CHECKING:
    import redis

__all__ = ["MAX_SHOWN", "current_game", "routes"]

MAX_SHOWN = 200
"""The most running matches the page lists."""
_TAIL = 200


def current_game(r: redis.Redis, match_id: str) -> int | None:
    """The game the match's live stream is on (None when nothing was published)."""
    attempt = None
    entries: Any = r.xrevrange(live_key(match_id), count=_TAIL)  # bytes fields and values
    for _id, fields in entries:
        a = fields.get(b"a", b"").decode()
        if attempt is None:
            attempt = a
        if a != attempt:
            break
        try:
            event = json.loads(fields.get(b"e", b"{}"))
        except ValueError:
            continue
        if isinstance(event, dict) and isinstance(event.get("game"), int):
            return int(event["game"])
    return None


def playing_page(request: Request) -> Response:
    r = redis_of(request)
    total, records = queries.list_matches(r, status=store.MatchStatus.RUNNING, limit=MAX_SHOWN)
    data = queries.row_data(r, records)
    hub = request.app.state.live
    rows = []
    for record in records:
        row = match_json(request, record, brief=True, data=data)
        feed = hub.feeds.get(record.id)
        row["spectators"] = feed.viewers if feed is not None else 0
        row["game"] = current_game(r, record.id)
        rows.append(row)
    templates = request.app.state.templates
    context = {
        "author": request_author(request),
        "csrf": LazyToken(request),
        "csrf_field": CSRF_FIELD,
        "rows": rows,
        "total": total,
        "nav": "live",
    }
    return templates.TemplateResponse(request, "playing.html", context)


def routes() -> list[Route]:
    return [Route("/live", playing_page)]
