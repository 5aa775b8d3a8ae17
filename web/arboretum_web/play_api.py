"""A casual game's JSON and event-stream endpoints (docs/web.md, "Playing the bots"): starting a
game from a script (``POST /api/play``), and the table's own calls under ``/play/{id}/``: its
state, its feed (server-sent events, :mod:`.playfeed`), a decision, a resignation, the stored
replay once the game is over.

The person's key (:func:`arboretum_worker.casual.start_game`) travels in the cookie
``arena_play_<id>`` (``HttpOnly``, ``SameSite=Strict``, path ``/play/<id>``), or in the header
``X-Arena-Play-Key`` for scripts. A post that relies on the cookie must also carry the site's CSRF
token in ``X-CSRF-Token`` (the page has it in ``<meta name="csrf-token">``); a post with the key in
its header needs none, since no other site can set that header. Every refusal is answered as
the rest of ``/api/`` answers: ``{"error": {"status": N, "message": "..."}}``, N the status of
:class:`~arboretum_worker.casual.CasualError`.
"""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from arboretum_worker import analysis_jobs, casual, replays, store
from arboretum_worker.keys import StoreError

from . import playfeed
from .identity import request_author
from .openapi_schemas import array, closed, ref
from .replays import is_complete, strip_faults
from .resources import error_json, redis_of
from .safety import csrf_cookie_name

if TYPE_CHECKING:
    import redis

__all__ = [
    "CSRF_HEADER",
    "KEY_HEADER",
    "MAX_BODY",
    "api_routes",
    "cookie_name",
    "game_json",
    "is_table_json",
    "key_of",
    "retry_after",
    "routes",
    "set_key_cookie",
    "start",
]

KEY_HEADER = "X-Arena-Play-Key"
CSRF_HEADER = "X-CSRF-Token"
MAX_BODY = 4096
"""The largest decision or start request read (a stdio answer is well under it)."""
_MAX_MESSAGES = 100_000
_OVER = frozenset({"over", "failed"})
_TABLE_JSON = re.compile(r"/play/[^/]+/(state|feed|decision|resign|replay\.json|analysis)")
"""The table's JSON endpoints (:func:`routes`)."""


def is_table_json(path: str) -> bool:
    """Whether ``path`` is one of the table's JSON endpoints: the app answers their errors (a
    405, a 500, the database down) as JSON too, as the API's."""
    return _TABLE_JSON.fullmatch(path) is not None


def cookie_name(game_id: str) -> str:
    return f"arena_play_{game_id}"


def set_key_cookie(request: Request, response: Response, game: Any, key: str) -> None:
    """The person's key as the game's cookie (kept as long as the game's record)."""
    keep_days = _settings(request).keep_days
    response.set_cookie(
        cookie_name(game.game_id),
        key,
        max_age=int(keep_days * 86400) + 86400,
        path=f"/play/{game.game_id}",
        httponly=True,
        samesite="strict",
        secure=request.app.state.settings.secure_cookies,
    )


def _settings(request: Request) -> casual.CasualSettings:
    settings: casual.CasualSettings = request.app.state.settings.casual
    return settings


def key_of(request: Request, game_id: str) -> tuple[str | None, bool]:
    """The person's key sent with the request, and whether it came in the header."""
    sent = request.headers.get(KEY_HEADER)
    if sent:
        return sent, True
    return request.cookies.get(cookie_name(game_id)), False


def _refusal(exc: casual.CasualError) -> JSONResponse:
    headers = {}
    if exc.status == 429:
        headers["Retry-After"] = retry_after(exc)
    return error_json(exc.status, str(exc), headers)


def retry_after(exc: casual.CasualError) -> str:
    """The seconds a refused start waits, for ``Retry-After``."""
    return str(max(1, int(exc.retry_after or 60)))


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in the thread pool; an unknown or malformed game id is a CasualError 404."""
    try:
        return await run_in_threadpool(fn, *args)
    except StoreError as exc:
        raise casual.CasualError(404, str(exc)) from None


def _check_post(request: Request, via_header: bool) -> None:
    """A post that relies on the cookie carries the page's CSRF token and comes from this site."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is not None and origin not in (f"http://{host}", f"https://{host}"):
        raise casual.CasualError(403, "this request came from another site")
    if via_header:
        return
    secure = request.app.state.settings.secure_cookies
    cookie = request.cookies.get(csrf_cookie_name(secure)) or ""
    sent = request.headers.get(CSRF_HEADER) or ""
    if not cookie or not hmac.compare_digest(sent.encode(), cookie.encode()):
        raise casual.CasualError(
            403, "the page's security token is missing or stale: reload the page"
        )


async def _json_body(request: Request) -> Any:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise casual.CasualError(400, f"the request is over {MAX_BODY} bytes")
    if not body.strip():
        return {}
    try:
        return json.loads(body)
    except ValueError:
        raise casual.CasualError(400, "the request is not JSON") from None


