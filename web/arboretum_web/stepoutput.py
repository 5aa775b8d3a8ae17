"""A seat's output per decision, owner-only: ``/api/v1/matches/{id}/games/{g}/seats/{s}/output``,
the lines its bot printed during each of its steps of game ``g`` (the replay's step numbers),
as the league stored them (:mod:`arboretum_worker.botoutput`). Others get 403, like the log.
A challenge's and a test's games answer the same (:func:`output_response`, their routes in
:mod:`.contest_api`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arboretum_worker import botoutput, replays

from .resources import bool_param, load_match, redis_of, require_seat_owner

if TYPE_CHECKING:
    import redis

__all__ = ["output_response", "routes", "seat_output", "seat_output_json"]


def seat_output_json(r: redis.Redis, match_id: str, game: int, seat: int) -> dict[str, Any]:
    """The JSON of one seat's output in one game (404 when the game has no replay)."""
    if replays.get_replay(r, match_id, game) is None:
        raise HTTPException(404, f"match {match_id} has no replay of game {game}")
    doc = botoutput.get_output(r, match_id, seat)
    return {
        "match": match_id,
        "game": game,
        "seat": seat,
        "stored": doc is not None,
        **botoutput.game_output(doc, game),
    }


def seat_output(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    seat = request.path_params["seat"]
    require_seat_owner(request, record, seat)
    return output_response(request, record.id, seat)


def output_response(request: Request, match_id: str, seat: int) -> Response:
    """The output of ``seat`` (its owner checked by the caller) in the path's game; with
    ``?download=1`` as a file."""
    game = request.path_params["game"]
    data = seat_output_json(redis_of(request), match_id, game, seat)
    headers = {"Cache-Control": "private, no-store"}
    if bool_param(request, "download"):
        headers["Content-Disposition"] = (
            f'attachment; filename="{match_id}-game{game}-seat{seat}-output.json"'
        )
        body = json.dumps(data, indent=1) + "\n"
        return Response(body, media_type="application/json", headers=headers)
    return JSONResponse(data, headers=headers)


def routes() -> list[Route]:
    """The API's route (mounted under ``/api/v1``)."""
    return [Route("/matches/{match_id}/games/{game:int}/seats/{seat:int}/output", seat_output)]
