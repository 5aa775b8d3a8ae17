"""The analysis of a stored game over the API (docs/analysis.md, "Stored games"):
``POST /api/v1/matches/{match_id}/games/{game}/analysis`` queues it on the workers
(:mod:`arboretum_worker.analysis_jobs`, queue ``arena-analysis``; the author of one of the match's
seats only: 401 without a token, 403 for another author), ``GET`` reads its status and, once
done, the analysis document. The document values the decisions from each seat's view of the
whole game, so it is read like the replay's hidden cards: by anyone once the game is revealed,
before that by the authors of its seats only. The OpenAPI paths are here too."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from arboretum_worker import analysis_jobs, replays
from arboretum_worker.keys import StoreError

from . import queries
from .identity import request_author
from .openapi_schemas import closed, ref
from .resources import load_match, owned_seats, redis_of

__all__ = ["analysis_paths", "analysis_schemas", "routes"]

PATH = "/matches/{match_id}/games/{game:int}/analysis"


def _game(request: Request) -> tuple[Any, Any, int]:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    game = request.path_params["game"]
    if replays.get_replay(r, record.id, game) is None:
        raise HTTPException(404, f"match {record.id} has no replay of game {game}")
    return r, record, game


def _require_owner(request: Request, record: Any, why: str) -> None:
    if request_author(request) is None:
        raise HTTPException(401, "sign in with the token of the author of one of its seats' bots")
    if not owned_seats(request, record):
        raise HTTPException(403, f"only the authors of this match's bots may {why}")


def _read(request: Request) -> JSONResponse:
    r, record, game = _game(request)
    if not queries.game_revealed(r, record):
        _require_owner(request, record, "see its analysis before the game is revealed")
    status = analysis_jobs.get_analysis(r, record.id, game)
    return JSONResponse(
        {"match": record.id, "game": game, **status}, headers={"Cache-Control": "no-store"}
    )


def _request(request: Request) -> JSONResponse:
    r, record, game = _game(request)
    _require_owner(request, record, "request its analysis")
    try:
        status = analysis_jobs.request_analysis(
            r, record.id, game, by=request_author(request) or ""
        )
    except StoreError as exc:
        raise HTTPException(404, str(exc)) from None
    status = {k: v for k, v in status.items() if k != "analysis"}
    return JSONResponse({"match": record.id, "game": game, **status}, status_code=202)


async def analysis(request: Request) -> JSONResponse:
    if request.method == "POST":
        return await run_in_threadpool(_request, request)
    return await run_in_threadpool(_read, request)


def routes() -> list[Route]:
    return [Route(PATH, analysis, methods=["GET", "POST"])]


# --------------------------------------------------------------------------- OpenAPI

_STATUS = {"type": "string", "enum": ["none", "queued", "running", "done", "failed"]}


def _params() -> list[dict[str, Any]]:
    return [
        {
            "name": "match_id",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "maxLength": 64, "pattern": "^[0-9A-Za-z_.-]{1,64}$"},
            "description": "match id",
        },
        {
            "name": "game",
            "in": "path",
            "required": True,
            "schema": {"type": "integer", "minimum": 0, "maximum": 999},
            "description": "game index, from 0",
        },
    ]


def _response(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> dict[str, Any]:
    return _response(description, ref("Error"))


def analysis_paths() -> dict[str, Any]:
    path = "/api/v1" + PATH.replace(":int}", "}")
    return {
        path: {
            "get": {
                "summary": "A game's analysis: its status, and the document once done "
                "(docs/analysis.md)",
                "parameters": _params(),
                "responses": {
                    "200": _response("the analysis's status", ref("AnalysisStatus")),
                    "401": _error("the game is not revealed yet, and no author's token"),
                    "403": _error("the game is not revealed yet: its seats' authors only"),
                    "404": _error("no such match, or no replay of that game"),
                },
            },
            "post": {
                "summary": "Queue a game's analysis on the workers (the authors of its seats)",
                "security": [{"bearer": []}],
                "parameters": _params(),
                "responses": {
                    "202": _response(
                        "queued, or already queued, running or done", ref("AnalysisStatus")
                    ),
                    "401": _error("no Authorization: Bearer token, or not an author's"),
                    "403": _error("not the author of one of the match's bots"),
                    "404": _error("no such match, or no replay of that game"),
                },
            },
        }
    }


def analysis_schemas() -> dict[str, Any]:
    return {
        "AnalysisStatus": closed(
            {
                "match": {"type": "string"},
                "game": {"type": "integer"},
                "status": _STATUS,
                "requested": {"type": "number"},
                "finished": {"type": "number"},
                "error": {"type": "string", "description": "why it failed (one line)"},
                "analysis": {
                    "type": "object",
                    "description": "the analysis document (docs/analysis.md, format "
                    "arboretum-analysis)",
                },
            },
            optional=("requested", "finished", "error", "analysis"),
        )
    }
