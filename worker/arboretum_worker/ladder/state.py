"""A ladder's records in Redis (keys: :meth:`arboretum_worker.store.Keys.ladder`).

- **Members** (``ladder``): bot name -> the version the ladder schedules for it now.
- **Versions** (``ladder:versions``): every version that was ever a member, with the bot's name,
  when it joined and when it was retired (a newer version of its bot entered). A retired version
  keeps its results and is never scheduled again.
- **Rounds** (``ladder:rounds``): per pairing (its two version ids, sorted), how many units were
  handed out. Unit k of a pairing plays that pairing's deals ``k D .. k D + D - 1`` (D =
  ``deals_per_series``), so a unit number is never handed out twice and no two units play the
  same deal: no match is ever scheduled twice, by any number of schedulers.
- **The lock** (``ladder:lock``): one scheduler at a time tops a ladder up. It is a token with an
  expiry (:data:`LOCK_TTL_MS`); units are handed out only by a script that checks the token
  (:func:`allocate`), so a scheduler whose lock expired while it was slow hands out nothing. A
  tick that finds the lock taken sets ``ladder:again``, and the holder ticks once more before it
  lets go (:func:`release`), so no trigger is lost while a tick runs.
- **Open to authors** (``ladder:open``): present when the operator lets authors join and leave
  the ladder themselves (:func:`set_open`, :func:`is_open`).
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import store
from ..keys import Keys

if TYPE_CHECKING:
    import redis

__all__ = [
    "LOCK_TTL_MS",
    "Entry",
    "acquire",
    "allocate",
    "enter",
    "entries",
    "is_open",
    "last_tick",
    "leave",
    "members",
    "pairing",
    "release",
    "rounds",
    "set_last_tick",
    "set_open",
]

LOCK_TTL_MS = 60_000
"""How long a scheduler's lock lasts unless it is let go (a tick takes well under a second)."""


@dataclass(frozen=True)
class Entry:
    """A version that was a member of the ladder."""

    version: str
    bot: str
    joined: float
    retired: float | None = None

    @property
    def active(self) -> bool:
        return self.retired is None


def pairing(a: str, b: str) -> str:
    """The rounds' field of a pairing: its version ids sorted, ``/``-joined (a combination)."""
    return "/".join(sorted((a, b)))


def members(r: redis.Redis, name: str) -> dict[str, str]:
    """Bot name -> the version scheduled for it."""
    raw = r.hgetall(Keys.ladder(name))
    return {store.as_text(k): store.as_text(v) for k, v in sorted(raw.items())}


def entries(r: redis.Redis, name: str) -> dict[str, Entry]:
    """Every version that was a member, by id."""
    out = {}
    for vid, raw in r.hgetall(Keys.ladder(name, "versions")).items():
        d = json.loads(raw)
        vid = store.as_text(vid)
        out[vid] = Entry(vid, d["bot"], float(d["joined"]), d.get("retired"))
    return out


def rounds(r: redis.Redis, name: str) -> dict[str, int]:
    """Units handed out per pairing."""
    raw = r.hgetall(Keys.ladder(name, "rounds"))
    return {store.as_text(k): int(v) for k, v in raw.items()}


# KEYS: members, versions. ARGV: bot, version, expected current version ('' for none), now.
# Returns 1 when the version entered now, 0 when it is the bot's member already, -1 when the
# bot's member is not the expected one (another process changed it: read again).
_ENTER = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current == ARGV[2] then return 0 end
if (current or '') ~= ARGV[3] then return -1 end
if current then
  local old = cjson.decode(redis.call('HGET', KEYS[2], current))
  old['retired'] = tonumber(ARGV[4])
  redis.call('HSET', KEYS[2], current, cjson.encode(old))
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then
  redis.call('HSET', KEYS[2], ARGV[2], cjson.encode({bot = ARGV[1], joined = tonumber(ARGV[4])}))
else
  local e = cjson.decode(redis.call('HGET', KEYS[2], ARGV[2]))
  e['retired'] = nil
  redis.call('HSET', KEYS[2], ARGV[2], cjson.encode(e))
