"""The ladder's adaptive pairing against a plain round robin (docs/benchmarks.md, "Ladder").

Each run plants strengths in BOTS bots (evenly spaced, GAP Elo apart) and plays two leagues of
them side by side, with the same planted strengths and the same seed:

- **round robin**: every pairing plays one unit in turn (a shuffled order, the same each round),
  round after round;
- **adaptive**: the ladder's own choice function (``arboretum_worker.ladder.choice.choose``)
  picks every unit from the current fit, with DEPTH units in flight as the ladder's scheduler
  keeps them (a unit is chosen knowing the others in flight; the oldest one is played next).

A unit is what the ladder schedules for a pairing: DEALS deals, each in both seat orders (2 x
DEALS games). A game's outcome is drawn from the planted strengths (Bradley-Terry: the stronger
wins with ``1 / (1 + 10 ** (-gap / 400))``; ``--draws`` of the games are shared first places).
After every unit both leagues are refitted with the real batch fit (``arboretum_worker.fit``,
incremental), and a league **reaches the order** at the first unit after which the fit ranks the
bots in the planted order and no two neighbours' 95% intervals overlap. Printed: the games each
needed (median and range over the runs), and the adaptive league's share of the round robin's,
run by run.

Then, in the adaptive league that reached the order, a **new version** enters with a strength
drawn uniformly between the weakest and the strongest bot, and plays on through the choice
function (new versions first: ``--new-games``): printed are the games the newcomer played until
its 95% half-width fell under 50 Elo (median, 90th percentile and maximum).

Bot processes are not involved: the outcomes are drawn, the scheduler's choice and the fit are
the real ones.

    .venv/bin/python bench/ladder_pairing.py                         # 12 bots, 100 Elo, 20 runs
    .venv/bin/python bench/ladder_pairing.py --bots 10 --gap 50 --runs 20
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

from arboretum_worker.fit import Fit, Rankings, fit  # noqa: E402
from arboretum_worker.ladder.choice import Belief, choose  # noqa: E402

WIDTH = 50.0


@dataclass
class League:
    """One simulated league: its games so far and its latest fit."""

    planted: dict[str, float]
    rng: np.random.Generator
    draws: float
    rankings: Rankings
    fitted: Fit | None = None
    games: int = 0

    def play(self, a: str, b: str, games: int) -> None:
        p = 1.0 / (1.0 + 10.0 ** ((self.planted[b] - self.planted[a]) / 400.0))
        for _ in range(games):
            u = self.rng.random()
            if u < self.draws:
                ranks = (1, 1)
            elif self.rng.random() < p:
                ranks = (1, 2)
            else:
                ranks = (2, 1)
            self.rankings.add((a, b), ranks)
        self.games += games
        self.fitted = fit(self.rankings, start=self.fitted)

    def in_order(self, bots: list[str]) -> bool:
        """The fit's order is the planted one and no neighbours' intervals overlap."""
        if self.fitted is None or len(self.rankings.versions) < len(bots):
            return False
        rated = {f.version: f for f in self.fitted.ratings()}
        ranked = sorted(bots, key=lambda v: -self.planted[v])
        if sorted(bots, key=lambda v: -rated[v].elo) != ranked:
            return False
        return all(rated[hi].lower > rated[lo].upper for hi, lo in itertools.pairwise(ranked))

    def half_width(self, version: str) -> float:
        if self.fitted is None or version not in self.rankings.index:
            return float("inf")
        rating = next(f for f in self.fitted.ratings() if f.version == version)
        return (rating.upper - rating.lower) / 2.0


def round_robin(league: League, bots: list[str], unit: int, cap: int) -> int | None:
    pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]
    order = [pairs[k] for k in league.rng.permutation(len(pairs))]
    while league.games < cap:
        for a, b in order:
            league.play(a, b, unit)
            if league.in_order(bots):
                return league.games
    return None


def adaptive(
    league: League,
    active: list[str],
    unit: int,
    depth: int,
    new_games: int,
    until: object,
    cap: int,
) -> int | None:
    """Play the choice function's units until ``until()`` holds (the games then), or ``cap``."""
    pending: list[tuple[str, str]] = []
    played: dict[str, int] = {v: league.rankings.games[i] for v, i in league.rankings.index.items()}
    while league.games < cap:
        belief = Belief.of(active, league.fitted)
        pending += choose(
            belief,
            active,
            count=depth - len(pending),
            unit_games=unit,
            in_flight=[(a, b, unit) for a, b in pending],
            played=played,
            new_games=new_games,
        )
        a, b = pending.pop(0)
        league.play(a, b, unit)
        played[a] = played.get(a, 0) + unit
        played[b] = played.get(b, 0) + unit
        if until():  # type: ignore[operator]
            return league.games
    return None


