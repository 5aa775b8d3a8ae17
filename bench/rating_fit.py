"""The batch rating fit (arboretum_worker.fit): its speed, and the calibration of its intervals
(docs/benchmarks.md, "Ratings").

**Speed.** VERSIONS versions (default 200) of planted strength (normal, sd 200 Elo) over
SPEED_GAMES games (default 1,000,000), a third each of 2, 3 and 4 players, seats drawn at random,
ranks from the Plackett-Luce model (made before the clock starts). Timed: adding the games
(``Rankings.extend``), the first fit (aggregating identical outcomes into arrays, the Newton
steps, covariance, ratings), and a re-fit after 1,000 more games that starts from the first (a
ladder's case). Goal: the whole first fit of 200 versions and 1,000,000 games under 10 s. The fit
must converge; the script prints the rank correlation of the fitted and the planted ratings.

**Calibration.** For 2, 3 and 4 players: REPLICATES leagues of 8 planted versions 60 Elo apart,
GAMES games each through the league's own schedule, each fitted. Printed: how often the 95%
intervals hold the true rating (goal 93-97%) and the root-mean-square reported standard error
over the estimates' real spread (goal 0.9-1.1), for the fit and for the former pairwise model
(``bench/baseline_ratings.py``).

    .venv/bin/python bench/rating_fit.py                        # both
    .venv/bin/python bench/rating_fit.py --speed --repeat 3
    .venv/bin/python bench/rating_fit.py --speed --versions 100 --speed-games 100000
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

from planted import Game, calibration, rank_games, spread  # noqa: E402

from arboretum_worker.fit import Rankings, fit, fit_from_games  # noqa: E402
from baseline_ratings import pairwise_fit  # noqa: E402


def mixed_games(versions: int, games: int, seed: int) -> tuple[dict[str, float], list[Game]]:
    """The planted strengths (Elo) and ``games`` games, a third each of 2, 3 and 4 players, seats
    drawn at random (a draw with a version twice is drawn again)."""
    rng = np.random.default_rng(seed)
    true = {f"v{i:03d}": 1500.0 + x for i, x in enumerate(rng.normal(0.0, 200.0, versions))}
    names = list(true)
    out: list[Game] = []
    for players, count in zip((2, 3, 4), rng.multinomial(games, [1 / 3] * 3), strict=True):
        drawn = rng.integers(0, versions, (count, players))
        while True:
            ordered = np.sort(drawn, axis=1)
            twice = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
            if not twice.any():
                break
            drawn[twice] = rng.integers(0, versions, (int(twice.sum()), players))
        out += rank_games(true, [tuple(names[i] for i in row) for row in drawn], rng)
    order = rng.permutation(len(out))
    return true, [out[i] for i in order]


def _rank_correlation(x: list[float], y: list[float]) -> float:
    rx, ry = np.argsort(np.argsort(x)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def speed(versions: int, games: int, repeat: int) -> None:
    t0 = time.perf_counter()
    true, made = mixed_games(versions, games + 1_000, seed=1)
    first, more = made[:games], made[games:]
    print(f"fit speed: {versions} versions, {games:,} games (2-4 players), best of {repeat}")
    print(f"  (made the games in {time.perf_counter() - t0:.1f} s, not timed)")
    rows = []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        rankings = Rankings().extend(first)
        t1 = time.perf_counter()
        result = fit(rankings)
        ratings = result.ratings()
        t2, c2 = time.perf_counter(), time.process_time()
        rankings.extend(more)
        again = fit(rankings, start=result)
        again.ratings()
        t3 = time.perf_counter()
        rows.append(
            (t1 - t0, t2 - t1, t2 - t0, t3 - t2, result.iterations, again.iterations, c2 - c0)
        )
        assert len(ratings) == versions
    distinct = sum(len(w) for _orders, w in rankings.arrays().values())
    rho = _rank_correlation([r.elo for r in ratings], [true[r.version] for r in ratings])
    best = min(rows, key=lambda row: row[2])
    print(f"  add games   {best[0]:.3f} s")
    print(f"  fit         {best[1]:.3f} s ({best[4]} Newton steps, {distinct:,} distinct outcomes)")
    print(f"  total       {best[2]:.3f} s   (goal < 10 s for 200 versions and 1,000,000 games)")
    print(f"  its CPU time (this process): {best[6]:.3f} s")
    print(f"  re-fit after 1,000 more games, from the first fit: {best[3]:.3f} s ({best[5]} steps)")
    print("  all runs (total s):", " ".join(f"{row[2]:.3f}" for row in rows))
    print(f"  rank correlation of the fitted and planted ratings: {rho:.4f}")


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
    parser.add_argument("--versions", type=int, default=200, help="versions in the speed run")
    parser.add_argument("--speed-games", type=int, default=1_000_000, help="games in the speed run")
    parser.add_argument("--replicates", type=int, default=400, help="leagues per calibration")
    parser.add_argument("--games", type=int, default=600, help="games per league")
    args = parser.parse_args()
    both = not args.speed and not args.calibration
    if args.speed or both:
        speed(args.versions, args.speed_games, args.repeat)
    if args.calibration or both:
        calibrate(args.replicates, args.games)


if __name__ == "__main__":
    main()
