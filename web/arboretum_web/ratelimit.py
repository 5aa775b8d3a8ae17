"""Rate limits on every author endpoint, shared by all web processes through Redis; and the
audit log's entry of every state-changing request of an author.

:class:`RateLimitMiddleware` is route-agnostic, so an endpoint added later is limited without a
line of its own. It counts

- every request of a signed-in author (``Authorization: Bearer`` token or the sign-in cookie),
  in a bucket per author;
- every state-changing request (not ``GET``/``HEAD``/``OPTIONS``) and every ``/api/`` request
  without a valid token, in a bucket per client address.

Each bucket has two limits per window: reads (``GET``, ``HEAD``) and writes (the rest). The
count is the generic cell rate algorithm (GCRA, the leaky bucket as a meter): a bucket allows
``limit`` requests at once and then one every ``window_s / limit`` seconds, so no window's edge
lets twice the limit through in a moment, as a fixed window does. One Lua script keeps the
bucket's *theoretical arrival time* on ``Keys.ratelimit(bucket)`` (a string that expires when the
bucket is full again; Redis 6.2 is enough). Past the limit the answer is ``429`` with
``Retry-After`` (seconds until the next request is allowed). Every counted response carries the
rate-limit fields of the IETF draft *RateLimit header fields for HTTP*
(draft-ietf-httpapi-ratelimit-headers-07, the separate fields): ``RateLimit-Limit``,
``RateLimit-Remaining`` (requests allowed now), ``RateLimit-Reset`` (seconds until the whole
limit is allowed again) and ``RateLimit-Policy`` (``LIMIT;w=WINDOW``).

A casual game's own moves (``POST /play/{id}/decision`` and ``/resign``) are neither counted nor
logged: a game is bounded by itself, and starting games is what the casual limits count
(:mod:`arboretum_worker.casual`).

When Redis does not answer, requests pass uncounted (the endpoint reports the outage itself).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from dataclasses import dataclass, fields, replace
from typing import Any

import redis
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arboretum_worker.keys import Keys

from . import authorlog
from .identity import AUTH_COOKIE, request_author

__all__ = ["ENV", "RateLimitMiddleware", "RateLimits", "Verdict", "count", "exempt"]

log = logging.getLogger(__name__)

ENV = "ARENA_RATE_LIMITS"
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
_GAME_MOVE = re.compile(r"/play/[^/]+/(decision|resign)")


def exempt(method: str, path: str) -> bool:
    """A casual game's own decision or resignation (never counted: see the module's docstring).
    ``path`` may be a route's template (``/play/{game_id}/decision``)."""
    return method.upper() == "POST" and _GAME_MOVE.fullmatch(path) is not None


def _game_move(scope: Scope) -> bool:
    return exempt(scope["method"], scope["path"])


@dataclass(frozen=True, slots=True)
class RateLimits:
    """Requests allowed per window, per bucket (``$ARENA_RATE_LIMITS``: ``off``, or
    ``name=value`` pairs separated by commas, e.g. ``author_writes=30,window_s=60``)."""

    window_s: int = 60
    author_reads: int = 600
    author_writes: int = 60
    anonymous_reads: int = 300
    anonymous_writes: int = 30
    enabled: bool = True

    @classmethod
    def parse(cls, text: str) -> RateLimits:
        """``off``, or ``name=value,...``; ValueError naming the bad part."""
        text = text.strip()
        if text.lower() in ("off", "0", "none"):
            return cls(enabled=False)
        names = {f.name for f in fields(cls)} - {"enabled"}
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in names:
                raise ValueError(
                    f"{ENV}: {part!r} is not NAME=N with NAME one of {', '.join(sorted(names))}"
                )
            if not value.strip().isdigit() or int(value) < 1:
                raise ValueError(f"{ENV}: {name} is a whole number from 1, not {value.strip()!r}")
            values[name] = int(value)
        return replace(cls(), **values)

    @classmethod
    def from_env(cls) -> RateLimits:
        text = os.environ.get(ENV, "")
        return cls.parse(text) if text.strip() else cls()

    def limit(self, author: bool, write: bool) -> int:
        if author:
            return self.author_writes if write else self.author_reads
        return self.anonymous_writes if write else self.anonymous_reads


@dataclass(frozen=True, slots=True)
class Verdict:
    """One request's count: ``remaining`` requests allowed now (below 0: this one is refused),
    ``reset_s`` until the whole limit is allowed again, ``retry_s`` until the next one is."""

    limit: int
    remaining: int
    reset_s: int
    window_s: int
    retry_s: int = 0

    @property
    def allowed(self) -> bool:
        return self.remaining >= 0

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(max(0, self.remaining)),
            "RateLimit-Reset": str(self.reset_s),
            "RateLimit-Policy": f"{self.limit};w={self.window_s}",
        }


_US = 1_000_000
"""The bucket counts in whole microseconds: its sums are exact (a time in microseconds is an
integer under 2**53, exact in Lua's doubles), so a burst of exactly the limit is allowed whole
whatever the clock reads; a time in seconds lost the last request of the burst to rounding."""