def game_json(r: redis.Redis, game: Any) -> dict[str, Any]:
    """What the table shows of a game: never a key, never a bot's hidden cards."""
    out: dict[str, Any] = {
        "id": game.game_id,
        "players": game.players,
        "person_seat": game.person_seat,
        "names": list(game.names),
        "status": game.status,
        "created": game.created,
        "ended": game.ended,
    }
    if game.status in _OVER:
        out["result"] = game.result
        if game.replay_id:
            out["replay_url"] = f"/play/{game.game_id}/replay"
            analysis = analysis_url(r, game)
            if analysis:
                out["analysis_url"] = analysis
    return out


def analysis_url(r: redis.Redis, game: Any) -> str | None:
    """The analysis of the game's decisions, when one is stored (docs/analysis.md)."""
    if game.status not in _OVER or not game.replay_id:
        return None
    if analysis_jobs.get_analysis(r, game.replay_id, 0).get("status") != "done":
        return None
    return f"/play/{game.game_id}/analysis"


def _all_messages(r: redis.Redis, game_id: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    after = "0"
    while len(out) < _MAX_MESSAGES:
        got = casual.read_feed(r, game_id, after=after, count=500)
        out.extend(got)
        if len(got) < 500:
            break
        after = got[-1][0]
    return out


def _state(r: redis.Redis, game_id: str, key: str | None) -> dict[str, Any]:
    game = casual.seat_game(r, game_id, key)
    messages = _all_messages(r, game_id)
    return {
        "game": game_json(r, game),
        "messages": [[sid, message] for sid, message in messages],
        "pending": casual.pending(r, game_id),
    }


async def state(request: Request) -> Response:
    game_id = request.path_params["game_id"]
    key, _ = key_of(request, game_id)
    try:
        data = await _call(_state, redis_of(request), game_id, key)
    except casual.CasualError as exc:
        return _refusal(exc)
    return JSONResponse(data, headers={"Cache-Control": "no-store"})


async def feed(request: Request) -> Response:
    game_id = request.path_params["game_id"]
    key, _ = key_of(request, game_id)
    r = redis_of(request)

    def check() -> None:
        casual.seat_game(r, game_id, key)

    try:
        await _call(check)
    except casual.CasualError as exc:
        return _refusal(exc)
    hub: playfeed.PlayFeeds = request.app.state.play
    if hub.viewers >= hub.max_viewers:
        return error_json(503, "too many open games here: try again later", {"Retry-After": "30"})
    # EventSource resends the last id it saw; a page that opens a new one says ?after=
    after = request.headers.get("last-event-id") or request.query_params.get("after")
    return StreamingResponse(
        playfeed.stream(hub.feed(game_id), after),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def decision(request: Request) -> Response:
    game_id = request.path_params["game_id"]
    key, via_header = key_of(request, game_id)
    try:
        _check_post(request, via_header)
        answer = await _json_body(request)
        await _call(casual.submit, redis_of(request), game_id, key, answer)
    except casual.CasualError as exc:
        return _refusal(exc)
    return JSONResponse({"accepted": answer.get("id")}, status_code=202)


async def resign(request: Request) -> Response:
    game_id = request.path_params["game_id"]
    key, via_header = key_of(request, game_id)
    try:
        _check_post(request, via_header)
        await _json_body(request)  # (read and bounded; nothing in it is needed)
        await _call(casual.resign, redis_of(request), game_id, key)
    except casual.CasualError as exc:
        return _refusal(exc)
    return JSONResponse({"resigned": True}, status_code=202)


def stored_replay(r: redis.Redis, game: Any, viewer: str | None) -> dict[str, Any]:
    """The stored replay of a game that is over: all of it (the game is over, nothing is hidden
    any more), but the faults of a bot seat only for that bot's author."""
    if game.status not in _OVER or not game.replay_id:
        raise casual.CasualError(404, f"game {game.game_id} has no replay yet")
    raw = replays.get_replay(r, game.replay_id, 0)
    doc = None if raw is None else json.loads(raw)
    if not isinstance(doc, dict) or not is_complete(doc):
        raise casual.CasualError(404, f"game {game.game_id} has no stored replay")
    owned = {game.person_seat}
    if viewer is not None:
        for seat, vid in enumerate(game.seats):
            version = store.get_version(r, vid) if vid else None
            bot = store.get_bot(r, version.name) if version else None
            if bot is not None and bot.owner == viewer:
                owned.add(seat)
    return strip_faults(doc, owned)


async def replay_json(request: Request) -> Response:
    game_id = request.path_params["game_id"]
    r = redis_of(request)
    viewer = await run_in_threadpool(request_author, request)

    def read() -> dict[str, Any]:
        return stored_replay(r, casual.get_game(r, game_id), viewer)

    try:
        doc = await _call(read)
    except casual.CasualError as exc:
        return _refusal(exc)
    headers = {"Cache-Control": "no-store"}
    if request.query_params.get("download"):
        headers["Content-Disposition"] = f'attachment; filename="casual-{game_id}.json"'
    return JSONResponse(doc, headers=headers)


def _analysis(r: redis.Redis, game_id: str, key: str | None, post: bool) -> dict[str, Any]:
    game = casual.get_game(r, game_id)
    if post:
        casual.check_key(r, game, key)
    if game.status not in _OVER or not game.replay_id:
        raise casual.CasualError(404, f"game {game.game_id} is not over: no analysis yet")
    if post:
        try:
            analysis_jobs.request_analysis(r, game.replay_id, 0, by="person")
        except StoreError as exc:
            raise casual.CasualError(404, str(exc)) from None
    status = analysis_jobs.get_analysis(r, game.replay_id, 0)
    if post:
        status.pop("analysis", None)
    return {"match": game.replay_id, "game": 0, **status}


async def analysis(request: Request) -> Response:
    """A finished game's analysis, as ``/api/v1/.../analysis`` answers for a league game
    (``GET``: anyone; status ``none`` until asked for). ``POST``: the person asks for it (queued
    on the workers' lowest-priority queue, once)."""
    game_id = request.path_params["game_id"]
    key, via_header = key_of(request, game_id)
    post = request.method == "POST"
    try:
        if post:
            _check_post(request, via_header)
        data = await _call(_analysis, redis_of(request), game_id, key, post)
    except casual.CasualError as exc:
        return _refusal(exc)
    return JSONResponse(
        data, status_code=202 if post else 200, headers={"Cache-Control": "no-store"}
    )


# --------------------------------------------------------------------------- starting a game


def start(
    request: Request, r: redis.Redis, opponents: Any, seat: Any, author: str | None
) -> tuple[Any, str]:
    """Start a game for this request's address (CasualError on every refusal)."""
    if not isinstance(opponents, list) or not all(isinstance(o, str) for o in opponents):
        raise casual.CasualError(400, "opponents is a list of 1 to 3 bot names or versions")
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)):
        raise casual.CasualError(400, "seat is null (a random seat) or a seat number from 0")
    address = request.client.host if request.client else "-"
    return casual.start_game(  # type: ignore[no-any-return]
        r,
        opponents=opponents,
        seat=seat,
        address=address,
        author=author,
        settings=_settings(request),
    )


