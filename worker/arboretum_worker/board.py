"""The leaderboard of a league: one query shared by ``arena leaderboard`` (:mod:`.report`) and the
web app (``arboretum_web.queries``).

**The leading number is the batch fit** (:mod:`arboretum_worker.fit`) of every result of the
league, with its 95% interval. A fit reads every result (seconds for a million games), so it is
stored (``Keys.elo_fit``) with the result sequence number it covers and made again only when
newer results exist (:func:`refresh_fit`); reading the board never fits (:func:`read_board`,
three Redis round trips whatever the league's size). The live rating
(:mod:`arboretum_worker.live_rating`, updated by every result) stands beside it, and the live
Elo.

**Ranked by the conservative value**, the lower end of the fitted 95% interval (as TrueSkill
leaderboards rank by ``mu - 3 sigma``): a version with few games has a wide interval and stands
low until its games show its strength. A version the stored fit has not seen yet (its results are
newer than the fit) is ranked by the lower end of its live interval until the next fit.

**Provisional.** A version is provisional while its fitted 95% interval is wider than
``± PROVISIONAL_HALF_WIDTH`` Elo (or the fit has not seen it); the board marks its rating with
"?", as lichess marks a provisional rating.

**A bot's row** is its best established version, not its newest. Among the bot's established
versions that played in the league, the earliest holds the row; a later one takes it only when it
is better beyond doubt: the lower end of its interval lies above the upper end of the holder's.
So a re-submitted copy of the same bot (a new version with fresh luck) does not replace its
predecessor because its first games went well (``bench/reroll_attack.py``), while a real
improvement takes the row once the two intervals part. A bot with no established version is
shown by its newest version that played, provisional.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis

from arboretum_worker import ratings
from arboretum_worker.fit import FitRating, fit_ratings
from arboretum_worker.live_rating import Skill, centred
from arboretum_worker.store import EloSettings, Keys, as_text

__all__ = [
    "PROVISIONAL_HALF_WIDTH",
    "Board",
    "BoardRow",
    "StoredFit",
    "board_rows",
    "leaderboard",
    "read_board",
    "refresh_fit",
    "results_recorded",
    "stamp",
    "stored_fit",
]

PROVISIONAL_HALF_WIDTH = 100.0
"""A version is established once its fitted 95% interval is at most ``rating ± 100`` Elo (about
50 two-player games against opponents near its strength); wider, it is provisional."""


@dataclass(frozen=True, slots=True)
class StoredFit:
    """The batch fit of a league's results up to sequence number ``seq``."""

    seq: int
    ratings: dict[str, FitRating] = field(default_factory=dict)


# KEYS: the fit's hash. ARGV: seq, rows JSON, the excluded pairs it left out (JSON). Stores a fit
# of more results than the stored one, or of as many that leaves out other pairs.
_STORE_FIT = """
local have = tonumber(redis.call('HGET', KEYS[1], 'seq') or '-1')
local seq = tonumber(ARGV[1])
if have > seq then return 0 end
if have == seq and redis.call('HGET', KEYS[1], 'excluded') == ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], 'seq', ARGV[1], 'rows', ARGV[2], 'excluded', ARGV[3])
return 1
"""


def _pairs(fields: Iterable[Any]) -> str:
    """The excluded pairs (``Keys.league_excluded``'s fields) as one text, to compare."""
    return json.dumps(sorted(as_text(f) for f in fields))


def _decode_fit(seq: Any, rows: Any) -> StoredFit | None:
    if seq is None or rows is None:
        return None
    return StoredFit(
        int(seq),
        {
            vid: FitRating(vid, elo, lower, upper, stderr, int(games))
            for vid, (elo, lower, upper, stderr, games) in json.loads(rows).items()
        },
    )


def results_recorded(r: redis.Redis, league: str) -> int:
    """How many results the league has recorded (its last result sequence number)."""
    raw = r.get(Keys.elo_seq(league))
    return int(raw) if raw is not None else 0


