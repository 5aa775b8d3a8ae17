"""The OpenAPI 3.1 document of ``/api/v1`` (hand-written; a test checks it lists every route)."""

from __future__ import annotations

from typing import Any

__all__ = ["openapi_document"]


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"description": description, "content": content}


_ERR = {"description": "error", "content": {"application/json": {"schema": _ref("Error")}}}


def _param(name: str, where: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": where,
        "required": where == "path",
        "schema": schema,
        "description": description,
    }


_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 0}
_BOOL = {"type": "boolean"}
_NUM = {"type": "number"}
_OPT_NUM = {"type": ["number", "null"]}

LEAGUE_Q = _param("league", "query", _STR, "league name (default: the newest league)")
NAME_P = _param("name", "path", _STR, "bot or league name")
MATCH_P = _param("match_id", "path", _STR, "match id")
GAME_P = _param("game", "path", _INT, "game index within the match, from 0")
SEAT_P = _param("seat", "path", _INT, "seat, from 0")


def _get(summary: str, params: list[dict[str, Any]], ok: dict[str, Any], *codes: int) -> Any:
    responses: dict[str, Any] = {"200": ok}
    for code in codes:
        responses[str(code)] = _ERR
    return {"get": {"summary": summary, "parameters": params, "responses": responses}}


