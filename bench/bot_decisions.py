"""CPU time per decision of the built-in bots, for two source trees in the same run.

Each built-in bot (greedy, lookahead, search and expert, the last two in fixed compute with few
samples, so that the path tables and the heuristics weigh as much as they can) decides every
third position of random pile-loving games (2, 3 and 4 players). Every measurement runs in a
fresh process that imports the SDK of one tree (``--tree``, a checkout's root: its ``sdk`` folder
comes first on the import path) and reports the process's CPU time per decision, so that time
slices lost to other processes on a shared machine do not count. The trees take turns, round
after round, and the table shows each tree's median round and the ratio to the first tree.

Usage (from the repository root)::

    python bench/bot_decisions.py                              # this checkout alone
    git worktree add ../before HEAD~1                          # a checkout of the commit before
    python bench/bot_decisions.py --tree ../before --tree .    # before and after, interleaved
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOTS = ("greedy", "lookahead", "search", "expert")
GAMES = ((2, 21), (3, 22), (4, 23))


def _positions() -> list[object]:
    from arboretum import DECK, DecisionKind, Draw, GameState, derive_game_seed

    views = []
    for players, seed in GAMES:
        rng = random.Random(seed)
        state = GameState.new(players, derive_game_seed(seed, 0))
        step = 0
        while not state.is_over:
            if step % 3 == 0:
                views.append(state.view(state.current_seat))
            step += 1
            legal = state.legal_decisions()
            if legal.kind is not DecisionKind.PLAY:
                piles = [d for d in legal if isinstance(d, Draw) and d.source != DECK]
                if piles and rng.random() < 0.9:
                    state.apply(piles[rng.randrange(len(piles))])
                    continue
            state.apply(legal[rng.randrange(len(legal))])
    return views


def _make(name: str) -> object:
    if name == "greedy":
        from arboretum_sdk.bots.greedy import GreedyBot

        return GreedyBot()
    if name == "lookahead":
        from arboretum_sdk.bots.lookahead import LookaheadBot

        return LookaheadBot()
    if name == "search":
        from arboretum_sdk.bots.search import SearchBot

        return SearchBot(seed=5, compute="fixed", max_rounds=2)
    from arboretum_sdk.bots.expert import ExpertBot

    return ExpertBot(seed=5, compute="fixed", simulations=2)


def child(bots: list[str]) -> None:
    import arboretum_sdk

    views = _positions()
    out: dict[str, object] = {"sdk": str(Path(arboretum_sdk.__file__).parents[1])}
    for name in bots:
        bot = _make(name)
        bot.choose(views[0])  # type: ignore[attr-defined]  # warm up
        start = time.process_time()
        for view in views:
            bot.choose(view)  # type: ignore[attr-defined]
        out[name] = (time.process_time() - start) / len(views)
    print(json.dumps(out))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", action="append", type=Path, help="a checkout's root (repeat)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per tree (default 3)")
    parser.add_argument("--bots", nargs="+", default=list(BOTS), choices=BOTS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.bots)
        return 0
    trees = [t.resolve() for t in args.tree or [ROOT]]
    for tree in trees:
        if not (tree / "sdk" / "arboretum_sdk").is_dir():
            parser.error(
                f"--tree {tree.name}: not a checkout of the project (no sdk/arboretum_sdk)"
            )
    times: dict[Path, dict[str, list[float]]] = {t: {b: [] for b in args.bots} for t in trees}
    for _ in range(args.rounds):
        for tree in trees:
            env = dict(os.environ, PYTHONPATH=str(tree / "sdk"))
            run = subprocess.run(
                [sys.executable, __file__, "--child", "--bots", *args.bots],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            got = json.loads(run.stdout)
            if Path(got["sdk"]) != tree / "sdk":
                raise SystemExit(f"the child imported the SDK of {got['sdk']}, not of {tree}")
            for name in args.bots:
                times[tree][name].append(got[name])
    head = f"{'bot':<10}" + "".join(f"{t.name:>14}" for t in trees)
    print(f"CPU ms per decision, median of {args.rounds} rounds")
    print(head + ("   ratio last/first" if len(trees) > 1 else ""))
    for name in args.bots:
        medians = [statistics.median(times[t][name]) * 1000 for t in trees]
        line = f"{name:<10}" + "".join(f"{m:>14.2f}" for m in medians)
        if len(trees) > 1:
            line += f"   {medians[-1] / medians[0]:.3f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
