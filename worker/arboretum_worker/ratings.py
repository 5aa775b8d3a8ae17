"""Live ratings of a league (the Plackett-Luce rating with its interval, and Elo), updated
atomically and idempotently in Redis.

One Lua script (:func:`record_result`) does, in a single atomic step: store the match result
(first writer wins: it is stored only if the match has none; a second call for the same match
id changes nothing and returns the first call's sequence number), give it the league's next
sequence number (``INCR``), mark the match FINISHED (moving it to the finished sets of the match
indexes, ``indexsets.INDEX_LUA``), apply Elo to every game of the match in game order, store every
seat's new live rating (below), append each seat's new ratings to its history and update its
stats.

**The live rating** (:mod:`arboretum_worker.live_rating`: Weng-Lin Plackett-Luce, ``mu +- 1.96
sigma`` on the Elo scale) is what the leaderboard leads with. Its update is computed in Python
by the ``openskill`` library from the seats' stored ratings, and the script applies it only if
none of the seats was rated since they were read (a compare-and-set on each seat's ``last_seq``:
every recorded result changes it); otherwise it changes nothing and :func:`record_result` reads
again and retries. So each result is rated from exactly the ratings its seats had when it got
its sequence number, and :func:`live_rating.recompute` of the stored results in sequence order
gives the stored live ratings exactly (they are stored as ``repr`` text).

Elo for a game of P seats (pairwise from the ranks; equal ranks are draws)::

    E_ij  = 1 / (1 + 10 ** ((R_j - R_i) / 400))          ratings before the game
    S_ij  = 1 if rank_i < rank_j, 0.5 if equal, 0 if worse
    R_i' = R_i + K / (P - 1) * sum over j != i of (S_ij - E_ij)

All deltas come from the pre-game ratings and are applied together; dividing K by P - 1 makes
a P-player game move a rating about as much as one 2-player game. A match of several games is
applied game by game (each game is a rating update); the match is the unit of idempotence and
gets one sequence number. Ratings are per league (``Keys.elo``); a version's first rating is
``EloSettings.initial`` (1500), K is ``EloSettings.k`` (32).

Floats: Lua numbers are IEEE doubles; ratings are stored as ``%.17g`` text, which round-trips
exactly. :func:`recompute` does the same arithmetic in the same order in Python, so replaying the
stored results in sequence order gives the live ratings (to within 1e-9; exactly when the
platform's ``pow`` is the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from arboretum_worker import indexsets
from arboretum_worker.live_rating import Skill, centred, rate_match
from arboretum_worker.store import (
    EloSettings,
    Keys,
    MatchResult,
    StoreError,
    as_text,
)

__all__ = [
    "Applied",
    "EloSettings",
    "HistoryEntry",
    "Standing",
    "VersionStats",
    "expected_score",
    "game_deltas",
    "history",
    "live_ratings",
    "parse_stats",
    "rating",
    "ratings",
    "recompute",
    "record_result",
    "results_in_order",
    "standings",
    "stats",
]

LIVE_CHANGED = 2
"""The script's answer when a seat was rated since its rating was read: read again, retry."""
MAX_ATTEMPTS = 1000


@dataclass(frozen=True, slots=True)
class Applied:
    applied: bool
    """True if this call recorded the result; False if the match already had one."""
    seq: int
    """The result's sequence number in its league (the first writer's)."""


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    seq: int
    game: int
    rating: float
    """The version's Elo after this game."""
    match_id: str
    live: Skill | None = None
    """Its live rating after this game (None in histories written before there was one)."""


@dataclass(frozen=True, slots=True)
class VersionStats:
    games: int = 0
    wins: int = 0
    """Games ranked first alone."""
    shared_wins: int = 0
    """Games ranked first together with others (a shared game)."""
    win_share: float = 0.0
    """Wins counted as fractions: 1 alone, 1/n when first place is shared by n seats."""
    rank_sum: int = 0
    last_played: float | None = None
    last_seq: int = 0
    rating: float | None = None
    """Elo."""
    live: Skill | None = None
    """The live rating (mu, sigma)."""

    @property
    def mean_rank(self) -> float | None:
        return self.rank_sum / self.games if self.games else None


