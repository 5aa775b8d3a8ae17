"""Reading the match indexes, and building them for matches stored before they existed.

The index sets (``Keys.league_status``, ``Keys.league_bot``, ``Keys.league_bot_status``,
``Keys.league_retrying``) are kept by the scripts that change a match's status (``store`` and
``ratings.record_result``); see :mod:`arboretum_worker.indexsets`.
Here they are read: a page of a league's matches filtered by status and/or bot, a league's
counts, its failed matches. Each is a handful of sorted-set commands, whatever the number of
matches (``bench/store_bench.py`` measures the pages on 100,000 of them).

:func:`ensure_indexes` is the migration: it indexes every match that has no ``position`` yet
(data written before the indexes), once per database, under a lock so that two processes
starting together do not both do it. ``arena worker``, ``arena web`` and the league commands
call it (through ``league.prepare_store``); it costs one ``GET`` once the indexes exist.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arboretum_worker import indexsets, store
from arboretum_worker.store import Keys, MatchStatus, StoreError

if TYPE_CHECKING:
    import redis

__all__ = [
    "INDEX_VERSION",
    "ensure_indexes",
    "indexed",
    "league_counts",
    "members",
    "page",
    "with_status",
]

log = logging.getLogger(__name__)

INDEX_VERSION = b"1"
"""The layout version of the index sets; :func:`ensure_indexes` builds up to it."""
_LOCK_TTL_S = 120
_CHUNK = 1000

# KEYS: match hash, then its index keys. ARGV: position, bots (JSON).
_INDEX_MATCH = (
    indexsets.INDEX_LUA
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'position', ARGV[1])
redis.call('HSETNX', KEYS[1], 'bots', ARGV[2])
arena_index_sync(KEYS[1], 2)
return 1
"""
)

