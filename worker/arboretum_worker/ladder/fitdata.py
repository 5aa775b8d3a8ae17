"""A ladder's games for its fit, kept between ticks: what a tick fits without reading every result.

A ladder's games are 2-player games, so all the fit needs of them is, per pair of versions, how
often each beat the other (a draw is half a win each way, the fit's rule for a 2-player tie). A
tick keeps that table in Redis
(``Keys.ladder(name, "fitdata")``: a JSON line, the versions, the last result sequence number
covered and the last fit's strengths, then the matrix of wins, n x n doubles) and adds
only the results recorded since (``elo_applied`` by score, one ``MGET`` per 1,000), so a tick
reads a few new results whatever the ladder's size, not all of them. Only a tick, under the
ladder's lock, writes it (a concurrent writer can only store an older table, never
count a result twice: a table is always the results up to its sequence number); it is a cache:
deleting it costs one tick a read of every result.

The fit is made on the matrix itself (:func:`fit_table`: the batch fit's model, Bradley-Terry with
its virtual-draw prior, as n x n array sums), from the last fit's strengths. The pairs an operator
left out of the fit (:mod:`arboretum_worker.audit.exclusions`)
are left out here too, so that leaving a pair out (or counting it again) changes the next tick's
choice at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.special import expit, log_expit

from ..audit.exclusions import excluded
from ..fit import Fit, FitError, Rankings
from ..keys import Keys
from ..store import MatchResult, StoreError, as_text

if TYPE_CHECKING:
    import redis

__all__ = ["FitData", "fit_table", "keep_maximum", "load", "table", "update"]

_READ_CHUNK = 1000
_SAVE_EVERY = 50_000
READ_LIMIT = 20_000
"""The most results a tick reads (see :func:`update`): a tick that reads that many took 8-9 s on
a loaded machine, far inside the ladder's lock (docs/benchmarks.md, "A tick of a ladder")."""


@dataclass
class FitData:
    """The wins of every version over every other: ``wins[i, j]`` is how often ``versions[i]``
    beat ``versions[j]``, a draw counting half to each (the fit's rule for a 2-player tie)."""

    versions: list[str] = field(default_factory=list)
    wins: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    seq: int = 0
    """The last result sequence number counted."""
    maximum: dict[str, float] = field(default_factory=dict)
    """The last fit's strengths (natural units, not centred), where the next fit starts."""
    behind: int = 0
    """Results recorded but not read yet (a read is bounded, :func:`update`); not stored."""

    def add(self, results: Iterable[MatchResult]) -> None:
        self.add_games((r.match_id, r.seats, [g.ranks for g in r.games]) for r in results)

    def add_games(self, results: Iterable[tuple[str, Sequence[str], list[Sequence[int]]]]) -> None:
        """Add results given as (match id, seats, each game's ranks)."""
        index = {v: i for i, v in enumerate(self.versions)}
        rows: list[tuple[int, int, float]] = []
        for match_id, seats, games in results:
            if len(seats) != 2:
                raise StoreError(f"a ladder's results are 2-player games: {match_id}")
            ids = []
            for v in seats:
                if v not in index:
                    index[v] = len(self.versions)
                    self.versions.append(v)
                ids.append(index[v])
            i, j = ids
            for a, b in games:
                if a == b:
                    rows += [(i, j, 0.5), (j, i, 0.5)]
                else:
                    rows.append((i, j, 1.0) if a < b else (j, i, 1.0))
        n = len(self.versions)
        if n > len(self.wins):
            grown = np.zeros((n, n))
            grown[: len(self.wins), : len(self.wins)] = self.wins
            self.wins = grown
        if rows:
            at = np.array(rows)
            np.add.at(self.wins, (at[:, 0].astype(np.intp), at[:, 1].astype(np.intp)), at[:, 2])

    def to_bytes(self) -> bytes:
        head = {"versions": self.versions, "seq": self.seq, "maximum": self.maximum}
        return json.dumps(head).encode() + b"\n" + self.wins.astype("<f8").tobytes()

    @classmethod
    def from_bytes(cls, raw: bytes) -> FitData:
        head_raw, _, body = raw.partition(b"\n")
        head = json.loads(head_raw)
        n = len(head["versions"])
        wins = np.frombuffer(body, dtype="<f8").reshape(n, n).astype(float)
        maximum = {str(k): float(x) for k, x in head.get("maximum", {}).items()}
        return cls(list(head["versions"]), wins, int(head["seq"]), maximum)


def load(r: redis.Redis, name: str) -> FitData:
    raw: Any = r.get(Keys.ladder(name, "fitdata"))
    return FitData() if raw is None else FitData.from_bytes(raw)


