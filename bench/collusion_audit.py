"""The collusion audit on simulated leagues (docs/benchmarks.md, "Collusion audit").

Each league plants BOTS bots GAP Elo apart and plays GAMES 2-player games, drawn from the planted
strengths (Bradley-Terry; ``--draws`` of them shared), either as a round robin (every pairing in
turn, a unit of 2 x DEALS games at a time) or, with ``--ladder``, as the ladder schedules them
(the real choice function, ``arboretum_worker.ladder.choice.choose``, from the real fit after
every unit, 4 units in flight).

- **Planted**: in ``--planted`` leagues the strongest bot always loses to a friend (``--friend``,
  by rank from the weakest, 0 the weakest). Printed: how much the collusion bought the friend
  (its fitted rating against the planted one, with the pair's games and with them left out, as
  ``arena league audit --exclude`` does), whether the audit (``arboretum_worker.audit.stats``)
  flagged the planted pair, which other pairs it flagged, and whom it found far below its level.
- **Honest**: in ``--honest`` leagues nobody colludes; printed is the share of leagues with any
  flag (every flag is false there), with its 95% Wilson interval.

Bot processes are not involved: the outcomes are drawn; the fit and the audit are the real ones.

    .venv/bin/python bench/collusion_audit.py                      # round robin
    .venv/bin/python bench/collusion_audit.py --ladder --honest 100
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "worker"))

from arboretum_worker.audit.stats import audit, without_pairs  # noqa: E402
from arboretum_worker.fit import Fit, Rankings, fit, fit_from_games  # noqa: E402
from arboretum_worker.ladder.choice import Belief, choose  # noqa: E402

Game = tuple[tuple[str, str], tuple[int, int]]


def play(
    a: str, b: str, n: int, planted: dict[str, float], rng: np.random.Generator, args: object
) -> list[Game]:
    draws: float = args.draws  # type: ignore[attr-defined]
    thrown = getattr(args, "thrown", None)
    p = 1.0 / (1.0 + 10.0 ** ((planted[b] - planted[a]) / 400.0))
    out: list[Game] = []
    for k in range(n):
        seats = (a, b) if k % 2 == 0 else (b, a)
        if thrown is not None and {a, b} == set(thrown):
            winner = thrown[1]  # the strong one (thrown[0]) always loses to its friend
        elif rng.random() < draws:
            out.append((seats, (1, 1)))
            continue
        else:
            winner = a if rng.random() < p else b
        out.append((seats, (1, 2) if seats[0] == winner else (2, 1)))
    return out


def league(args: argparse.Namespace, run: int, thrown: tuple[str, str] | None) -> list[Game]:
    rng = np.random.default_rng([args.seed, run, 0 if thrown is None else 1])
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    planted = {v: 1500.0 + (i - (args.bots - 1) / 2) * args.gap for i, v in enumerate(bots)}
    args.thrown = thrown
    unit = 2 * args.deals
    games: list[Game] = []
    if not args.ladder:
        pairs = [(a, b) for i, a in enumerate(bots) for b in bots[i + 1 :]]
        order = [pairs[k] for k in rng.permutation(len(pairs))]
        while len(games) < args.games:
            for a, b in order:
                games += play(a, b, min(unit, args.games - len(games)), planted, rng, args)
                if len(games) >= args.games:
                    break
        return games
    rankings = Rankings()
    fitted: Fit | None = None
    pending: list[tuple[str, str]] = []
    played = dict.fromkeys(bots, 0)
    while len(games) < args.games:
        pending += choose(
            Belief.of(bots, fitted),
            bots,
            count=args.depth - len(pending),
            unit_games=unit,
            in_flight=[(a, b, unit) for a, b in pending],
            played=played,
            new_games=40,
        )
        a, b = pending.pop(0)
        new = play(a, b, min(unit, args.games - len(games)), planted, rng, args)
        rankings.extend(new)
        games += new
        played[a] += len(new)
        played[b] += len(new)
        fitted = fit(rankings, start=fitted)
    return games


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10)
    parser.add_argument("--gap", type=float, default=100.0, help="Elo between neighbours")
    parser.add_argument("--games", type=int, default=3000, help="games per league")
    parser.add_argument("--deals", type=int, default=5, help="deals per unit (2 games each)")
    parser.add_argument("--depth", type=int, default=4, help="units in flight (--ladder)")
    parser.add_argument("--draws", type=float, default=0.02)
    parser.add_argument(
        "--ladder", action="store_true", help="the ladder's choice, not a round robin"
    )
    parser.add_argument("--friend", type=int, default=0, help="the friend's rank from the weakest")
    parser.add_argument("--planted", type=int, default=10, help="leagues with the collusion")
    parser.add_argument("--honest", type=int, default=200, help="leagues without it")
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args(argv)
    bots = [f"bot{i:02d}" for i in range(args.bots)]
    strong, friend = bots[-1], bots[args.friend]
    planted_friend = 1500.0 + (args.friend - (args.bots - 1) / 2) * args.gap
    print(
        f"{args.bots} bots, {args.gap:g} Elo apart, {args.games:,} games a league, "
        f"{'the ladder' if args.ladder else 'a round robin'}, units of {2 * args.deals} games, "
        f"{args.draws:.0%} draws; {strong} always loses to {friend}"
    )
    started = time.perf_counter()
    found = 0
    met_leagues = 0
    lifts: list[float] = []
    lifts_out: list[float] = []
    for run in range(args.planted):
        games = league(args, run, (strong, friend))
        result = audit(games)
        flagged = [(t.a, t.b) for t in result.flagged]
        hit = (friend, strong) in flagged or (strong, friend) in flagged
        found += hit
        rated = {f.version: f.elo for f in fit_from_games(games)}
        kept = {f.version: f.elo for f in fit_from_games(without_pairs(games, [(strong, friend)]))}
        lifts.append(rated[friend] - planted_friend)
        lifts_out.append(kept[friend] - planted_friend)
        below = ", ".join(
            f"{b.version} {b.elo:.0f} Elo below against {b.opponent}" for b in result.below
        )
        others = [p for p in flagged if set(p) != {strong, friend}]
        met = sum(1 for seats, _ in games if set(seats) == {strong, friend})
        if met:
            met_leagues += 1
        print(
            f"  planted {run:2d}: the pair met in {met} games; friend {lifts[-1]:+.0f} Elo with "
            "the pair's games, "
            f"{lifts_out[-1]:+.0f} without; planted pair {'flagged' if hit else 'MISSED'}; "
            f"other flags {others or 'none'}; below: {below or 'none'}"
        )
    if args.planted:
        print(
            f"planted: flagged in {found} of {args.planted} leagues (the pair met in "
            f"{met_leagues}); the friend's lift, mean "
            f"{np.mean(lifts):+.0f} Elo with the pair's games, {np.mean(lifts_out):+.0f} "
            "with them left out"
        )
    false = 0
    for run in range(args.honest):
        result = audit(league(args, 1000 + run, None))
        if result.flagged:
            false += 1
            flags = [(t.a, t.b, f"{t.adjusted:.3g}") for t in result.flagged]
            print(f"  honest {run}: flagged {flags}")
    if args.honest:
        low, high = wilson(false, args.honest)
        print(
            f"honest: {false} of {args.honest} leagues with any flag ({false / args.honest:.1%}, "
            f"95% interval {low:.1%}-{high:.1%})"
        )
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