def stamp(r: redis.Redis, league: str) -> tuple[int, int]:
    """(results recorded, results the stored fit covers), in one round trip: the board changes
    only with them. A fit that left out other pairs than the ones excluded now covers -1."""
    pipe = r.pipeline(transaction=False)
    pipe.get(Keys.elo_seq(league))
    pipe.hmget(Keys.elo_fit(league), ["seq", "excluded"])
    pipe.hkeys(Keys.league_excluded(league))
    results, (fitted, left_out), pairs = pipe.execute()
    if fitted is not None and as_text(left_out or b"[]") != _pairs(pairs):
        return int(results or 0), -1
    return int(results or 0), int(fitted or 0)


def stored_fit(r: redis.Redis, league: str) -> StoredFit | None:
    """The stored fit of the league (None before the first :func:`refresh_fit`)."""
    seq, rows = r.hmget(Keys.elo_fit(league), ["seq", "rows"])
    return _decode_fit(seq, rows)


def refresh_fit(r: redis.Redis, league: str) -> StoredFit:
    """Fit every result of the league now, without the games of the pairs an operator left out
    (``audit.exclusions``), and store the fit (unless a fit of as many results and the same
    exclusions was stored meanwhile); returns the fit made."""
    from arboretum_worker.audit import exclusions

    seq = results_recorded(r, league)
    results, left_out = exclusions.results_for_fit(r, league)
    fitted = {f.version: f for f in fit_ratings(results)} if results else {}
    rows = {f.version: [f.elo, f.lower, f.upper, f.stderr, f.games] for f in fitted.values()}
    pairs = _pairs(f"{e.a}/{e.b}" for e in left_out)
    r.register_script(_STORE_FIT)(keys=[Keys.elo_fit(league)], args=[seq, json.dumps(rows), pairs])
    return StoredFit(seq, fitted)


@dataclass(slots=True)
class BoardRow:
    """One version on the board (:func:`board_rows` sets ``rank``, ``latest`` and ``counted``)."""

    rank: int
    """Its place in the rows listed (1 best)."""
    bot: str
    version: str
    version_index: int
    """1 for the bot's first version (0 if the registry does not know the version)."""
    latest: bool
    """The newest version of the bot that played in the league."""
    counted: bool
    """It is the bot's row on the board (its best established version, module doc)."""
    fit: FitRating | None
    """The fitted rating (None while the stored fit has not seen the version)."""
    live: Skill
    """The live rating, centred on the fit's anchor (``ratings.standings``)."""
    elo: float
    stats: ratings.VersionStats

    @property
    def provisional(self) -> bool:
        return self.fit is None or (self.fit.upper - self.fit.lower) / 2 > PROVISIONAL_HALF_WIDTH

    @property
    def conservative(self) -> float:
        """What the board ranks by: the lower end of the fitted 95% interval (of the live one
        while the fit has not seen the version)."""
        return self.fit.lower if self.fit is not None else self.live.lower


@dataclass(frozen=True, slots=True)
class Board:
    league: str
    results: int
    """The league's result sequence number (how many results it has recorded)."""
    fitted: int
    """The sequence number the stored fit covers (0: no fit stored)."""
    rows: list[BoardRow]
    current: bool = True
    """The stored fit left out exactly the pairs an operator excludes now."""

    @property
    def fresh(self) -> bool:
        """The fit covers every recorded result, and leaves out the pairs excluded now."""
        return self.fitted == self.results and self.current


