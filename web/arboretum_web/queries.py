"""What the pages and the API show, read through the league's modules (store, registry, ratings).

Every function takes a Redis client (bytes replies, as the store requires) and returns plain
dataclasses or dicts; nothing here knows about HTTP. The leaderboard is the league's
(:mod:`arboretum_worker.board`, as ``arena leaderboard``); its batch fit is stored in Redis and
made again only when the league's result sequence number passes it (:class:`FitCache`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arboretum_worker import board, matchindex, ratings, registry, store
from arboretum_worker.fit import HeadToHead, head_to_head
from arboretum_worker.league import LeagueProgress, league_progress
from arboretum_worker.live_rating import Skill
from arboretum_worker.schedule import match_id as schedule_match_id

from . import mainboard

if TYPE_CHECKING:
    import redis

__all__ = [
    "MAX_PAGE",
    "BotSummary",
    "FitCache",
    "FitRow",
    "H2HRow",
    "Leaderboard",
    "LeaderboardRow",
    "MatchPage",
    "RowData",
    "bot_h2h",
    "bot_history",
    "bot_leagues",
    "bot_summaries",
    "default_league",
    "game_revealed",
    "leaderboard",
    "leaderboard_of",
    "list_matches",
    "row_data",
    "seat_owners",
    "version_label",
    "version_labels",
]

log = logging.getLogger(__name__)

MAX_PAGE = 200
_TERMINAL = {store.MatchStatus.FINISHED, store.MatchStatus.FAILED, store.MatchStatus.CANCELLED}


def version_label(r: redis.Redis, vid: str) -> str:
    """``name@abcdef12`` for a version id (the short id alone if it is unknown)."""
    version = store.get_version(r, vid)
    return f"{version.name}@{vid[:8]}" if version else vid[:12]


def default_league(r: redis.Redis) -> str | None:
    """The site's main board (:func:`.mainboard.front_league`), or None."""
    return mainboard.front_league(r)


# --------------------------------------------------------------------------- batch fit


@dataclass(frozen=True, slots=True)
class FitRow:
    rating: float
    low: float
    high: float


def _rows(fit: board.StoredFit) -> dict[str, FitRow]:
    return {v: FitRow(f.elo, f.lower, f.upper) for v, f in fit.ratings.items()}