# KEYS: lock. ARGV: token, ttl in ms (0: release).
_LOCK = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
"""


def indexed(r: redis.Redis) -> bool:
    """Whether every stored match is in the indexes (the migration has run on this database)."""
    return bool(r.get(Keys.INDEX_VERSION) == INDEX_VERSION)


def ensure_indexes(r: redis.Redis, *, wait_s: float = 600.0) -> int:
    """Index the matches stored before the indexes existed; idempotent.

    Returns how many matches this call indexed (0 when the database is indexed already, or
    another process is indexing it and ``wait_s`` is 0). With ``wait_s`` > 0 it waits that
    long for another process's run to finish, and raises :class:`StoreError` past it.
    """
    if indexed(r):
        return 0
    token = os.urandom(12).hex()
    deadline = time.monotonic() + wait_s
    while not r.set(Keys.INDEX_LOCK, token, nx=True, ex=_LOCK_TTL_S):
        if indexed(r) or wait_s <= 0:
            return 0
        if time.monotonic() > deadline:
            raise StoreError(
                f"another process has been indexing the stored matches for more than "
                f"{wait_s:g} s (lock {Keys.INDEX_LOCK})"
            )
        time.sleep(0.2)
    lock = r.register_script(_LOCK)
    started = time.monotonic()
    count = 0
    try:
        for league in store.list_leagues(r):
            count += _index_league(
                r, league, lambda: lock(keys=[Keys.INDEX_LOCK], args=[token, _LOCK_TTL_S * 1000])
            )
        r.set(Keys.INDEX_VERSION, INDEX_VERSION)
    finally:
        lock(keys=[Keys.INDEX_LOCK], args=[token, 0])
    if count:
        log.info("indexed %d stored matches in %.1f s", count, time.monotonic() - started)
    return count


def _index_league(r: redis.Redis, league: str, keep_lock: Any) -> int:
    script = r.register_script(_INDEX_MATCH)
    names: dict[str, str | None] = {}
    key = Keys.league_matches(league)
    count = 0
    start = 0
    while True:
        ids = [store.as_text(m) for m in r.lrange(key, start, start + _CHUNK - 1)]
        if not ids:
            return count
        pipe = r.pipeline(transaction=False)
        for match_id in ids:
            pipe.hmget(Keys.match(match_id), ["seats", "position", "bots"])
        rows = pipe.execute()
        missing = {
            vid for seats, _, bots in rows if seats and bots is None for vid in json.loads(seats)
        }
        names.update(store.version_names(r, missing - names.keys()))
        pipe = r.pipeline(transaction=False)
        for offset, (match_id, (seats, position, bots)) in enumerate(zip(ids, rows, strict=True)):
            if seats is None:
                continue
            seat_bots = json.loads(bots) if bots else [names[v] for v in json.loads(seats)]
            keys = [Keys.match(match_id), *indexsets.index_keys(league, seat_bots)]
            pos = int(position) if position is not None else start + offset
            script(keys=keys, args=[pos, json.dumps(seat_bots)], client=pipe)
        count += sum(int(x) for x in pipe.execute())
        keep_lock()
        start += len(ids)


# --------------------------------------------------------------------------- reading


def league_counts(r: redis.Redis, league: str) -> tuple[int, dict[MatchStatus, int]]:
    """(matches scheduled, matches per status) of the league."""
    pipe = r.pipeline(transaction=False)
    pipe.llen(Keys.league_matches(league))
    for status in MatchStatus:
        pipe.zcard(Keys.league_status(league, status))
    total, *counts = pipe.execute()
    return int(total), {s: int(n) for s, n in zip(MatchStatus, counts, strict=True)}


def _set_key(league: str, bot: str | None, status: MatchStatus | None) -> str:
    if bot is None:
        return Keys.league_status(league, status) if status else Keys.league_matches(league)
    if status is None:
        return Keys.league_bot(league, bot)
    return Keys.league_bot_status(league, bot, status)


def page(
    r: redis.Redis,
    leagues: Sequence[str],
    *,
    bot: str | None = None,
    status: MatchStatus | None = None,
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[str]]:
    """Match ids of these leagues (in this order, each in schedule order) in which ``bot`` (a
    bot name) sits and whose status is ``status`` (either filter optional): (how many in all,
    the ids of ``limit`` of them from ``offset``)."""
    keys = [_set_key(league, bot, status) for league in leagues]
    plain = bot is None and status is None  # the leagues' lists themselves
    pipe = r.pipeline(transaction=False)
    for key in keys:
        if plain:
            pipe.llen(key)
        else:
            pipe.zcard(key)
    sizes = [int(n) for n in pipe.execute()]
    total = sum(sizes)
    pipe = r.pipeline(transaction=False)
    skip, wanted = max(offset, 0), max(limit, 0)
    for key, size in zip(keys, sizes, strict=True):
        if wanted <= 0:
            break
        if skip >= size:
            skip -= size
            continue
        take = min(size - skip, wanted)
        if plain:
            pipe.lrange(key, skip, skip + take - 1)
        else:
            pipe.zrange(key, skip, skip + take - 1)
        wanted -= take
        skip = 0
    ids = [store.as_text(m) for chunk in pipe.execute() for m in chunk]
    return total, ids


def with_status(r: redis.Redis, league: str, *statuses: MatchStatus) -> list[str]:
    """The league's matches of these statuses, in schedule order (one round trip)."""
    pipe = r.pipeline(transaction=False)
    for status in statuses:
        pipe.zrange(Keys.league_status(league, status), 0, -1, withscores=True)
    found = [(score, store.as_text(m)) for chunk in pipe.execute() for m, score in chunk]
    return [match_id for _, match_id in sorted(found)]


def members(r: redis.Redis, key: str, limit: int | None = None) -> list[str]:
    """The first ``limit`` (all with None) match ids of an index set, in schedule order."""
    stop = -1 if limit is None else limit - 1
    if limit == 0:
        return []
    return [store.as_text(m) for m in r.zrange(key, 0, stop)]
