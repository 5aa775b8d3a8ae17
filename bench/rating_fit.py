"""The batch rating fit (arboretum_worker.fit): its speed, and the calibration of its intervals
(docs/benchmarks.md, "Ratings").

**Speed.** 100 versions of planted strength (normal, sd 200 Elo) over 100,000 games, a third
each of 2, 3 and 4 players, seats drawn at random, ranks from the Plackett-Luce model. Timed:
adding the games (``Rankings.extend``), the first fit (arrays, optimisation, covariance,
ratings), and a re-fit after 1,000 more games that starts from the first (a ladder's case).
Goal: the whole first fit under 2 s.

**Calibration.** For 2, 3 and 4 players: REPLICATES leagues of 8 planted versions 60 Elo apart,
GAMES games each through the league's own schedule, each fitted. Printed: how often the 95%
intervals hold the true rating (goal 93-97%) and the root-mean-square reported standard error
over the estimates' real spread (goal 0.9-1.1), for the fit and for the former pairwise model
(``bench/baseline_ratings.py``).

    .venv/bin/python bench/rating_fit.py                        # both
    .venv/bin/python bench/rating_fit.py --speed --repeat 5
    .venv/bin/python bench/rating_fit.py --calibration --replicates 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "league"))
sys.path.insert(0, str(ROOT))

from planted import calibration, ranks_of, spread  # noqa: E402

from arboretum_worker.fit import ELO_PER_NATURAL, Rankings, fit, fit_from_games  # noqa: E402
from baseline_ratings import pairwise_fit  # noqa: E402


def mixed_games(versions: int, games: int, seed: int) -> list[tuple[list[str], tuple[int, ...]]]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0.0, 200.0, versions) / ELO_PER_NATURAL
    names = [f"v{i:03d}" for i in range(versions)]
    out = []
    sizes = rng.choice((2, 3, 4), games)
    for p in sizes:
        seats = rng.choice(versions, p, replace=False)
        perf = strength[seats] + rng.gumbel(size=p)
        out.append(([names[s] for s in seats], ranks_of(perf.tolist())))
    return out


def speed(repeat: int) -> None:
    games = mixed_games(100, 101_000, seed=1)
    first, more = games[:100_000], games[100_000:]
    rows = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rankings = Rankings().extend(first)
        t1 = time.perf_counter()
        result = fit(rankings)
        ratings = result.ratings()
        t2 = time.perf_counter()
        rankings.extend(more)
        again = fit(rankings, start=result)
        again.ratings()
        t3 = time.perf_counter()
        rows.append((t1 - t0, t2 - t1, t2 - t0, t3 - t2, result.iterations, again.iterations))
        assert len(ratings) == 100
    best = min(rows, key=lambda row: row[2])
    print("fit speed: 100 versions, 100,000 games (2-4 players), best of", repeat)
    print(f"  add games   {best[0]:.3f} s")
    print(f"  fit         {best[1]:.3f} s ({best[4]} iterations)")
    print(f"  total       {best[2]:.3f} s   (goal < 2 s)")
    print(f"  re-fit after 1,000 more games, from the first fit: {best[3]:.3f} s ({best[5]} it.)")
    print("  all runs (total s):", " ".join(f"{row[2]:.3f}" for row in rows))


def calibrate(replicates: int, games: int) -> None:
    true = spread(8, 60.0)
    print(f"calibration: {replicates} leagues x {games} games, 8 versions 60 Elo apart")
    print(f"  {'players':>7}  {'model':<22}  {'coverage':>8}  {'se/spread':>9}")
    for players in (2, 3, 4):
        for label, fitter in (
            ("Plackett-Luce", fit_from_games),
            ("pairwise (former)", pairwise_fit),
        ):
            c = calibration(fitter, players, true, games, replicates, seed=players)
            print(f"  {players:>7}  {label:<22}  {c.coverage:>8.3f}  {c.se_ratio:>9.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", action="store_true", help="only the speed benchmark")
    parser.add_argument("--calibration", action="store_true", help="only the calibration")
    parser.add_argument("--repeat", type=int, default=3, help="speed runs (the best is shown)")
    parser.add_argument("--replicates", type=int, default=400, help="leagues per calibration")
    parser.add_argument("--games", type=int, default=600, help="games per league")
    args = parser.parse_args()
    both = not args.speed and not args.calibration
    if args.speed or both:
        speed(args.repeat)
    if args.calibration or both:
        calibrate(args.replicates, args.games)


if __name__ == "__main__":
    main()
