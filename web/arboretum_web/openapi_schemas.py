"""The schemas of the ``/api/v1`` OpenAPI document: a declarative table.

``schemas()`` is one table, every response's typed schema by name (objects list their properties,
which ones are always there, and allow no other); the rest of this module are the small builders it
is written with. ``openapi.py`` puts the paths around it.
"""

from __future__ import annotations

from typing import Any

from arboretum_worker import store

__all__ = [
    "BOOL",
    "MATCH_STATUS",
    "array",
    "closed",
    "nullable",
    "ref",
    "schemas",
]

STR: dict[str, Any] = {"type": "string"}
OPT_STR: dict[str, Any] = {"type": ["string", "null"]}
INT: dict[str, Any] = {"type": "integer"}
COUNT: dict[str, Any] = {"type": "integer", "minimum": 0}
BOOL: dict[str, Any] = {"type": "boolean"}
NUM: dict[str, Any] = {"type": "number"}
OPT_NUM: dict[str, Any] = {"type": ["number", "null"]}
TIME: dict[str, Any] = {"type": ["number", "null"], "description": "Unix time"}
VERSION_ID: dict[str, Any] = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
CARD: dict[str, Any] = {"type": "string", "pattern": "^[A-Z]{2}[1-8]$"}
OPT_CARD: dict[str, Any] = {"type": ["string", "null"], "pattern": "^[A-Z]{2}[1-8]$"}
CELL: dict[str, Any] = {"type": "array", "items": INT, "minItems": 2, "maxItems": 2}
MATCH_STATUS: dict[str, Any] = {"enum": [s.value for s in store.MatchStatus]}
LEAGUE_STATUS: dict[str, Any] = {"enum": [s.value for s in store.LeagueStatus]}


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def closed(
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


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [{"type": "null"}, schema]}


