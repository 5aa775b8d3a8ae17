"""What a played match leaves in Redis besides its result: its games' replays and its seats' bot
logs (keys ``Keys.replay`` and ``Keys.bot_log``, :mod:`arboretum_worker.keys`)."""

from __future__ import annotations

import zlib
from typing import Any

import redis

from arboretum_worker.keys import Keys, StoreError

__all__ = [
    "BOT_LOG_CAP",
    "REPLAY_COMPRESSION",
    "append_bot_log",
    "drop_replays",
    "get_bot_log",
    "get_replay",
    "replay_games",
    "save_replay",
    "set_bot_log",
]

BOT_LOG_CAP = 64 * 1024
"""Bytes of a bot's log kept per match and seat; the rest is dropped (see append_bot_log)."""


def _b(value: Any) -> bytes:
    # Replies are bytes (decode_responses=False); redis-py types them as bytes | str.
    return value.encode() if isinstance(value, str) else bytes(value)


REPLAY_COMPRESSION = 6
"""zlib level of stored replays (docs/league.md: what a stored game costs)."""


def save_replay(r: redis.Redis, match_id: str, game: int, data: bytes | str) -> bool:
    """Store a game's replay JSON, zlib-compressed; the first one stored wins. True if stored
    now."""
    raw = data.encode() if isinstance(data, str) else bytes(data)
    packed = zlib.compress(raw, REPLAY_COMPRESSION)
    return bool(r.hsetnx(Keys.replay(match_id), str(int(game)), packed))


def drop_replays(r: redis.Redis, match_id: str) -> None:
    """Forget the match's stored replays (a stale run's, before the recorded run's are stored)."""
    r.delete(Keys.replay(match_id))


def _unpack_replay(raw: bytes) -> bytes:
    # A JSON document starts with "{" (or white space); a zlib stream never does (its first
    # byte is 0x78 for the default window). Replays stored before compression read as they are.
    if raw[:1] in (b"{", b" ", b"\n", b"\t", b"\r", b"["):
        return raw
    try:
        return zlib.decompress(raw)
    except zlib.error as exc:
        raise StoreError(f"a stored replay is neither JSON nor zlib data: {exc}") from None


def get_replay(r: redis.Redis, match_id: str, game: int = 0) -> bytes | None:
    """A game's replay JSON (decompressed), or None."""
    raw = r.hget(Keys.replay(match_id), str(int(game)))
    return None if raw is None else _unpack_replay(_b(raw))


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


def set_bot_log(
    r: redis.Redis, match_id: str, seat: int, data: bytes, *, cap: int = BOT_LOG_CAP
) -> int:
    """Replace a seat's log with the first ``cap`` bytes of ``data`` (one command: sending it
    twice, as a client does after a broken connection, stores the same); returns bytes kept."""
    kept = bytes(data[:cap])
    if kept:
        r.set(Keys.bot_log(match_id, seat), kept)
    else:
        r.delete(Keys.bot_log(match_id, seat))
    return len(kept)


def get_bot_log(r: redis.Redis, match_id: str, seat: int) -> bytes:
    raw = r.get(Keys.bot_log(match_id, seat))
    return b"" if raw is None else _b(raw)