def board_rows(rows: Iterable[BoardRow], *, all_versions: bool = False) -> list[BoardRow]:
    """Mark each bot's newest version that played (``latest``) and its row (``counted``, module
    doc), order by the conservative value (ties by version id) and number them (``rank``); without
    ``all_versions`` only the bots' rows. The rows are marked in place."""
    by_bot: dict[str, list[BoardRow]] = {}
    for row in rows:
        by_bot.setdefault(row.bot, []).append(row)
    marked: list[BoardRow] = []
    for versions in by_bot.values():
        versions.sort(key=lambda row: (row.version_index, row.version))
        holder = _holder(versions)
        for row in versions:
            row.counted = row is holder
            row.latest = False
        versions[-1].latest = True
        marked += versions
    marked.sort(key=lambda row: (-row.conservative, row.version))
    shown = [row for row in marked if all_versions or row.counted]
    for rank, row in enumerate(shown, 1):
        row.rank = rank
    return shown


def _holder(versions: Sequence[BoardRow]) -> BoardRow:
    """The bot's row among its versions (oldest first): see the module doc."""
    holder: BoardRow | None = None
    for row in versions:
        if row.provisional or row.fit is None:
            continue
        if holder is None or (holder.fit is not None and row.fit.lower > holder.fit.upper):
            holder = row
    return holder if holder is not None else versions[-1]


def read_board(r: redis.Redis, league: str, *, all_versions: bool = False) -> Board:
    """The board from the stored fit as it is (never fits), in three round trips: the league's
    ratings and fit; each version's stats and bot; each bot's versions."""
    pipe = r.pipeline(transaction=False)
    pipe.get(Keys.elo_seq(league))
    pipe.hmget(Keys.elo_fit(league), ["seq", "rows", "excluded"])
    pipe.hkeys(Keys.league_excluded(league))
    pipe.hgetall(Keys.elo_live(league))
    pipe.hgetall(Keys.elo_ratings(league))
    raw_seq, (fit_seq, fit_rows, fit_pairs), pairs, raw_live, raw_elo = pipe.execute()
    fit = _decode_fit(fit_seq, fit_rows) or StoredFit(0)
    current = fit_seq is None or as_text(fit_pairs or b"[]") == _pairs(pairs)
    live = centred({as_text(k): Skill.from_text(v) for k, v in raw_live.items()})
    elo = {as_text(k): float(v) for k, v in raw_elo.items()}
    vids = sorted(live)
    pipe = r.pipeline(transaction=False)
    for vid in vids:
        pipe.hgetall(Keys.elo_stats(league, vid))
    for vid in vids:
        pipe.hget(Keys.version(vid), "name")
    replies = pipe.execute()
    stats = dict(zip(vids, replies[: len(vids)], strict=True))
    names = {
        vid: as_text(n) if n is not None else None
        for vid, n in zip(vids, replies[len(vids) :], strict=True)
    }
    bots = sorted({n for n in names.values() if n})
    pipe = r.pipeline(transaction=False)
    for name in bots:
        pipe.lrange(Keys.bot_versions(name), 0, -1)
    order = {
        name: {as_text(v): i for i, v in enumerate(found, 1)}
        for name, found in zip(bots, pipe.execute(), strict=True)
    }
    initial = EloSettings().initial
    rows = []
    for vid in vids:
        bot = names[vid]
        rows.append(
            BoardRow(
                rank=0,
                bot=bot or f"?{vid[:8]}",
                version=vid,
                version_index=order.get(bot or "", {}).get(vid, 0),
                latest=False,
                counted=False,
                fit=fit.ratings.get(vid),
                live=live[vid],
                elo=elo.get(vid, initial),
                stats=ratings.parse_stats(stats[vid]),
            )
        )
    return Board(
        league,
        int(raw_seq) if raw_seq is not None else 0,
        fit.seq,
        board_rows(rows, all_versions=all_versions),
        current,
    )


def leaderboard(
    r: redis.Redis, league: str, *, all_versions: bool = False, refresh: bool = True
) -> Board:
    """The board; with ``refresh``, a stale stored fit is made again first (so the fit covers
    every result recorded when the board was read)."""
    board = read_board(r, league, all_versions=all_versions)
    if refresh and not board.fresh:
        refresh_fit(r, league)
        board = read_board(r, league, all_versions=all_versions)
    return board
