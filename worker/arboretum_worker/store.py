"""The league's data in Redis: every key name, the record types and typed access to them.

All key names are built here, by :class:`Keys` (prefix ``arena:``); nothing else in the project
spells a key. Clients must be created with ``decode_responses=False`` (bot files are bytes);
this module decodes text itself.

Layout (``{x}`` is an id; names and ids never contain ``:``)::

    arena:bots                          set    bot names
    arena:bot:{name}                    hash   name, owner, created
    arena:bot:{name}:versions           list   version ids, oldest first (the name's history)
    arena:version:{vid}                 hash   id, name, created, size, files
    arena:version:{vid}:files           hash   relative path -> file bytes
    arena:leagues                       set    league names
    arena:league:{name}                 hash   name, settings (JSON), status, created
    arena:league:{name}:matches         list   match ids in schedule order
    arena:match:{id}                    hash   id, league, seats (JSON), deal, rotation, seed,
                                               status, failure, attempts, worker, created,
                                               started, finished
    arena:result:{match_id}             string the match result (JSON), written once (SET NX)
    arena:replay:{match_id}             hash   game index -> replay JSON bytes
    arena:log:{match_id}:{seat}         string the seat's bot log (stderr), capped
    arena:elo:{league}:ratings          hash   version id -> Elo ("%.17g")
    arena:elo:{league}:seq              string last sequence number given to a result
    arena:elo:{league}:applied          zset   match id, score = its sequence number
    arena:elo:{league}:stats:{vid}      hash   games, wins, shared_wins, win_share, rank_sum,
                                               last_played, last_seq, rating
    arena:elo:{league}:history:{vid}    list   "seq game rating match_id", one per game played
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

import redis

if TYPE_CHECKING:
    from arboretum_worker.schedule import MatchSpec

__all__ = [
    "BOT_LOG_CAP",
    "Bot",
    "BotVersion",
    "EloSettings",
    "FaultPolicy",
    "GameOutcome",
    "Keys",
    "League",
    "LeagueSettings",
    "LeagueStatus",
    "MatchRecord",
    "MatchResult",
    "MatchStatus",
    "StoreError",
    "TimeControl",
    "append_bot_log",
    "as_text",
    "bot_versions",
    "create_league",
    "create_matches",
    "get_bot",
    "get_bot_log",
    "get_league",
    "get_match",
    "get_replay",
    "get_result",
    "get_version",
    "get_version_files",
    "league_matches",
    "list_bots",
    "list_leagues",
    "replay_games",
    "save_replay",
    "set_league_status",
    "set_match_status",
    "start_match_attempt",
    "validate_name",
]

BOT_LOG_CAP = 64 * 1024
"""Bytes of a bot's log kept per match and seat; the rest is dropped (see append_bot_log)."""

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class StoreError(ValueError):
    """A record is malformed, missing where it must exist, or already exists."""


