"""The JSON API of an author's own actions (``/api/v1``): their bots and versions, joining and
leaving the ladders the operator opened to them; challenges and sequential tests are in
:mod:`.contest_api`.

Every state-changing call authenticates with ``Authorization: Bearer <token>`` only (never the
sign-in cookie, so no other site can make a browser send one). Acting on another author's bot is
403 and changes nothing; a malformed body is 400 naming the field.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arboretum_worker import registry, store
from arboretum_worker.ladder import ops as ladder_ops
from arboretum_worker.ladder import state as ladder_state
from arboretum_worker.league import resolve_version
from arboretum_worker.progress import LeagueError
from arboretum_worker.settings import WorkerSettings

from .identity import required_author
from .resources import bot_json, load_bot, load_league, redis_of

if TYPE_CHECKING:
    import redis

__all__ = [
    "MAX_JSON_BODY",
    "by_method",
    "json_body",
    "owned_bot",
    "owned_version",
    "routes",
    "str_field",
]

MAX_JSON_BODY = 16 * 1024
"""The largest JSON body an author's call takes."""


async def json_body(request: Request, fields: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request's JSON object (400 when it is not one, or holds a field not in ``fields``;
    413 past :data:`MAX_JSON_BODY`)."""
    size = 0
    chunks = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BODY:
            raise HTTPException(413, f"the body is over {MAX_JSON_BODY} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the body is a JSON object")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise HTTPException(400, f"unknown field {unknown[0]!r} (the fields: {', '.join(fields)})")
    return data


def str_field(body: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value or len(value) > 200:
        raise HTTPException(400, f"field {name!r} is a bot name (NAME or NAME@VERSION)")
    return value


def owned_bot(r: redis.Redis, author: str, name: str) -> store.Bot:
    """The author's bot ``name``: 404 when there is none, 403 when it is another's."""
    bot = load_bot(r, name)
    if bot.owner != author:
        raise HTTPException(403, f"bot {bot.name} is not yours: only its author may do this")
    return bot


def resolve(r: redis.Redis, spec: str) -> tuple[str, str]:
    """``NAME`` or ``NAME@PREFIX`` -> (bot name, version id); 404 naming what is unknown."""
    name = spec.partition("@")[0]
    load_bot(r, name)
    try:
        vid = resolve_version(r, spec)
    except (LeagueError, store.StoreError) as exc:
        raise HTTPException(404, str(exc)) from None
    return name, vid


def owned_version(r: redis.Redis, author: str, spec: str) -> tuple[str, str]:
    """(bot, version id) of ``NAME[@VERSION]``, a bot of the author's (else 404 or 403)."""
    name = spec.partition("@")[0]
    owned_bot(r, author, name)
    return resolve(r, spec)


Endpoint = Callable[[Request], Any]


def by_method(**handlers: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    """One endpoint for a path that takes several methods (``GET=..., POST=...``), so that a
    405's ``Allow`` names them all; a sync handler runs in the thread pool."""

    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        handler = handlers[method]
        if inspect.iscoroutinefunction(handler):
            return await handler(request)  # type: ignore[no-any-return]
        return await run_in_threadpool(handler, request)  # type: ignore[no-any-return]

    return endpoint


def _json(data: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status)


def my_bots(request: Request) -> JSONResponse:
    author = required_author(request)
    r = redis_of(request)
    out = []
    for name in store.list_bots(r):
        bot = store.get_bot(r, name)
        if bot is None or bot.owner != author:
            continue
        versions = registry.versions(r, bot.name)
        out.append(
            {
                "name": bot.name,
                "owner": bot.owner,
                "created": bot.created,
                "versions": len(versions),
                "latest": versions[-1] if versions else None,
            }
        )
    return _json({"author": author, "bots": out})


def bot_versions(request: Request) -> JSONResponse:
    r = redis_of(request)
    data = bot_json(r, load_bot(r, request.path_params["name"]))
    return _json({"bot": data["name"], "owner": data["owner"], "versions": data["versions"]})


def _ladder_for_authors(r: redis.Redis, name: str) -> store.League:
    league = load_league(r, name)
    if league.settings.ladder is None:
        raise HTTPException(409, f"league {league.name} is a round robin: only a ladder is joined")
    if not ladder_state.is_open(r, league.name):
        raise HTTPException(
            403,
            f"ladder {league.name} is not open to authors: only its operator changes its members "
            f"(arena league open {league.name})",
        )
    if league.status is store.LeagueStatus.CLOSED:
        raise HTTPException(409, f"ladder {league.name} is closed: nothing joins or leaves it")
    return league


def _join(r: redis.Redis, author: str, name: str, spec: str) -> dict[str, Any]:
    bot, vid = owned_version(r, author, spec)
    league = _ladder_for_authors(r, name)
    try:
        done = ladder_ops.join_ladder(r, league.name, [vid], WorkerSettings.from_env())
    except LeagueError as exc:
        raise HTTPException(409, str(exc)) from None
    replaced = done[0][2] if done else None
    return {"league": league.name, "bot": bot, "version": vid, "replaced": replaced}


async def join(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    body = await json_body(request, ("bot",))
    spec = str_field(body, "bot")
    assert spec is not None
    data = await run_in_threadpool(
        _join, redis_of(request), author, request.path_params["name"], spec
    )
    return _json(data, 201)


def _leave(r: redis.Redis, author: str, name: str, bot: str) -> dict[str, Any]:
    owned_bot(r, author, bot)
    league = _ladder_for_authors(r, name)
    try:
        left = ladder_ops.leave_ladder(r, league.name, bot)
    except LeagueError as exc:
        raise HTTPException(409, str(exc)) from None
    return {"league": league.name, "bot": bot, "version": left}


def leave(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    r = redis_of(request)
    return _json(_leave(r, author, request.path_params["name"], request.path_params["bot"]))


def members(request: Request) -> JSONResponse:
    r = redis_of(request)
    league = load_league(r, request.path_params["name"])
    if league.settings.ladder is None:
        raise HTTPException(409, f"league {league.name} is a round robin: it has no members")
    return _json(
        {
            "league": league.name,
            "open": ladder_state.is_open(r, league.name),
            "members": [
                {"bot": bot, "version": vid}
                for bot, vid in ladder_state.members(r, league.name).items()
            ],
        }
    )


def routes(submit: Endpoint) -> list[Route]:
    """The routes; ``submit`` is the upload of a new version (``POST /bots/{name}/versions``)."""
    return [
        Route("/me/bots", my_bots),
        Route(
            "/bots/{name}/versions",
            by_method(GET=bot_versions, POST=submit),
            methods=["GET", "POST"],
        ),
        Route(
            "/leagues/{name}/members", by_method(GET=members, POST=join), methods=["GET", "POST"]
        ),
        Route("/leagues/{name}/members/{bot}", leave, methods=["DELETE"]),
    ]
