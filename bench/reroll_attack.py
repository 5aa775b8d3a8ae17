"""The re-roll attack on the leaderboard (docs/benchmarks.md, "Ratings").

An author re-submits one bot 5 times (a trivially changed file is a new version with fresh luck)
and keeps whichever shows best. Simulated with the project's own rating functions: 10 honest
versions of planted strength (50 Elo apart, mean 1500) and the attacker's bot, of true strength
1500, play 2-player games (random opponents, each version GAMES games, rankings from the
Plackett-Luce model of ``tests/league/planted.py``).

- **Before** (the board led with the live rating of each bot's newest version): the attacker
  keeps the best of its 5 versions' live ratings (``live_rating.rate_game`` in game order, centred
  as ``ratings.standings``) after 40 games each; the honest author shows its one version's.
- **Now** (``arboretum_worker.board``): the batch fit of every result (``fit.fit_ratings``), each
  bot's row chosen by ``board.board_rows`` (its best established version), ranked by the lower
  end of the fitted interval. The attacker's 5 versions all play; the honest author's one.

Printed per number of games per version: the attacker's mean board value minus the honest
author's (the gain), for the value the board ranks by and for the fitted rating it leads with,
with the standard error over the trials. Goal: the gain on the board under 10 Elo.

**On a ladder** (``--ladder``), each new version retires the last, so the 5 versions cannot all
play on. The attacker re-rolls while its version's fitted rating after 40 games is below 1500
(the middle of the field), keeps the first that is above (or the fifth), and that one plays on to
the given number of games; the retired ones stay provisional with their 40 games.

    .venv/bin/python bench/reroll_attack.py                     # 300 trials
    .venv/bin/python bench/reroll_attack.py --trials 1000 --games 40 100 400
    .venv/bin/python bench/reroll_attack.py --ladder --games 100 200 400
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "tests" / "league"))

from planted import rank_games, spread  # noqa: E402

from arboretum_worker.board import BoardRow, board_rows  # noqa: E402
from arboretum_worker.fit import fit_from_games  # noqa: E402
from arboretum_worker.live_rating import Skill, centred, rate_game  # noqa: E402
from arboretum_worker.ratings import VersionStats  # noqa: E402

REROLLS = 5
ATTACKER = "attacker"
Game = tuple[tuple[str, ...], tuple[int, ...]]


def seats_of(
    versions: Sequence[str], games: int, rng: np.random.Generator
) -> list[tuple[str, str]]:
    """The attacker's versions play ``games`` 2-player games each against random honest
    versions; the honest versions as many again among themselves."""
    out = []
    honest = [v for v in versions if not v.startswith(ATTACKER)]
    for v in versions:
        pool = honest if v.startswith(ATTACKER) else [u for u in honest if u != v]
        for _ in range(games // 2 if not v.startswith(ATTACKER) else games):
            out.append((v, str(pool[rng.integers(len(pool))])))
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def league(mine: int, games: int, rng: np.random.Generator) -> list[Game]:
    true = {f"h{k}": s for k, s in enumerate(spread(10, 50.0).values())}
    mine_ids = [f"{ATTACKER}{k}" for k in range(mine)]
    true.update(dict.fromkeys(mine_ids, 1500.0))
    seats = seats_of([*true], games, rng)
    return [(tuple(s), tuple(r)) for s, r in rank_games(true, seats, rng)]


def one_on_one(
    version: str, count: int, true: dict[str, float], rng: np.random.Generator
) -> list[Game]:
    """``count`` games of ``version`` against random honest versions, and as many among them."""
    honest = [v for v in true if v.startswith("h")]
    seats = [(version, honest[rng.integers(len(honest))]) for _ in range(count)]
    for _ in range(count):
        a, b = rng.choice(len(honest), 2, replace=False)
        seats.append((honest[a], honest[b]))
    return [(tuple(s), tuple(r)) for s, r in rank_games(true, seats, rng)]


def ladder_value(games: int, attack: bool, rng: np.random.Generator) -> tuple[float, float]:
    """The attacker's (or the honest author's) board value on a ladder: see the module doc."""
    true = {f"h{k}": s for k, s in enumerate(spread(10, 50.0).values())}
    played: list[Game] = one_on_one("h0", 0, true, rng)
    for k in range(REROLLS if attack else 1):
        version = f"{ATTACKER}{k}"
        true[version] = 1500.0
        played += one_on_one(version, 40, true, rng)
        mine = next(f for f in fit_from_games(played) if f.version == version)
        if not attack or mine.elo >= 1500.0:
            break
    played += one_on_one(version, games - 40, true, rng)
    value, elo, _provisional = board_value(played)
    return value, elo


def live_value(games: Sequence[Game], mine: int) -> float:
    """The old board: the best live rating (centred) among the attacker's versions."""
    skills: dict[str, Skill] = {}
    for seats, ranks in games:
        after = rate_game([skills.get(v, Skill()) for v in seats], ranks)
        skills.update(zip(seats, after, strict=True))
    shown = centred(skills)
    return max(shown[f"{ATTACKER}{k}"].mu for k in range(mine))


