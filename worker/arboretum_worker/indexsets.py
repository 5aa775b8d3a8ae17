"""The index sets of a match: their key names and the Lua that keeps them.

Every match is in exactly one status set of its league (``Keys.league_status``) and, for each bot
seated in it, in that bot's set of the league's matches and in one of its status sets; a queued
match that failed before is also in the league's retrying set. The score is the match's position
in the league's list (schedule order). The sets are changed in the same Lua script that changes
the status they follow (:data:`INDEX_LUA`, prepended to the status scripts of
:mod:`arboretum_worker.store` and ``ratings.record_result``), so they are never out of step with
it; reading a page of a filtered list or a league's counts is then a few sorted-set commands
(:mod:`arboretum_worker.matchindex`). Matches stored before the indexes existed have no
``position``; ``matchindex.ensure_indexes`` indexes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

import redis

from arboretum_worker.keys import Keys, MatchStatus

__all__ = ["INDEX_LUA", "INDEX_STALE", "index_keys", "match_index_keys"]


def index_keys(league: str, bots: Iterable[str | None]) -> list[str]:
    """The index sets of a match of ``league`` whose seats hold these bots (names; None for a
    version the registry does not know), in the order :data:`INDEX_LUA` reads them: the
    league's five status sets (``MatchStatus`` order) and its retrying set, then for each
    distinct bot its set of all matches followed by its five status sets."""
    keys = [Keys.league_status(league, s) for s in MatchStatus]
    keys.append(Keys.league_retrying(league))
    for bot in sorted({b for b in bots if b}):
        keys.append(Keys.league_bot(league, bot))
        keys += [Keys.league_bot_status(league, bot, s) for s in MatchStatus]
    return keys


_STATUS_NUMBERS = ", ".join(f"{s.value} = {i}" for i, s in enumerate(MatchStatus, 1))

INDEX_LUA = (
    "local ARENA_STATUS = {"
    + _STATUS_NUMBERS
    + "}\n"
    + """
-- The index keys are always the last ones, KEYS[first] to KEYS[#KEYS] (index_keys).
-- True when the match is indexed (it has a position) but the caller passed no index keys: it
-- read the match before the backfill indexed it, and must call again with the keys.
local function arena_index_stale(match_key, first)
  return first > #KEYS and redis.call('HEXISTS', match_key, 'position') == 1
end
-- Put the match in exactly the sets its status (and failure) say now. Idempotent.
local function arena_index_sync(match_key, first)
  if first > #KEYS then return end
  local h = redis.call('HMGET', match_key, 'id', 'position', 'status', 'failure')
  local id, pos = h[1], h[2]
  if not id or not pos then return end
  local want = ARENA_STATUS[h[3]]
  local function place(base)
    for s = 1, 5 do
      if s == want then redis.call('ZADD', KEYS[base + s - 1], pos, id)
      else redis.call('ZREM', KEYS[base + s - 1], id) end
    end
  end
  place(first)
  if h[3] == 'queued' and h[4] and h[4] ~= '' then
    redis.call('ZADD', KEYS[first + 5], pos, id)
  else
    redis.call('ZREM', KEYS[first + 5], id)
  end
  for g = first + 6, #KEYS, 6 do
    redis.call('ZADD', KEYS[g], pos, id)
    place(g + 1)
  end
end
"""
)
"""Lua functions that keep a match's index sets; prepend to a script that changes a status."""

INDEX_STALE = -2
"""What a status script returns when :func:`match_index_keys` must be read again."""


def match_index_keys(r: redis.Redis, match_id: str) -> list[str]:
    """The index keys of a stored match; empty while it is not indexed yet."""
    league, bots = r.hmget(Keys.match(match_id), ["league", "bots"])
    if league is None or bots is None:
        return []
    league = league.decode() if isinstance(league, bytes) else str(league)
    return index_keys(league, json.loads(bots))
