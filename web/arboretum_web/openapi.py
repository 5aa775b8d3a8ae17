"""The OpenAPI 3.1 document of ``/api/v1`` (hand-written).

Every response has a typed schema (objects list their properties, which ones are always there,
and allow no other), every parameter is bounded. Tests check that it lists every route and
a bounded schemathesis run checks the answers against it (``tests/web/test_openapi.py``).
"""

from __future__ import annotations

from typing import Any

from arboretum_worker import store

__all__ = ["MAX_FILENAME", "MAX_GAME", "MAX_OFFSET", "openapi_document"]

MAX_OFFSET = 1_000_000
"""The largest ``offset`` of the match list."""
MAX_GAME = 999
"""The largest game index a path may name (a series has at most 100 games)."""
MAX_FILENAME = 200

NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
MATCH_ID_PATTERN = "^[0-9A-Za-z_.-]{1,64}$"

_STR: dict[str, Any] = {"type": "string"}
_OPT_STR: dict[str, Any] = {"type": ["string", "null"]}
_INT: dict[str, Any] = {"type": "integer"}
_COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
_BOOL: dict[str, Any] = {"type": "boolean"}
_NUM: dict[str, Any] = {"type": "number"}
_OPT_NUM: dict[str, Any] = {"type": ["number", "null"]}
_TIME: dict[str, Any] = {"type": ["number", "null"], "description": "Unix time"}
_VERSION_ID: dict[str, Any] = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_CARD: dict[str, Any] = {"type": "string", "pattern": "^[A-Z]{2}[1-8]$"}
_OPT_CARD: dict[str, Any] = {"type": ["string", "null"], "pattern": "^[A-Z]{2}[1-8]$"}
_CELL: dict[str, Any] = {"type": "array", "items": _INT, "minItems": 2, "maxItems": 2}
_MATCH_STATUS: dict[str, Any] = {"enum": [s.value for s in store.MatchStatus]}
_LEAGUE_STATUS: dict[str, Any] = {"enum": [s.value for s in store.LeagueStatus]}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _object(
    properties: dict[str, Any], *, optional: tuple[str, ...] = (), description: str = ""
) -> dict[str, Any]:
    """A closed object: these properties, all required but ``optional``, and no other."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": [p for p in properties if p not in optional],
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [{"type": "null"}, schema]}


def _ok(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _err(description: str = "error") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}


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
    "all_versions", "query", _BOOL, "every version that played, not only each bot's row"
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


def _schemas() -> dict[str, Any]:
    league_summary = {
        "name": _STR,
        "status": _LEAGUE_STATUS,
        "created": _NUM,
        "settings": _object(
            {
                "players": {"type": "integer", "minimum": 2, "maximum": 4},
                "games_per_pairing": {"type": "integer", "minimum": 1},
                "deals_per_series": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "deals one match (a series) plays in one seating",
                },
                "bots": _array(_object({"version": _VERSION_ID, "label": _STR})),
                "time_control": _object({"per_decision_ms": _COUNT, "bank_ms": _COUNT}),
                "fault_policy": _object({"faults_to_forfeit": {"type": "integer", "minimum": 1}}),
                "elo": _object({"initial": _NUM, "k": _NUM}),
            }
        ),
        "progress": _nullable(
            _object(
                {
                    "total": _COUNT,
                    "done": _COUNT,
                    "complete": _BOOL,
                    "counts": _object({s.value: _COUNT for s in store.MatchStatus}),
                    "failures": _array(_object({"match": _STR, "reason": _STR})),
                }
            )
        ),
    }
    match_brief = {
        "id": _STR,
        "league": _STR,
        "status": _MATCH_STATUS,
        "seats": _array(
            _object(
                {
                    "seat": _COUNT,
                    "version": _STR,
                    "bot": {**_OPT_STR, "description": "null when the version is unknown"},
                    "label": {**_STR, "description": "bot@version"},
                }
            )
        ),
        "deal": {**_COUNT, "description": "the first of `deals`"},
        "deals": {**_array(_COUNT), "description": "the deals this match plays, one game each"},
        "rotation": {**_COUNT, "description": "which of the deal's seat orders this match plays"},
        "seed": {
            **_OPT_STR,
            "description": "decimal; null until every seat order of its deals is over",
        },
        "game_seeds": {
            "oneOf": [{"type": "null"}, _array(_STR)],
            "description": "each game's seed (decimal), once revealed",
        },
        "revealed": {**_BOOL, "description": "the deal is over: its cards are no secret"},
        "created": _TIME,
        "started": _TIME,
        "finished": _TIME,
        "result": _nullable(
            _object(
                {
                    "games": _array(_object({"ranks": _array(_INT), "totals": _array(_INT)})),
                    "wins": {**_array(_COUNT), "description": "per seat: games it ranked first"},
                }
            )
        ),
    }
    step = _object(
        {
            "turn": {**_COUNT, "description": "from 0"},
            "seat": _COUNT,
            "kind": {**_STR, "description": "draw, play, forfeit, or a note's kind"},
            "source": {"enum": ["deck", "pile"]},
            "pile": _COUNT,
            "card": _OPT_CARD,
            "cell": _CELL,
            "discard": _OPT_CARD,
            "ms": _NUM,
            "fault": _object({"kind": _STR, "reason": _STR}),
            "digest": {
                "type": "string",
                "pattern": "^[0-9a-f]{16}$",
                "description": "the step's link of the replay's hash chain (full replays only)",
            },
            "reason": _STR,
            "note": _BOOL,
        },
        optional=(
            "source", "pile", "card", "cell", "discard", "ms", "fault", "reason", "note",
            "digest",
        ),
        description="docs/replay-format.md, Steps; `fault` and a forfeit's or note's `reason` "
        "only for the seat's author",
    )  # fmt: skip
    path = _object(
        {
            "cells": _array(_CELL),
            "cards": _array(_CARD),
            "card_points": _COUNT,
            "doubled": _BOOL,
            "start_bonus": _COUNT,
            "end_bonus": _COUNT,
            "points": _COUNT,
        }
    )
    result = _object(
        {
            "totals": _array(_INT),
            "ranks": _array(_INT),
            "winners": _array(_COUNT),
            "seats": _array(
                _object(
                    {
                        "seat": _COUNT,
                        "total": _INT,
                        "rank": _INT,
                        "species_in_arboretum": _COUNT,
                        "forfeited": _BOOL,
                        "species": _array(
                            _object(
                                {
                                    "species": _STR,
                                    "hand_total": _INT,
                                    "has_right": _BOOL,
                                    "points": _INT,
                                    "path": _nullable(path),
                                }
                            )
                        ),
                    }
                )
            ),
        },
        description="docs/replay-format.md, Result",
    )
    return {
        "Error": _object(
            {"error": _object({"status": {"type": "integer", "minimum": 400}, "message": _STR})}
        ),
        "Health": _object({"status": {"const": "ok"}}),
        "Me": _object({"author": _STR, "bots": _array(_STR)}),
        "LeaderboardRow": _object(
            {
                "rank": {"type": "integer", "minimum": 1},
                "bot": _STR,
                "version": _VERSION_ID,
                "version_index": {**_COUNT, "description": "1 for the bot's first version"},
                "latest": {**_BOOL, "description": "the bot's newest version that played here"},
                "counted": {
                    **_BOOL,
                    "description": "the bot's row on the board: its best established version "
                    "(without all_versions every row is)",
                },
                "provisional": {
                    **_BOOL,
                    "description": "the fitted 95% interval is wider than ± "
                    "provisional_half_width (or the fit has not seen the version yet); pages "
                    "show '?' after the rating",
                },
                "conservative": {
                    **_NUM,
                    "description": "what rows are ranked by, best first: fitted_low (live_low "
                    "while the fit has not seen the version)",
                },
                "fitted_rating": {
                    **_OPT_NUM,
                    "description": "fitted rating: Plackett-Luce fit of every result (mean 1500); "
                    "the board leads with it",
                },
                "fitted_low": {**_OPT_NUM, "description": "the fitted 95% interval, low end"},
                "fitted_high": {**_OPT_NUM, "description": "the fitted 95% interval, high end"},
                "live_rating": {
                    **_NUM,
                    "description": "live rating (Bayesian Plackett-Luce, Elo scale), updated "
                    "after every game",
                },
                "live_low": {**_NUM, "description": "the live rating's 95% interval, low end"},
                "live_high": {**_NUM, "description": "the live rating's 95% interval, high end"},
                "elo": {**_NUM, "description": "live Elo"},
                "games": _COUNT,
                "wins": _COUNT,
                "shared_wins": _COUNT,
                "win_share": _NUM,
                "win_rate": {**_NUM, "description": "win_share / games"},
                "mean_rank": _OPT_NUM,
                "last_played": _TIME,
            }
        ),
        "Leaderboard": _object(
            {
                "league": _OPT_STR,
                "all_versions": _BOOL,
                "ranked_by": {"const": "conservative"},
                "provisional_half_width": {
                    **_NUM,
                    "description": "a fitted interval wider than ± this (Elo) is provisional",
                },
                "results": {**_COUNT, "description": "results recorded in the league"},
                "fitted_results": {
                    **_COUNT,
                    "description": "results the fitted ratings cover (fewer while a new fit "
                    "is being made)",
                },
                "rows": _array(_ref("LeaderboardRow")),
            }
        ),
        "LeagueSummary": _object(league_summary, description="settings, status and progress"),
        "League": _object(
            {
                **league_summary,
                "standings": _array(_ref("LeaderboardRow")),
                "ladder": _ref("Ladder"),
            },
            optional=("ladder",),
            description="settings, status, progress and standings (every version); a ladder's "
            "members and what it plays (docs/league.md, Ladders)",
        ),
        "Ladder": _object(
            {
                "depth": {"type": "integer", "minimum": 1},
                "new_games": _COUNT,
                "unit_deals": {"type": "integer", "minimum": 1},
                "versions": _array(
                    _object(
                        {
                            "rank": {"type": "integer", "minimum": 1},
                            "bot": _STR,
                            "version": _VERSION_ID,
                            "version_index": {"type": ["integer", "null"]},
                            "state": {"enum": ["scheduled", "retired"]},
                            "joined": _NUM,
                            "retired": {"type": ["number", "null"]},
                            "games": _COUNT,
                            "rating": {"type": ["number", "null"]},
                            "rating_low": {"type": ["number", "null"]},
                            "rating_high": {"type": ["number", "null"]},
                        }
                    )
                ),
                "playing": _array(
                    _object(
                        {
                            "match": _STR,
                            "status": {"enum": ["queued", "running"]},
                            "seats": _array(_object({"version": _VERSION_ID, "label": _STR})),
                            "deals": _array(_COUNT),
                        }
                    )
                ),
                "last_tick": _nullable(_object({"at": _NUM, "status": _STR, "matches": _COUNT})),
            },
            description="a ladder: every version that was a member, best fitted rating first, "
            "and the matches queued or running",
        ),
        "Leagues": _object({"leagues": _array(_ref("LeagueSummary"))}),
        "Bots": _object(
            {
                "bots": _array(
                    _object(
                        {
                            "name": _STR,
                            "owner": _OPT_STR,
                            "created": _NUM,
                            "versions": _COUNT,
                            "latest": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
                        }
                    )
                )
            }
        ),
        "Bot": _object(
            {
                "name": _STR,
                "owner": _OPT_STR,
                "created": _NUM,
                "versions": _array(
                    _object(
                        {
                            "index": {"type": "integer", "minimum": 1},
                            "id": _VERSION_ID,
                            "created": _NUM,
                            "size": {**_COUNT, "description": "bytes"},
                            "files": _COUNT,
                        }
                    )
                ),
                "leagues": _array(_STR),
            }
        ),
        "History": _object(
            {
                "bot": _STR,
                "league": _OPT_STR,
                "versions": {
                    "type": "object",
                    "description": "version id -> its Elo after every game, in order",
                    "additionalProperties": _array(
                        _object({"seq": _INT, "game": _COUNT, "rating": _NUM, "match": _STR})
                    ),
                },
            }
        ),
        "HeadToHead": _object(
            {
                "bot": _STR,
                "league": _OPT_STR,
                "rows": _array(
                    _object(
                        {
                            "version": _VERSION_ID,
                            "opponent": _VERSION_ID,
                            "opponent_label": _STR,
                            "wins": _COUNT,
                            "losses": _COUNT,
                            "draws": _COUNT,
                            "games": _COUNT,
                            "score": {**_NUM, "minimum": 0, "maximum": 1},
                        }
                    )
                ),
            }
        ),
        "MatchBrief": _object(match_brief, description="a match as the list shows it"),
        "Match": _object(
            {
                **match_brief,
                "failure": _OPT_STR,
                "attempts": _COUNT,
                "games": _array(
                    _object({"game": _COUNT, "replay": _STR, "download": _STR, "viewer": _STR})
                ),
                "owned_seats": _array(_COUNT),
                "faults": {
                    "type": "object",
                    "description": "per seat the author owns: its faults in each game",
                    "additionalProperties": _array(_COUNT),
                },
            },
            optional=("faults",),
            description="seats, status, result; seed only once revealed (the deal is over)",
        ),
        "Matches": _object(
            {
                "total": _COUNT,
                "offset": _COUNT,
                "limit": _COUNT,
                "matches": _array(_ref("MatchBrief")),
            }
        ),
        "Step": step,
        "Result": result,
        "Replay": {
            "type": "object",
            "description": "docs/replay-format.md (producers may add fields), plus `view`. Until "
            "the game and every seat order of its deal are over, or with `seat`, the deck and "
            "the seed are null and the hidden cards are null; `deck_size` then says how many "
            "cards the deck had after the deal.",
            "properties": {
                "format": {"const": "arboretum-replay"},
                "version": {"const": 1},
                "engine": _object({"version": _STR, "rules": _STR}),
                "match_id": _STR,
                "game_index": _COUNT,
                "seed": _OPT_STR,
                "match_seed": _OPT_STR,
                "players": {"type": "integer", "minimum": 2, "maximum": 4},
                "species": _array(_STR),
                "seats": _array(_object({"seat": _COUNT, "bot": _STR})),
                "deck": {"oneOf": [{"type": "null"}, _array(_CARD)]},
                "deck_size": _COUNT,
                "hands": _array(_array(_OPT_CARD)),
                "steps": _array(_ref("Step")),
                "final_hands": _array(_array(_CARD)),
                "result": _ref("Result"),
                "complete": _BOOL,
                "view": _object(
                    {
                        "seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 3},
                        "hidden": _BOOL,
                        "revealed": _BOOL,
                        "owned_seats": _array(_COUNT),
                    }
                ),
            },
            "required": ["format", "version", "players", "seats", "hands", "steps", "view"],
        },
        "SequentialTest": _object(
            {
                "id": _STR,
                "status": {"enum": ["running", "finished", "cancelled", "failed"]},
                "verdict": {"enum": ["H0", "H1", "inconclusive", None]},
                "reason": _STR,
                "new": _object({"version": _STR, "bot": _STR}),
                "old": _object({"version": _STR, "bot": _STR}),
                "elo0": _NUM,
                "elo1": _NUM,
                "alpha": _NUM,
                "beta": _NUM,
                "max_pairs": {"type": ["integer", "null"], "minimum": 1},
                "batch": {**_COUNT, "description": "pairs per batch (games per match)"},
                "window": {**_COUNT, "description": "batches in play at once"},
                "per_decision_ms": _COUNT,
                "bank_ms": _COUNT,
                "seed": {**_STR, "description": "decimal"},
                "lower_bound": {**_NUM, "description": "accept H0 at or below"},
                "upper_bound": {**_NUM, "description": "accept H1 at or above"},
                "llr": {**_NUM, "description": "log-likelihood ratio after the counted pairs"},
                "pairs": _COUNT,
                "pentanomial": {
                    **_array(_COUNT),
                    "description": "pairs scoring 0, 1/2, 1, 3/2, 2 for NEW",
                },
                "wins": _COUNT,
                "draws": _COUNT,
                "losses": _COUNT,
                "elo": {**_OPT_NUM, "description": "NEW minus OLD, logistic Elo"},
                "elo_low": {**_OPT_NUM, "description": "95% interval, low end"},
                "elo_high": {**_OPT_NUM, "description": "95% interval, high end"},
                "created": _NUM,
                "finished": _TIME,
                "llr_history": {
                    **_array(_NUM),
                    "description": "the LLR after each counted pair (one test only)",
                },
            },
            optional=("llr_history",),
            description="an `arena sprt --league` test (docs/sprt.md)",
        ),
        "SequentialTests": _object({"tests": _array(_ref("SequentialTest"))}),
        "Submitted": _object(
            {
                "bot": _STR,
                "version": {**_VERSION_ID, "description": "sha256 of the files"},
                "index": {"type": ["integer", "null"], "minimum": 1},
                "created": {**_BOOL, "description": "false when the version existed already"},
                "url": _STR,
            }
        ),
        "Log": _object({"match": _STR, "seat": _COUNT, "log": _STR}),
        "Faults": _object(
            {
                "match": _STR,
                "seat": _COUNT,
                "failure": _OPT_STR,
                "counts": {
                    "oneOf": [{"type": "null"}, _array(_COUNT)],
                    "description": "the seat's faults in each game (null before the result)",
                },
                "faults": _array(
                    _object(
                        {
                            "game": _COUNT,
                            "step": _COUNT,
                            "turn": _INT,
                            "kind": _STR,
                            "reason": _STR,
                        }
                    )
                ),
            }
        ),
    }


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
                "201": _ok("stored as a new version", _ref("Submitted")),
                "200": _ok("the same files were already this version", _ref("Submitted")),
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


def openapi_document() -> dict[str, Any]:
    paths: dict[str, Any] = {
        "/api/v1/openapi.json": _get("This document", [], _ok("OpenAPI 3.1", {"type": "object"})),
        "/api/v1/health": _get("Liveness (Redis reachable)", [], _ok("ok", _ref("Health")), 503),
        "/api/v1/me": _get(
            "The author of the token", [], _ok("author and bots", _ref("Me")), 401, secured=True
        ),
        "/api/v1/leagues": _get("Every league", [], _ok("leagues", _ref("Leagues"))),
        "/api/v1/leagues/{name}": _get(
            "A league: settings, progress, standings",
            [LEAGUE_P],
            _ok("league", _ref("League")),
            404,
        ),
        "/api/v1/leagues/{name}/leaderboard": _get(
            "A league's leaderboard",
            [LEAGUE_P, ALL_VERSIONS_Q],
            _ok("leaderboard", _ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/leaderboard": _get(
            "The leaderboard of a league (default: the newest)",
            [LEAGUE_Q, ALL_VERSIONS_Q],
            _ok("leaderboard", _ref("Leaderboard")),
            400,
            404,
        ),
        "/api/v1/bots": _get("Every bot", [], _ok("bots", _ref("Bots"))),
        "/api/v1/bots/{name}": _get(
            "A bot and its versions", [BOT_P], _ok("bot", _ref("Bot")), 404
        ),
        "/api/v1/bots/{name}/history": _get(
            "Live Elo after every game, per version",
            [BOT_P, LEAGUE_Q],
            _ok("history", _ref("History")),
            404,
        ),
        "/api/v1/bots/{name}/head-to-head": _get(
            "Pairwise record of each version against each opponent version",
            [BOT_P, LEAGUE_Q],
            _ok("head to head", _ref("HeadToHead")),
            404,
        ),
        "/api/v1/bots/{name}/versions": _submit(),
        "/api/v1/matches": _get(
            "Matches, filtered, in schedule order",
            [
                _param("league", "query", _NAME_OR_EMPTY, "league name (empty: every league)"),
                _param("bot", "query", _NAME_OR_EMPTY, "bot name, any version (empty: every bot)"),
                _param(
                    "status",
                    "query",
                    {"enum": ["", *_MATCH_STATUS["enum"]]},
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
            _ok("matches", _ref("Matches")),
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
                    {"type": "integer", "minimum": 0, "maximum": 3},
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
            _ok("log", _ref("Log")),
            401,
            403,
            404,
            secured=True,
        ),
        "/api/v1/matches/{match_id}/seats/{seat}/faults": _get(
            "The seat's faults (its author only)",
            [MATCH_P, SEAT_P],
            _ok("faults", _ref("Faults")),
            401,
            403,
            404,
            secured=True,
        ),
        "/api/v1/sprt": _get(
            "Every sequential test, newest first", [], _ok("tests", _ref("SequentialTests"))
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
            _ok("test", _ref("SequentialTest")),
            404,
        ),
    }
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