def update(r: redis.Redis, name: str, *, limit: int | None = None) -> FitData:
    """The stored table with the results recorded since it was stored, at most ``limit`` of
    them (the oldest first; :data:`READ_LIMIT` by default), so that a tick's reading is bounded:
    the first tick of a big ladder reads its first ``limit`` results, fits and schedules from
    them, and each later tick reads on from there (``FitData.behind`` says how many are left).
    The table is stored again by :func:`keep_maximum` after the fit, and on the way every
    :data:`_SAVE_EVERY` results, so that a read that is cut short keeps what it read."""
    data = load(r, name)
    limit = READ_LIMIT if limit is None else limit
    key = Keys.elo_applied(name)
    found: Any = r.zrangebyscore(key, f"({data.seq}", "+inf", start=0, num=limit, withscores=True)
    unsaved = 0
    for at in range(0, len(found), _READ_CHUNK):
        chunk = found[at : at + _READ_CHUNK]
        ids = [as_text(m) for m, _ in chunk]
        raws: Any = r.mget([Keys.result(m) for m in ids])
        missing = [m for m, raw in zip(ids, raws, strict=True) if raw is None]
        if missing:
            raise StoreError(f"result {missing[0]!r} is in the sequence but not stored")
        data.add_games(_games(m, raw) for m, raw in zip(ids, raws, strict=True))
        data.seq = int(max(score for _, score in chunk))
        unsaved += len(chunk)
        if unsaved >= _SAVE_EVERY:
            r.set(Keys.ladder(name, "fitdata"), data.to_bytes())
            unsaved = 0
    data.behind = int(r.zcount(key, f"({data.seq}", "+inf")) if len(found) >= limit else 0
    return data


def _games(match_id: str, raw: bytes) -> tuple[str, list[str], list[Sequence[int]]]:
    """A stored result's seats and each game's ranks: only what the table needs (the whole
    :class:`MatchResult` costs several times as much to build, on a first read of a big
    ladder)."""
    try:
        d = json.loads(raw)
        return match_id, list(d["seats"]), [tuple(g["ranks"]) for g in d["games"]]
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"result {match_id!r} is not a stored result: {exc}") from exc


def table(r: redis.Redis, name: str, data: FitData) -> tuple[list[str], np.ndarray]:
    """The versions that played and their wins matrix, without the pairs left out of the fit."""
    wins = data.wins.copy()
    index = {v: i for i, v in enumerate(data.versions)}
    for e in excluded(r, name):
        if e.a in index and e.b in index:
            wins[index[e.a], index[e.b]] = wins[index[e.b], index[e.a]] = 0.0
    games = wins.sum(axis=0) + wins.sum(axis=1)
    keep = np.flatnonzero(games > 0)
    return [data.versions[i] for i in keep], wins[np.ix_(keep, keep)]


def fit_table(
    versions: list[str], wins: np.ndarray, *, prior: float = 2.0, start: dict[str, float]
) -> Fit:
    """The batch fit (:func:`arboretum_worker.fit.fit`: Bradley-Terry with its virtual-draw
    prior, the same maximum and covariance) of a wins matrix, computed on the matrix itself:
    the gradient and information are n x n array sums, Newton steps from ``start`` (the last
    fit's strengths) with a halving line search. A ladder's fit is 2-player only, so this is the
    whole model; building the general fit's rankings, one weighted ranking per ordered pair,
    costs far more than the fit (``tests/league/test_ladder.py`` checks that the two agree)."""
    n = len(versions)
    if n == 0:
        raise FitError("no results yet")
    met = wins + wins.T
    half = prior / 2.0

    def value(t: np.ndarray) -> float:
        d = t[:, None] - t[None, :]
        return float((wins * log_expit(d)).sum() + half * (log_expit(t) + log_expit(-t)).sum())

    def information(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The gradient of the log-posterior at ``t`` and the information (its negative
        Hessian)."""
        p = expit(t[:, None] - t[None, :])  # p[i, j]: the chance that i beats j
        s = expit(t)
        grad = (wins * (1.0 - p)).sum(axis=1) - (wins.T * p).sum(axis=1) + half - prior * s
        q = met * p * (1.0 - p)
        info = -q
        info[np.diag_indices(n)] = q.sum(axis=1) - np.diag(q) + prior * s * (1.0 - s)
        return grad, info

    t = np.array([start.get(v, 0.0) for v in versions])
    current = value(t)
    iterations = 0
    while iterations < 100:
        iterations += 1
        grad, info = information(t)
        if np.abs(grad).max() < 1e-8:
            break
        step = np.linalg.solve(info, grad)
        size = 1.0
        while True:
            trial = t + size * step
            better = value(trial)
            if better >= current - 1e-12 or size < 1e-6:
                break
            size /= 2.0
        t, current = trial, better
        if np.abs(size * step).max() < 1e-7:  # 2e-5 Elo: converged (quadratically, near it)
            break
    _, info = information(t)
    cov = np.linalg.inv(info)
    centre = np.eye(n) - 1.0 / n
    rankings = Rankings(
        index={v: i for i, v in enumerate(versions)},
        versions=list(versions),
        games=[round(float(g)) for g in met.sum(axis=1)],
    )
    return Fit(rankings, t - t.mean(), centre @ cov @ centre, t, iterations)


def keep_maximum(r: redis.Redis, name: str, data: FitData, fitted: Fit) -> None:
    """Store the table with the fit's maximum: the next tick's fit starts from it (one or two
    Newton steps instead of six or more)."""
    data.maximum = {v: float(fitted.maximum[i]) for v, i in fitted.rankings.index.items()}
    r.set(Keys.ladder(name, "fitdata"), data.to_bytes())
