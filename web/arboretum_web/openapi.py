"""The OpenAPI 3.1 document of ``/api/v1`` (hand-written).

Every response has a typed schema (objects list their properties, which ones are always there,
and allow no other), every parameter is bounded. Tests check that it lists every route and
a bounded schemathesis run checks the answers against it (``tests/web/test_openapi.py``).
"""

from __future__ import annotations

from typing import Any

from .analysis_api import analysis_paths, analysis_schemas
from .openapi_authors import TEST_EXTRA, author_paths, author_schemas, contest_paths
from .openapi_profiles import profile_paths, profile_schemas
from .openapi_schemas import BOOL, MATCH_STATUS, ref, schemas
from .play_api import play_paths, play_schemas
from .ratelimit import exempt

RATE_LIMITED = (
    "over the rate limit (docs/web.md, Rate limits): Retry-After gives the seconds until the next "
    "request is allowed, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset and "
    "RateLimit-Policy the bucket"
)
_METHODS = ("get", "put", "post", "delete", "patch")

__all__ = ["MAX_FILENAME", "MAX_GAME", "MAX_OFFSET", "RATE_LIMITED", "openapi_document"]

MAX_OFFSET = 1_000_000
"""The largest ``offset`` of the match list."""
MAX_GAME = 999
"""The largest game index a path may name (a series has at most 100 games)."""
MAX_FILENAME = 200

NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MATCH_ID_PATTERN = "^[0-9A-Za-z_.-]{1,64}$"


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _err(description: str = "error") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref("Error")}}}


def _param(
    name: str, where: str, schema: dict[str, Any], description: str, required: bool = False
) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path" or required,
        "schema": schema,
        "description": description,
    }


_NAME = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NAME_PATTERN}
_NAME_OR_EMPTY = {
    "type": "string",
    "maxLength": 64,
    "pattern": "^(|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$",
}
BOT_P = _param("name", "path", _NAME, "bot name")
LEAGUE_P = _param("name", "path", _NAME, "league name")
LEAGUE_Q = _param(
    "league", "query", _NAME_OR_EMPTY, "league name (default, or empty: the newest league)"
)
MATCH_P = _param(
    "match_id", "path", {"type": "string", "maxLength": 64, "pattern": MATCH_ID_PATTERN}, "match id"
)
GAME_P = _param(
    "game", "path", {"type": "integer", "minimum": 0, "maximum": MAX_GAME}, "game index, from 0"
)
SEAT_P = _param("seat", "path", {"type": "integer", "minimum": 0, "maximum": 3}, "seat, from 0")
ALL_VERSIONS_Q = _param(
    "all_versions", "query", BOOL, "every version that played, not only each bot's row"
)


def _get(
    summary: str,
    params: list[dict[str, Any]],
    ok: dict[str, Any],
    *codes: int,
    secured: bool = False,
) -> dict[str, Any]:
    responses: dict[str, Any] = {"200": ok}
    for code in codes:
        responses[str(code)] = _err()
    op: dict[str, Any] = {"summary": summary, "parameters": params, "responses": responses}
    if secured:
        op["security"] = [{"bearer": []}]
    return {"get": op}


