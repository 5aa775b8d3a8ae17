"""A casual game's record, its settings and limits, and the bots' record against people.

A casual game is a person against 1 to 3 bot versions, one game on a worker's private referee
(docs/play.md). Its record is a Redis hash (``Keys.casual``) while it is queued or playing and
for ``ARENA_CASUAL_KEEP_DAYS`` after; once over, a summary of it is kept for good
(``Keys.casual_result``) beside its replay, and listed per bot version (``Keys.casual_version``)
with the version's record against people: games, and the bot's wins (ranked above the person;
a shared rank is half a win). Nothing here touches a league, a ladder, Elo or a test.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from arboretum_sdk.info import TimeControl

from ..keys import Keys
from ..settings import SettingsError, numbers_from_env

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT, FieldT

__all__ = [
    "BOT_CLOCK",
    "PERSON_NAME",
    "CasualError",
    "CasualGame",
    "CasualSettings",
    "Status",
    "clear_pending",
    "games_for_version",
    "read_game",
    "record_for_version",
    "replay_url",
    "resigned",
    "set_pending",
    "set_status",
    "store_result",
]

PERSON_NAME = "person"
"""The person's seat's name at the referee and in the replay."""

BOT_CLOCK = TimeControl()
"""The bots' clock in a casual game: the referee's default (1 s free per decision, a 10 s bank),
not the person's; the bots play with fixed compute and answer in milliseconds."""


class Status:
    QUEUED = "queued"
    PLAYING = "playing"
    OVER = "over"
    FAILED = "failed"


