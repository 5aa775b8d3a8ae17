"""Who is asking: the author a request is signed in as, by bearer token or sign-in cookie."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.requests import Request

from . import authors

__all__ = ["AUTH_COOKIE", "request_author", "required_author"]

AUTH_COOKIE = "arena_token"
SEND_TOKEN = "send Authorization: Bearer <token> (arena web author add)"


def _sent_token(request: Request) -> str | None:
    """The token the request sends: its ``Authorization: Bearer`` header, else its cookie."""
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return request.cookies.get(AUTH_COOKIE) or None


def required_author(request: Request, *, bearer: bool = False) -> str:
    """The request's author, else 401 saying what is wrong: no token sent (``bearer``: no
    ``Authorization: Bearer`` header, the sign-in cookie not taken), or a token that is not
    valid."""
    header = request.headers.get("authorization")
    if header is not None and not header.lower().startswith("bearer "):
        raise HTTPException(401, "the Authorization header is not Bearer <token>")
    if header is None and (bearer or AUTH_COOKIE not in request.cookies):
        raise HTTPException(401, SEND_TOKEN)
    author = request_author(request)
    if author is None:
        raise HTTPException(401, "the token is not valid: it is unknown, or was rotated or removed")
    return author


def request_author(request: Request) -> str | None:
    """The author authenticated by ``Authorization: Bearer`` or the login cookie, else None."""
    token = _sent_token(request)
    if not token:
        return None
    cached = request.scope.get("arena.author")
    if cached is not None:
        return str(cached) or None
    author = authors.authenticate(request.app.state.redis, token)
    request.scope["arena.author"] = author or ""
    return author
