"""What duplicate deals do to the variance of a win rate (docs/benchmarks.md, "Ratings"; the
statement in docs/league.md).

The league plays every deal in every seating (duplicate deals). Against that, independent deals:
the same number of games, each on a deal of its own, the seats alternating. For a pairing of bots
A and B (2 players, in-process engine games with the built-in bots, ``arboretum_sdk.local``), A's
score per game is 1 for a better rank, 1/2 for a tie, 0 for a worse one, and the win rate is its
mean over N games. Its variance:

- duplicate: N/2 deals, each in both seatings; the variance of the mean is
  Var(per-deal mean of the two seatings) / (N/2);
- independent: N deals, A seated first in half of them; the variance of the mean is
  (Var(score | A first) + Var(score | A second)) / (2N).

Their ratio (duplicate / independent) is 1 + the correlation between A's scores in the two
seatings of one deal: below 1 when a deal's luck shows in both seatings alike and cancels. Printed
per pairing with a 95% bootstrap interval (deals resampled); close pairings (``random`` against a
``random`` with another stream, ``greedy`` against a noisier ``greedy``) and a lopsided one
(``greedy`` against ``random``). Two copies of one bot are no test: a bot driven by its seat's bot
seed plays the same game in both seatings, so the copies' scores cancel exactly.

    .venv/bin/python bench/duplicate_deals.py                      # 600 deals per design
    .venv/bin/python bench/duplicate_deals.py --deals 2000 --pairings random:random
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from arboretum import Decision, SeatView, derive_game_seed
from arboretum_sdk.bot import Bot
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.info import GameInfo
from arboretum_sdk.local import play_game


class OtherRandom(RandomBot):
    """``random`` with a random stream of its own (seeded from its bot seed differently): as
    strong as ``random``, but not its mirror image. Two copies of one seed-driven bot play the
    same game in both seatings of a deal, which would make duplicate deals cancel exactly."""

    def on_game_start(self, info: GameInfo) -> None:
        self.rng = random.Random(f"other:{info.bot_seed}")


class NoisyGreedy(GreedyBot):
    """``greedy`` that plays a uniformly random legal decision one time in five (a bot a little
    weaker than greedy, for a close pairing of two different bots)."""

    def choose(self, view: SeatView) -> Decision:
        if self.rng.random() < 0.2:
            legal = view.legal_decisions()
            return legal[self.rng.randrange(len(legal))]
        return super().choose(view)


BOTS: dict[str, type[Bot]] = {
    "greedy": GreedyBot,
    "noisy-greedy": NoisyGreedy,
    "random": RandomBot,
    "other-random": OtherRandom,
}


def score(a: str, b: str, seed: int, a_first: bool) -> float:
    """A's score in one game of ``seed`` (A and B are fresh bot objects)."""
    bots = [BOTS[a](), BOTS[b]()]
    order = bots if a_first else bots[::-1]
    ranks = play_game(order, seed).ranks
    mine, theirs = (ranks[0], ranks[1]) if a_first else (ranks[1], ranks[0])
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def measure(a: str, b: str, deals: int, seed: int, boots: int) -> dict[str, float]:
    dup = np.array(
        [
            [
                score(a, b, derive_game_seed(seed, d), True),
                score(a, b, derive_game_seed(seed, d), False),
            ]
            for d in range(deals)
        ]
    )
    ind_seeds = [derive_game_seed(seed + 1, k) for k in range(2 * deals)]
    ind = np.array([score(a, b, s, k % 2 == 0) for k, s in enumerate(ind_seeds)])
    first, second = ind[0::2], ind[1::2]

    def ratio(d: np.ndarray, f: np.ndarray, s: np.ndarray) -> float:
        var_dup = d.mean(axis=1).var(ddof=1) / len(d)
        var_ind = (f.var(ddof=1) + s.var(ddof=1)) / (2 * (len(f) + len(s)))
        return float(var_dup / var_ind) if var_ind > 0 else float("nan")

    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(boots):
        i = rng.integers(0, deals, deals)
        j = rng.integers(0, deals, deals)
        k = rng.integers(0, deals, deals)
        samples.append(ratio(dup[i], first[j], second[k]))
    low, high = np.percentile(samples, [2.5, 97.5])
    return {
        "rate_dup": float(dup.mean()),
        "rate_ind": float(ind.mean()),
        "se_dup": float(np.sqrt(dup.mean(axis=1).var(ddof=1) / deals)),
        "se_ind": float(np.sqrt((first.var(ddof=1) + second.var(ddof=1)) / (4 * deals))),
        "corr": float(np.corrcoef(dup[:, 0], dup[:, 1])[0, 1])
        if dup.std(axis=0).all()
        else float("nan"),
        "ratio": ratio(dup, first, second),
        "low": float(low),
        "high": float(high),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=500, help="deals per design and pairing")
    parser.add_argument(
        "--pairings",
        nargs="+",
        default=["random:other-random", "greedy:noisy-greedy", "greedy:random"],
        help=f"A:B pairings of {', '.join(BOTS)}",
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples")
    args = parser.parse_args()
    print(
        f"{args.deals} duplicate deals (x2 seatings) against {2 * args.deals} independent deals "
        "per pairing, 2 players"
    )
    print(
        f"{'pairing':<21} {'A win rate (dup / ind)':>23} {'se dup':>7} {'se ind':>7} "
        f"{'corr':>6} {'var dup/ind [95%]':>22} {'s':>5}"
    )
    for pairing in args.pairings:
        a, b = pairing.split(":")
        started = time.perf_counter()
        m = measure(a, b, args.deals, args.seed, args.bootstrap)
        seconds = time.perf_counter() - started
        print(
            f"{pairing:<21} {m['rate_dup']:>11.3f} / {m['rate_ind']:.3f}   {m['se_dup']:>7.4f} "
            f"{m['se_ind']:>7.4f} {m['corr']:>6.3f} {m['ratio']:>7.3f} "
            f"[{m['low']:.3f}, {m['high']:.3f}] {seconds:>5.0f}"
        )


if __name__ == "__main__":
    main()