def _submit() -> dict[str, Any]:
    binary = {"type": "string", "format": "binary", "maxLength": 2 * 1024 * 1024}
    filename = {"type": "string", "maxLength": MAX_FILENAME, "pattern": "^[^/]*$"}
    name_help = (
        "the file's name (mybot.py, mybot.tar.gz, mybot.zip): its suffix tells what the body is; "
        "without it (or empty) the content does (a zip, a tar or a compressed tar, else a .py "
        "file)"
    )
    return {
        "post": {
            "summary": "Submit a new version of an author's bot",
            "security": [{"bearer": []}],
            "parameters": [
                BOT_P,
                _param("filename", "query", filename, "with a raw body: " + name_help),
                _param("X-Filename", "header", filename, "the same as `filename`"),
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {
                            "type": "object",
                            "properties": {"file": binary},
                            "required": ["file"],
                        },
                        "encoding": {"file": {"contentType": "application/octet-stream"}},
                    },
                    "application/octet-stream": {"schema": binary},
                },
                "description": "a .py file, or a .tar (plain, gzip, bzip2 or xz) or .zip of the "
                "bot's folder with bot.py at its root: at most 2 MiB, unpacking to at most 4 MiB "
                "(skipped entries included), 1 MiB and 200 files kept (docs/web.md)",
            },
            "responses": {
                "201": _ok("stored as a new version", ref("Submitted")),
                "200": _ok("the same files were already this version", ref("Submitted")),
                "400": _err("not a bot the league accepts (the message says why)"),
                "401": _err("no token, or not an author's"),
                "403": _err("another author's bot"),
                "404": _err("a name that is not one path segment"),
                "409": _err("these files are another bot's version"),
                "411": _err("a multipart body without Content-Length"),
                "413": _err("over the limits"),
                "429": _err(
                    "the bot had its quota of new versions today (ARENA_SUBMIT_QUOTA a UTC "
                    "day, default 5): Retry-After gives the seconds until the next is accepted"
                ),
                "503": _err("no sandbox here to check the bot, or too many uploads waiting"),
            },
        }
    }