class FitCache:
    """Keeps each league's stored fit (``board.refresh_fit``) up to date for the pages (one
    instance per app; thread-safe).

    The fit is stored in Redis with the result sequence number it covers, so every web process
    and ``arena leaderboard`` share it. A page never waits for a fit but the first of a league:
    when newer results exist, it shows the stored fit while a thread of this process makes the
    new one (one per league at a time), so the ratings shown may lag the newest results by the
    time one fit takes (seconds for a million games).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fits: dict[str, tuple[int, dict[str, FitRow]]] = {}
        self._refreshing: set[str] = set()
        self._boards: dict[tuple[str, bool], tuple[tuple[int, int], Leaderboard]] = {}

    @staticmethod
    def stamp(r: redis.Redis, league: str) -> tuple[int, int]:
        """``board.stamp``: (results recorded, results the stored fit covers)."""
        return board.stamp(r, league)

    def remembered(
        self, league: str, all_versions: bool, stamp: tuple[int, int]
    ) -> Leaderboard | None:
        """The board shown last for this stamp, or None."""
        with self._lock:
            known = self._boards.get((league, all_versions))
        return known[1] if known is not None and known[0] == stamp else None

    def remember(self, board_: Leaderboard, all_versions: bool, stamp: tuple[int, int]) -> None:
        with self._lock:
            self._boards[board_.league, all_versions] = (stamp, board_)

    def _refresh(self, r: redis.Redis, league: str) -> None:
        try:
            board.refresh_fit(r, league)
        except Exception:  # the next page asks again; the stale fit stays meanwhile
            log.exception("league %s: refreshing the rating fit failed", league)
        finally:
            with self._lock:
                self._refreshing.discard(league)

    def keep_fresh(self, r: redis.Redis, league: str, results: int, fitted: int) -> bool:
        """Given the league's result count and the stored fit's: make the fit now when none is
        stored (True: read again), else start a refresh in the background when it is stale."""
        if fitted == results:
            return False
        if fitted == 0 and board.stored_fit(r, league) is None:
            board.refresh_fit(r, league)
            return True
        with self._lock:
            if league in self._refreshing:
                return False
            self._refreshing.add(league)
        threading.Thread(
            target=self._refresh, args=(r, league), name=f"fit-{league}", daemon=True
        ).start()
        return False

    def board(self, r: redis.Redis, league: str, *, all_versions: bool = False) -> board.Board:
        """The league's board (``board.read_board``), its fit kept fresh as above."""
        found = board.read_board(r, league, all_versions=all_versions)
        fitted = found.fitted if found.current else -1
        if self.keep_fresh(r, league, found.results, fitted):
            found = board.read_board(r, league, all_versions=all_versions)
        return found

    def get(self, r: redis.Redis, league: str) -> dict[str, FitRow]:
        """The stored fit by version id (the same object while it is unchanged)."""
        results = board.results_recorded(r, league)
        fit = board.stored_fit(r, league)
        if self.keep_fresh(r, league, results, fit.seq if fit is not None else 0):
            fit = board.stored_fit(r, league)
        if fit is None:
            return {}
        with self._lock:
            cached = self._fits.get(league)
            if cached is not None and cached[0] == fit.seq:
                return cached[1]
            rows = _rows(fit)
            self._fits[league] = (fit.seq, rows)
            return rows

    def wait(self, timeout: float = 60.0) -> None:
        """Wait until no refresh runs (for tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._refreshing:
                    return
            time.sleep(0.01)


# --------------------------------------------------------------------------- leaderboard


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int
    bot: str
    version: str
    version_index: int
    """1 for the bot's first version."""
    latest: bool
    """The newest version of the bot that played in the league."""
    counted: bool
    """The bot's row on the board: its best established version (``board``)."""
    provisional: bool
    """Its fitted interval is wider than ``board.PROVISIONAL_HALF_WIDTH`` (or not fitted yet)."""
    conservative: float
    """What the board ranks by: the lower end of the fitted 95% interval."""
    fit: FitRow | None
    """The fitted rating: the board leads with it."""
    live: Skill
    """The live rating (Bayesian Plackett-Luce, Elo scale), updated after every game."""
    elo: float
    games: int
    wins: int
    shared_wins: int
    win_share: float
    mean_rank: float | None
    last_played: float | None

    @property
    def win_rate(self) -> float:
        return self.win_share / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "bot": self.bot,
            "version": self.version,
            "version_index": self.version_index,
            "latest": self.latest,
            "counted": self.counted,
            "provisional": self.provisional,
            "conservative": self.conservative,
            "fitted_rating": None if self.fit is None else self.fit.rating,
            "fitted_low": None if self.fit is None else self.fit.low,
            "fitted_high": None if self.fit is None else self.fit.high,
            "live_rating": self.live.mu,
            "live_low": self.live.lower,
            "live_high": self.live.upper,
            "elo": self.elo,
            "games": self.games,
            "wins": self.wins,
            "shared_wins": self.shared_wins,
            "win_share": self.win_share,
            "win_rate": self.win_rate,
            "mean_rank": self.mean_rank,
            "last_played": self.last_played,
        }


@dataclass(frozen=True, slots=True)
class Leaderboard:
    league: str
    results: int
    """Results recorded in the league."""
    fitted: int
    """Results the fitted ratings cover (fewer while a new fit is being made)."""
    rows: list[LeaderboardRow]

    @property
    def fresh(self) -> bool:
        """The fitted ratings cover every result recorded."""
        return self.fitted == self.results


