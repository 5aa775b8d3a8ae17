"""The JSON API, ``/api/v1/...``; its OpenAPI document is ``/api/v1/openapi.json``.

Errors are ``{"error": {"status": N, "message": "..."}}`` with the same HTTP status.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arboretum_worker import registry, replays, store
from arboretum_worker.board import PROVISIONAL_HALF_WIDTH

from . import analysis_api, author_api, contest_api, live, queries, stepoutput
from .config import default_check
from .identity import required_author
from .ladder import ladder_json
from .openapi import MAX_FILENAME, MAX_OFFSET, openapi_document
from .resources import (
    bool_param,
    bot_json,
    int_param,
    league_json,
    league_param,
    load_bot,
    load_league,
    load_match,
    match_json,
    redis_of,
    replay_for,
    require_seat_owner,
    status_param,
)
from .uploads import form_file, read_body, read_form, store_upload

__all__ = ["routes"]

log = logging.getLogger(__name__)


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers=headers)


def openapi(request: Request) -> JSONResponse:
    return _json(openapi_document())


def health(request: Request) -> JSONResponse:
    redis_of(request).ping()
    return _json({"status": "ok"})


def leagues(request: Request) -> JSONResponse:
    r = redis_of(request)
    out = []
    for name in store.list_leagues(r):
        league = store.get_league(r, name)
        if league is not None:
            out.append(league_json(r, league))
    out.sort(key=lambda lg: -lg["created"])
    return _json({"leagues": out})


def league(request: Request) -> JSONResponse:
    r = redis_of(request)
    lg = load_league(r, request.path_params["name"])
    data = league_json(r, lg)
    data["standings"] = [
        row.to_json()
        for row in queries.leaderboard(
            r, lg.name, request.app.state.settings.fits, all_versions=True
        )
    ]
    if lg.settings.ladder is not None:
        data["ladder"] = ladder_json(r, lg, request.app.state.settings.fits)
    return _json(data)


def leaderboard(request: Request) -> JSONResponse:
    r = redis_of(request)
    all_versions = bool_param(request, "all_versions")
    name = request.path_params.get("name")
    name = load_league(r, name).name if name else league_param(request)
    board = (
        None
        if name is None
        else queries.leaderboard_of(
            r, name, request.app.state.settings.fits, all_versions=all_versions
        )
    )
    return _json(
        {
            "league": name,
            "all_versions": all_versions,
            "ranked_by": "conservative",
            "provisional_half_width": PROVISIONAL_HALF_WIDTH,
            "results": board.results if board else 0,
            "fitted_results": board.fitted if board else 0,
            "rows": [row.to_json() for row in board.rows] if board else [],
        }
    )


def bots(request: Request) -> JSONResponse:
    r = redis_of(request)
    out = []
    for summary in queries.bot_summaries(r):
        out.append(
            {
                "name": summary.bot.name,
                "owner": summary.bot.owner,
                "created": summary.bot.created,
                "versions": len(summary.versions),
                "latest": summary.versions[-1].id if summary.versions else None,
            }
        )
    return _json({"bots": out})


def bot(request: Request) -> JSONResponse:
    r = redis_of(request)
    return _json(bot_json(r, load_bot(r, request.path_params["name"])))


def _bot_league(request: Request, versions: list[str]) -> str | None:
    name = request.query_params.get("league")
    if name:
        return load_league(redis_of(request), name).name
    played = queries.bot_leagues(redis_of(request), versions)
    return played[0] if played else None


def bot_history(request: Request) -> JSONResponse:
    r = redis_of(request)
    b = load_bot(r, request.path_params["name"])
    versions = registry.versions(r, b.name)
    name = _bot_league(request, versions)
    history = {} if name is None else queries.bot_history(r, name, versions)
    return _json(
        {
            "bot": b.name,
            "league": name,
            "versions": {
                vid: [
                    {"seq": e.seq, "game": e.game, "rating": e.rating, "match": e.match_id}
                    for e in entries
                ]
                for vid, entries in history.items()
            },
        }
    )


def bot_h2h(request: Request) -> JSONResponse:
    r = redis_of(request)
    b = load_bot(r, request.path_params["name"])
    versions = registry.versions(r, b.name)
    name = _bot_league(request, versions)
    rows = [] if name is None else queries.bot_h2h(r, name, versions)
    return _json({"bot": b.name, "league": name, "rows": [row.to_json() for row in rows]})


def matches(request: Request) -> JSONResponse:
    r = redis_of(request)
    league_name = request.query_params.get("league") or None
    if league_name:
        load_league(r, league_name)
    bot_name = request.query_params.get("bot") or None
    if bot_name:
        load_bot(r, bot_name)
    status = status_param(request)
    offset = int_param(request, "offset", 0, 0, MAX_OFFSET) or 0
    limit = int_param(request, "limit", 50, 1, queries.MAX_PAGE) or 50
    total, page = queries.list_matches(
        r, league=league_name, bot=bot_name, status=status, offset=offset, limit=limit
    )
    data = queries.row_data(r, page)
    return _json(
        {
            "total": total,
            "offset": offset,
            "limit": limit,
            "matches": [match_json(request, m, brief=True, data=data) for m in page],
        }
    )


def match(request: Request) -> JSONResponse:
    record = load_match(redis_of(request), request.path_params["match_id"])
    return _json(match_json(request, record))


def replay(request: Request) -> Response:
    record = load_match(redis_of(request), request.path_params["match_id"])
    game = request.path_params["game"]
    seat = int_param(request, "seat", None, 0, len(record.seats) - 1)
    doc = replay_for(request, record, game, seat)
    headers = {"Cache-Control": "no-store"}
    if bool_param(request, "download"):
        suffix = f"-seat{seat}" if seat is not None else ""
        headers["Content-Disposition"] = (
            f'attachment; filename="{record.id}-game{game}{suffix}.json"'
        )
        body = json.dumps(doc, indent=1) + "\n"
        return Response(body, media_type="application/json", headers=headers)
    return _json(doc, headers=headers)


async def live_match(request: Request) -> Response:
    """The match's public events as they happen, as server-sent events (:mod:`.live`)."""
    record = await run_in_threadpool(load_match, redis_of(request), request.path_params["match_id"])
    hub = request.app.state.live
    if hub.viewers >= hub.max_viewers:
        raise HTTPException(
            503, "too many live viewers here: try again later", headers={"Retry-After": "30"}
        )
    return StreamingResponse(
        live.stream(hub.feed(record.id), request.headers.get("last-event-id")),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def seat_log(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    seat = request.path_params["seat"]
    require_seat_owner(request, record, seat)
    text = replays.get_bot_log(r, record.id, seat).decode("utf-8", errors="replace")
    return _json({"match": record.id, "seat": seat, "log": text})


def seat_faults(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    seat = request.path_params["seat"]
    require_seat_owner(request, record, seat)
    faults = []
    for game in replays.replay_games(r, record.id):
        raw = replays.get_replay(r, record.id, game)
        doc = json.loads(raw) if raw else {}
        for index, step in enumerate(doc.get("steps", [])):
            if step.get("seat") != seat:
                continue
            if "fault" in step:
                faults.append(
                    {"game": game, "step": index, "turn": step.get("turn"), **step["fault"]}
                )
            elif step.get("kind") == "forfeit" or step.get("note"):
                faults.append(
                    {
                        "game": game,
                        "step": index,
                        "turn": step.get("turn"),
                        "kind": step.get("kind"),
                        "reason": step.get("reason", ""),
                    }
                )
    result = store.get_result(r, record.id)
    counts = [g.faults[seat] for g in result.games] if result else None
    return _json(
        {
            "match": record.id,
            "seat": seat,
            "failure": record.failure,
            "counts": counts,
            "faults": faults,
        }
    )


def me(request: Request) -> JSONResponse:
    author = required_author(request)
    r = redis_of(request)
    owned = [
        name for name in store.list_bots(r) if (b := store.get_bot(r, name)) and b.owner == author
    ]
    return _json({"author": author, "bots": owned})


async def _upload(request: Request) -> tuple[str | None, bytes]:
    """The uploaded file and its name: a multipart form's ``file`` field, or the raw body with
    ``?filename=`` (or ``X-Filename``); without a name the content tells what it is."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        return await form_file(await read_form(request))
    filename = request.query_params.get("filename") or request.headers.get("x-filename") or None
    if filename is not None and (len(filename) > MAX_FILENAME or "/" in filename):
        raise HTTPException(
            400, f"parameter 'filename' is a file name of at most {MAX_FILENAME} characters"
        )
    return filename, await read_body(request)


async def submit(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    name = request.path_params["name"]
    try:
        store.validate_name("bot", name)
    except store.StoreError as exc:
        raise HTTPException(400, str(exc)) from None
    filename, data = await _upload(request)
    check = request.app.state.check or default_check(request.app.state.settings)
    result = await store_upload(request, author, name, filename, data, check)
    return _json(
        result.to_json(),
        status=201 if result.created else 200,
        headers={"Location": f"/api/v1/bots/{name}"},
    )


def routes() -> list[Route]:
    return [
        Route("/openapi.json", openapi),
        Route("/health", health),
        Route("/me", me),
        Route("/leagues", leagues),
        Route("/leagues/{name}", league),
        Route("/leagues/{name}/leaderboard", leaderboard),
        Route("/leaderboard", leaderboard),
        Route("/bots", bots),
        Route("/bots/{name}", bot),
        Route("/bots/{name}/history", bot_history),
        Route("/bots/{name}/head-to-head", bot_h2h),
        Route("/matches", matches),
        Route("/matches/{match_id}", match),
        Route("/matches/{match_id}/live", live_match),
        Route("/matches/{match_id}/games/{game:int}/replay", replay),
        Route("/matches/{match_id}/seats/{seat:int}/log", seat_log),
        Route("/matches/{match_id}/seats/{seat:int}/faults", seat_faults),
        *contest_api.routes(),
        *analysis_api.routes(),
        *stepoutput.routes(),
        *author_api.routes(submit),
    ]
