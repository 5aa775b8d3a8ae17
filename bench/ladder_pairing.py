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
incremental), and a league **reaches the order** when the fit ranks the bots in the planted order
and no two neighbours' 95% intervals overlap. The adaptive league is checked after every unit.
The round robin is counted two ways: the games of the first whole round after which it holds
(what "a round robin of N deals per pairing" needs: the smallest N that gets there), and,
kinder to it, the games of the first unit after which it holds (a round robin stopped in the
middle of a round). Printed: the games each needed (median and range over the runs), and the
adaptive league's share of the round robin's, run by run.

Then, in the adaptive league that reached the order, a **new version** enters with a strength
drawn uniformly between the weakest and the strongest bot, and plays on through the choice
function (new versions first: ``--new-games``): printed are the games the newcomer played until
its 95% half-width fell under 50 Elo (median, 90th percentile and maximum).

``--luck SD`` gives each deal a luck for its first seat (normal, SD Elo), which both games of the
deal share: one bot sits first in the deal's first game, the other in its second, as in a
duplicate deal. The 90th percentile of the run-by-run ratios is printed with their median;
``--first-run`` numbers the runs from there (to split the runs of one configuration over
processes: run k has the same seeds wherever it runs).

Bot processes are not involved: the outcomes are drawn, the scheduler's choice and the fit are
the real ones.

    .venv/bin/python bench/ladder_pairing.py                         # 12 bots, 100 Elo, 20 runs
    .venv/bin/python bench/ladder_pairing.py --bots 10 --gap 50 --runs 20
    .venv/bin/python bench/ladder_pairing.py --bots 10 --gap 50 --deals 5 --runs 30 --luck 200

``--design`` prints instead what no schedule fixed in advance can beat: for the planted strengths,
the games a design needs before its expected 95% intervals (the fit's covariance at the planted
strengths, prior included) leave every pair of neighbours apart by the planted gap, for the
round robin, for designs that play only the pairs at most K places apart, and for the best
allocation over the pairings (a numerical optimum, Powell's method); their ratio to the round
robin. The adaptive ladder can beat that ratio only by following the fit's noise.

``--round-robin-only`` plays only the round robins of the runs and prints the spread of their
games (10th percentile, median, 90th percentile): what bounds the ratio's percentiles whatever
the ladder does, since the two leagues' counts are drawn independently (a ladder that always
needed exactly A games would show A / the round robin's 10th percentile at the ratio's 90th
percentile).

``--cost`` prints instead what a scheduler's tick spends on the fit as a ladder grows: the games
of V versions (random pairings, outcomes from random strengths) turned into the fit's rankings,
the fit, and the choice of 4 units with 8 matches in flight.
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

from arboretum_worker.fit import ELO_PER_NATURAL, Z95, Fit, Rankings, fit  # noqa: E402
from arboretum_worker.ladder.choice import DEFAULT_PRIOR, Belief, choose  # noqa: E402

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

    luck: float = 0.0
    """The spread (sd, Elo) of a deal's luck for its first seat; both games of a deal share it."""

    def play(self, a: str, b: str, games: int) -> None:
        diff = (self.planted[a] - self.planted[b]) / 400.0
        luck = 0.0
        for k in range(games):
            if k % 2 == 0:  # a new deal: a sits first in its first game, b in its second
                luck = self.rng.normal(0.0, self.luck) / 400.0 if self.luck else 0.0
            p = 1.0 / (1.0 + 10.0 ** -(diff + (luck if k % 2 == 0 else -luck)))
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


def round_robin(league: League, bots: list[str], unit: int, cap: int) -> tuple[int, int] | None:
    """(games at the first unit after which the order is reached, games at the first whole
    round after which it is), or None within the cap."""
    pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]
    order = [pairs[k] for k in league.rng.permutation(len(pairs))]
    first_unit = None
    while league.games < cap:
        for a, b in order:
            league.play(a, b, unit)
            if first_unit is None and league.in_order(bots):
                first_unit = league.games
        if first_unit is not None and league.in_order(bots):
            return first_unit, league.games
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


