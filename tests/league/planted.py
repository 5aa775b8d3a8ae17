"""Games of bots of planted (known) strength, for the rating tests and benchmarks.

A game's ranking follows the Plackett-Luce model the fit assumes: each seat performs its strength
(Elo / (400 / ln 10), in natural units) plus standard Gumbel noise, and the seats rank by
performance (in a 2-player game, P(i beats j) is the logistic of the gap). The seats come from the
league's own schedule (``schedule.round_robin``), deal by deal. ``tie`` makes that share of games
tie their two best seats (to exercise the tie rule).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from arboretum_worker.fit import ELO_PER_NATURAL, FitRating
from arboretum_worker.schedule import round_robin
from arboretum_worker.store import GameOutcome, MatchResult

Game = tuple[tuple[str, ...], tuple[int, ...]]


def spread(count: int, gap: float) -> dict[str, float]:
    """``count`` versions ``v0``.. with Elo ratings ``gap`` apart, mean 1500."""
    return {f"v{i}": 1500.0 + gap * (i - (count - 1) / 2) for i in range(count)}


def ranks_of(performance: Sequence[float]) -> tuple[int, ...]:
    """Competition ranks (1 best) of the performances."""
    return tuple(1 + sum(1 for q in performance if q > p) for p in performance)


def schedule_seats(
    versions: Sequence[str], players: int, games: int, seed: int
) -> list[tuple[str, ...]]:
    """The seats of the first ``games`` games of the league schedule of ``versions``."""
    deals = 1
    while True:
        specs = round_robin("planted", list(versions), players, deals, seed)
        if len(specs) >= games:
            return [spec.seats for spec in specs[:games]]
        deals = max(deals + 1, math.ceil(deals * games / len(specs)))


def rank_games(
    true: Mapping[str, float],
    seats: Sequence[tuple[str, ...]],
    rng: np.random.Generator,
    *,
    tie: float = 0.0,
) -> list[Game]:
    """Each game of ``seats`` ranked by strength plus Gumbel noise; ``tie``: the share of games
    whose two best seats tie."""
    if not seats:
        return []
    strength = np.array([[true[v] / ELO_PER_NATURAL for v in row] for row in seats])
    perf = strength + rng.gumbel(size=strength.shape)
    ranks = 1 + (perf[:, None, :] > perf[:, :, None]).sum(axis=2)  # seats that did better
    for k in np.flatnonzero(rng.random(len(seats)) < tie):
        ranks[k][np.argsort(ranks[k])[:2]] = 1
    return [(row, tuple(int(x) for x in rk)) for row, rk in zip(seats, ranks, strict=True)]


def random_games(
    true: Mapping[str, float], players: int, games: int, rng: np.random.Generator
) -> list[Game]:
    """``games`` games of ``players`` seats drawn at random from ``true``'s versions (each game
    its own draw, seats in random order), each ranked by strength plus Gumbel noise. Much faster
    than the league schedule for hundreds of thousands of games."""
    names = list(true)
    drawn = np.argsort(rng.random((games, len(names))), axis=1)[:, :players]
    return rank_games(true, [tuple(names[i] for i in row) for row in drawn], rng)


def planted_games(
    true: Mapping[str, float], players: int, games: int, seed: int, *, tie: float = 0.0
) -> list[Game]:
    """``games`` games of the league schedule of ``true``'s versions (deal by deal, as many deals
    as needed), each ranked by strength plus Gumbel noise."""
    seats = schedule_seats(list(true), players, games, seed)
    return rank_games(true, seats, np.random.default_rng(seed), tie=tie)


def as_results(games: Sequence[Game], league: str = "planted") -> list[MatchResult]:
    """One league result per game, as the worker records them."""
    return [
        MatchResult(
            f"m{k}", league, seats, (GameOutcome(ranks, (0,) * len(ranks), (0,) * len(ranks)),)
        )
        for k, (seats, ranks) in enumerate(games)
    ]


@dataclass(frozen=True)
class Calibration:
    """How a fit's 95% intervals and standard errors compare with the truth over replicates."""

    players: int
    replicates: int
    intervals: int
    coverage: float
    """Share of the 95% intervals that hold the true (mean-centred) rating."""
    se_ratio: float
    """Root-mean-square reported standard error / empirical spread of the estimates."""


Fitter = Callable[[Sequence[Game]], Sequence[FitRating]]


def calibration(
    fitter: Fitter, players: int, true: Mapping[str, float], games: int, replicates: int, seed: int
) -> Calibration:
    """Fit ``replicates`` independent leagues of ``games`` games each and compare with ``true``."""
    centre = sum(true.values()) / len(true)
    errors: dict[str, list[float]] = {v: [] for v in true}
    reported: list[float] = []
    covered = 0
    seats = schedule_seats(list(true), players, games, seed)
    rng = np.random.default_rng(seed)
    for _rep in range(replicates):
        fitted = fitter(rank_games(true, seats, rng))
        for f in fitted:
            truth = true[f.version] - centre + 1500.0
            covered += f.lower <= truth <= f.upper
            errors[f.version].append(f.elo - truth)
            reported.append(f.stderr**2)
    spread_sq = [float(np.var(e)) for e in errors.values()]
    return Calibration(
        players=players,
        replicates=replicates,
        intervals=len(reported),
        coverage=covered / len(reported),
        se_ratio=math.sqrt(float(np.mean(reported)) / float(np.mean(spread_sq))),
    )