# KEYS[1]: the bucket's theoretical arrival time (TAT). ARGV: now, the interval between two
# requests at the steady rate (window / limit, rounded down) and the window; all in whole
# microseconds. A request is allowed when the bucket's debt after it (TAT - now) stays within
# the window. Returns {allowed, the debt: after the request when allowed, before it when refused}.
_GCRA = """
local now, interval, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tat < now then tat = now end
local debt = tat + interval - now
if debt > window then
    return {0, tat - now}
end
redis.call('SET', KEYS[1], string.format('%d', tat + interval),
           'PX', math.floor(debt / 1000) + 1000)
return {1, debt}
"""


def count(
    r: redis.Redis, bucket: str, limit: int, window_s: int, now: float | None = None
) -> Verdict:
    """Count one request in ``bucket`` (GCRA: ``limit`` at once, then ``limit`` a window);
    ``remaining`` below 0: refused, and not counted."""
    now_us = int((time.time() if now is None else now) * _US)
    window_us = window_s * _US
    interval_us = max(1, window_us // limit)  # rounded down: never fewer than the limit
    allowed, debt_us = r.register_script(_GCRA)(
        keys=[Keys.ratelimit(bucket)], args=[now_us, interval_us, window_us]
    )
    if not allowed:
        retry_us = debt_us + interval_us - window_us  # until one interval of the debt drained
        return Verdict(limit, -1, _seconds(debt_us), window_s, retry_s=_seconds(retry_us))
    remaining = min(limit - 1, (window_us - debt_us) // interval_us)
    return Verdict(limit, remaining, _seconds(debt_us), window_s)


def _seconds(span_us: int) -> int:
    """A span in microseconds as the whole seconds a header gives: rounded up, at least 1."""
    return max(1, -(-span_us // _US))


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "-"


def _bucket_of_address(address: str) -> str:
    # Addresses hold ':' (IPv6), which no key id may: a digest names the bucket.
    return "ip-" + hashlib.sha256(address.encode()).hexdigest()[:24]


def _action(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    if path is None:
        return f"{scope['method']} {scope['path']}"
    prefix = "/api/v1" if scope["path"].startswith("/api/v1/") else ""
    return f"{scope['method']} {prefix}{path}"


def _refusal(scope: Scope, verdict: Verdict) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    wait = verdict.retry_s
    message = (
        f"too many requests: the limit is {verdict.limit} per {verdict.window_s} s; "
        f"retry in {wait} s"
    )
    headers = {"Retry-After": str(wait), **verdict.headers()}
    if scope["path"].startswith("/api/"):
        body = json.dumps({"error": {"status": 429, "message": message}}).encode()
        headers["Content-Type"] = "application/json"
    else:
        body = (message + "\n").encode()
        headers["Content-Type"] = "text/plain; charset=utf-8"
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    return 429, raw, body


def _sends_token(request: Request) -> bool:
    return "authorization" in request.headers or AUTH_COOKIE in request.cookies


def _decide(
    r: redis.Redis, request: Request, limits: RateLimits, write: bool
) -> tuple[str | None, Verdict | None]:
    """The request's author, and its count when it is counted (None: not counted, or Redis did
    not answer)."""
    try:
        author = request_author(request)
    except redis.exceptions.RedisError:
        return None, None
    scope = request.scope
    if not limits.enabled or not (author is not None or write or scope["path"].startswith("/api/")):
        return author, None
    bucket = f"author-{author}" if author else _bucket_of_address(_address(scope))
    bucket += "-w" if write else "-r"
    try:
        verdict = count(r, bucket, limits.limit(author is not None, write), limits.window_s)
    except redis.exceptions.RedisError:
        log.warning("rate limit not counted: Redis did not answer")
        return author, None
    return author, verdict


class RateLimitMiddleware:
    """Counts each request of an author, every state-changing request and every anonymous API
    request; refuses those past their limit with 429; logs what authors change."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/static/") or _game_move(scope):
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        limits: RateLimits = state.settings.rate_limits
        write = scope["method"] not in _READS
        request = Request(scope)
        author, verdict = None, None
        if write or scope["path"].startswith("/api/") or _sends_token(request):
            # one hop to a thread for both Redis reads (the author is then cached on the scope)
            author, verdict = await run_in_threadpool(_decide, state.redis, request, limits, write)
        if verdict is not None and not verdict.allowed:
            status, headers, body = _refusal(scope, verdict)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            if author is not None:
                await self._log(state.redis, author, scope, status)
            return
        status_seen: list[int] = []

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_seen.append(int(message["status"]))
                if verdict is not None:
                    headers = MutableHeaders(scope=message)
                    for name, value in verdict.headers().items():
                        headers[name] = value
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        finally:
            if author is not None and write:
                await self._log(state.redis, author, scope, status_seen[0] if status_seen else 500)

    @staticmethod
    async def _log(r: redis.Redis, author: str, scope: Scope, status: int) -> None:
        try:
            await run_in_threadpool(
                authorlog.record,
                r,
                author,
                _action(scope),
                scope["path"],
                status,
                address=_address(scope),
            )
        except redis.exceptions.RedisError:
            log.warning("audit log entry lost: Redis did not answer")