end
return 1
"""


def enter(r: redis.Redis, name: str, bot: str, version: str, expected: str | None) -> int:
    """Make ``version`` the bot's member, retiring ``expected`` (its member now, or None).
    1: it entered; 0: it was the member already; -1: the member is not ``expected``."""
    script = r.register_script(_ENTER)
    keys = [Keys.ladder(name), Keys.ladder(name, "versions")]
    return int(script(keys=keys, args=[bot, version, expected or "", repr(time.time())]))


# KEYS: members, versions. ARGV: bot, now. The version that left (retired), or nil when the bot
# is no member.
_LEAVE = """
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return false end
redis.call('HDEL', KEYS[1], ARGV[1])
local raw = redis.call('HGET', KEYS[2], current)
if raw then
  local e = cjson.decode(raw)
  e['retired'] = tonumber(ARGV[2])
  redis.call('HSET', KEYS[2], current, cjson.encode(e))
end
return current
"""


def leave(r: redis.Redis, name: str, bot: str) -> str | None:
    """Take ``bot`` out of the ladder: its version is retired (its results stay) and no version
    of it is scheduled again until it joins anew. The version retired, or None when the bot was
    no member."""
    script = r.register_script(_LEAVE)
    keys = [Keys.ladder(name), Keys.ladder(name, "versions")]
    got = script(keys=keys, args=[bot, repr(time.time())])
    return None if got is None else store.as_text(got)


def set_open(r: redis.Redis, name: str, value: bool) -> None:
    """Open the ladder to authors (they join and leave it themselves), or shut it to them."""
    if value:
        r.set(Keys.ladder(name, "open"), "1")
    else:
        r.delete(Keys.ladder(name, "open"))


def is_open(r: redis.Redis, name: str) -> bool:
    return bool(r.exists(Keys.ladder(name, "open")))


def acquire(r: redis.Redis, name: str) -> str | None:
    """Take the scheduler's lock: its token, or None when another scheduler holds it (it is
    then told to tick again before it lets go)."""
    token = secrets.token_hex(8)
    if r.set(Keys.ladder(name, "lock"), token, nx=True, px=LOCK_TTL_MS):
        return token
    r.set(Keys.ladder(name, "again"), "1", px=LOCK_TTL_MS)
    return None


# KEYS: lock, again. ARGV: token. 1: let go; 2: kept, tick again (a tick came meanwhile);
# 0: not the holder (the lock expired).
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('DEL', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 2
end
redis.call('DEL', KEYS[1])
return 1
"""


def release(r: redis.Redis, name: str, token: str) -> int:
    """Let the lock go (1), or keep it to tick again because a tick came meanwhile (2); 0 when
    it was no longer ours."""
    script = r.register_script(_RELEASE)
    keys = [Keys.ladder(name, "lock"), Keys.ladder(name, "again")]
    return int(script(keys=keys, args=[token, LOCK_TTL_MS]))


# KEYS: lock, rounds. ARGV: token, then the pairings. The unit numbers handed out (one per
# pairing, in order; a pairing listed twice gets two), or nil when the token is not the lock's.
_ALLOCATE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local out = {}
for i = 3, #ARGV do
  out[#out + 1] = redis.call('HINCRBY', KEYS[2], ARGV[i], 1) - 1
end
return out
"""


def allocate(r: redis.Redis, name: str, token: str, pairings: Sequence[str]) -> list[int] | None:
    """Hand out the next unit number of each pairing, if ``token`` still holds the lock."""
    script = r.register_script(_ALLOCATE)
    keys = [Keys.ladder(name, "lock"), Keys.ladder(name, "rounds")]
    got = script(keys=keys, args=[token, LOCK_TTL_MS, *pairings])
    return None if got is None else [int(x) for x in got]


def set_last_tick(r: redis.Redis, name: str, report: dict[str, Any]) -> None:
    r.set(Keys.ladder(name, "tick"), json.dumps(report, sort_keys=True))


def last_tick(r: redis.Redis, name: str) -> dict[str, Any] | None:
    raw = r.get(Keys.ladder(name, "tick"))
    return None if raw is None else dict(json.loads(raw))
