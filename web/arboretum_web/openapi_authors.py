"""The OpenAPI paths and schemas of an author's own actions (:mod:`.author_api`,
:mod:`.contest_api`): a declarative table beside ``openapi_schemas``, merged by ``openapi.py``."""

from __future__ import annotations

from typing import Any

from .openapi_schemas import array, closed, ref

__all__ = ["TEST_EXTRA", "author_paths", "author_schemas", "contest_paths"]

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


_CHALLENGE_P = {
    "name": "challenge_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "maxLength": 64, "pattern": "^[0-9A-Za-z_.-]{1,64}$"},
    "description": "the challenge's id",
}
_TEST_P = {**_CHALLENGE_P, "name": "test_id", "description": "the test's id"}
_INDEX_P = {
    "name": "index",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 0, "maximum": 99},
    "description": "the match's index in the challenge, from 0",
}
_GAME_P = {**_INDEX_P, "name": "game", "description": "the game's index, from 0"}
_GAME_P["schema"] = {"type": "integer", "minimum": 0, "maximum": 999}
_SEAT_P = {**_INDEX_P, "name": "seat", "description": "the seat, from 0"}
_SEAT_P["schema"] = {"type": "integer", "minimum": 0, "maximum": 3}
_MATCH_P = {**_CHALLENGE_P, "name": "match_id", "description": "the match's id"}
_MATCH_P["schema"] = {"type": "string", "maxLength": 100, "pattern": "^[0-9A-Za-z_.-]{1,100}$"}
_DOWNLOAD_P = {
    "name": "download",
    "in": "query",
    "required": False,
    "schema": {"type": "boolean"},
    "description": "as an attachment",
}
_REFUSED = {
    "e400": "a bad field (the message names it) or a limit of the operator's",
    "e401": E401,
    "e403": "another author's bot, or a bot whose owner declines challenges",
    "e404": "no such bot (version)",
    "e413": "a body over 16 KiB",
    "e429": "over the author's limits (matches queued or running, daily worker time): "
    "Retry-After gives the seconds to wait",
}


def _get(summary: str, params: list[Any], ok: dict[str, Any], **errors: str) -> dict[str, Any]:
    return {
        "get": {
            "summary": summary,
            "parameters": params,
            "responses": {"200": ok, **_errors(**errors)},
        }
    }


def _output(of: str, params: list[Any], theirs: str, thing: str) -> dict[str, Any]:
    """A seat's output per step in a kept game ``of`` a challenge or a test."""
    return _get(
        f"What a seat's bot printed during each of its steps of {of}",
        [*params, _GAME_P, _SEAT_P, _DOWNLOAD_P],
        _ok("the output per step", ref("StepOutput")),
        e401=E401,
        e403=f"another author's {theirs}",
        e404=f"no such {thing}, match, kept game or seat",
    )


def contest_paths() -> dict[str, Any]:
    """Challenges, a bot's settings and the sequential tests."""
    return {**challenge_paths(), **prefs_paths(), **test_paths()}


def prefs_paths() -> dict[str, Any]:
    return {
        "/api/v1/bots/{name}/prefs": {
            **_get(
                "A bot's owner settings: challenges accepted, results public",
                [_path_param("name", "bot name")],
                _ok("settings", ref("BotPrefs")),
                e404="no such bot",
            ),
            "put": {
                "summary": "Change my bot's settings (decline challenges, keep results private)",
                "security": SECURED,
                "parameters": [_path_param("name", "my bot's name")],
                "requestBody": _body(
                    closed(
                        {
                            "accept_challenges": {"type": "boolean"},
                            "public_results": {"type": "boolean"},
                        },
                        optional=("accept_challenges", "public_results"),
                    ),
                    "the settings to change",
                ),
                "responses": {
                    "200": _ok("settings", ref("BotPrefs")),
                    **_errors(
                        e400="a bad field",
                        e401=E401,
                        e403="another author's bot",
                        e404="no such bot",
                        e413="a body over 16 KiB",
                    ),
                },
            },
        },
    }


