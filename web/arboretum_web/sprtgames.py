"""A sequential test's games on its page: an author's test keeps its matches
(:func:`arboretum_worker.sprt.authors.sprt_matches`), each game opens in the replay viewer at
``/sprt/{test_id}/matches/{match_id}/games/{game}``, which loads the replay from
``GET /api/v1/sprt/{test_id}/matches/{match_id}/games/{game}/replay``. A league test (the
operator's) keeps no games: its page says so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from arboretum_worker import replays
from arboretum_worker.sprt import authors as tests

from .identity import request_author
from .resources import redis_of
from .safety import CSRF_FIELD, LazyToken
from .sprt import load_test

if TYPE_CHECKING:
    import redis

__all__ = ["routes", "test_games"]


def test_games(r: redis.Redis, test_id: str) -> list[dict[str, Any]]:
    """The test's matches, NEW's seat and each game's viewer link (none when not kept)."""
    out = []
    for m in tests.sprt_matches(r, test_id):
        games = replays.replay_games(r, m.id) if m.replays else []
        out.append(
            {
                "id": m.id,
                "batch": m.batch,
                "new_seat": m.seating,
                "seats": len(m.seats),
                "ranks": [list(g) for g in m.ranks],
                "viewers": [(g, f"/sprt/{test_id}/matches/{m.id}/games/{g}") for g in games],
            }
        )
    return out


def game_page(request: Request) -> Response:
    r = redis_of(request)
    test = load_test(r, request.path_params["test_id"])
    match_id, game = request.path_params["match_id"], request.path_params["game"]
    found = [m for m in test_games(r, test.id) if m["id"] == match_id]
    if not found or game not in [g for g, _ in found[0]["viewers"]]:
        raise HTTPException(404, f"test {test.id} kept no game {game} of match {match_id!r}")
    templates = request.app.state.templates
    api = f"/api/v1/sprt/{test.id}/matches/{match_id}/games/{game}"
    mine = request_author(request) == test.author
    context = {
        "author": request_author(request),
        "csrf": LazyToken(request),
        "csrf_field": CSRF_FIELD,
        "test_id": test.id,
        "match": {"id": match_id},
        "game": game,
        "games": [g for g, _ in found[0]["viewers"]],
        "seat": None,
        "replay_src": f"{api}/replay",
        # a test's bots are both its author's
        "owned_seats": list(range(found[0]["seats"])) if mine else [],
        "output_base": f"{api}/seats/",
        "nav": "sprt",
    }
    return templates.TemplateResponse(request, "sprt_game.html", context)


def routes() -> list[Route]:
    return [Route("/sprt/{test_id}/matches/{match_id}/games/{game:int}", game_page)]