def one_run(args: argparse.Namespace, run: int) -> tuple[int | None, int | None, int | None]:
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    centre = (args.bots - 1) * args.gap / 2
    planted = {v: 1500.0 + i * args.gap - centre for i, v in enumerate(bots)}
    unit = 2 * args.deals
    cap = args.cap
    rr = League(planted, np.random.default_rng([args.seed, run, 0]), args.draws, Rankings())
    rr_games = round_robin(rr, bots, unit, cap)
    ad = League(planted, np.random.default_rng([args.seed, run, 0]), args.draws, Rankings())
    ad_games = adaptive(ad, bots, unit, args.depth, args.new_games, lambda: ad.in_order(bots), cap)
    newcomer_games = None
    if ad_games is not None:
        rng = np.random.default_rng([args.seed, run, 1])
        low, high = min(planted.values()), max(planted.values())
        newcomer = "new"
        ad.planted = {**planted, newcomer: float(rng.uniform(low, high))}
        active = [*bots, newcomer]
        before = ad.games
        done = adaptive(
            ad,
            active,
            unit,
            args.depth,
            args.new_games,
            lambda: ad.half_width(newcomer) < WIDTH,
            before + cap,
        )
        if done is not None:
            newcomer_games = ad.rankings.games[ad.rankings.index[newcomer]]
    return rr_games, ad_games, newcomer_games


def _show(values: list[int | None]) -> str:
    got = sorted(v for v in values if v is not None)
    missing = len(values) - len(got)
    if not got:
        return "never"
    text = f"median {statistics.median(got):,.0f} (range {got[0]:,}-{got[-1]:,})"
    return text + (f", {missing} never within the cap" if missing else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=12)
    parser.add_argument("--gap", type=float, default=100.0, help="Elo between neighbours")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--deals", type=int, default=10, help="deals per unit (deals_per_series)")
    parser.add_argument("--depth", type=int, default=4, help="units in flight (adaptive)")
    parser.add_argument("--new-games", type=int, default=40, help="games a version is new for")
    parser.add_argument("--draws", type=float, default=0.02)
    parser.add_argument("--cap", type=int, default=400_000, help="most games per league")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args(argv)
    print(
        f"{args.bots} bots, {args.gap:g} Elo apart, units of {args.deals} deals x 2 seat orders, "
        f"{args.depth} units in flight, {args.draws:.0%} draws, {args.runs} runs"
    )
    started = time.perf_counter()
    rows = []
    for run in range(args.runs):
        rr, ad, new = one_run(args, run)
        rows.append((rr, ad, new))
        ratio = f"{ad / rr:.2f}" if rr and ad else "-"
        print(f"  run {run:2d}: round robin {rr}, adaptive {ad} (ratio {ratio}), newcomer {new}")
    rr_all = [r[0] for r in rows]
    ad_all = [r[1] for r in rows]
    ratios = sorted(r[1] / r[0] for r in rows if r[0] and r[1])
    rr_done = [r for r in rr_all if r]
    ad_done = [a for a in ad_all if a]
    print(f"round robin: games to the planted order: {_show(rr_all)}")
    print(f"adaptive:    games to the planted order: {_show(ad_all)}")
    if ratios:
        print(
            f"adaptive / round robin, run by run: median {statistics.median(ratios):.2f} "
            f"(range {ratios[0]:.2f}-{ratios[-1]:.2f}); of the medians: "
            f"{statistics.median(ad_done) / statistics.median(rr_done):.2f}"
        )
    new_all = sorted(r[2] for r in rows if r[2] is not None)
    if new_all:
        p90 = new_all[min(len(new_all) - 1, round(0.9 * (len(new_all) - 1)))]
        print(
            f"newcomer's games to a half-width under {WIDTH:.0f} Elo: median "
            f"{statistics.median(new_all):.0f}, 90th percentile {p90}, max {new_all[-1]} "
            f"({len(new_all)} of {len(rows)} runs)"
        )
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
