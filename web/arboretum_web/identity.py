"""Who is asking: the author a request is signed in as, by bearer token or sign-in cookie."""

from __future__ import annotations

from starlette.requests import Request

from . import authors

__all__ = ["AUTH_COOKIE", "request_author"]

AUTH_COOKIE = "arena_token"


def request_author(request: Request) -> str | None:
    """The author authenticated by ``Authorization: Bearer`` or the login cookie, else None."""
    token: str | None = None
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        token = header[7:].strip()
    elif AUTH_COOKIE in request.cookies:
        token = request.cookies[AUTH_COOKIE]
    if not token:
        return None
    cached = request.scope.get("arena.author")
    if cached is not None:
        return str(cached) or None
    author = authors.authenticate(request.app.state.redis, token)
    request.scope["arena.author"] = author or ""
    return author
