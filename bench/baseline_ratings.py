"""The rating model of the league before Plackett-Luce, kept only to compare with (bench/).

``pairwise_fit`` is the former batch fit: each game of P seats split into its C(P, 2) pairwise
outcomes, each weighted 1/(P-1), fitted by Bradley-Terry with BayesElo's virtual-draw prior; its
Hessian-based intervals treat those pairwise outcomes as independent (they are not, for P > 2).
(The former live rating, Elo with K = 32, is still the league's: ``ratings.recompute``.) Not part
of the product.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from arboretum_worker.fit import ELO_PER_NATURAL, Z95, FitRating

Game = tuple[Sequence[str], Sequence[int]]


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x: float) -> float:
    return -math.log1p(math.exp(-x)) if x >= 0 else x - math.log1p(math.exp(x))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a x = b (a symmetric positive definite) by Gaussian elimination with pivoting."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        for r in range(col + 1, n):
            f = m[r][col] / p
            if f:
                row, src = m[r], m[col]
                for c in range(col, n + 1):
                    row[c] -= f * src[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """Inverse by Gauss-Jordan elimination with partial pivoting."""
    n = len(a)
    m = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        src = m[col] = [x / p for x in m[col]]
        for r in range(n):
            if r != col:
                f = m[r][col]
                if f:
                    row = m[r]
                    for c in range(col, 2 * n):
                        row[c] -= f * src[c]
    return [row[n:] for row in m]


def pairwise_fit(
    games: Iterable[Game], *, prior: float = 2.0, anchor: float = 1500.0
) -> list[FitRating]:
    """The former pairwise Bradley-Terry fit of (seats, ranks) games, best first."""
    if prior <= 0:
        raise ValueError("prior must be positive (it keeps the fit finite)")
    index: dict[str, int] = {}
    played: list[int] = []
    n_pair: dict[tuple[int, int], float] = defaultdict(float)  # i < j
    s_pair: dict[tuple[int, int], float] = defaultdict(float)  # i's score against j
    for seats, ranks in games:
        ids = []
        for v in seats:
            if v not in index:
                index[v] = len(index)
                played.append(0)
            ids.append(index[v])
            played[index[v]] += 1
        w = 1.0 / (len(seats) - 1)
        for x in range(len(ids)):
            for y in range(x + 1, len(ids)):
                i, j = ids[x], ids[y]
                s = 1.0 if ranks[x] < ranks[y] else 0.5 if ranks[x] == ranks[y] else 0.0
                if i > j:
                    i, j, s = j, i, 1.0 - s
                n_pair[i, j] += w
                s_pair[i, j] += w * s
    n = len(index)
    if n == 0:
        return []
    pairs = [(i, j, n_pair[i, j], s_pair[i, j]) for (i, j) in n_pair]
    half = prior / 2.0

    def log_post(t: Sequence[float]) -> float:
        total = 0.0
        for i, j, nij, sij in pairs:
            d = t[i] - t[j]
            total += sij * _log_sigmoid(d) + (nij - sij) * _log_sigmoid(-d)
        for i in range(n):
            total += half * _log_sigmoid(t[i]) + half * _log_sigmoid(-t[i])
        return total

    def grad_info(t: Sequence[float]) -> tuple[list[float], list[list[float]]]:
        g = [0.0] * n
        info = [[0.0] * n for _ in range(n)]
        for i, j, nij, sij in pairs:
            p = _sigmoid(t[i] - t[j])
            g[i] += sij - nij * p
            g[j] -= sij - nij * p
            h = nij * p * (1.0 - p)
            info[i][i] += h
            info[j][j] += h
            info[i][j] -= h
            info[j][i] -= h
        for i in range(n):
            p = _sigmoid(t[i])
            g[i] += half - prior * p
            info[i][i] += prior * p * (1.0 - p)
        return g, info

    t = [0.0] * n
    current = log_post(t)
    for _ in range(100):
        g, info = grad_info(t)
        step = _solve(info, g)
        scale = 1.0
        while True:
            trial = [a + scale * b for a, b in zip(t, step, strict=True)]
            value = log_post(trial)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        t, current = trial, value
        if max(abs(scale * s) for s in step) < 1e-10:
            break
    _, info = grad_info(t)
    cov = _inverse(info)
    mean_t = sum(t) / n
    row_means = [sum(row) / n for row in cov]
    grand = sum(row_means) / n
    out = []
    for v, i in index.items():
        var = max(cov[i][i] - 2.0 * row_means[i] + grand, 0.0)
        elo = anchor + ELO_PER_NATURAL * (t[i] - mean_t)
        se = ELO_PER_NATURAL * math.sqrt(var)
        out.append(FitRating(v, elo, elo - Z95 * se, elo + Z95 * se, se, played[i]))
    out.sort(key=lambda f: (-f.elo, f.version))
    return out
