"""The league's data in Redis: the record types and typed access to them.

A league's settings are :mod:`arboretum_worker.leaguesettings` (re-exported here). The key
names are built by :class:`Keys` (:mod:`arboretum_worker.keys`, re-exported here, with
the whole layout); nothing else in the project spells a key. Clients must be created with
``decode_responses=False`` (bot files are bytes); this module decodes text itself.

Two parts of the data have modules of their own: the index sets that follow each match's status,
with the Lua that keeps them (:mod:`arboretum_worker.indexsets`, which the status scripts here
prepend), and the games' replays and the seats' bot logs (:mod:`arboretum_worker.replays`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis

from arboretum_sdk.info import FaultPolicy, TimeControl
from arboretum_worker.keys import Keys, LeagueStatus, MatchStatus, StoreError, validate_name

from . import indexsets
from .leaguesettings import COMPUTE_MODES, EloSettings, LadderSettings, LeagueSettings

if TYPE_CHECKING:
    from arboretum_worker.schedule import MatchSpec

__all__ = [
    "COMPUTE_MODES",
    "Bot",
    "BotVersion",
    "EloSettings",
    "FaultPolicy",
    "GameOutcome",
    "Keys",
    "LadderSettings",
    "League",
    "LeagueSettings",
    "LeagueStatus",
    "MatchRecord",
    "MatchResult",
    "MatchStatus",
    "StoreError",
    "TimeControl",
    "as_text",
    "bot_versions",
    "create_league",
    "create_matches",
    "get_bot",
    "get_league",
    "get_leagues",
    "get_match",
    "get_matches",
    "get_result",
    "get_results",
    "get_version",
    "get_version_files",
    "league_matches",
    "list_bots",
    "list_leagues",
    "match_statuses",
    "set_league_status",
    "set_match_status",
    "start_match_attempt",
    "validate_name",
    "version_names",
]

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


def version_names(r: redis.Redis, versions: Iterable[str]) -> dict[str, str | None]:
    """Bot name of each version id (None for a version the registry does not know)."""
    wanted = sorted(set(versions))
    pipe = r.pipeline(transaction=False)
    for vid in wanted:
        pipe.hget(Keys.version(vid), "name")
    return {vid: _s(name) for vid, name in zip(wanted, pipe.execute(), strict=True)}


# --------------------------------------------------------------------------- leagues


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


def _league_record(h: Mapping[Reply, Reply]) -> League | None:
    if not h or b"settings" not in h:
        return None
    return League(
        name=_req(h, "name"),
        settings=LeagueSettings.from_json(_req(h, "settings")),
        status=LeagueStatus(_req(h, "status")),
        created=float(_req(h, "created")),
    )


def get_league(r: redis.Redis, name: str) -> League | None:
    return _league_record(r.hgetall(Keys.league(name)))


def get_leagues(r: redis.Redis) -> list[League]:
    """Every league, newest first, read in two round trips."""
    pipe = r.pipeline(transaction=False)
    for name in list_leagues(r):
        pipe.hgetall(Keys.league(name))
    found = [lg for lg in map(_league_record, pipe.execute()) if lg is not None]
    return sorted(found, key=lambda lg: (-lg.created, lg.name))


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
    """The first deal of the match's series."""
    rotation: int
    seed: int
    """The first deal's seed (schedule.deal_seed)."""
    status: MatchStatus
    failure: str | None = None
    attempts: int = 0
    worker: str | None = None
    created: float = 0.0
    started: float | None = None
    finished: float | None = None
    deals: tuple[int, ...] = ()
    """The deals it plays, game i playing ``deals[i]`` (a match stored before series: its deal)."""
    game_seeds: tuple[int, ...] = ()
    """Each game's seed (a match stored before series: ``derive_game_seed(seed, 0)``)."""
    siblings: tuple[str, ...] | None = None
    """Ids of the other matches that play any of its deals; None for a match stored before
    series (they follow from the schedule's id scheme then)."""

    def __post_init__(self) -> None:
        if not self.deals:
            from arboretum import derive_game_seed

            object.__setattr__(self, "deals", (self.deal,))
            object.__setattr__(self, "game_seeds", (derive_game_seed(self.seed, 0),))

    @property
    def games(self) -> int:
        return len(self.deals)


# KEYS: match hash, league match list, then the index keys. ARGV: id, league, seats, deal,
# rotation, seed, status, created, bots, deals, game_seeds, siblings.
_CREATE_MATCH = (
    indexsets.INDEX_LUA
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local position = redis.call('RPUSH', KEYS[2], ARGV[1]) - 1
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'league', ARGV[2], 'seats', ARGV[3], 'deal', ARGV[4],
           'rotation', ARGV[5], 'seed', ARGV[6], 'status', ARGV[7], 'attempts', 0,
           'created', ARGV[8], 'position', position, 'bots', ARGV[9],
           'deals', ARGV[10], 'game_seeds', ARGV[11], 'siblings', ARGV[12])