def challenge_paths() -> dict[str, Any]:
    challenge = "/api/v1/challenges/{challenge_id}"
    spec_list = {"type": "array", "maxItems": 3, "items": _SPEC}
    return {
        "/api/v1/challenges": {
            "get": {
                "summary": "My challenges (made or challenged), newest first",
                "security": SECURED,
                "parameters": [
                    {
                        "name": "limit",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 200},
                        "description": "at most this many (default 50)",
                    }
                ],
                "responses": {
                    "200": _ok("challenges", ref("Challenges")),
                    **_errors(e400="a bad limit", e401=E401),
                },
            },
            "post": {
                "summary": "Challenge bots with one of mine (or two of my versions)",
                "security": SECURED,
                "parameters": [],
                "requestBody": _body(
                    closed(
                        {
                            "bot": _SPEC,
                            "opponents": spec_list,
                            "deals": {"type": "integer", "minimum": 1, "maximum": 1000},
                            "players": {"type": "integer", "minimum": 2, "maximum": 4},
                            "public": {"type": "boolean"},
                        },
                        optional=("opponents", "deals", "players", "public"),
                    ),
                    "my bot, the bots challenged (built-in names too), deals (each in every "
                    "seat order), players (seats left are filled by the greedy built-in), "
                    "public (results visible to all when every owner allows; default true)",
                ),
                "responses": {"201": _ok("the challenge", ref("Challenge")), **_errors(**_REFUSED)},
            },
        },
        challenge: _get(
            "A challenge: its bots, matches and standings (the authors involved; anyone when "
            "public)",
            [_CHALLENGE_P],
            _ok("the challenge", ref("Challenge")),
            e401="not public: sign in as an author involved",
            e403="not public, and not yours",
            e404="no such challenge",
        ),
        f"{challenge}/cancel": {
            "post": {
                "summary": "Cancel my challenge (its matches not played yet are dropped)",
                "security": SECURED,
                "parameters": [_CHALLENGE_P],
                "responses": {
                    "200": _ok("the challenge", ref("Challenge")),
                    **_errors(
                        e400="it has ended already",
                        e401=E401,
                        e403="another author's challenge",
                        e404="no such challenge",
                    ),
                },
            }
        },
        f"{challenge}/matches/{{index}}/games/{{game}}/replay": _get(
            "A game's replay of a challenge's match",
            [_CHALLENGE_P, _INDEX_P, _GAME_P],
            _ok("replay", ref("Replay")),
            e401="not public: sign in as an author involved",
            e403="not public, and not yours",
            e404="no such challenge, match or replay",
        ),
        f"{challenge}/matches/{{index}}/seats/{{seat}}/log": {
            **_get(
                "What a seat's bot printed in a challenge's match (its author only)",
                [_CHALLENGE_P, _INDEX_P, _SEAT_P],
                _ok("log", ref("Log")),
                e401=E401,
                e403="another author's seat",
                e404="no such challenge, match or seat",
            )
        },
        f"{challenge}/matches/{{index}}/games/{{game}}/seats/{{seat}}/output": _output(
            "a challenge's game (its author only)", [_CHALLENGE_P, _INDEX_P], "seat", "challenge"
        ),
    }