def expected_score(r_i: float, r_j: float) -> float:
    """Elo expectation of i against j (the Lua script's formula)."""
    return 1.0 / (1.0 + 10.0 ** ((r_j - r_i) / 400.0))


def game_deltas(before: Sequence[float], ranks: Sequence[int], k: float) -> list[float]:
    """Each seat's Elo change for one game, from the pre-game ratings (same order as Lua)."""
    p = len(before)
    kk = k / (p - 1)
    deltas = []
    for i in range(p):
        total = 0.0
        for j in range(p):
            if j != i:
                s = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                total = total + (s - expected_score(before[i], before[j]))
        deltas.append(kk * total)
    return deltas


def recompute(results: Iterable[MatchResult], elo: EloSettings | None = None) -> dict[str, float]:
    """Ratings after applying ``results`` in the given order (sequence order for live)."""
    elo = elo or EloSettings()
    current: dict[str, float] = {}
    for result in results:
        seats = result.seats
        vals = [current.get(v, elo.initial) for v in seats]
        for game in result.games:
            deltas = game_deltas(vals, game.ranks, elo.k)
            vals = [v + d for v, d in zip(vals, deltas, strict=True)]
        for v, value in zip(seats, vals, strict=True):
            current[v] = value
    return current


# KEYS: 1 result, 2 match, 3 seq, 4 applied zset, 5 ratings hash, 6 live hash,
#       then per seat i (1-based): 6 + 2i - 1 stats, 6 + 2i history,
#       then the match's index keys (indexsets.match_index_keys; always last)
# ARGV: 1 result JSON, 2 match id, 3 initial, 4 K, 5 P, 6 G, 7 finished time,
#       then G * P ranks (game-major), then P version ids, then P expected last_seq values,
#       then G * P live ratings "mu sigma" (game-major: each seat's rating after each game)
_RECORD = (
    indexsets.INDEX_LUA
    + """
-- match index (indexsets.INDEX_LUA): the keys after the seats' are the match's index sets
local index_first = 7 + 2 * tonumber(ARGV[5])
if arena_index_stale(KEYS[2], index_first) then return {-2, 0} end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, tonumber(redis.call('ZSCORE', KEYS[4], ARGV[2]) or '0')}
end
local p = tonumber(ARGV[5])
local g = tonumber(ARGV[6])
local base = 7
local expected = base + g * p + p
local live = expected + p
-- the live ratings were computed from these seats' ratings: still theirs?
for i = 1, p do
  local last = redis.call('HGET', KEYS[6 + 2 * i - 1], 'last_seq') or '0'
  if last ~= ARGV[expected + i] then return {2, 0} end
end
redis.call('SET', KEYS[1], ARGV[1])
local seq = redis.call('INCR', KEYS[3])
redis.call('ZADD', KEYS[4], seq, ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('HSET', KEYS[2], 'status', 'finished', 'finished', ARGV[7])
  redis.call('HDEL', KEYS[2], 'failure')
end
local init = tonumber(ARGV[3])
local k = tonumber(ARGV[4])
local vids = {}
local vals = {}
for i = 1, p do
  vids[i] = ARGV[base + g * p + i]
  local stored = redis.call('HGET', KEYS[5], vids[i])
  if stored then vals[i] = tonumber(stored) else vals[i] = init end
end
local kk = k / (p - 1)
for game = 0, g - 1 do
  local ranks = {}
  local firsts = 0
  for i = 1, p do
    ranks[i] = tonumber(ARGV[base + game * p + i])
    if ranks[i] == 1 then firsts = firsts + 1 end
  end
  local deltas = {}
  for i = 1, p do
    local total = 0.0
    for j = 1, p do
      if j ~= i then
        local s
        if ranks[i] < ranks[j] then s = 1.0
        elseif ranks[i] == ranks[j] then s = 0.5
        else s = 0.0 end
        total = total + (s - 1.0 / (1.0 + 10.0 ^ ((vals[j] - vals[i]) / 400.0)))
      end
    end
    deltas[i] = kk * total
  end
  for i = 1, p do
    vals[i] = vals[i] + deltas[i]
    local text = string.format('%.17g', vals[i])
    local skill = ARGV[live + game * p + i]
    local skey = KEYS[6 + 2 * i - 1]
    redis.call('RPUSH', KEYS[6 + 2 * i],
               seq .. ' ' .. game .. ' ' .. text .. ' ' .. ARGV[2] .. ' ' .. skill)
    redis.call('HINCRBY', skey, 'games', 1)
    redis.call('HINCRBY', skey, 'rank_sum', ranks[i])
    if ranks[i] == 1 then
      if firsts == 1 then
        redis.call('HINCRBY', skey, 'wins', 1)
      else
        redis.call('HINCRBY', skey, 'shared_wins', 1)
      end
      redis.call('HINCRBYFLOAT', skey, 'win_share', string.format('%.17g', 1.0 / firsts))
    end
    redis.call('HSET', skey, 'last_played', ARGV[7], 'last_seq', seq, 'rating', text,
               'live', skill)
  end
end
for i = 1, p do
  redis.call('HSET', KEYS[5], vids[i], string.format('%.17g', vals[i]))
  redis.call('HSET', KEYS[6], vids[i], ARGV[live + (g - 1) * p + i])
end
-- match index (indexsets.INDEX_LUA): move the match to the finished sets
arena_index_sync(KEYS[2], index_first)
return {1, seq}
"""
)


