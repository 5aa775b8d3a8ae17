"""The Starlette application: pages, the JSON API under ``/api/v1``, static files, errors.

:func:`create_app` wires it; :mod:`.pages` and :mod:`.api` hold the endpoints. Cross-cutting
concerns live here: the Redis client and settings on ``app.state`` and the error handlers (an
HTML page for pages, JSON for ``/api/``, never a traceback); the settings are in :mod:`.config`,
the author of a request in :mod:`.identity` (both still import from here).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import redis
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.templating import Jinja2Templates

from arboretum_worker import store

from . import api, apidocs, pages, play_api, playpages, profiles
from .config import SubmitCheck, WebSettings, default_check
from .identity import AUTH_COOKIE, request_author
from .live import LiveHub
from .playfeed import PlayFeeds
from .ratelimit import RateLimitMiddleware
from .resources import error_json
from .safety import CSRF_FIELD, SECURITY_HEADERS, LazyToken, SafetyMiddleware
from .transfer import CachedStatic, static_url
from .transfer import middleware as transfer_middleware
from .uploads import UploadGate

__all__ = [
    "AUTH_COOKIE",
    "SubmitCheck",
    "WebSettings",
    "create_app",
    "default_check",
    "request_author",
]

log = logging.getLogger(__name__)

HERE = Path(__file__).parent


def _is_api(request: Request) -> bool:
    """The API's paths and the casual table's JSON endpoints: their errors are JSON."""
    path = request.url.path
    return path.startswith("/api/") or play_api.is_table_json(path)


_TITLES = {
    400: "Bad request",
    401: "Not signed in",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    411: "Length required",
    413: "Too large",
    429: "Too many requests",
    500: "Internal error",
    503: "Unavailable",
}


def _author_or_none(request: Request) -> str | None:
    """The signed-in author for an error page (None when the database is what failed)."""
    try:
        return request_author(request)
    except redis.exceptions.RedisError:
        return None


def error_response(
    request: Request, status: int, message: str, headers: Mapping[str, str] | None = None
) -> Response:
    extra = dict(headers or {})
    if status == 401:
        extra.setdefault("WWW-Authenticate", "Bearer")
    if _is_api(request):
        return error_json(status, message, extra)
    templates: Jinja2Templates = request.app.state.templates
    return templates.TemplateResponse(
        request,
        "error.html",
        {
            "status": status,
            "title": _TITLES.get(status, "Error"),
            "message": message,
            "author": _author_or_none(request),
            "csrf": LazyToken(request),
            "csrf_field": CSRF_FIELD,
        },
        status_code=status,
        headers=extra,
    )


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(request, exc.status_code, str(exc.detail), exc.headers)


async def _store_error(request: Request, exc: Exception) -> Response:
    # Invalid ids and names (a ':' or a space in a key id...) are refused by the store.
    return error_response(request, 404, str(exc))


async def _server_error(request: Request, exc: Exception) -> Response:
    # Starlette answers these outside the middleware, so the security headers are added here.
    log.exception("error serving %s", request.url.path, exc_info=exc)
    if isinstance(exc, redis.exceptions.ConnectionError):
        return error_response(
            request, 503, "the league's database is not reachable", SECURITY_HEADERS
        )
    return error_response(request, 500, "internal error (it has been logged)", SECURITY_HEADERS)


def _favicon(_: Request) -> Response:
    icon = (HERE / "static" / "favicon.svg").read_bytes()
    return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"})


def create_app(
    settings: WebSettings | None = None, *, client: redis.Redis | None = None
) -> Starlette:
    """The web app. ``client`` (bytes replies) wins over ``settings.redis_url``."""
    settings = settings or WebSettings()
    routes = [
        *pages.routes(),
        *profiles.page_routes(),
        *playpages.routes(),
        *apidocs.routes(),
        *play_api.api_routes(),
        Mount("/api/v1", routes=[*api.routes(), *profiles.api_routes()]),
        Mount("/static", app=CachedStatic(directory=HERE / "static"), name="static"),
        # the pages name their icon inline; a browser asks for this one on anything else
        # (the API's JSON): the same tree, not a 404 in its console
        Route("/favicon.ico", _favicon),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        app.state.live.close()
        app.state.play.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        middleware=[
            Middleware(SafetyMiddleware),
            transfer_middleware(),
            Middleware(RateLimitMiddleware),
        ],
        exception_handlers={
            HTTPException: _http_error,
            store.StoreError: _store_error,
            Exception: _server_error,
        },
    )
    app.state.settings = settings
    app.state.redis = client or redis.Redis.from_url(settings.redis_url)
    app.state.indexed = False  # see resources.redis_of
    app.state.check = settings.check
    app.state.uploads = UploadGate(settings.upload_concurrency, settings.upload_queue)
    app.state.live = LiveHub(app.state.redis, settings.live_delay_turns, settings.live_max_viewers)
    app.state.play = PlayFeeds(app.state.redis, settings.live_max_viewers)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    pages.install_filters(templates)
    templates.env.globals["static_url"] = static_url
    app.state.templates = templates
    return app


def app_from_env() -> Starlette:
    """For ``uvicorn arboretum_web.app:app_from_env --factory``: Redis from ``$REDIS_URL``, the
    live games' delay from ``$ARENA_LIVE_DELAY`` (turns)."""
    import os

    delay = os.environ.get("ARENA_LIVE_DELAY", "0")
    if not delay.isdigit():
        raise SystemExit(f"ARENA_LIVE_DELAY is a number of turns, not {delay!r}")
    try:
        settings = WebSettings(
            redis_url=os.environ.get("REDIS_URL", WebSettings.redis_url),
            live_delay_turns=int(delay),
        )
    except ValueError as exc:  # ARENA_RATE_LIMITS, ARENA_CASUAL_*
        raise SystemExit(str(exc)) from None
    return create_app(settings)