def openapi_document() -> dict[str, Any]:
    schemas: dict[str, Any] = {
        "Error": {
            "type": "object",
            "properties": {
                "error": {
                    "type": "object",
                    "properties": {"status": {"type": "integer"}, "message": _STR},
                }
            },
        },
        "LeaderboardRow": {
            "type": "object",
            "properties": {
                "rank": {"type": "integer"},
                "bot": _STR,
                "version": _STR,
                "version_index": {"type": "integer"},
                "latest": _BOOL,
                "elo": {**_NUM, "description": "live Elo"},
                "rating": {**_OPT_NUM, "description": "Bradley-Terry fit"},
                "rating_low": {**_OPT_NUM, "description": "95% interval, low end"},
                "rating_high": {**_OPT_NUM, "description": "95% interval, high end"},
                "games": {"type": "integer"},
                "wins": {"type": "integer"},
                "shared_wins": {"type": "integer"},
                "win_share": _NUM,
                "win_rate": {**_NUM, "description": "win_share / games"},
                "mean_rank": _OPT_NUM,
                "last_played": {**_OPT_NUM, "description": "Unix time"},
            },
        },
        "Leaderboard": {
            "type": "object",
            "properties": {
                "league": {"type": ["string", "null"]},
                "all_versions": _BOOL,
                "rows": {"type": "array", "items": _ref("LeaderboardRow")},
            },
        },
        "League": {"type": "object", "description": "settings, status and progress"},
        "Bot": {
            "type": "object",
            "properties": {
                "name": _STR,
                "owner": {"type": ["string", "null"]},
                "created": _NUM,
                "versions": {"type": "array", "items": {"type": "object"}},
                "leagues": {"type": "array", "items": _STR},
            },
        },
        "Match": {
            "type": "object",
            "description": "seats, status, result; seed only once revealed (the deal is over)",
        },
        "Replay": {
            "type": "object",
            "description": "docs/replay-format.md, plus `view`: {seat, hidden, revealed, "
            "owned_seats}. Until the game (and every rotation of its deal) is over, or with "
            "`seat`, the deck, seed and hidden cards are null.",
        },
        "SequentialTest": {
            "type": "object",
            "description": "an `arena sprt --league` test (docs/sprt.md)",
            "properties": {
                "id": _STR,
                "status": {"enum": ["running", "finished", "cancelled", "failed"]},
                "verdict": {"enum": ["H0", "H1", "inconclusive", None]},
                "reason": _STR,
                "new": {"type": "object", "description": "{version, bot}"},
                "old": {"type": "object", "description": "{version, bot}"},
                "elo0": _NUM,
                "elo1": _NUM,
                "alpha": _NUM,
                "beta": _NUM,
                "max_pairs": {"type": ["integer", "null"]},
                "lower_bound": {**_NUM, "description": "accept H0 at or below"},
                "upper_bound": {**_NUM, "description": "accept H1 at or above"},
                "llr": {**_NUM, "description": "log-likelihood ratio after the counted pairs"},
                "pairs": {"type": "integer"},
                "pentanomial": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "description": "pairs scoring 0, 1/2, 1, 3/2, 2 for NEW",
                },
                "wins": {"type": "integer"},
                "draws": {"type": "integer"},
                "losses": {"type": "integer"},
                "elo": {**_OPT_NUM, "description": "NEW minus OLD, logistic Elo"},
                "elo_low": {**_OPT_NUM, "description": "95% interval, low end"},
                "elo_high": {**_OPT_NUM, "description": "95% interval, high end"},
                "llr_history": {
                    "type": "array",
                    "items": _NUM,
                    "description": "the LLR after each counted pair (one test only)",
                },
            },
        },
        "Submitted": {
            "type": "object",
            "properties": {
                "bot": _STR,
                "version": {**_STR, "description": "sha256 of the files"},
                "index": {"type": "integer"},
                "created": {**_BOOL, "description": "false when the version existed already"},
                "url": _STR,
            },
        },
    }
    paths: dict[str, Any] = {
        "/api/v1/openapi.json": _get("This document", [], _ok("OpenAPI 3.1")),
        "/api/v1/health": _get("Liveness (Redis reachable)", [], _ok("ok"), 503),
        "/api/v1/me": _get("The author of the token", [], _ok("author and bots"), 401),
        "/api/v1/leagues": _get("Every league", [], _ok("leagues")),
        "/api/v1/leagues/{name}": _get(
            "A league: settings, progress, standings", [NAME_P], _ok("league", _ref("League")), 404
        ),
        "/api/v1/leagues/{name}/leaderboard": _get(
            "A league's leaderboard",
            [NAME_P, _param("all_versions", "query", _BOOL, "every version, not only the latest")],
            _ok("leaderboard", _ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/leaderboard": _get(
            "The leaderboard of a league (default: the newest)",
            [LEAGUE_Q, _param("all_versions", "query", _BOOL, "every version")],
            _ok("leaderboard", _ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/bots": _get("Every bot", [], _ok("bots")),
        "/api/v1/bots/{name}": _get(
            "A bot and its versions", [NAME_P], _ok("bot", _ref("Bot")), 404
        ),
        "/api/v1/bots/{name}/history": _get(
            "Live Elo after every game, per version", [NAME_P, LEAGUE_Q], _ok("history"), 404
        ),
        "/api/v1/bots/{name}/head-to-head": _get(
            "Pairwise record of each version against each opponent version",
            [NAME_P, LEAGUE_Q],
            _ok("head to head"),
            404,
        ),
        "/api/v1/bots/{name}/versions": {
            "post": {
                "summary": "Submit a new version of an author's bot",
                "security": [{"bearer": []}],
                "parameters": [
                    NAME_P,
                    _param("filename", "query", _STR, "with a raw body: the file's name"),
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "multipart/form-data": {
                            "schema": {
                                "type": "object",
                                "properties": {"file": {"type": "string", "format": "binary"}},
                            }
                        },
                        "application/octet-stream": {
                            "schema": {"type": "string", "format": "binary"}
                        },
                    },
                    "description": "a .py file, or a .tar/.tar.gz/.zip of the bot's folder "
                    "(with bot.py at its root)",
                },
                "responses": {
                    "201": _ok("stored as a new version", _ref("Submitted")),
                    "200": _ok("the same files were already this version", _ref("Submitted")),
                    "400": _ERR,
                    "401": _ERR,
                    "403": _ERR,
                    "409": _ERR,
                    "411": _ERR,
                    "413": _ERR,
                    "503": {**_ERR, "description": "no sandbox here to check the bot"},
                },
            }
        },
        "/api/v1/matches": _get(
            "Matches, filtered",
            [
                _param("league", "query", _STR, "league name"),
                _param("bot", "query", _STR, "bot name (any version)"),
                _param(
                    "status",
                    "query",
                    {"enum": ["queued", "running", "finished", "failed", "cancelled"]},
                    "match status",
                ),
                _param("offset", "query", _INT, "skip this many"),
                _param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 200}, "page"),
            ],
            _ok("matches"),
            400,
            404,
        ),
        "/api/v1/matches/{match_id}": _get("A match", [MATCH_P], _ok("match", _ref("Match")), 404),
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
                    _INT,
                    "only what this seat knew (for a game not over: its author only)",
                ),
                _param("download", "query", _BOOL, "as an attachment"),
            ],
            _ok("replay", _ref("Replay")),
            400,
            401,
            403,
            404,
        ),
        "/api/v1/matches/{match_id}/seats/{seat}/log": _get(
            "What the seat's bot printed (its author only)",
            [MATCH_P, SEAT_P],
            _ok("log"),
            401,
            403,
            404,
        ),
        "/api/v1/matches/{match_id}/seats/{seat}/faults": _get(
            "The seat's faults (its author only)", [MATCH_P, SEAT_P], _ok("faults"), 401, 403, 404
        ),
        "/api/v1/sprt": _get(
            "Every sequential test, newest first",
            [],
            _ok("tests", {"type": "object", "properties": {"tests": {"type": "array"}}}),
        ),
        "/api/v1/sprt/{test_id}": _get(
            "A sequential test, with the LLR after every pair",
            [_param("test_id", "path", _STR, "the test's id")],
            _ok("test", _ref("SequentialTest")),
            404,
        ),
    }
    for path, item in paths.items():
        if path.endswith("/me") or "/seats/" in path:
            for op in item.values():
                op["security"] = [{"bearer": []}]
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Arboretum Arena API",
            "version": "1",
            "description": "Leaderboards, bots, leagues, matches and replays of Arboretum Arena; "
            "bot submission for authors. See docs/web.md.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an author token (arena web author add NAME)",
                }
            },
        },
    }
