"""An author's client of the arena's web API, ``/api/v1`` (standard library only).

What an author does without Redis (``arena ... --server URL``) goes through :class:`WebClient`:
JSON in, JSON out, the author token as ``Authorization: Bearer``. A refusal raises
:class:`WebError` carrying the HTTP status and the server's one-line message (and, for a 429
or a 503, the seconds ``Retry-After`` asks to wait)::

    from arboretum_sdk.webclient import WebClient
    client = WebClient("https://arena.example", token)
    print(client.get("/me"))
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import urllib.error

# urllib.request and urllib.error (http.client, email, tempfile: about 10 ms of CPU) load on the
# first call: every ``arena bot run`` builds the parser of ``arena bot list --server``, which
# imports this module, and a bot never calls the web API.

__all__ = ["AUTHOR_TOKEN_ENV", "SERVER_ENV", "WebClient", "WebError", "read_token", "refusal"]

SERVER_ENV = "ARENA_SERVER"
"""The league's web server, when no ``--server`` is given."""
AUTHOR_TOKEN_ENV = "ARENA_AUTHOR_TOKEN"
"""The author token, when no ``--token-file`` (or ``--token``) is given."""


class WebError(Exception):
    """The server refused the call or could not be reached: ``status`` is the HTTP status (0
    without an answer), ``retry_after`` the seconds a 429 or 503 asks to wait (else None)."""

    def __init__(self, message: str, status: int = 0, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def read_token(token: str | None, token_file: Path | None) -> str | None:
    """The author token: from ``token_file``, else ``token``, else ``$ARENA_AUTHOR_TOKEN``."""
    if token_file is not None:
        try:
            text = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise WebError(f"cannot read the token file: {exc}") from None
        return text or None
    return token or os.environ.get(AUTHOR_TOKEN_ENV) or None


def refusal(exc: urllib.error.HTTPError, method: str, base: str) -> str:
    """What the server said of a refused request: the arena's own message; or, when the answer
    says no more than its status (not the arena's JSON, or a path it has no route for, most
    likely a wrong address), the status with the URL asked."""
    try:
        message = str(json.loads(exc.read())["error"]["message"])
    except (ValueError, KeyError, TypeError, OSError):
        message = str(exc.reason)
    if message != str(exc.reason):
        return message
    where = (exc.url or "").partition("?")[0]
    return f"{message} ({method} {where}: is {base} the arena's address?)"


class WebClient:
    """Calls to one arena's ``/api/v1``, as the author of ``token``."""

    def __init__(self, server: str, token: str | None, *, timeout: float = 60.0) -> None:
        if not server.startswith(("http://", "https://")):
            raise WebError(f"the server is a URL starting http:// or https://, not {server!r}")
        self.base = server.rstrip("/")
        self.token = token
        self.timeout = timeout

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        tail = f"?{urllib.parse.urlencode(query)}" if query else ""
        return f"{self.base}/api/v1{path}{tail}"

    def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        raw: bool = False,
    ) -> Any:
        """The answer's JSON (``raw``: its bytes); :class:`WebError` for any refusal."""
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        import urllib.error
        import urllib.request

        request = urllib.request.Request(
            self.url(path, params), data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                content = response.read()
        except urllib.error.HTTPError as exc:
            retry = exc.headers.get("Retry-After") if exc.headers else None
            seconds = int(retry) if retry and retry.isdigit() else None
            message = refusal(exc, method, self.base)
            if seconds is not None:
                message += f" (retry after {seconds} s)"
            raise WebError(f"HTTP {exc.code}: {message}", exc.code, seconds) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WebError(f"cannot reach {self.base}: {reason}") from None
        if raw:
            return content
        try:
            return json.loads(content) if content else None
        except ValueError:
            raise WebError(f"{self.base} did not answer with JSON (is it an arena?)") from None

    def get(self, path: str, **params: Any) -> Any:
        return self.call("GET", path, params=params)

    def post(self, path: str, body: Any = None) -> Any:
        return self.call("POST", path, body={} if body is None else body)

    def delete(self, path: str) -> Any:
        return self.call("DELETE", path)


def quote(segment: str) -> str:
    """One path segment, escaped."""
    return urllib.parse.quote(segment, safe="")