def leaderboard_of(
    r: redis.Redis, league: str, fits: FitCache, *, all_versions: bool = False
) -> Leaderboard:
    """The league's board (``arboretum_worker.board``, as ``arena leaderboard``): ranked by the
    lower end of the fitted rating's 95% interval, each bot by its best established version
    (every version that played with ``all_versions``), the live rating and Elo beside it.

    The board changes only when a result is recorded or a fit stored, so the one shown last is
    shown again while neither happened (one round trip to know)."""
    stamp = fits.stamp(r, league)
    known = fits.remembered(league, all_versions, stamp)
    if known is not None:
        fits.keep_fresh(r, league, *stamp)
        return known
    found = fits.board(r, league, all_versions=all_versions)
    rows = [
        LeaderboardRow(
            rank=row.rank,
            bot=row.bot,
            version=row.version,
            version_index=row.version_index,
            latest=row.latest,
            counted=row.counted,
            provisional=row.provisional,
            conservative=row.conservative,
            fit=None if row.fit is None else FitRow(row.fit.elo, row.fit.lower, row.fit.upper),
            live=row.live,
            elo=row.elo,
            games=row.stats.games,
            wins=row.stats.wins,
            shared_wins=row.stats.shared_wins,
            win_share=row.stats.win_share,
            mean_rank=row.stats.mean_rank,
            last_played=row.stats.last_played,
        )
        for row in found.rows
    ]
    made = Leaderboard(found.league, found.results, found.fitted, rows)
    fits.remember(made, all_versions, (found.results, found.fitted if found.current else -1))
    return made


def leaderboard(
    r: redis.Redis, league: str, fits: FitCache, *, all_versions: bool = False
) -> list[LeaderboardRow]:
    """The rows of :func:`leaderboard_of`."""
    return leaderboard_of(r, league, fits, all_versions=all_versions).rows


def version_labels(r: redis.Redis, vids: Sequence[str]) -> list[tuple[str, str]]:
    """(version id, ``name@abcdef12``) of each, as :func:`version_label`, in one round trip."""
    names = store.version_names(r, vids)
    return [(vid, f"{names[vid]}@{vid[:8]}" if names[vid] else vid[:12]) for vid in vids]


# --------------------------------------------------------------------------- bots


@dataclass(frozen=True, slots=True)
class BotSummary:
    bot: store.Bot
    versions: list[store.BotVersion]


def bot_summaries(r: redis.Redis) -> list[BotSummary]:
    out: list[BotSummary] = []
    for name in store.list_bots(r):
        bot = store.get_bot(r, name)
        if bot is None:
            continue
        versions = [store.get_version(r, vid) for vid in registry.versions(r, name)]
        out.append(BotSummary(bot, [v for v in versions if v is not None]))
    return out


def bot_leagues(r: redis.Redis, versions: Sequence[str]) -> list[str]:
    """Leagues in which any of these versions has a rating, newest first."""
    found = []
    for name in store.list_leagues(r):
        league = store.get_league(r, name)
        if league is None:
            continue
        live = ratings.ratings(r, name)
        if any(v in live for v in versions):
            found.append(league)
    return [lg.name for lg in sorted(found, key=lambda lg: -lg.created)]


def bot_history(
    r: redis.Redis, league: str, versions: Sequence[str]
) -> dict[str, list[ratings.HistoryEntry]]:
    """Each version's Elo after every game it played in the league (versions that played)."""
    out = {}
    for vid in versions:
        entries = ratings.history(r, league, vid)
        if entries:
            out[vid] = entries
    return out


@dataclass(frozen=True, slots=True)
class H2HRow:
    version: str
    opponent: str
    opponent_label: str
    record: HeadToHead

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "opponent": self.opponent,
            "opponent_label": self.opponent_label,
            "wins": self.record.wins,
            "losses": self.record.losses,
            "draws": self.record.draws,
            "games": self.record.games,
            "score": self.score,
        }

    @property
    def score(self) -> float:
        rec = self.record
        return (rec.wins + 0.5 * rec.draws) / rec.games if rec.games else 0.0


def bot_h2h(r: redis.Redis, league: str, versions: Sequence[str]) -> list[H2HRow]:
    """Head-to-head of the bot's versions against every opponent version (pairwise game ranks)."""
    mine = set(versions)
    results = [
        res for res in ratings.results_in_order(r, league) if any(s in mine for s in res.seats)
    ]
    table = head_to_head(results)
    rows = [
        H2HRow(a, b, version_label(r, b), rec)
        for (a, b), rec in table.items()
        if a in mine and b not in mine
    ]
    rows.sort(key=lambda row: (row.version, -row.score, row.opponent_label))
    return rows


