"""How responses travel: gzip when the browser accepts it, and caching of the static files.

:func:`middleware` is Starlette's ``GZipMiddleware`` (HTML, JS, CSS and JSON of 500 bytes or
more; never ``text/event-stream``, so the live feed is not buffered). :class:`CachedStatic`
serves ``/static``: a URL carrying the file's content hash (``?v=HASH``, written by
:func:`static_url` into every page) is cached for a year as immutable; any other URL is
``no-cache``, revalidated by its ETag.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

__all__ = ["GZIP_MINIMUM", "IMMUTABLE", "CachedStatic", "middleware", "static_url"]

STATIC = Path(__file__).parent / "static"
GZIP_MINIMUM = 500
"""Smaller bodies gain too little to pay for the gzip header and the work."""
IMMUTABLE = "public, max-age=31536000, immutable"


def middleware() -> Middleware:
    return Middleware(GZipMiddleware, minimum_size=GZIP_MINIMUM, compresslevel=6)


@cache
def _content_hash(name: str) -> str:
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


def static_url(name: str) -> str:
    """``/static/NAME?v=HASH``: a new URL whenever the file changes."""
    return f"/static/{name}?v={_content_hash(name)}"


class CachedStatic(StaticFiles):
    """Static files with ``Cache-Control``: immutable when the URL names the content hash."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            query = scope.get("query_string", b"").decode("latin-1")
            versioned = query.startswith("v=") and _hash_matches(path, query[2:])
            response.headers["Cache-Control"] = IMMUTABLE if versioned else "no-cache"
        return response


def _hash_matches(path: str, sent: str) -> bool:
    try:
        return sent == _content_hash(path)
    except OSError:
        return False