def one_run(
    args: argparse.Namespace, run: int
) -> tuple[int | None, int | None, int | None, int | None]:
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    centre = (args.bots - 1) * args.gap / 2
    planted = {v: 1500.0 + i * args.gap - centre for i, v in enumerate(bots)}
    unit = 2 * args.deals
    cap = args.cap
    rr = League(
        planted, np.random.default_rng([args.seed, run, 0]), args.draws, Rankings(), luck=args.luck
    )
    rr_both = round_robin(rr, bots, unit, cap)
    rr_unit, rr_games = rr_both if rr_both else (None, None)
    ad = League(
        planted, np.random.default_rng([args.seed, run, 0]), args.draws, Rankings(), luck=args.luck
    )
    ad_games = adaptive(ad, bots, unit, args.depth, args.new_games, lambda: ad.in_order(bots), cap)
    newcomer_games = None
    if ad_games is not None and not args.no_newcomer:
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
    return rr_games, ad_games, newcomer_games, rr_unit


def _show(values: list[int | None]) -> str:
    got = sorted(v for v in values if v is not None)
    missing = len(values) - len(got)
    if not got:
        return "never"
    text = f"median {statistics.median(got):,.0f} (range {got[0]:,}-{got[-1]:,})"
    return text + (f", {missing} never within the cap" if missing else "")


def cost() -> int:
    rng = np.random.default_rng(0)
    for n, games in ((20, 20_000), (50, 100_000)):
        strength = rng.normal(0.0, 1.0, n)
        names = [f"v{i:03d}" for i in range(n)]
        pairs = [rng.choice(n, 2, replace=False) for _ in range(games)]
        wins = [rng.random() < 1 / (1 + np.exp(strength[j] - strength[i])) for i, j in pairs]
        t0 = time.perf_counter()
        rankings = Rankings()
        for (i, j), won in zip(pairs, wins, strict=True):
            rankings.add((names[i], names[j]), (1, 2) if won else (2, 1))
        t1 = time.perf_counter()
        fitted = fit(rankings)
        t2 = time.perf_counter()
        flying = [(names[0], names[1], 10)] * 8
        choose(Belief.of(names, fitted), names, count=4, unit_games=20, in_flight=flying)
        t3 = time.perf_counter()
        print(
            f"{n} versions, {games:,} games: rankings {t1 - t0:.2f} s, fit {t2 - t1:.3f} s, "
            f"choice {t3 - t2:.3f} s"
        )
    return 0


def design(args: argparse.Namespace) -> int:
    from scipy.optimize import minimize

    n = args.bots
    strength = np.arange(n) * args.gap / ELO_PER_NATURAL
    pairs = list(itertools.combinations(range(n), 2))
    i, j = np.array(pairs).T
    p = 1.0 / (1.0 + np.exp(strength[i] - strength[j]))
    info = p * (1.0 - p)
    centre = np.eye(n) - 1.0 / n
    need = args.gap / ELO_PER_NATURAL

    def widest(games: np.ndarray) -> float:
        """The widest neighbour pair's summed 95% half-widths (natural units)."""
        precision = np.eye(n) * DEFAULT_PRIOR / 4.0
        np.add.at(precision, (i, i), games * info)
        np.add.at(precision, (j, j), games * info)
        np.add.at(precision, (i, j), -games * info)
        np.add.at(precision, (j, i), -games * info)
        sd = np.sqrt(np.diag(centre @ np.linalg.inv(precision) @ centre))
        return float(Z95 * (sd[:-1] + sd[1:]).max())

    def games_for(shape: np.ndarray) -> float:
        shape = shape / shape.sum()
        low, high = 1.0, 1e8
        for _ in range(60):
            middle = math.sqrt(low * high)
            low, high = (low, middle) if widest(middle * shape) < need else (middle, high)
        return high

    full = games_for(np.ones(len(pairs)))
    print(f"{n} bots, {args.gap:g} Elo apart: games until the expected intervals part")
    print(f"  round robin: {full:,.0f}")
    for k in range(1, n - 1):
        games = games_for((j - i <= k).astype(float))
        print(f"  pairs at most {k} apart: {games:,.0f} ({games / full:.2f} of the round robin)")
    best = minimize(
        lambda x: games_for(np.exp(x)),
        np.zeros(len(pairs)),
        method="Powell",
        options={"maxfev": 3000, "xtol": 1e-2, "ftol": 1e-4},
    )
    print(f"  best allocation: {best.fun:,.0f} ({best.fun / full:.2f} of the round robin)")
    return 0


