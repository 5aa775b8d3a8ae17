"""The OpenAPI paths and schemas of an author's own actions (:mod:`.author_api`,
:mod:`.contest_api`): a declarative table beside ``openapi_schemas``, merged by ``openapi.py``."""

from __future__ import annotations

from typing import Any

from .openapi_schemas import array, closed, ref

__all__ = ["author_paths", "author_schemas"]

NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_NAME = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NAME_PATTERN}
_SPEC = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "description": "a bot: NAME (its latest version) or NAME@VERSION (a prefix of the id)",
}
_VERSION = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_OPT_VERSION = {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"}
_STR = {"type": "string"}
_NUM = {"type": "number"}
_COUNT = {"type": "integer", "minimum": 0}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(**codes: str) -> dict[str, Any]:
    """Error responses by status (``e401="why"``)."""
    return {
        code[1:]: {
            "description": text,
            "content": {"application/json": {"schema": ref("Error")}},
        }
        for code, text in codes.items()
    }


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "schema": _NAME,
        "description": description,
    }


def _body(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "required": True,
        "description": description,
        "content": {"application/json": {"schema": schema}},
    }


SECURED: list[dict[str, list[str]]] = [{"bearer": []}]
E401 = "no Authorization: Bearer token, or not an author's"


def author_paths() -> dict[str, Any]:
    league = _path_param("name", "the ladder's name")
    return {
        "/api/v1/me/bots": {
            "get": {
                "summary": "The bots of the token's author, with their versions' count",
                "security": SECURED,
                "parameters": [],
                "responses": {"200": _ok("my bots", ref("MyBots")), **_errors(e401=E401)},
            }
        },
        "/api/v1/bots/{name}/versions": {
            "get": {
                "summary": "A bot's versions, oldest first",
                "parameters": [_path_param("name", "bot name")],
                "responses": {
                    "200": _ok("versions", ref("BotVersions")),
                    **_errors(e404="no such bot"),
                },
            }
        },
        "/api/v1/leagues/{name}/members": {
            "get": {
                "summary": "A ladder's members, and whether authors may join it",
                "parameters": [league],
                "responses": {
                    "200": _ok("members", ref("LadderMembers")),
                    **_errors(e404="no such league", e409="a round robin, not a ladder"),
                },
            },
            "post": {
                "summary": "Join one of my bots to a ladder open to authors",
                "security": SECURED,
                "parameters": [league],
                "requestBody": _body(
                    closed({"bot": _SPEC}), "the bot (its version replaces the bot's member)"
                ),
                "responses": {
                    "201": _ok("joined", ref("Joined")),
                    **_errors(
                        e400='a body that is not {"bot": NAME}',
                        e401=E401,
                        e403="another author's bot, or a ladder not open to authors",
                        e404="no such league or bot (version)",
                        e409="a round robin, a closed ladder, or the version is a member already",
                        e413="a body over 16 KiB",
                    ),
                },
            },
        },
        "/api/v1/leagues/{name}/members/{bot}": {
            "delete": {
                "summary": "Take one of my bots out of a ladder open to authors",
                "security": SECURED,
                "parameters": [league, _path_param("bot", "my bot's name")],
                "responses": {
                    "200": _ok("left", ref("Left")),
                    **_errors(
                        e401=E401,
                        e403="another author's bot, or a ladder not open to authors",
                        e404="no such league or bot",
                        e409="a round robin, a closed ladder, or the bot is no member",
                    ),
                },
            }
        },
    }


def author_schemas() -> dict[str, Any]:
    version_row = closed(
        {
            "index": {"type": "integer", "minimum": 1},
            "id": _VERSION,
            "created": _NUM,
            "size": {**_COUNT, "description": "bytes"},
            "files": _COUNT,
        }
    )
    return {
        "MyBots": closed(
            {
                "author": _STR,
                "bots": array(
                    closed(
                        {
                            "name": _STR,
                            "owner": _STR,
                            "created": _NUM,
                            "versions": _COUNT,
                            "latest": _OPT_VERSION,
                        }
                    )
                ),
            }
        ),
        "BotVersions": closed(
            {"bot": _STR, "owner": {"type": ["string", "null"]}, "versions": array(version_row)}
        ),
        "LadderMembers": closed(
            {
                "league": _STR,
                "open": {"type": "boolean", "description": "authors may join and leave it"},
                "members": array(closed({"bot": _STR, "version": _VERSION})),
            }
        ),
        "Joined": closed(
            {
                "league": _STR,
                "bot": _STR,
                "version": _VERSION,
                "replaced": {**_OPT_VERSION, "description": "the bot's member it replaced"},
            }
        ),
        "Left": closed({"league": _STR, "bot": _STR, "version": _VERSION}),
    }