def board_value(games: Sequence[Game]) -> tuple[float, float, bool]:
    """The new board: the attacker's row's (conservative value, fitted rating, provisional)."""
    rows = []
    for f in fit_from_games(games):
        bot = ATTACKER if f.version.startswith(ATTACKER) else f.version
        index = int(f.version[len(ATTACKER) :]) + 1 if bot == ATTACKER else 1
        rows.append(
            BoardRow(0, bot, f.version, index, False, False, f, Skill(), 1500.0, VersionStats())
        )
    row = next(r for r in board_rows(rows) if r.bot == ATTACKER)
    assert row.fit is not None
    return row.conservative, row.fit.elo, row.provisional


def gain(attack: Sequence[float], honest: Sequence[float]) -> str:
    diff = statistics.fmean(attack) - statistics.fmean(honest)
    se = statistics.pvariance(attack) / len(attack) + statistics.pvariance(honest) / len(honest)
    return f"{diff:+6.1f} ± {1.96 * se**0.5:4.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--games", type=int, nargs="+", default=[40, 100, 200, 400])
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--ladder", action="store_true", help="the ladder's attack (see above)")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.monotonic()
    if args.ladder:
        print(f"{args.trials} trials per row; on a ladder (re-roll while below 1500 at 40 games)")
        print("games of the kept version  gain: ranked value  gain: fitted rating")
        for games in args.games:
            attack = [ladder_value(games, True, rng) for _ in range(args.trials)]
            honest = [ladder_value(games, False, rng) for _ in range(args.trials)]
            ranked = gain([a[0] for a in attack], [h[0] for h in honest])
            shown = gain([a[1] for a in attack], [h[1] for h in honest])
            print(f"{games:>25}  {ranked:>18}  {shown:>19}")
        print(f"({time.monotonic() - started:.0f} s)")
        return
    print(f"{args.trials} trials per row; gains in Elo with their 95% margin")
    old_attack, old_honest = [], []
    for _ in range(args.trials):
        old_attack.append(live_value(league(REROLLS, 40, rng), REROLLS))
        old_honest.append(live_value(league(1, 40, rng), 1))
    before = gain(old_attack, old_honest)
    print(f"before: best of {REROLLS} live ratings after 40 games each: gain {before}")
    print("now (the board: best established version, ranked by the fitted interval's lower end):")
    heads = ("games per version", "gain: ranked value", "gain: fitted rating", "established")
    print("  ".join(heads))
    for games in args.games:
        low_a, low_h, elo_a, elo_h = [], [], [], []
        settled = 0
        for _ in range(args.trials):
            low, elo, provisional = board_value(league(REROLLS, games, rng))
            low_a.append(low)
            elo_a.append(elo)
            settled += not provisional
            low, elo, _provisional = board_value(league(1, games, rng))
            low_h.append(low)
            elo_h.append(elo)
        established = f"{settled / args.trials:.2f}"
        cells = (f"{games:>17}", f"{gain(low_a, low_h):>18}", f"{gain(elo_a, elo_h):>19}")
        print("  ".join(cells) + f"  {established:>11}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
