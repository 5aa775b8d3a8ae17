"""What every response of the web app carries, and what every state-changing form must carry.

:class:`SafetyMiddleware` (pure ASGI, outermost) adds the security headers to every response
(pages, API, static files, errors) and sets the CSRF cookie when a page handed out a new token.

CSRF: a double-submit cookie. :func:`csrf_token` gives the form token of a request: the value of
the ``arena_csrf`` cookie (``HttpOnly``, ``SameSite=Strict``; ``__Host-`` prefixed when the app
sets Secure cookies, so no other host can plant one), or a new random one the middleware sets on
the response. Each state-changing form (sign-in, sign-out, the upload form) sends it back in a
hidden ``csrf`` field, and :func:`check_csrf` refuses the post (403) unless the field equals the
cookie and the request's ``Origin`` (when the browser sends one) is this site. Another site can
neither read the cookie nor set it, so it cannot forge the field. API calls authenticate with an
``Authorization`` header only (never the cookie), so they need no token.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "CSRF_FIELD",
    "SECURITY_HEADERS",
    "LazyToken",
    "SafetyMiddleware",
    "check_csrf",
    "csrf_cookie_name",
    "csrf_token",
]

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    )
)
"""No inline script or style anywhere (the pages set colours and widths through SVG attributes
or the CSSOM); the favicon is a ``data:`` image; the replay viewer fetches and streams from this
site only."""

SECURITY_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
}

CSRF_FIELD = "csrf"
_COOKIE = "arena_csrf"
_SCOPE_NEW = "arena.csrf_new"
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def csrf_cookie_name(secure: bool) -> str:
    return f"__Host-{_COOKIE}" if secure else _COOKIE


def _secure(scope: Scope) -> bool:
    app = scope.get("app")
    settings = getattr(getattr(app, "state", None), "settings", None)
    return bool(getattr(settings, "secure_cookies", False))


def _well_formed(token: str | None) -> bool:
    return token is not None and 20 <= len(token) <= 64 and set(token) <= _TOKEN_CHARS


def csrf_token(request: Request) -> str:
    """The token this request's forms must send back (a new one is set as a cookie)."""
    new = request.scope.get(_SCOPE_NEW)
    if new:
        return str(new)
    current = request.cookies.get(csrf_cookie_name(_secure(request.scope)))
    if _well_formed(current):
        return str(current)
    token = secrets.token_urlsafe(24)
    request.scope[_SCOPE_NEW] = token
    return token


class LazyToken:
    """:func:`csrf_token` for a template: asked (and the cookie set) only by a page that has a
    form."""

    __slots__ = ("_request",)

    def __init__(self, request: Request) -> None:
        self._request = request

    def __str__(self) -> str:
        return csrf_token(self._request)


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not sent by every browser for every form post; the token decides
    host = request.headers.get("host", "")
    return origin in (f"http://{host}", f"https://{host}")


def check_csrf(request: Request, form: Mapping[str, Any]) -> None:
    """Refuse (403) a form post whose token does not match the cookie, or from another site."""
    if not _same_origin(request):
        raise HTTPException(403, "this form was posted from another site")
    cookie = request.cookies.get(csrf_cookie_name(_secure(request.scope)))
    sent = form.get(CSRF_FIELD)
    if (
        not isinstance(sent, str)
        or not _well_formed(cookie)
        or not hmac.compare_digest(sent.encode(), str(cookie).encode())
    ):
        raise HTTPException(
            403, "the form's security token is missing or stale: reload the page and try again"
        )


class SafetyMiddleware:
    """Security headers on every response; the CSRF cookie when a new token was handed out."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    headers.setdefault(name, value)
                token = scope.get(_SCOPE_NEW)
                if token:
                    secure = _secure(scope)
                    cookie = (
                        f"{csrf_cookie_name(secure)}={token}; Path=/; HttpOnly; SameSite=Strict"
                    )
                    headers.append("Set-Cookie", cookie + ("; Secure" if secure else ""))
            await send(message)

        await self.app(scope, receive, send_with_headers)