async def api_start(request: Request) -> Response:
    """``POST /api/play``: ``{"opponents": [...], "seat": null | n}`` -> 201 ``{id, url, key}``."""
    try:
        body = await _json_body(request)
        if not isinstance(body, dict):
            raise casual.CasualError(400, "the request is a JSON object")
        unknown = sorted(set(body) - {"opponents", "seat"})
        if unknown:
            raise casual.CasualError(
                400, f"unknown field {unknown[0][:40]!r} (the fields: opponents, seat)"
            )
        author = await run_in_threadpool(request_author, request)
        game, key = await _call(
            start, request, redis_of(request), body.get("opponents"), body.get("seat"), author
        )
    except casual.CasualError as exc:
        headers = {"Retry-After": retry_after(exc)} if exc.status == 429 else None
        raise HTTPException(exc.status, str(exc), headers) from None
    url = f"/play/{game.game_id}"
    response = JSONResponse({"id": game.game_id, "url": url, "key": key}, status_code=201)
    response.headers["Location"] = url
    set_key_cookie(request, response, game, key)
    return response


def routes() -> list[Route]:
    return [
        Route("/play/{game_id}/state", state),
        Route("/play/{game_id}/feed", feed),
        Route("/play/{game_id}/decision", decision, methods=["POST"]),
        Route("/play/{game_id}/resign", resign, methods=["POST"]),
        Route("/play/{game_id}/replay.json", replay_json),
        Route("/play/{game_id}/analysis", analysis, methods=["GET", "POST"]),
    ]


def api_routes() -> list[Route]:
    return [Route("/api/play", api_start, methods=["POST"])]


# --------------------------------------------------------------------------- OpenAPI


def play_paths() -> dict[str, Any]:
    """``POST /api/play`` in the API's document (the table's own endpoints are the page's)."""

    def answer(description: str, schema: dict[str, Any]) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": schema}}}

    opponent = {"type": "string", "minLength": 1, "maxLength": 64}
    body = closed(
        {
            "opponents": {**array(opponent), "minItems": 1, "maxItems": 3},
            "seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 3},
        },
        optional=("seat",),
    )
    return {
        "/api/play": {
            "post": {
                "summary": "Start a casual game of a person against 1 to 3 bots (docs/web.md, "
                "Playing the bots): bot names (their current version) or version ids (an "
                "author's own, with their token); the person's seat from 0, null for a random one",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": body}},
                },
                "responses": {
                    "201": answer(
                        "started: the table's URL and the person's key (shown once; also set "
                        "as the game's cookie)",
                        ref("PlayStarted"),
                    ),
                    "400": answer("a bad request (the message says what)", ref("Error")),
                    "403": answer("another author's version that is not current", ref("Error")),
                    "429": answer(
                        "too many games from this address, or the queue is full: Retry-After "
                        "gives the seconds to wait",
                        ref("Error"),
                    ),
                },
            }
        }
    }


def play_schemas() -> dict[str, Any]:
    return {
        "PlayStarted": closed(
            {
                "id": {"type": "string"},
                "url": {"type": "string", "description": "the table: /play/{id}"},
                "key": {"type": "string", "description": f"the person's key ({KEY_HEADER})"},
            }
        )
    }
