"""The live rating the leaderboard leads with: a Bayesian online Plackett-Luce rating with its
uncertainty, on the Elo scale.

Every version has a skill belief ``N(mu, sigma^2)``, updated after every game by the Weng-Lin
Plackett-Luce rule of the ``openskill`` library (``openskill.models.PlackettLuce``): a game's
whole ranking is one update (ties share their place), and sigma shrinks as games come in, so the
rating settles. The leaderboard shows ``mu +- 1.96 sigma``.

**Scale.** The model's parameters are chosen on the Elo scale of the batch fit
(:mod:`arboretum_worker.fit`), where one natural unit of strength is 400 / ln 10 = 173.7 Elo:

- ``mu`` starts at 1500 (the batch fit's mean);
- ``beta`` (a seat's performance noise) is 173.7 / sqrt(P) for P players. The Weng-Lin rule uses
  ``c = sqrt(sum over seats of (sigma^2 + beta^2))`` as its unit, which is 173.7 for well-known
  ratings: the same unit as the batch fit, so both rate a league alike;
- ``sigma`` starts at 173.7 * sqrt(2) = 245.6 Elo, the spread of the batch fit's prior (2 virtual
  draws against a 1500 opponent);
- no dynamics (``tau = 0``): a version never changes, so its belief only sharpens.

**Anchor.** The batch fit puts the mean of the league's versions at 1500 (strengths are known
only up to a common shift). The Weng-Lin update is not zero-sum when the seats' sigmas differ, so
the stored means drift from 1500 as games come in (in the planted simulation, about +15 Elo by
1,000 games of 4 players). :func:`centred` shifts every mean by the same amount so that their
mean is 1500 again: the leaderboard shows these, on the fit's anchor (``ratings.standings``).
The shift changes no order and no interval's width, and the stored beliefs stay as the update
left them.

The update uses floats only; its inputs are the stored beliefs (``repr`` text, which round-trips),
so applying the stored results again in their sequence order gives the stored beliefs exactly
(:func:`recompute`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openskill.models import PlackettLuce

    from arboretum_worker.store import MatchResult

__all__ = [
    "ELO_PER_NATURAL",
    "INITIAL",
    "INITIAL_SIGMA",
    "Z95",
    "Skill",
    "centred",
    "model",
    "rate_game",
    "rate_match",
    "recompute",
]

ELO_PER_NATURAL = 400.0 / math.log(10.0)
"""Elo points per natural unit of strength (a logit of the 2-player win probability)."""
Z95 = 1.959963984540054
INITIAL = 1500.0
INITIAL_SIGMA = ELO_PER_NATURAL * math.sqrt(2.0)


@dataclass(frozen=True, slots=True)
class Skill:
    """A version's live rating: the mean of its skill belief and its standard deviation (Elo)."""

    mu: float = INITIAL
    sigma: float = INITIAL_SIGMA

    @property
    def lower(self) -> float:
        """The 95% interval's lower end."""
        return self.mu - Z95 * self.sigma

    @property
    def upper(self) -> float:
        return self.mu + Z95 * self.sigma

    @property
    def half_width(self) -> float:
        """Half the 95% interval: the leaderboard shows ``mu +- half_width``."""
        return Z95 * self.sigma

    def to_text(self) -> str:
        """``"mu sigma"``, each as ``repr`` (exact)."""
        return f"{self.mu!r} {self.sigma!r}"

    @classmethod
    def from_text(cls, text: str | bytes) -> Skill:
        mu, sigma = (text.decode() if isinstance(text, bytes) else text).split()
        return cls(float(mu), float(sigma))


@lru_cache(maxsize=4)
def model(players: int) -> PlackettLuce:
    """The openskill model of a ``players``-seat league (see the module doc for its parameters)."""
    from openskill.models import PlackettLuce

    if players < 2:
        raise ValueError(f"a game has 2 or more players, not {players}")
    return PlackettLuce(
        mu=INITIAL, sigma=INITIAL_SIGMA, beta=ELO_PER_NATURAL / math.sqrt(players), tau=0.0
    )


def rate_game(before: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
    """Every seat's live rating after one game (``ranks``: 1 best, equal ranks tie)."""
    m = model(len(before))
    teams = [[m.rating(mu=s.mu, sigma=s.sigma)] for s in before]
    after = m.rate(teams, ranks=list(ranks))
    return [Skill(team[0].mu, team[0].sigma) for team in after]


def rate_match(before: Sequence[Skill], games: Iterable[Sequence[int]]) -> list[list[Skill]]:
    """The seats' ratings after each game of a match, game by game (one list per game)."""
    out = []
    current = list(before)
    for ranks in games:
        current = rate_game(current, ranks)
        out.append(current)
    return out


def recompute(results: Iterable[MatchResult]) -> dict[str, Skill]:
    """Live ratings after applying ``results`` in the given order (sequence order for the
    stored ones: then they equal the live ratings exactly)."""
    current: dict[str, Skill] = {}
    for result in results:
        after = rate_match(
            [current.get(v, Skill()) for v in result.seats], [g.ranks for g in result.games]
        )
        for v, skill in zip(result.seats, after[-1], strict=True):
            current[v] = skill
    return current


def centred(skills: Mapping[str, Skill]) -> dict[str, Skill]:
    """``skills`` with every mean shifted by one amount, so that their mean is 1500 (the batch
    fit's anchor; see the module doc). Sigmas are unchanged."""
    if not skills:
        return {}
    shift = INITIAL - math.fsum(s.mu for s in skills.values()) / len(skills)
    return {v: Skill(s.mu + shift, s.sigma) for v, s in skills.items()}


def ordered(skills: Mapping[str, Skill]) -> list[tuple[str, Skill]]:
    """Best live rating first (ties by version id)."""
    return sorted(skills.items(), key=lambda item: (-item[1].mu, item[0]))
