"""The order and the intervals the leaderboard leads with, against planted strengths
(docs/benchmarks.md, "Ratings").

10 versions of planted strength GAP Elo apart play a league (the league's own schedule, rankings
from the Plackett-Luce model of ``tests/league/planted.py``). Every CHECK games the board is
built as ``arboretum_worker.board`` builds it: the batch fit (``fit.fit``, warm-started as the
stored fit is made again) and ``board.board_rows`` (ranked by the lower end of the fitted 95%
interval). The board may show a fit LAG games old (the web shows the stored fit while the next
one is made); LAG 0 is ``arena leaderboard`` and a fresh web page.

Printed per gap and player count, from checkpoint FROM on:

- **agrees with the fit**: of the neighbour pairs of the batch fit of the same results (all games
  so far) whose 95% intervals do not overlap, the share the board ranks the same way (goal: at
  least 99%);
- **interval holds the truth**: how often the board's fitted 95% interval holds the planted
  rating, centred (goal: 93-97%);
- **whole order right**: checkpoints at which the board's whole order is the planted one;
- the same three for the live rating (``live_rating.rate_game`` game by game, centred as
  ``ratings.standings``), which the board shows beside the fitted one.

    .venv/bin/python bench/board_order.py                        # gaps 50 100 200, 2-4 players
    .venv/bin/python bench/board_order.py --gaps 50 --players 2 --leagues 40 --lag 100
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "league"))

from planted import planted_games, spread  # noqa: E402

from arboretum_worker.board import BoardRow, board_rows  # noqa: E402
from arboretum_worker.fit import Fit, FitRating, Rankings, fit  # noqa: E402
from arboretum_worker.live_rating import Skill, centred, rate_game  # noqa: E402
from arboretum_worker.ratings import VersionStats  # noqa: E402


@dataclass
class Tally:
    pairs: int = 0
    agree: int = 0
    intervals: int = 0
    covered: int = 0
    checks: int = 0
    whole: int = 0

    def text(self) -> str:
        agree = f"{self.agree / self.pairs:.4f} ({self.pairs})" if self.pairs else "-"
        return (
            f"{agree:>15}  {self.covered / max(1, self.intervals):>6.3f}  "
            f"{self.whole / max(1, self.checks):>5.2f}"
        )


def board_order(fitted: Sequence[FitRating]) -> list[str]:
    rows = [
        BoardRow(0, f.version, f.version, 1, True, True, f, Skill(), 1500.0, VersionStats())
        for f in fitted
    ]
    return [row.version for row in board_rows(rows)]


def score(
    tally: Tally,
    shown: Sequence[str],
    intervals: Mapping[str, tuple[float, float]],
    fresh: Sequence[FitRating],
    truth: Mapping[str, float],
) -> None:
    place = {v: i for i, v in enumerate(shown)}
    for a, b in itertools.pairwise(fresh):
        if a.lower > b.upper:  # the fit's neighbours, their intervals apart
            tally.pairs += 1
            tally.agree += place[a.version] < place[b.version]
    for v, (low, high) in intervals.items():
        tally.intervals += 1
        tally.covered += low <= truth[v] <= high
    tally.checks += 1
    tally.whole += list(shown) == sorted(truth, key=lambda v: -truth[v])


def one_league(
    gap: float, players: int, games: int, check: int, start: int, lag: int, seed: int
) -> tuple[Tally, Tally]:
    true = spread(10, gap)
    centre = sum(true.values()) / len(true)
    truth = {v: s - centre + 1500.0 for v, s in true.items()}
    played = planted_games(true, players, games, seed)
    board, live = Tally(), Tally()
    rankings = Rankings()
    fits: dict[int, list[FitRating]] = {}
    last: Fit | None = None
    skills: dict[str, Skill] = {}
    for upto in range(check, games + 1, check):
        batch = played[upto - check : upto]
        rankings.extend(batch)
        last = fit(rankings, start=last)
        fits[upto] = last.ratings()
        for seats, ranks in batch:
            after = rate_game([skills.get(v, Skill()) for v in seats], ranks)
            skills.update(zip(seats, after, strict=True))
        if upto < start or upto - lag < check:
            continue
        fresh = fits[upto]
        shown_fit = fits[upto - lag]
        score(
            board,
            board_order(shown_fit),
            {f.version: (f.lower, f.upper) for f in shown_fit},
            fresh,
            truth,
        )
        shown_live = centred(skills)
        order = sorted(shown_live, key=lambda v: (-shown_live[v].mu, v))
        score(
            live,
            order,
            {v: (s.lower, s.upper) for v, s in shown_live.items()},
            fresh,
            truth,
        )
    return board, live


def add(total: Tally, part: Tally) -> None:
    for name in total.__dataclass_fields__:
        setattr(total, name, getattr(total, name) + getattr(part, name))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gaps", type=float, nargs="+", default=[50.0, 100.0, 200.0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--leagues", type=int, default=10)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--check", type=int, default=100)
    parser.add_argument("--from", dest="start", type=int, default=200)
    parser.add_argument("--lag", type=int, nargs="+", default=[0, 100])
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    print(
        f"10 versions, {args.leagues} leagues of {args.games} games per row, checkpoints every "
        f"{args.check} games from {args.start}; agrees: share (pairs counted)"
    )
    head = f"{'agrees w/ fit':>15}  {'holds':>6}  {'whole':>5}"
    print(f"{'gap':>4} {'P':>2} {'lag':>4}   board: {head}   live: {head}")
    for gap in args.gaps:
        for players in args.players:
            for lag in args.lag:
                board, live = Tally(), Tally()
                for k in range(args.leagues):
                    seed = args.seed * 1000 + k
                    b, lv = one_league(gap, players, args.games, args.check, args.start, lag, seed)
                    add(board, b)
                    add(live, lv)
                row = f"{gap:>4.0f} {players:>2} {lag:>4}"
                print(f"{row}   board: {board.text()}   live: {live.text()}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