# --------------------------------------------------------------------------- leagues, matches


def league_state(r: redis.Redis, name: str, *, counts_only: bool = False) -> LeagueProgress | None:
    """The league's progress (its counts, and its failed matches unless ``counts_only``)."""
    if store.get_league(r, name) is None:
        return None
    return league_progress(r, name, counts_only=counts_only)


def list_matches(
    r: redis.Redis,
    *,
    league: str | None = None,
    bot: str | None = None,
    status: store.MatchStatus | None = None,
    offset: int = 0,
    limit: int = 50,
) -> tuple[int, list[store.MatchRecord]]:
    """Matches in schedule order (newest league first), filtered by league, bot (name) and
    status; returns (total, page). Reads the match indexes: a page's worth of records."""
    leagues = [league] if league is not None else [lg.name for lg in store.get_leagues(r)]
    total, ids = matchindex.page(r, leagues, bot=bot, status=status, offset=offset, limit=limit)
    return total, [rec for rec in store.get_matches(r, ids) if rec is not None]


def seat_owners(r: redis.Redis, record: store.MatchRecord) -> list[str | None]:
    """The owner (author) of each seat's bot, None when it has none."""
    owners: list[str | None] = []
    for vid in record.seats:
        version = store.get_version(r, vid)
        bot = store.get_bot(r, version.name) if version else None
        owners.append(bot.owner if bot else None)
    return owners


def deal_siblings(record: store.MatchRecord) -> list[str]:
    """The ids of every match that plays one of the match's deals (itself included): the ones
    the schedule stored with it, or for a match stored before series, every seat rotation of its
    deal (just its own id if the schedule's id scheme does not reproduce it)."""
    if record.siblings is not None:
        return [record.id, *record.siblings]
    combination = sorted(record.seats)
    ids = [
        schedule_match_id(record.league, combination, record.deal, rot)
        for rot in range(len(record.seats))
    ]
    return ids if record.id in ids else [record.id]


@dataclass(frozen=True, slots=True)
class RowData:
    """What showing some matches needs besides their records, read in three round trips:
    the bot name of each seat's version, the status of every rotation of their deals, and the
    results of the finished ones."""

    names: dict[str, str | None]
    statuses: dict[str, str | None]
    results: dict[str, store.MatchResult | None]

    def label(self, vid: str) -> str:
        """``name@abcdef12`` for a version id (the short id alone if it is unknown)."""
        name = self.names.get(vid)
        return f"{name}@{vid[:8]}" if name else vid[:12]

    def revealed(self, record: store.MatchRecord) -> bool:
        """As :func:`game_revealed`, from the statuses read here."""
        if record.status is not store.MatchStatus.FINISHED:
            return False
        terminal = {s.value for s in _TERMINAL}
        return all(
            self.statuses.get(mid) in terminal or self.statuses.get(mid) is None
            for mid in deal_siblings(record)
            if mid != record.id
        )


def row_data(r: redis.Redis, records: Sequence[store.MatchRecord]) -> RowData:
    """The :class:`RowData` of these matches."""
    names = store.version_names(r, (vid for rec in records for vid in rec.seats))
    statuses = store.match_statuses(
        r, sorted({mid for rec in records for mid in deal_siblings(rec)})
    )
    finished = [rec.id for rec in records if rec.status is store.MatchStatus.FINISHED]
    return RowData(names, statuses, store.get_results(r, finished))


def game_revealed(r: redis.Redis, record: store.MatchRecord) -> bool:
    """True once the match and every other rotation of its deal are over (finished, failed or
    cancelled), and the match itself finished: then its hands and seed are no secret."""
    if record.status is not store.MatchStatus.FINISHED:
        return False
    return row_data(r, [record]).revealed(record)


@dataclass
class MatchPage:
    record: store.MatchRecord
    labels: list[str]
    owners: list[str | None]
    result: store.MatchResult | None
    games: list[int]
    revealed: bool
    replays: dict[int, dict[str, Any]] = field(default_factory=dict)