def test_paths() -> dict[str, Any]:
    """A bot's settings, and the sequential tests."""
    test = "/api/v1/sprt/{test_id}"
    return {
        "/api/v1/sprt": {
            "get": {
                "summary": "Sequential tests, newest first (mine=1: the token's author's)",
                "parameters": [
                    {
                        "name": "mine",
                        "in": "query",
                        "schema": {"enum": ["", "0", "1"]},
                        "description": "1: only my tests (needs the token)",
                    }
                ],
                "responses": {
                    "200": _ok("tests", ref("SequentialTests")),
                    **_errors(e400="a bad parameter", e401="mine=1 without a token"),
                },
            },
            "post": {
                "summary": "Test two of my versions on the workers, within the operator's limits",
                "security": SECURED,
                "parameters": [],
                "requestBody": _body(
                    closed(
                        {
                            "new": _SPEC,
                            "old": _SPEC,
                            "elo0": {"type": "number"},
                            "elo1": {"type": "number"},
                            "alpha": {"type": "number"},
                            "beta": {"type": "number"},
                            "max_pairs": {"type": "integer", "minimum": 1},
                            "batch": {"type": "integer", "minimum": 1},
                        },
                        optional=("elo0", "elo1", "alpha", "beta", "batch"),
                    ),
                    "NEW and OLD (NAME@VERSION), H0's and H1's Elo (default 0 and 10), alpha and "
                    "beta (0.05), the cap on pairs (required); batch is the operator's "
                    "(ARENA_TEST_BATCH) and ignored",
                ),
                "responses": {
                    "201": _ok("the test", ref("SequentialTest")),
                    **_errors(**{**_REFUSED, "e403": "another author's bot"}),
                },
            },
        },
        f"{test}/cancel": {
            "post": {
                "summary": "Cancel my test",
                "security": SECURED,
                "parameters": [_TEST_P],
                "responses": {
                    "200": _ok("the test", ref("SequentialTest")),
                    **_errors(
                        e400="it has ended already",
                        e401=E401,
                        e403="another author's test (or the operator's)",
                        e404="no such test",
                    ),
                },
            }
        },
        f"{test}/matches/{{match_id}}/games/{{game}}/replay": _get(
            "A game's replay of a test's match (kept for its first batches)",
            [_TEST_P, _MATCH_P, _GAME_P],
            _ok("replay", ref("Replay")),
            e404="no such test, match or kept replay",
        ),
        f"{test}/matches/{{match_id}}/seats/{{seat}}/log": _get(
            "What a seat's bot printed in a test's match (the test's author only)",
            [_TEST_P, _MATCH_P, _SEAT_P],
            _ok("log", ref("Log")),
            e401=E401,
            e403="another author's test",
            e404="no such test, match or seat",
        ),
        f"{test}/matches/{{match_id}}/games/{{game}}/seats/{{seat}}/output": _output(
            "a test's game (the test's author only)", [_TEST_P, _MATCH_P], "test", "test"
        ),
    }


def author_schemas() -> dict[str, Any]:
    """The schemas of every path here."""
    return {**_ladder_schemas(), **contest_schemas()}


def _ladder_schemas() -> dict[str, Any]:
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


def contest_schemas() -> dict[str, Any]:
    return {
        "BotPrefs": closed(
            {
                "bot": _STR,
                "accept_challenges": {"type": "boolean"},
                "public_results": {"type": "boolean"},
            }
        ),
        "Challenge": closed(
            {
                "id": _STR,
                "author": _STR,
                "status": {"enum": ["queued", "running", "finished", "cancelled", "failed"]},
                "reason": _STR,
                "bots": array(
                    closed(
                        {"version": _VERSION, "name": _STR, "owner": {"type": ["string", "null"]}}
                    )
                ),
                "deals": _COUNT,
                "players": {"type": "integer", "minimum": 1, "maximum": 4},
                "public": {"type": "boolean"},
                "created": _NUM,
                "finished": {"type": ["number", "null"]},
                "total": {**_COUNT, "description": "matches: one per seat order"},
                "done": {**_COUNT, "description": "matches ended"},
                "standings": array(
                    closed(
                        {
                            "version": _VERSION,
                            "name": _STR,
                            "games": _COUNT,
                            "wins": _COUNT,
                            "points": {"type": "integer"},
                            "mean_rank": {"type": ["number", "null"]},
                        }
                    )
                ),
                "url": _STR,
                "matches": array(
                    closed(
                        {
                            "id": _STR,
                            "index": _COUNT,
                            "seats": array(_VERSION),
                            "status": _STR,
                            "ranks": array(array({"type": "integer"})),
                            "totals": array(array({"type": "integer"})),
                            "failure": {"type": ["string", "null"]},
                            "games": array(_COUNT),
                        }
                    )
                ),
            },
            optional=("matches",),
            description="an author's challenge (unrated; docs/web.md)",
        ),
        "Challenges": closed({"author": _STR, "challenges": array(ref("Challenge"))}),
    }


TEST_EXTRA: dict[str, Any] = {
    "author": {"type": ["string", "null"], "description": "its author (null: the operator's)"},
    "matches": array(
        closed(
            {
                "id": _STR,
                "batch": _COUNT,
                "seating": {"type": "integer", "minimum": 0, "maximum": 1},
                "seats": array(_VERSION),
                "ranks": array(array({"type": "integer"})),
                "games": {**array(_COUNT), "description": "the games whose replays are kept"},
            }
        )
    ),
}
"""What an author's test adds to ``SequentialTest``: its author, and (one test) its matches."""