def schemas() -> dict[str, Any]:
    league_summary = {
        "name": STR,
        "status": LEAGUE_STATUS,
        "created": NUM,
        "settings": closed(
            {
                "players": {"type": "integer", "minimum": 2, "maximum": 4},
                "games_per_pairing": {"type": "integer", "minimum": 1},
                "deals_per_series": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "deals one match (a series) plays in one seating",
                },
                "bots": array(closed({"version": VERSION_ID, "label": STR})),
                "time_control": closed({"per_decision_ms": COUNT, "bank_ms": COUNT}),
                "fault_policy": closed({"faults_to_forfeit": {"type": "integer", "minimum": 1}}),
                "elo": closed({"initial": NUM, "k": NUM}),
            }
        ),
        "progress": nullable(
            closed(
                {
                    "total": COUNT,
                    "done": COUNT,
                    "complete": BOOL,
                    "counts": closed({s.value: COUNT for s in store.MatchStatus}),
                    "failures": array(closed({"match": STR, "reason": STR})),
                }
            )
        ),
    }
    match_brief = {
        "id": STR,
        "league": STR,
        "status": MATCH_STATUS,
        "seats": array(
            closed(
                {
                    "seat": COUNT,
                    "version": STR,
                    "bot": {**OPT_STR, "description": "null when the version is unknown"},
                    "label": {**STR, "description": "bot@version"},
                }
            )
        ),
        "deal": {**COUNT, "description": "the first of `deals`"},
        "deals": {**array(COUNT), "description": "the deals this match plays, one game each"},
        "rotation": {**COUNT, "description": "which of the deal's seat orders this match plays"},
        "seed": {
            **OPT_STR,
            "description": "decimal; null until every seat order of its deals is over",
        },
        "game_seeds": {
            "oneOf": [{"type": "null"}, array(STR)],
            "description": "each game's seed (decimal), once revealed",
        },
        "revealed": {**BOOL, "description": "the deal is over: its cards are no secret"},
        "created": TIME,
        "started": TIME,
        "finished": TIME,
        "result": nullable(
            closed(
                {
                    "games": array(closed({"ranks": array(INT), "totals": array(INT)})),
                    "wins": {**array(COUNT), "description": "per seat: games it ranked first"},
                }
            )
        ),
    }
    step = closed(
        {
            "turn": {**COUNT, "description": "from 0"},
            "seat": COUNT,
            "kind": {**STR, "description": "draw, play, forfeit, or a note's kind"},
            "source": {"enum": ["deck", "pile"]},
            "pile": COUNT,
            "card": OPT_CARD,
            "cell": CELL,
            "discard": OPT_CARD,
            "ms": NUM,
            "fault": closed({"kind": STR, "reason": STR}),
            "digest": {
                "type": "string",
                "pattern": "^[0-9a-f]{16}$",
                "description": "the step's link of the replay's hash chain (full replays only)",
            },
            "reason": STR,
            "note": BOOL,
        },
        optional=(
            "source", "pile", "card", "cell", "discard", "ms", "fault", "reason", "note",
            "digest",
        ),
        description="docs/replay-format.md, Steps; `fault` and a forfeit's or note's `reason` "
        "only for the seat's author",
    )  # fmt: skip
    path = closed(
        {
            "cells": array(CELL),
            "cards": array(CARD),
            "card_points": COUNT,
            "doubled": BOOL,
            "start_bonus": COUNT,
            "end_bonus": COUNT,
            "points": COUNT,
        }
    )
    result = closed(
        {
            "totals": array(INT),
            "ranks": array(INT),
            "winners": array(COUNT),
            "seats": array(
                closed(
                    {
                        "seat": COUNT,
                        "total": INT,
                        "rank": INT,
                        "species_in_arboretum": COUNT,
                        "forfeited": BOOL,
                        "species": array(
                            closed(
                                {
                                    "species": STR,
                                    "hand_total": INT,
                                    "has_right": BOOL,
                                    "points": INT,
                                    "path": nullable(path),
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
        "Error": closed(
            {"error": closed({"status": {"type": "integer", "minimum": 400}, "message": STR})}
        ),
        "Health": closed({"status": {"const": "ok"}}),
        "Me": closed({"author": STR, "bots": array(STR)}),
        "LeaderboardRow": closed(
            {
                "rank": {"type": "integer", "minimum": 1},
                "bot": STR,
                "version": VERSION_ID,
                "version_index": {**COUNT, "description": "1 for the bot's first version"},
                "latest": {**BOOL, "description": "the bot's newest version that played here"},
                "counted": {
                    **BOOL,
                    "description": "the bot's row on the board: its best established version "
                    "(without all_versions every row is)",
                },
                "provisional": {
                    **BOOL,
                    "description": "the fitted 95% interval is wider than ± "
                    "provisional_half_width (or the fit has not seen the version yet); pages "
                    "show '?' after the rating",
                },
                "conservative": {
                    **NUM,
                    "description": "what rows are ranked by, best first: fitted_low (live_low "
                    "while the fit has not seen the version)",
                },
                "fitted_rating": {
                    **OPT_NUM,
                    "description": "fitted rating: Plackett-Luce fit of every result (mean 1500); "
                    "the board leads with it",
                },
                "fitted_low": {**OPT_NUM, "description": "the fitted 95% interval, low end"},
                "fitted_high": {**OPT_NUM, "description": "the fitted 95% interval, high end"},
                "live_rating": {
                    **NUM,
                    "description": "live rating (Bayesian Plackett-Luce, Elo scale), updated "
                    "after every game",
                },
                "live_low": {**NUM, "description": "the live rating's 95% interval, low end"},
                "live_high": {**NUM, "description": "the live rating's 95% interval, high end"},
                "elo": {**NUM, "description": "live Elo"},
                "games": COUNT,
                "wins": COUNT,
                "shared_wins": COUNT,
                "win_share": NUM,
                "win_rate": {**NUM, "description": "win_share / games"},
                "mean_rank": OPT_NUM,
                "last_played": TIME,
            }
        ),
        "Leaderboard": closed(
            {
                "league": OPT_STR,
                "all_versions": BOOL,
                "ranked_by": {"const": "conservative"},
                "provisional_half_width": {
                    **NUM,
                    "description": "a fitted interval wider than ± this (Elo) is provisional",
                },
                "results": {**COUNT, "description": "results recorded in the league"},
                "fitted_results": {
                    **COUNT,
                    "description": "results the fitted ratings cover (fewer while a new fit "
                    "is being made)",
                },
                "rows": array(ref("LeaderboardRow")),
            }
        ),
        "LeagueSummary": closed(league_summary, description="settings, status and progress"),
        "League": closed(
            {
                **league_summary,
                "standings": array(ref("LeaderboardRow")),
                "ladder": ref("Ladder"),
            },
            optional=("ladder",),
            description="settings, status, progress and standings (every version); a ladder's "
            "members and what it plays (docs/league.md, Ladders)",
        ),
        "Ladder": closed(
            {
                "depth": {"type": "integer", "minimum": 1},
                "new_games": COUNT,
                "unit_deals": {"type": "integer", "minimum": 1},
                "versions": array(
                    closed(
                        {
                            "rank": {"type": "integer", "minimum": 1},
                            "bot": STR,
                            "version": VERSION_ID,
                            "version_index": {"type": ["integer", "null"]},
                            "state": {"enum": ["scheduled", "retired"]},
                            "joined": NUM,
                            "retired": {"type": ["number", "null"]},
                            "games": COUNT,
                            "rating": {"type": ["number", "null"]},
                            "rating_low": {"type": ["number", "null"]},
                            "rating_high": {"type": ["number", "null"]},
                        }
                    )
                ),
                "playing": array(
                    closed(
                        {
                            "match": STR,
                            "status": {"enum": ["queued", "running"]},
                            "seats": array(closed({"version": VERSION_ID, "label": STR})),
                            "deals": array(COUNT),
                        }
                    )
                ),
                "last_tick": nullable(closed({"at": NUM, "status": STR, "matches": COUNT})),
            },
            description="a ladder: every version that was a member, best fitted rating first, "
            "and the matches queued or running",
        ),
        "Leagues": closed({"leagues": array(ref("LeagueSummary"))}),
        "Bots": closed(
            {
                "bots": array(
                    closed(
                        {
                            "name": STR,
                            "owner": OPT_STR,
                            "created": NUM,
                            "versions": COUNT,
                            "latest": {"type": ["string", "null"], "pattern": "^[0-9a-f]{64}$"},
                        }
                    )
                )
            }
        ),
        "Bot": closed(
            {
                "name": STR,
                "owner": OPT_STR,
                "created": NUM,
                "versions": array(
                    closed(
                        {
                            "index": {"type": "integer", "minimum": 1},
                            "id": VERSION_ID,
                            "created": NUM,
                            "size": {**COUNT, "description": "bytes"},
                            "files": COUNT,
                        }
                    )
                ),
                "leagues": array(STR),
            }
        ),
        "History": closed(
            {
                "bot": STR,
                "league": OPT_STR,
                "versions": {
                    "type": "object",
                    "description": "version id -> its Elo after every game, in order",
                    "additionalProperties": array(
                        closed({"seq": INT, "game": COUNT, "rating": NUM, "match": STR})
                    ),
                },
            }
        ),
        "HeadToHead": closed(
            {
                "bot": STR,
                "league": OPT_STR,
                "rows": array(
                    closed(
                        {
                            "version": VERSION_ID,
                            "opponent": VERSION_ID,
                            "opponent_label": STR,
                            "wins": COUNT,
                            "losses": COUNT,
                            "draws": COUNT,
                            "games": COUNT,
                            "score": {**NUM, "minimum": 0, "maximum": 1},
                        }
                    )
                ),
            }
        ),
        "MatchBrief": closed(match_brief, description="a match as the list shows it"),
        "Match": closed(
            {
                **match_brief,
                "failure": OPT_STR,
                "attempts": COUNT,
                "games": array(
                    closed({"game": COUNT, "replay": STR, "download": STR, "viewer": STR})
                ),
                "owned_seats": array(COUNT),
                "faults": {
                    "type": "object",
                    "description": "per seat the author owns: its faults in each game",
                    "additionalProperties": array(COUNT),
                },
            },
            optional=("faults",),
            description="seats, status, result; seed only once revealed (the deal is over)",
        ),
        "Matches": closed(
            {
                "total": COUNT,
                "offset": COUNT,
                "limit": COUNT,
                "matches": array(ref("MatchBrief")),
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
                "engine": closed({"version": STR, "rules": STR}),
                "match_id": STR,
                "game_index": COUNT,
                "seed": OPT_STR,
                "match_seed": OPT_STR,
                "players": {"type": "integer", "minimum": 2, "maximum": 4},
                "species": array(STR),
                "seats": array(closed({"seat": COUNT, "bot": STR})),
                "deck": {"oneOf": [{"type": "null"}, array(CARD)]},
                "deck_size": COUNT,
                "hands": array(array(OPT_CARD)),
                "steps": array(ref("Step")),
                "final_hands": array(array(CARD)),
                "result": ref("Result"),
                "complete": BOOL,
                "view": closed(
                    {
                        "seat": {"type": ["integer", "null"], "minimum": 0, "maximum": 3},
                        "hidden": BOOL,
                        "revealed": BOOL,
                        "owned_seats": array(COUNT),
                    }
                ),
            },
            "required": ["format", "version", "players", "seats", "hands", "steps", "view"],
        },
        "SequentialTest": closed(
            {
                "id": STR,
                "status": {"enum": ["running", "finished", "cancelled", "failed"]},
                "verdict": {"enum": ["H0", "H1", "inconclusive", None]},
                "reason": STR,
                "new": closed({"version": STR, "bot": STR}),
                "old": closed({"version": STR, "bot": STR}),
                "elo0": NUM,
                "elo1": NUM,
                "alpha": NUM,
                "beta": NUM,
                "max_pairs": {"type": ["integer", "null"], "minimum": 1},
                "batch": {**COUNT, "description": "pairs per batch (games per match)"},
                "window": {**COUNT, "description": "batches in play at once"},
                "per_decision_ms": COUNT,
                "bank_ms": COUNT,
                "seed": {**STR, "description": "decimal"},
                "lower_bound": {**NUM, "description": "accept H0 at or below"},
                "upper_bound": {**NUM, "description": "accept H1 at or above"},
                "llr": {**NUM, "description": "log-likelihood ratio after the counted pairs"},
                "pairs": COUNT,
                "pentanomial": {
                    **array(COUNT),
                    "description": "pairs scoring 0, 1/2, 1, 3/2, 2 for NEW",
                },
                "wins": COUNT,
                "draws": COUNT,
                "losses": COUNT,
                "elo": {**OPT_NUM, "description": "NEW minus OLD, logistic Elo"},
                "elo_low": {**OPT_NUM, "description": "95% interval, low end"},
                "elo_high": {**OPT_NUM, "description": "95% interval, high end"},
                "created": NUM,
                "finished": TIME,
                "llr_history": {
                    **array(NUM),
                    "description": "the LLR after each counted pair (one test only)",
                },
            },
            optional=("llr_history",),
            description="an `arena sprt --league` test (docs/sprt.md)",
        ),
        "SequentialTests": closed({"tests": array(ref("SequentialTest"))}),
        "Submitted": closed(
            {
                "bot": STR,
                "version": {**VERSION_ID, "description": "sha256 of the files"},
                "index": {"type": ["integer", "null"], "minimum": 1},
                "created": {**BOOL, "description": "false when the version existed already"},
                "url": STR,
            }
        ),
        "Log": closed({"match": STR, "seat": COUNT, "log": STR}),
        "StepOutput": closed(
            {
                "match": STR,
                "game": COUNT,
                "seat": COUNT,
                "stored": BOOL,
                "caps": closed({"decision_lines": COUNT, "game_lines": COUNT, "line_chars": COUNT}),
                "steps": array(
                    closed(
                        {
                            "step": COUNT,
                            "turn": INT,
                            "kind": STR,
                            "lines": array(STR),
                            "dropped": COUNT,
                        }
                    )
                ),
                "between": array(STR),
                "dropped": COUNT,
            }
        ),
        "Faults": closed(
            {
                "match": STR,
                "seat": COUNT,
                "failure": OPT_STR,
                "counts": {
                    "oneOf": [{"type": "null"}, array(COUNT)],
                    "description": "the seat's faults in each game (null before the result)",
                },
                "faults": array(
                    closed(
                        {
                            "game": COUNT,
                            "step": COUNT,
                            "turn": INT,
                            "kind": STR,
                            "reason": STR,
                        }
                    )
                ),
            }
        ),
    }