def _account_paths() -> dict[str, Any]:
    """The document itself, health, the token's author, leagues and bots."""
    return {
        "/api/v1/openapi.json": _get("This document", [], _ok("OpenAPI 3.1", {"type": "object"})),
        "/api/v1/health": _get("Liveness (Redis reachable)", [], _ok("ok", ref("Health")), 503),
        "/api/v1/me": _get(
            "The author of the token", [], _ok("author and bots", ref("Me")), 401, secured=True
        ),
        "/api/v1/leagues": _get("Every league", [], _ok("leagues", ref("Leagues"))),
        "/api/v1/leagues/{name}": _get(
            "A league: settings, progress, standings",
            [LEAGUE_P],
            _ok("league", ref("League")),
            404,
        ),
        "/api/v1/leagues/{name}/leaderboard": _get(
            "A league's leaderboard",
            [LEAGUE_P, ALL_VERSIONS_Q],
            _ok("leaderboard", ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/leaderboard": _get(
            "The leaderboard of a league (default: the newest)",
            [LEAGUE_Q, ALL_VERSIONS_Q],
            _ok("leaderboard", ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/bots": _get("Every bot", [], _ok("bots", ref("Bots"))),
        "/api/v1/bots/{name}": _get("A bot and its versions", [BOT_P], _ok("bot", ref("Bot")), 404),
        "/api/v1/bots/{name}/history": _get(
            "Live Elo after every game, per version",
            [BOT_P, LEAGUE_Q],
            _ok("history", ref("History")),
            404,
        ),
        "/api/v1/bots/{name}/head-to-head": _get(
            "Pairwise record of each version against each opponent version",
            [BOT_P, LEAGUE_Q],
            _ok("head to head", ref("HeadToHead")),
            404,
        ),
        "/api/v1/bots/{name}/versions": _submit(),
    }


def _match_paths() -> dict[str, Any]:
    """Matches: the list, one match, its live feed, replays, a seat's log and faults."""
    return {
        "/api/v1/matches": _get(
            "Matches, filtered, in schedule order",
            [
                _param("league", "query", _NAME_OR_EMPTY, "league name (empty: every league)"),
                _param("bot", "query", _NAME_OR_EMPTY, "bot name, any version (empty: every bot)"),
                _param(
                    "status",
                    "query",
                    {"enum": ["", *MATCH_STATUS["enum"]]},
                    "match status (empty: any)",
                ),
                _param(
                    "offset",
                    "query",
                    {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
                    "skip this many",
                ),
                _param(
                    "limit",
                    "query",
                    {"type": "integer", "minimum": 1, "maximum": 200, "default": 50},
                    "page size",
                ),
            ],
            _ok("matches", ref("Matches")),
            400,
            404,
        ),
        "/api/v1/matches/{match_id}": _get("A match", [MATCH_P], _ok("match", ref("Match")), 404),
        "/api/v1/matches/{match_id}/live": _get(
            "The match's public events as they happen (server-sent events; docs/web.md)",
            [MATCH_P],
            {
                "description": "an event stream, ended by an `over` event once the match is",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            404,
            503,
        ),
        "/api/v1/matches/{match_id}/games/{game}/replay": _get(
            "A game's replay (JSON)",
            [
                MATCH_P,
                GAME_P,
                _param(
                    "seat",
                    "query",
                    {"type": "integer", "minimum": 0, "maximum": 3},
                    "only what this seat knew (for a game not over: its author only)",
                ),
                _param("download", "query", BOOL, "as an attachment"),
            ],
            _ok("replay", ref("Replay")),
            400,
            401,
            403,
            404,
        ),
        "/api/v1/matches/{match_id}/seats/{seat}/log": _get(
            "What the seat's bot printed (its author only)",
            [MATCH_P, SEAT_P],
            _ok("log", ref("Log")),
            401,
            403,
            404,
            secured=True,
        ),
        "/api/v1/matches/{match_id}/seats/{seat}/faults": _get(
            "The seat's faults (its author only)",
            [MATCH_P, SEAT_P],
            _ok("faults", ref("Faults")),
            401,
            403,
            404,
            secured=True,
        ),
        "/api/v1/matches/{match_id}/games/{game}/seats/{seat}/output": _get(
            "What the seat's bot printed during each of its steps of the game (its author only)",
            [MATCH_P, GAME_P, SEAT_P, _param("download", "query", BOOL, "as an attachment")],
            _ok("the output per step", ref("StepOutput")),
            401,
            403,
            404,
            secured=True,
        ),
    }


def _sprt_paths() -> dict[str, Any]:
    """The sequential tests."""
    return {
        "/api/v1/sprt": _get(
            "Every sequential test, newest first", [], _ok("tests", ref("SequentialTests"))
        ),
        "/api/v1/sprt/{test_id}": _get(
            "A sequential test, with the LLR after every pair",
            [
                _param(
                    "test_id",
                    "path",
                    {"type": "string", "maxLength": 64, "pattern": MATCH_ID_PATTERN},
                    "the test's id",
                )
            ],
            _ok("test", ref("SequentialTest")),
            404,
        ),
    }


def _schemas() -> dict[str, Any]:
    out = {**schemas(), **author_schemas(), **profile_schemas(), **analysis_schemas()}
    out.update(play_schemas())
    test = out["SequentialTest"]  # an author's test adds its author and its matches
    test["properties"] = {**test["properties"], **TEST_EXTRA}
    test["required"] = [*test["required"], "author"]
    return out


def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {**_account_paths(), **_match_paths(), **_sprt_paths()}
    paths.update(analysis_paths())
    paths.update(play_paths())
    for path, item in {**author_paths(), **contest_paths(), **profile_paths()}.items():
        paths[path] = {**paths.get(path, {}), **item}
    _rate_limited(paths)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Arboretum Arena API",
            "version": "1",
            "description": "Leaderboards, bots, leagues, matches and replays of Arboretum Arena; "
            "live games; bot submission for authors. See docs/web.md. Every error is "
            '{"error": {"status", "message"}}: a bad parameter 400 naming it, an unknown '
            "thing 404, a method a path does not take 405 with Allow.",
        },
        "paths": paths,
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an author token (arena web author add NAME)",
                }
            },
        },
    }


def _rate_limited(paths: dict[str, Any]) -> None:
    """Every operation the rate limiter counts (all but a casual game's own moves) may answer
    429: said once here rather than by each operation (one that has a 429 of its own, a quota,
    gets the rate limit added to its description)."""
    for path, item in paths.items():
        for method in _METHODS:
            operation = item.get(method)
            if operation is None or exempt(method, path):
                continue
            responses = operation["responses"]
            if "429" in responses:
                answer = dict(responses["429"])
                answer["description"] = f"{answer['description']}; or {RATE_LIMITED}"
                responses["429"] = answer
            else:
                responses["429"] = {
                    "description": RATE_LIMITED,
                    "content": {"application/json": {"schema": ref("Error")}},
                }