def validate_name(kind: str, name: str) -> str:
    """Bot and league names: 1-64 of ``A-Z a-z 0-9 _ . -``, starting with a letter or digit."""
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise StoreError(
            f"invalid {kind} name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return name


class Keys:
    """Every Redis key of the league, built from ``PREFIX`` and one helper per entity."""

    PREFIX: ClassVar[str] = "arena:"
    BOTS: ClassVar[str] = PREFIX + "bots"
    BOT: ClassVar[str] = PREFIX + "bot:"
    VERSION: ClassVar[str] = PREFIX + "version:"
    LEAGUES: ClassVar[str] = PREFIX + "leagues"
    LEAGUE: ClassVar[str] = PREFIX + "league:"
    MATCH: ClassVar[str] = PREFIX + "match:"
    RESULT: ClassVar[str] = PREFIX + "result:"
    REPLAY: ClassVar[str] = PREFIX + "replay:"
    LOG: ClassVar[str] = PREFIX + "log:"
    ELO: ClassVar[str] = PREFIX + "elo:"

    @staticmethod
    def key_for(namespace: str, id: str) -> str:
        """``namespace + id``, refusing ids that could collide with another key."""
        if not id or ":" in id or any(c.isspace() for c in id):
            raise StoreError(f"invalid id {id!r} for a key under {namespace!r}")
        return namespace + id

    @classmethod
    def bot(cls, name: str) -> str:
        return cls.key_for(cls.BOT, name)

    @classmethod
    def bot_versions(cls, name: str) -> str:
        return cls.bot(name) + ":versions"

    @classmethod
    def version(cls, version_id: str) -> str:
        return cls.key_for(cls.VERSION, version_id)

    @classmethod
    def version_files(cls, version_id: str) -> str:
        return cls.version(version_id) + ":files"

    @classmethod
    def league(cls, name: str) -> str:
        return cls.key_for(cls.LEAGUE, name)

    @classmethod
    def league_matches(cls, name: str) -> str:
        return cls.league(name) + ":matches"

    @classmethod
    def match(cls, match_id: str) -> str:
        return cls.key_for(cls.MATCH, match_id)

    @classmethod
    def result(cls, match_id: str) -> str:
        return cls.key_for(cls.RESULT, match_id)

    @classmethod
    def replay(cls, match_id: str) -> str:
        return cls.key_for(cls.REPLAY, match_id)

    @classmethod
    def bot_log(cls, match_id: str, seat: int) -> str:
        return cls.key_for(cls.LOG, match_id) + f":{int(seat)}"

    @classmethod
    def elo(cls, league: str) -> str:
        return cls.key_for(cls.ELO, league)

    @classmethod
    def elo_ratings(cls, league: str) -> str:
        return cls.elo(league) + ":ratings"

    @classmethod
    def elo_seq(cls, league: str) -> str:
        return cls.elo(league) + ":seq"

    @classmethod
    def elo_applied(cls, league: str) -> str:
        return cls.elo(league) + ":applied"

    @classmethod
    def elo_stats(cls, league: str, version_id: str) -> str:
        return cls.key_for(cls.elo(league) + ":stats:", version_id)

    @classmethod
    def elo_history(cls, league: str, version_id: str) -> str:
        return cls.key_for(cls.elo(league) + ":history:", version_id)


class LeagueStatus(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


# --------------------------------------------------------------------------- helpers


# Replies are bytes (decode_responses=False); redis-py types them as bytes | str.
Reply = Any


def _s(value: Reply) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def as_text(value: Reply) -> str:
    """A reply (bytes) as text."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _b(value: Reply) -> bytes:
    return value.encode() if isinstance(value, str) else bytes(value)


def _text(hash_: Mapping[Reply, Reply], name: str) -> str | None:
    return _s(hash_.get(name.encode()))


def _req(hash_: Mapping[Reply, Reply], name: str) -> str:
    value = _text(hash_, name)
    if value is None:
        raise StoreError(f"record is missing field {name!r}")
    return value


def _opt_float(hash_: Mapping[Reply, Reply], name: str) -> float | None:
    value = _text(hash_, name)
    return float(value) if value else None


# --------------------------------------------------------------------------- bots


@dataclass(frozen=True, slots=True)
class Bot:
    name: str
    owner: str | None
    created: float


@dataclass(frozen=True, slots=True)
class BotVersion:
    """An immutable submitted version; ``id`` is the sha256 of its files (see registry)."""

    id: str
    name: str
    created: float
    size: int
    """Total bytes of its files."""
    files: int
    """Number of files."""


def list_bots(r: redis.Redis) -> list[str]:
    return sorted(_s(m) or "" for m in r.smembers(Keys.BOTS))


def get_bot(r: redis.Redis, name: str) -> Bot | None:
    h = r.hgetall(Keys.bot(name))
    if not h:
        return None
    return Bot(
        name=_req(h, "name"), owner=_text(h, "owner") or None, created=float(_req(h, "created"))
    )


def bot_versions(r: redis.Redis, name: str) -> list[str]:
    """The name's versions, oldest first."""
    return [_s(v) or "" for v in r.lrange(Keys.bot_versions(name), 0, -1)]


def get_version(r: redis.Redis, version_id: str) -> BotVersion | None:
    h = r.hgetall(Keys.version(version_id))
    if not h:
        return None
    return BotVersion(
        id=_req(h, "id"),
        name=_req(h, "name"),
        created=float(_req(h, "created")),
        size=int(_req(h, "size")),
        files=int(_req(h, "files")),
    )


def get_version_files(r: redis.Redis, version_id: str) -> dict[str, bytes]:
    """The version's files (relative path -> bytes); empty if the version does not exist."""
    return {_s(k) or "": _b(v) for k, v in r.hgetall(Keys.version_files(version_id)).items()}


# --------------------------------------------------------------------------- leagues


@dataclass(frozen=True, slots=True)
class TimeControl:
    per_decision_ms: int = 1000
    """Time a seat may use per decision before its bank is drawn on."""
    bank_ms: int = 30_000
    """Extra time for the whole game, drawn on when a decision takes longer."""


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    faults_to_forfeit: int = 3
    """A seat forfeits the game at this many faults (timeouts, illegal or malformed decisions)."""


@dataclass(frozen=True, slots=True)
class EloSettings:
    initial: float = 1500.0
    k: float = 32.0


@dataclass(frozen=True, slots=True)
class LeagueSettings:
    players: int
    games_per_pairing: int
    """Deals per combination of bots; each is played in all ``players`` seat rotations."""
    bots: tuple[str, ...]
    """Version ids taking part."""
    seed: int
    """League seed; every match seed derives from it (schedule.match_seed)."""
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    elo: EloSettings = field(default_factory=EloSettings)

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise StoreError(f"players must be 2, 3 or 4, not {self.players!r}")
        if self.games_per_pairing < 1:
            raise StoreError(f"games_per_pairing must be 1 or more, not {self.games_per_pairing}")
        if len(set(self.bots)) != len(self.bots):
            raise StoreError("a league lists each bot version once")
        if len(self.bots) < self.players:
            raise StoreError(f"{len(self.bots)} bots cannot fill {self.players} seats")
        if not 0 <= self.seed < 1 << 64:
            raise StoreError("the league seed is an integer from 0 to 2**64-1")
        if self.time_control.per_decision_ms <= 0 or self.time_control.bank_ms < 0:
            raise StoreError("time control: per_decision_ms > 0 and bank_ms >= 0")
        if self.fault_policy.faults_to_forfeit < 1:
            raise StoreError("fault policy: faults_to_forfeit >= 1")

    def to_json(self) -> str:
        return json.dumps(
            {
                "players": self.players,
                "games_per_pairing": self.games_per_pairing,
                "bots": list(self.bots),
                "seed": self.seed,
                "time_control": {
                    "per_decision_ms": self.time_control.per_decision_ms,
                    "bank_ms": self.time_control.bank_ms,
                },
                "fault_policy": {"faults_to_forfeit": self.fault_policy.faults_to_forfeit},
                "elo": {"initial": self.elo.initial, "k": self.elo.k},
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> LeagueSettings:
        d = json.loads(text)
        return cls(
            players=int(d["players"]),
            games_per_pairing=int(d["games_per_pairing"]),
            bots=tuple(d["bots"]),
            seed=int(d["seed"]),
            time_control=TimeControl(**d.get("time_control", {})),
            fault_policy=FaultPolicy(**d.get("fault_policy", {})),
            elo=EloSettings(**d.get("elo", {})),
        )


@dataclass(frozen=True, slots=True)
class League:
    name: str
    settings: LeagueSettings
    status: LeagueStatus
    created: float


# KEYS: league hash, leagues set. ARGV: name, settings, status, created.
_CREATE_HASH = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'settings', ARGV[2], 'status', ARGV[3],
           'created', ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""


def create_league(
    r: redis.Redis, name: str, settings: LeagueSettings, *, created: float | None = None
) -> League:
    """Create a league; StoreError if the name is taken."""
    validate_name("league", name)
    league = League(
        name, settings, LeagueStatus.CREATED, time.time() if created is None else created
    )
    args = [name, settings.to_json(), league.status.value, repr(league.created)]
    if not int(r.register_script(_CREATE_HASH)(keys=[Keys.league(name), Keys.LEAGUES], args=args)):
        raise StoreError(f"league {name!r} already exists")
    return league


def get_league(r: redis.Redis, name: str) -> League | None:
    h = r.hgetall(Keys.league(name))
    if not h or b"settings" not in h:
        return None
    return League(
        name=_req(h, "name"),
        settings=LeagueSettings.from_json(_req(h, "settings")),
        status=LeagueStatus(_req(h, "status")),
        created=float(_req(h, "created")),
    )


def list_leagues(r: redis.Redis) -> list[str]:
    return sorted(_s(m) or "" for m in r.smembers(Keys.LEAGUES))


def set_league_status(r: redis.Redis, name: str, status: LeagueStatus) -> None:
    key = Keys.league(name)
    if not r.exists(key):
        raise StoreError(f"no league {name!r}")
    r.hset(key, "status", LeagueStatus(status).value)


# --------------------------------------------------------------------------- matches


@dataclass(frozen=True, slots=True)
class MatchRecord:
    id: str
    league: str
    seats: tuple[str, ...]
    """Version ids in seat order (seat 0 moves first)."""
    deal: int
    rotation: int
    seed: int
    status: MatchStatus
    failure: str | None = None
    attempts: int = 0
    worker: str | None = None
    created: float = 0.0
    started: float | None = None
    finished: float | None = None


# KEYS: match hash, league match list. ARGV: id, league, seats, deal, rotation, seed, status,
# created.
_CREATE_MATCH = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'league', ARGV[2], 'seats', ARGV[3], 'deal', ARGV[4],
           'rotation', ARGV[5], 'seed', ARGV[6], 'status', ARGV[7], 'attempts', 0,
           'created', ARGV[8])
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1
"""


def create_matches(r: redis.Redis, specs: Iterable[MatchSpec]) -> int:
    """Store scheduled matches as QUEUED (once: an existing match is left alone).

    Appends new ids to their league's match list (each match atomically with its entry).
    Returns how many were new.
    """
    created = 0
    now = repr(time.time())
    script = r.register_script(_CREATE_MATCH)
    pipe = r.pipeline(transaction=False)
    for count, spec in enumerate(specs, 1):
        keys = [Keys.match(spec.match_id), Keys.league_matches(spec.league)]
        args: list[str | int] = [
            spec.match_id,
            spec.league,
            json.dumps(list(spec.seats)),
            spec.deal,
            spec.rotation,
            spec.seed,
            MatchStatus.QUEUED.value,
            now,
        ]
        script(keys=keys, args=args, client=pipe)
        if count % 1000 == 0:
            created += sum(int(x) for x in pipe.execute())
    created += sum(int(x) for x in pipe.execute())
    return created


def get_match(r: redis.Redis, match_id: str) -> MatchRecord | None:
    h = r.hgetall(Keys.match(match_id))
    if not h or b"status" not in h:
        return None
    return MatchRecord(
        id=_req(h, "id"),
        league=_req(h, "league"),
        seats=tuple(json.loads(_req(h, "seats"))),
        deal=int(_req(h, "deal")),
        rotation=int(_req(h, "rotation")),
        seed=int(_req(h, "seed")),
        status=MatchStatus(_req(h, "status")),
        failure=_text(h, "failure") or None,
        attempts=int(_text(h, "attempts") or 0),
        worker=_text(h, "worker") or None,
        created=float(_text(h, "created") or 0.0),
        started=_opt_float(h, "started"),
        finished=_opt_float(h, "finished"),
    )


def league_matches(r: redis.Redis, league: str) -> list[str]:
    return [_s(m) or "" for m in r.lrange(Keys.league_matches(league), 0, -1)]


# A finished match stays finished: its result is final (ratings.record_result sets FINISHED).
_SET_STATUS = """
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return -1 end
if cur == 'finished' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'failure', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'worker', ARGV[3]) end
if ARGV[4] == '1' then
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'started', ARGV[5])
end
return 1
"""


def _set_status(
    r: redis.Redis,
    match_id: str,
    status: MatchStatus,
    failure: str | None,
    worker: str | None,
    attempt: bool,
) -> bool:
    args = [
        MatchStatus(status).value,
        failure or "",
        worker or "",
        "1" if attempt else "0",
        repr(time.time()),
    ]
    rc = int(r.register_script(_SET_STATUS)(keys=[Keys.match(match_id)], args=args))
    if rc < 0:
        raise StoreError(f"no match {match_id!r}")
    return rc == 1


def set_match_status(
    r: redis.Redis,
    match_id: str,
    status: MatchStatus,
    *,
    failure: str | None = None,
    worker: str | None = None,
) -> bool:
    """Set a match's status (and failure reason, worker). False if it is already FINISHED.

    FINISHED itself is set by ``ratings.record_result``, together with the result.
    """
    if MatchStatus(status) is MatchStatus.FINISHED:
        raise StoreError("a match becomes finished only by recording its result")
    return _set_status(r, match_id, status, failure, worker, attempt=False)


def start_match_attempt(r: redis.Redis, match_id: str, worker: str) -> bool:
    """Mark the match RUNNING on ``worker``, count the attempt. False if already FINISHED."""
    return _set_status(r, match_id, MatchStatus.RUNNING, None, worker, attempt=True)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One game of a match, per seat: rank (1 best, ties share), score total, faults."""

    ranks: tuple[int, ...]
    totals: tuple[int, ...]
    faults: tuple[int, ...]

    def to_dict(self) -> dict[str, list[int]]:
        return {"ranks": list(self.ranks), "totals": list(self.totals), "faults": list(self.faults)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GameOutcome:
        return cls(tuple(d["ranks"]), tuple(d["totals"]), tuple(d["faults"]))


def _check_ranks(ranks: Sequence[int]) -> None:
    """Competition ranks: rank = 1 + number of seats strictly better."""
    for rank in ranks:
        if type(rank) is not int or rank != 1 + sum(1 for other in ranks if other < rank):
            raise StoreError(f"ranks {list(ranks)} are not competition ranks (1, 1, 3, ...)")


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The result of a match: its games in order. Recorded once per match id."""

    match_id: str
    league: str
    seats: tuple[str, ...]
    games: tuple[GameOutcome, ...]
    finished: float = 0.0

    def __post_init__(self) -> None:
        p = len(self.seats)
        if p not in (2, 3, 4):
            raise StoreError(f"a result has 2-4 seats, not {p}")
        if len(set(self.seats)) != p:
            raise StoreError("a result's seats are distinct bot versions")
        if not self.games:
            raise StoreError("a result has at least one game")
        for game in self.games:
            if not len(game.ranks) == len(game.totals) == len(game.faults) == p:
                raise StoreError(f"each game has ranks, totals and faults for all {p} seats")
            _check_ranks(game.ranks)

    def to_json(self) -> str:
        return json.dumps(
            {
                "match_id": self.match_id,
                "league": self.league,
                "seats": list(self.seats),
                "games": [g.to_dict() for g in self.games],
                "finished": self.finished,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> MatchResult:
        d = json.loads(text)
        return cls(
            match_id=d["match_id"],
            league=d["league"],
            seats=tuple(d["seats"]),
            games=tuple(GameOutcome.from_dict(g) for g in d["games"]),
            finished=float(d.get("finished", 0.0)),
        )


def get_result(r: redis.Redis, match_id: str) -> MatchResult | None:
    """The recorded result (written by ``ratings.record_result``), or None."""
    raw = r.get(Keys.result(match_id))
    return None if raw is None else MatchResult.from_json(raw)


# --------------------------------------------------------------------------- replays, logs


def save_replay(r: redis.Redis, match_id: str, game: int, data: bytes | str) -> bool:
    """Store a game's replay JSON; the first one stored wins. True if stored now."""
    return bool(r.hsetnx(Keys.replay(match_id), str(int(game)), data))


def get_replay(r: redis.Redis, match_id: str, game: int = 0) -> bytes | None:
    raw = r.hget(Keys.replay(match_id), str(int(game)))
    return None if raw is None else _b(raw)


def replay_games(r: redis.Redis, match_id: str) -> list[int]:
    """Game indexes of the match that have a replay."""
    return sorted(int(k) for k in r.hkeys(Keys.replay(match_id)))


_APPEND_CAPPED = """
local len = redis.call('STRLEN', KEYS[1])
local cap = tonumber(ARGV[2])
if len >= cap then return 0 end
local room = cap - len
local data = ARGV[1]
if #data > room then data = string.sub(data, 1, room) end
redis.call('APPEND', KEYS[1], data)
return #data
"""


def append_bot_log(
    r: redis.Redis, match_id: str, seat: int, data: bytes, *, cap: int = BOT_LOG_CAP
) -> int:
    """Append to a seat's log, keeping at most ``cap`` bytes in all; returns bytes kept now."""
    if not data:
        return 0
    script = r.register_script(_APPEND_CAPPED)
    return int(script(keys=[Keys.bot_log(match_id, seat)], args=[data, cap]))


def get_bot_log(r: redis.Redis, match_id: str, seat: int) -> bytes:
    raw = r.get(Keys.bot_log(match_id, seat))
    return b"" if raw is None else _b(raw)
