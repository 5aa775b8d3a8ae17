"""Request-level building blocks shared by the pages and the API: parameters, lookups that
answer 404, permissions, and the JSON form of each resource."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from arboretum_worker import registry, replays, store

from . import queries
from .identity import request_author
from .replays import is_complete, seat_view, strip_faults

if TYPE_CHECKING:
    import redis

__all__ = [
    "bool_param",
    "bot_json",
    "error_json",
    "int_param",
    "league_json",
    "league_param",
    "load_bot",
    "load_league",
    "load_match",
    "match_json",
    "owned_seats",
    "replay_for",
    "status_param",
]

_MATCH_ID = re.compile(r"[0-9A-Za-z_.-]{1,64}")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def error_json(status: int, message: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An error as every JSON endpoint answers it (the API's and the casual table's):
    ``{"error": {"status": N, "message": "..."}}`` with the same HTTP status."""
    return JSONResponse(
        {"error": {"status": status, "message": message}},
        status_code=status,
        headers=dict(headers or {}),
    )


def redis_of(request: Request) -> Any:
    """The app's Redis client; the first call indexes matches stored before the match
    indexes existed (``league.prepare_store``), which the pages read."""
    state = request.app.state
    if not state.indexed:
        from arboretum_worker.league import prepare_store

        prepare_store(state.redis)
        state.indexed = True
    return state.redis


# --------------------------------------------------------------------------- parameters


def bool_param(request: Request, name: str, *, blank_is_false: bool = False) -> bool:
    """A boolean query parameter, absent: False; ``blank_is_false``: an empty value is False too
    (a page's form sends one), else it is refused as any other value that is not a boolean."""
    raw = request.query_params.get(name)
    if raw is None or (blank_is_false and raw == ""):
        return False
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise HTTPException(400, f"parameter {name!r} is a boolean (1 or 0), not {raw!r}")