def record_result(r: redis.Redis, result: MatchResult, elo: EloSettings | None = None) -> Applied:
    """Record a match result and apply its ratings, atomically, once per match id.

    Returns ``Applied(True, seq)`` for the first call, ``Applied(False, seq_of_first)`` for
    any later call with the same match id (whatever its content: the first writer wins).
    ``elo`` should be the league's settings (``LeagueSettings.elo``).
    """
    elo = elo or EloSettings()
    p = len(result.seats)
    league = result.league
    keys = [
        Keys.result(result.match_id),
        Keys.match(result.match_id),
        Keys.elo_seq(league),
        Keys.elo_applied(league),
        Keys.elo_ratings(league),
        Keys.elo_live(league),
    ]
    stat_keys = [Keys.elo_stats(league, vid) for vid in result.seats]
    for vid, stat_key in zip(result.seats, stat_keys, strict=True):
        keys += [stat_key, Keys.elo_history(league, vid)]
    args: list[str | int] = [
        result.to_json(),
        result.match_id,
        repr(float(elo.initial)),
        repr(float(elo.k)),
        p,
        len(result.games),
        repr(float(result.finished)),
    ]
    for game in result.games:
        args += list(game.ranks)
    args += list(result.seats)
    script = r.register_script(_RECORD)
    for _attempt in range(MAX_ATTEMPTS):
        pipe = r.pipeline(transaction=False)
        for vid, stat_key in zip(result.seats, stat_keys, strict=True):
            pipe.hget(stat_key, "last_seq")
            pipe.hget(Keys.elo_live(league), vid)
        read = pipe.execute()
        before = [Skill() if raw is None else Skill.from_text(raw) for raw in read[1::2]]
        after = rate_match(before, [game.ranks for game in result.games])
        live = [skill.to_text() for game in after for skill in game]
        expected = [as_text(raw) if raw is not None else "0" for raw in read[0::2]]
        index = indexsets.match_index_keys(r, result.match_id)
        applied, seq = script(keys=[*keys, *index], args=[*args, *expected, *live])
        if int(applied) not in (indexsets.INDEX_STALE, LIVE_CHANGED):
            return Applied(bool(int(applied)), int(seq))
        # else the match was indexed, or a seat rated, since we read: read again
    raise StoreError(f"match {result.match_id}: its seats' ratings kept changing; not recorded")