arena_index_sync(KEYS[1], 3)
return 1
"""
)


def create_matches(r: redis.Redis, specs: Iterable[MatchSpec]) -> int:
    """Store scheduled matches as QUEUED (once: an existing match is left alone).

    Appends new ids to their league's match list and puts them in its indexes (each match
    atomically with its entries). Returns how many were new.
    """
    created = 0
    now = repr(time.time())
    script = r.register_script(_CREATE_MATCH)
    specs = list(specs)
    names = version_names(r, (vid for spec in specs for vid in spec.seats))
    pipe = r.pipeline(transaction=False)
    for count, spec in enumerate(specs, 1):
        bots = [names[vid] for vid in spec.seats]
        keys = [Keys.match(spec.match_id), Keys.league_matches(spec.league)]
        keys += indexsets.index_keys(spec.league, bots)
        args: list[str | int] = [
            spec.match_id,
            spec.league,
            json.dumps(list(spec.seats)),
            spec.deal,
            spec.rotation,
            spec.seed,
            MatchStatus.QUEUED.value,
            now,
            json.dumps(bots),
            json.dumps(list(spec.deals)),
            json.dumps([str(seed) for seed in spec.game_seeds]),
            json.dumps(list(spec.siblings)),
        ]
        script(keys=keys, args=args, client=pipe)
        if count % 1000 == 0:
            created += sum(int(x) for x in pipe.execute())
    created += sum(int(x) for x in pipe.execute())
    return created


def _match_record(h: Mapping[Reply, Reply]) -> MatchRecord:
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
        deals=tuple(int(d) for d in json.loads(_text(h, "deals") or "[]")),
        game_seeds=tuple(int(x) for x in json.loads(_text(h, "game_seeds") or "[]")),
        siblings=tuple(json.loads(siblings)) if (siblings := _text(h, "siblings")) else None,
    )


def get_match(r: redis.Redis, match_id: str) -> MatchRecord | None:
    h = r.hgetall(Keys.match(match_id))
    if not h or b"status" not in h:
        return None
    return _match_record(h)


def get_matches(r: redis.Redis, match_ids: Sequence[str]) -> list[MatchRecord | None]:
    """The records of these matches (None for a missing one), read in one round trip."""
    pipe = r.pipeline(transaction=False)
    for match_id in match_ids:
        pipe.hgetall(Keys.match(match_id))
    return [_match_record(h) if h and b"status" in h else None for h in pipe.execute()]


def match_statuses(r: redis.Redis, match_ids: Sequence[str]) -> dict[str, str | None]:
    """The status of each of these matches (None for a missing one), in one round trip."""
    pipe = r.pipeline(transaction=False)
    for match_id in match_ids:
        pipe.hget(Keys.match(match_id), "status")
    return {m: _s(s) for m, s in zip(match_ids, pipe.execute(), strict=True)}


def league_matches(r: redis.Redis, league: str) -> list[str]:
    return [_s(m) or "" for m in r.lrange(Keys.league_matches(league), 0, -1)]


# A finished match stays finished: its result is final (ratings.record_result sets FINISHED).
# KEYS: match hash, then its index keys.
_SET_STATUS = (
    indexsets.INDEX_LUA
    + """
local cur = redis.call('HGET', KEYS[1], 'status')
if not cur then return -1 end
if arena_index_stale(KEYS[1], 2) then return -2 end
if cur == 'finished' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'failure', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'worker', ARGV[3]) end
if ARGV[4] == '1' then
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'started', ARGV[5])
end
arena_index_sync(KEYS[1], 2)
return 1
"""
)


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
    script = r.register_script(_SET_STATUS)
    while True:
        keys = [Keys.match(match_id), *indexsets.match_index_keys(r, match_id)]
        rc = int(script(keys=keys, args=args))
        if rc != indexsets.INDEX_STALE:
            break
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


def get_results(r: redis.Redis, match_ids: Sequence[str]) -> dict[str, MatchResult | None]:
    """The recorded result of each of these matches (None when there is none), in one round
    trip (none without ids)."""
    raw = r.mget([Keys.result(m) for m in match_ids]) if match_ids else []
    return {
        m: MatchResult.from_json(text) if text is not None else None
        for m, text in zip(match_ids, raw, strict=True)
    }
