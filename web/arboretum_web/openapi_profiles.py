"""The OpenAPI paths of authors' pages and webhooks (:mod:`.profiles`), merged by ``openapi.py``."""

from __future__ import annotations

from typing import Any

from arboretum_worker.webhooks import MAX_URL, URL_PATTERN

from .openapi_schemas import array, closed, ref

__all__ = ["profile_paths", "profile_schemas"]

_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
}
_SECURED: list[dict[str, list[str]]] = [{"bearer": []}]
_E401 = "no Authorization: Bearer token, or not an author's"
_OBJ = {"type": "object"}
_OPT_STR = {"type": ["string", "null"]}
_URL = {
    "type": "string",
    "maxLength": MAX_URL,
    "pattern": URL_PATTERN,
    "description": "an http or https URL: a host name or IPv4 address, no user or password",
}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(**codes: str) -> dict[str, Any]:
    return {
        code[1:]: {"description": text, "content": {"application/json": {"schema": ref("Error")}}}
        for code, text in codes.items()
    }


def profile_paths() -> dict[str, Any]:
    return {
        "/api/v1/authors/{name}": {
            "get": {
                "summary": "An author's public profile: bots, versions, ratings, recent results",
                "parameters": [{"name": "name", "in": "path", "required": True, "schema": _NAME}],
                "responses": {
                    "200": _ok("the profile", ref("AuthorProfile")),
                    **_errors(e404="no such author"),
                },
            }
        },
        "/api/v1/me/dashboard": {
            "get": {
                "summary": "What of mine is queued, running, finished, failed or faulted; "
                "my tests, challenges and webhook deliveries",
                "security": _SECURED,
                "parameters": [],
                "responses": {"200": _ok("the dashboard", ref("Dashboard")), **_errors(e401=_E401)},
            }
        },
        "/api/v1/me/webhook": {
            "get": {
                "summary": "My webhook and its latest deliveries",
                "security": _SECURED,
                "parameters": [],
                "responses": {"200": _ok("the webhook", ref("Webhook")), **_errors(e401=_E401)},
            },
            "put": {
                "summary": "Set my webhook; the answer holds its signing secret, shown once",
                "security": _SECURED,
                "parameters": [],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": closed({"url": _URL})}},
                },
                "responses": {
                    "200": _ok(
                        "set", closed({"url": {"type": "string"}, "secret": {"type": "string"}})
                    ),
                    **_errors(
                        e400="not an http(s) URL of at most 500 characters",
                        e401=_E401,
                        e413="a body over 16 KiB",
                    ),
                },
            },
            "delete": {
                "summary": "Remove my webhook",
                "security": _SECURED,
                "parameters": [],
                "responses": {
                    "200": _ok("removed", closed({"url": {"type": "null"}})),
                    **_errors(e401=_E401, e404="no webhook set"),
                },
            },
        },
    }


def profile_schemas() -> dict[str, Any]:
    rows = array(_OBJ)
    return {
        "AuthorProfile": closed(
            {"author": {"type": "string"}, "bots": rows, "ratings": rows, "recent": rows}
        ),
        "Dashboard": closed(
            {
                "author": {"type": "string"},
                "bots": array({"type": "string"}),
                **{s: rows for s in ("queued", "running", "finished", "failed", "faulted")},
                "challenges": rows,
                "tests": rows,
                "webhook": closed({"url": _OPT_STR, "deliveries": rows}),
            }
        ),
        "Webhook": closed(
            {"url": _OPT_STR, "events": array({"type": "string"}), "deliveries": rows}
        ),
    }