def ratings(r: redis.Redis, league: str) -> dict[str, float]:
    """Live ratings of the versions that have played in the league."""
    return {as_text(k): float(v) for k, v in r.hgetall(Keys.elo_ratings(league)).items()}


def rating(r: redis.Redis, league: str, version: str, elo: EloSettings | None = None) -> float:
    raw = r.hget(Keys.elo_ratings(league), version)
    return (elo or EloSettings()).initial if raw is None else float(raw)


def history(r: redis.Redis, league: str, version: str) -> list[HistoryEntry]:
    """The version's rating after each game it played, in sequence order."""
    out = []
    for raw in r.lrange(Keys.elo_history(league, version), 0, -1):
        seq, game, value, match_id, *skill = as_text(raw).split(" ")
        live = Skill(float(skill[0]), float(skill[1])) if skill else None
        out.append(HistoryEntry(int(seq), int(game), float(value), match_id, live))
    return out


def stats(r: redis.Redis, league: str, version: str) -> VersionStats:
    return _stats(r.hgetall(Keys.elo_stats(league, version)))


def parse_stats(raw: Any) -> VersionStats:
    """A version's stats from its stats hash as Redis returns it (``HGETALL``)."""
    return _stats(raw)


def _stats(raw: Any) -> VersionStats:
    h = {as_text(k): as_text(v) for k, v in raw.items()}
    if not h:
        return VersionStats()
    return VersionStats(
        games=int(h.get("games", 0)),
        wins=int(h.get("wins", 0)),
        shared_wins=int(h.get("shared_wins", 0)),
        win_share=float(h.get("win_share", 0.0)),
        rank_sum=int(h.get("rank_sum", 0)),
        last_played=float(h["last_played"]) if "last_played" in h else None,
        last_seq=int(h.get("last_seq", 0)),
        rating=float(h["rating"]) if "rating" in h else None,
        live=Skill.from_text(h["live"]) if "live" in h else None,
    )


@dataclass(frozen=True, slots=True)
class Standing:
    """One version's live standing: its live rating, its Elo and its stats (the board,
    ``board.py``, stands them beside the fitted rating)."""

    version: str
    live: Skill
    elo: float
    stats: VersionStats


def live_ratings(r: redis.Redis, league: str) -> dict[str, Skill]:
    """The live rating of every version that has played in the league."""
    return {as_text(k): Skill.from_text(v) for k, v in r.hgetall(Keys.elo_live(league)).items()}


def standings(r: redis.Redis, league: str) -> list[Standing]:
    """Every version that played, best live rating first (ties by version id); the live
    ratings :func:`live_rating.centred` on the batch fit's anchor (their mean is 1500)."""
    live = centred(live_ratings(r, league))
    elo = ratings(r, league)
    pipe = r.pipeline(transaction=False)
    for vid in live:
        pipe.hgetall(Keys.elo_stats(league, vid))
    rows = [
        Standing(vid, skill, elo.get(vid, EloSettings().initial), _stats(h))
        for (vid, skill), h in zip(live.items(), pipe.execute(), strict=True)
    ]
    rows.sort(key=lambda row: (-row.live.mu, row.version))
    return rows


def results_in_order(r: redis.Redis, league: str) -> list[MatchResult]:
    """The league's recorded results in sequence-number order (the order Elo applied them)."""
    ids = [as_text(raw) for raw in r.zrange(Keys.elo_applied(league), 0, -1)]
    out = []
    for start in range(0, len(ids), _READ_CHUNK):
        chunk = ids[start : start + _READ_CHUNK]
        for match_id, raw in zip(chunk, r.mget([Keys.result(m) for m in chunk]), strict=True):
            if raw is None:
                raise StoreError(f"result {match_id!r} is in the sequence but not stored")
            out.append(MatchResult.from_json(raw))
    return out


_READ_CHUNK = 1000