def int_param(
    request: Request,
    name: str,
    default: int | None,
    low: int = 0,
    high: int | None = None,
    *,
    blank_is_default: bool = False,
) -> int | None:
    """An integer query parameter from ``low`` to ``high``, absent: ``default``;
    ``blank_is_default``: an empty value is the default too (a page's form sends one), else it
    is refused as any other value that is not an integer."""
    raw = request.query_params.get(name)
    if raw is None or (blank_is_default and raw == ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise HTTPException(400, f"parameter {name!r} is an integer, not {raw!r}") from None
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise HTTPException(400, f"parameter {name!r} must be {bound}, not {value}")
    return value


def status_param(request: Request) -> store.MatchStatus | None:
    raw = request.query_params.get("status")
    if not raw:
        return None
    try:
        return store.MatchStatus(raw)
    except ValueError:
        choices = ", ".join(s.value for s in store.MatchStatus)
        raise HTTPException(400, f"status is one of {choices}, not {raw!r}") from None


def _name(kind: str, name: str) -> str:
    try:
        return store.validate_name(kind, name)
    except store.StoreError:
        raise HTTPException(404, f"no {kind} {name!r}") from None


def load_league(r: redis.Redis, name: str) -> store.League:
    league = store.get_league(r, _name("league", name))
    if league is None:
        raise HTTPException(404, f"no league {name!r}")
    return league


def league_param(request: Request) -> str | None:
    """``?league=`` (404 if unknown), else the newest league, else None."""
    r = redis_of(request)
    name = request.query_params.get("league")
    if name:
        return load_league(r, name).name
    return queries.default_league(r)


def load_bot(r: redis.Redis, name: str) -> store.Bot:
    bot = store.get_bot(r, _name("bot", name))
    if bot is None:
        raise HTTPException(404, f"no bot {name!r}")
    return bot


def load_match(r: redis.Redis, match_id: str) -> store.MatchRecord:
    if not _MATCH_ID.fullmatch(match_id):
        raise HTTPException(404, f"no match {match_id!r}")
    record = store.get_match(r, match_id)
    if record is None:
        raise HTTPException(404, f"no match {match_id!r}")
    return record


def owned_seats(request: Request, record: store.MatchRecord) -> set[int]:
    author = request_author(request)
    if author is None:
        return set()
    owners = queries.seat_owners(redis_of(request), record)
    return {seat for seat, owner in enumerate(owners) if owner == author}


def require_seat_owner(request: Request, record: store.MatchRecord, seat: int) -> None:
    if not 0 <= seat < len(record.seats):
        raise HTTPException(404, f"match {record.id} has no seat {seat}")
    if request_author(request) is None:
        raise HTTPException(401, "sign in with the token of the bot's author")
    if seat not in owned_seats(request, record):
        raise HTTPException(403, "only the author of this seat's bot may see its logs and faults")


# --------------------------------------------------------------------------- JSON forms


def _ts(value: float | None) -> float | None:
    return value if value else None


def league_json(r: redis.Redis, league: store.League) -> dict[str, Any]:
    progress = queries.league_state(r, league.name)
    s = league.settings
    return {
        "name": league.name,
        "status": league.status.value,
        "created": league.created,
        "settings": {
            "players": s.players,
            "games_per_pairing": s.games_per_pairing,
            "deals_per_series": s.deals_per_series,
            "bots": [
                {"version": v, "label": label} for v, label in queries.version_labels(r, s.bots)
            ],
            "time_control": {
                "per_decision_ms": s.time_control.per_decision_ms,
                "bank_ms": s.time_control.bank_ms,
            },
            "fault_policy": {"faults_to_forfeit": s.fault_policy.faults_to_forfeit},
            "elo": {"initial": s.elo.initial, "k": s.elo.k},
        },
        "progress": None
        if progress is None
        else {
            "total": progress.total,
            "done": progress.done,
            "complete": progress.complete,
            "counts": {st.value: progress.counts[st.value] for st in store.MatchStatus},
            "failures": [{"match": m, "reason": why} for m, why in progress.failures],
        },
    }


def bot_json(r: redis.Redis, bot: store.Bot) -> dict[str, Any]:
    versions: list[dict[str, Any]] = []
    for i, vid in enumerate(registry.versions(r, bot.name), 1):
        v = store.get_version(r, vid)
        if v is not None:
            versions.append(
                {"index": i, "id": v.id, "created": v.created, "size": v.size, "files": v.files}
            )
    return {
        "name": bot.name,
        "owner": bot.owner,
        "created": bot.created,
        "versions": versions,
        "leagues": queries.bot_leagues(r, [v["id"] for v in versions]),
    }


def match_json(
    request: Request,
    record: store.MatchRecord,
    *,
    brief: bool = False,
    data: queries.RowData | None = None,
) -> dict[str, Any]:
    """The JSON form of a match; ``data`` is :func:`queries.row_data` of a page of matches
    that holds this one (read for this match alone when None)."""
    r = redis_of(request)
    if data is None:
        data = queries.row_data(r, [record])
    revealed = data.revealed(record)
    seats = []
    for seat, vid in enumerate(record.seats):
        seats.append(
            {"seat": seat, "version": vid, "bot": data.names.get(vid), "label": data.label(vid)}
        )
    out: dict[str, Any] = {
        "id": record.id,
        "league": record.league,
        "status": record.status.value,
        "seats": seats,
        "deal": record.deal,
        "deals": list(record.deals),
        "rotation": record.rotation,
        "seed": str(record.seed) if revealed else None,
        "game_seeds": [str(seed) for seed in record.game_seeds] if revealed else None,
        "revealed": revealed,
        "created": _ts(record.created),
        "started": record.started,
        "finished": record.finished,
    }
    result = data.results.get(record.id)
    out["result"] = None
    if result is not None:
        out["result"] = {
            "games": [{"ranks": list(g.ranks), "totals": list(g.totals)} for g in result.games],
            "wins": [
                sum(1 for g in result.games if g.ranks[seat] == 1)
                for seat in range(len(record.seats))
            ],
        }
    if brief:
        return out
    owned = owned_seats(request, record)
    out["failure"] = record.failure
    out["attempts"] = record.attempts
    base = f"/api/v1/matches/{record.id}"
    out["games"] = [
        {
            "game": g,
            "replay": f"{base}/games/{g}/replay",
            "download": f"{base}/games/{g}/replay?download=1",
            "viewer": f"/matches/{record.id}/games/{g}",
        }
        for g in replays.replay_games(r, record.id)
    ]
    out["owned_seats"] = sorted(owned)
    if result is not None and owned:
        out["faults"] = {
            str(seat): [g.faults[seat] for g in result.games] for seat in sorted(owned)
        }
    return out


def replay_for(
    request: Request, record: store.MatchRecord, game: int, seat: int | None
) -> dict[str, Any]:
    """The replay document this request may see (see :mod:`.replays`)."""
    r = redis_of(request)
    raw = replays.get_replay(r, record.id, game)
    if raw is None:
        raise HTTPException(404, f"match {record.id} has no replay of game {game}")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise HTTPException(500, "the stored replay is not JSON") from None
    players = int(doc.get("players", len(record.seats)))
    if seat is not None and not 0 <= seat < players:
        raise HTTPException(400, f"seat is from 0 to {players - 1}, not {seat}")
    owned = owned_seats(request, record)
    revealed = queries.game_revealed(r, record) and is_complete(doc)
    if seat is not None and not revealed and seat not in owned:
        if request_author(request) is None:
            raise HTTPException(
                401, "the game is not over: only the author of a seat's bot may see its cards"
            )
        raise HTTPException(403, "the game is not over: you may only see your own seats' cards")
    if seat is not None or not revealed:
        doc = seat_view(doc, seat)
    doc = strip_faults(doc, owned)
    doc["view"] = {
        "seat": seat,
        "hidden": seat is not None or not revealed,
        "revealed": revealed,
        "owned_seats": sorted(owned),
    }
    return doc