def round_robin_spread(args: argparse.Namespace) -> int:
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    centre = (args.bots - 1) * args.gap / 2
    planted = {v: 1500.0 + i * args.gap - centre for i, v in enumerate(bots)}
    games = []
    for run in range(args.first_run, args.first_run + args.runs):
        rng = np.random.default_rng([args.seed, run, 0])
        league = League(planted, rng, args.draws, Rankings(), luck=args.luck)
        both = round_robin(league, bots, 2 * args.deals, args.cap)
        games.append(both[1] if both else args.cap)
        print(f"  run {run:2d}: round robin {games[-1]}", flush=True)
    games.sort()
    p10, p90 = (games[min(len(games) - 1, round(f * (len(games) - 1)))] for f in (0.1, 0.9))
    middle = statistics.median(games)
    print(
        f"round robin, whole rounds, {len(games)} runs: 10th percentile {p10:,}, median "
        f"{middle:,.0f}, 90th percentile {p90:,}; a ladder that always needed A games meets "
        f"the median 0.5 with A <= {0.5 * middle:,.0f} and the 90th percentile 0.7 with "
        f"A <= {0.7 * p10:,.0f}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=12)
    parser.add_argument("--gap", type=float, default=100.0, help="Elo between neighbours")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--deals", type=int, default=10, help="deals per unit (deals_per_series)")
    parser.add_argument("--depth", type=int, default=4, help="units in flight (adaptive)")
    parser.add_argument("--new-games", type=int, default=40, help="games a version is new for")
    parser.add_argument("--draws", type=float, default=0.02)
    parser.add_argument(
        "--luck",
        type=float,
        default=0.0,
        help="sd (Elo) of a deal's luck for its first seat, shared by the deal's two games",
    )
    parser.add_argument("--cap", type=int, default=400_000, help="most games per league")
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--cost", action="store_true", help="time a tick's fit and choice")
    parser.add_argument(
        "--design", action="store_true", help="the games fixed designs need (no simulation)"
    )
    parser.add_argument("--no-newcomer", action="store_true", help="skip the new version's part")
    parser.add_argument(
        "--round-robin-only", action="store_true", help="only the round robins' spread of games"
    )
    parser.add_argument(
        "--first-run", type=int, default=0, help="the first run's number (to split runs)"
    )
    args = parser.parse_args(argv)
    if args.cost:
        return cost()
    if args.design:
        return design(args)
    if args.round_robin_only:
        return round_robin_spread(args)
    print(
        f"{args.bots} bots, {args.gap:g} Elo apart, units of {args.deals} deals x 2 seat orders, "
        f"{args.depth} units in flight, {args.draws:.0%} draws, deal luck sd {args.luck:g} Elo, "
        f"{args.runs} runs"
    )
    started = time.perf_counter()
    rows = []
    for run in range(args.first_run, args.first_run + args.runs):
        rr, ad, new, rr_unit = one_run(args, run)
        rows.append((rr, ad, new, rr_unit))
        ratio = f"{ad / rr:.2f}" if rr and ad else "-"
        print(
            f"  run {run:2d}: round robin {rr} (order first reached after {rr_unit}), "
            f"adaptive {ad} (ratio {ratio}), newcomer {new}"
        )
    for label, column in (("whole rounds", 0), ("any unit", 3)):
        rr_all = [r[column] for r in rows]
        ad_all = [r[1] for r in rows]
        ratios = sorted(r[1] / r[column] for r in rows if r[column] and r[1])
        rr_done = [r for r in rr_all if r]
        ad_done = [a for a in ad_all if a]
        print(f"round robin, checked after {label}: games to the planted order: {_show(rr_all)}")
        if ratios:
            p90 = ratios[min(len(ratios) - 1, round(0.9 * (len(ratios) - 1)))]
            print(
                f"  adaptive / round robin ({label}), run by run: median "
                f"{statistics.median(ratios):.2f}, 90th percentile {p90:.2f} "
                f"(range {ratios[0]:.2f}-{ratios[-1]:.2f}); "
                f"of the medians: {statistics.median(ad_done) / statistics.median(rr_done):.2f}"
            )
    print(f"adaptive: games to the planted order: {_show([r[1] for r in rows])}")
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