class CasualError(Exception):
    """Every refusal of the casual games: ``status`` is the HTTP status, ``str()`` the message.

    400 bad request, 403 wrong key, 404 no such game, 409 not your turn or a stale page, 410 the
    game is over, 429 too many games (then ``retry_after``, in seconds)."""

    def __init__(self, status: int, message: str, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class CasualSettings:
    """The casual games' settings (docs/league.md, "Casual games"), from the environment."""

    decision_s: float = 120.0
    """``ARENA_CASUAL_DECISION_S``: the person's free time per decision (the bots':
    :data:`BOT_CLOCK`)."""
    bank_s: float = 600.0
    """``ARENA_CASUAL_BANK_S``: the person's bank for the game."""
    faults_to_forfeit: int = 2
    """``ARENA_CASUAL_FAULTS``: a seat forfeits at its N-th fault (an idle page: two timeouts)."""
    per_address: int = 3
    """``ARENA_CASUAL_PER_ADDRESS``: games queued or playing per client address."""
    max_queued: int = 50
    """``ARENA_CASUAL_MAX_QUEUED``: games waiting for a worker, in all."""
    keep_days: float = 7.0
    """``ARENA_CASUAL_KEEP_DAYS``: how long a finished game's record and feed are kept (its
    replay and summary are kept for good)."""
    queue: str = "arena"
    """``ARENA_QUEUE``: the base of the queues' names (the casual queue is ``<base>-casual``)."""

    def __post_init__(self) -> None:
        for name, low in (
            ("decision_s", 0.1),
            ("bank_s", 0.0),
            ("faults_to_forfeit", 1),
            ("per_address", 1),
            ("max_queued", 1),
            ("keep_days", 0.0),
        ):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value < low:
                raise SettingsError(f"casual setting {name} must be a number >= {low}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> CasualSettings:
        env = os.environ if env is None else env
        values = numbers_from_env(
            env,
            (
                ("decision_s", "ARENA_CASUAL_DECISION_S", float),
                ("bank_s", "ARENA_CASUAL_BANK_S", float),
                ("faults_to_forfeit", "ARENA_CASUAL_FAULTS", int),
                ("per_address", "ARENA_CASUAL_PER_ADDRESS", int),
                ("max_queued", "ARENA_CASUAL_MAX_QUEUED", int),
                ("keep_days", "ARENA_CASUAL_KEEP_DAYS", float),
            ),
        )
        if env.get("ARENA_QUEUE", "").strip():
            values["queue"] = env["ARENA_QUEUE"].strip()
        return cls(**values)

    @property
    def per_decision_ms(self) -> int:
        return int(self.decision_s * 1000)

    @property
    def bank_ms(self) -> int:
        return int(self.bank_s * 1000)

    @property
    def keep_s(self) -> int:
        return max(1, int(self.keep_days * 86400))


@dataclass(frozen=True)
class CasualGame:
    """A casual game's record (see the module's docstring)."""

    game_id: str
    players: int
    person_seat: int
    seats: tuple[str, ...]
    """Per seat: the bot's version id, ``""`` for the person."""
    names: tuple[str, ...]
    """Per seat: the display name (``you`` for the person)."""
    status: str
    created: float
    ended: float | None = None
    result: dict[str, Any] | None = None
    """At the end: ``ranks``, ``totals`` (per seat), ``forfeited``, ``faults``, ``reason``."""
    replay_id: str | None = None
    author: str | None = None
    per_decision_ms: int = 120_000
    bank_ms: int = 600_000
    faults_to_forfeit: int = 2
    reason: str = ""
    """Why the game failed (``status`` ``failed``); never holds hidden information."""

    @property
    def over(self) -> bool:
        return self.status in (Status.OVER, Status.FAILED)

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["seats"], out["names"] = list(self.seats), list(self.names)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> CasualGame:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in obj.items() if k in known}
        values["seats"] = tuple(values.get("seats", ()))
        values["names"] = tuple(values.get("names", ()))
        return cls(**values)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def record_fields(game: CasualGame) -> dict[FieldT, EncodableT]:
    """The record's hash fields."""
    return {"game": json.dumps(game.to_json(), separators=(",", ":"))}


def read_game(r: redis.Redis, game_id: str) -> CasualGame | None:
    """The game's record, else its kept summary once the record expired; None if neither."""
    raw = r.hget(Keys.casual(game_id), "game")
    if raw is None:
        raw = r.get(Keys.casual_result(game_id))
    if raw is None:
        return None
    return CasualGame.from_json(json.loads(_text(raw)))


def replay_url(game_id: str) -> str:
    """The URL path of a casual game's replay on the web server."""
    return f"/play/{game_id}/replay"


def bot_points(ranks: list[int], seat: int, person: int) -> float:
    """The bot's share of a win over the person: 1 ranked above, 0.5 the same rank, else 0."""
    if ranks[seat] < ranks[person]:
        return 1.0
    return 0.5 if ranks[seat] == ranks[person] else 0.0


def store_result(r: redis.Redis, game: CasualGame, keep_s: int) -> None:
    """Record a game that is over: its record (expiring after ``keep_s``), its summary for good,
    and, when it has a result, each bot version's game and record against people."""
    pipe = r.pipeline(transaction=True)
    key = Keys.casual(game.game_id)
    pipe.hset(key, mapping=record_fields(game))
    pipe.hdel(key, "pending", "pending_id")
    pipe.set(Keys.casual_result(game.game_id), record_fields(game)["game"])
    for part in (key, Keys.casual_feed(game.game_id), Keys.casual_moves(game.game_id)):
        pipe.expire(part, keep_s)
    if game.result is not None and game.status == Status.OVER:
        ranks = list(game.result["ranks"])
        for vid in sorted({v for v in game.seats if v}):
            points = sum(
                bot_points(ranks, s, game.person_seat) for s, v in enumerate(game.seats) if v == vid
            )
            count = game.seats.count(vid)
            pipe.zadd(Keys.casual_version(vid), {game.game_id: game.ended or time.time()})
            pipe.hincrby(Keys.casual_version_record(vid), "games", count)
            pipe.hincrbyfloat(Keys.casual_version_record(vid), "wins", points)
    pipe.execute()


def games_for_version(
    r: redis.Redis, version_id: str, offset: int = 0, limit: int = 20
) -> list[CasualGame]:
    """The version's finished games against people, newest first."""
    ids = r.zrevrange(Keys.casual_version(version_id), offset, offset + max(0, limit) - 1)
    games = []
    for raw in ids:
        game = read_game(r, _text(raw))
        if game is not None:
            games.append(game)
    return games


def record_for_version(r: redis.Redis, version_id: str) -> tuple[float, int]:
    """The version's record against people: (the bot's wins, games)."""
    h = r.hgetall(Keys.casual_version_record(version_id))
    values = {_text(k): _text(v) for k, v in h.items()}
    return float(values.get("wins", 0)), int(values.get("games", 0))


def set_pending(r: redis.Redis, game_id: str, request: dict[str, Any]) -> None:
    """The request the person has to answer now (the relay's, as it feeds it)."""
    r.hset(
        Keys.casual(game_id),
        mapping={
            "pending": json.dumps(request, separators=(",", ":")),
            "pending_id": str(request["id"]),
        },
    )


def clear_pending(r: redis.Redis, game_id: str) -> None:
    """No request of the person is pending (answered, faulted, or the game ended)."""
    r.hdel(Keys.casual(game_id), "pending", "pending_id")


def set_status(r: redis.Redis, game: CasualGame) -> None:
    """Write the record's game (its status changed)."""
    r.hset(Keys.casual(game.game_id), mapping=record_fields(game))


def resigned(r: redis.Redis, game_id: str) -> bool:
    """Whether the person asked to resign."""
    return r.hget(Keys.casual(game_id), "resigned") is not None
