"""What the replay digests (format version 2) cost: recording and verifying, per game.

Plays ``--games`` random games per player count in-process, then times, in interleaved rounds:

- **steps**: turning a recorder's applied decisions into JSON steps with their digests (what the
  referee does once per game, when the game ends and its replay is written), against the same
  conversion without digests (version 1);
- **verify**: ``verify_replay`` of the version 2 document, against the same document as version 1
  (digests removed), which only re-plays.

The figure is the median over rounds of the mean milliseconds per game; the ratio is v2 / v1.

    python bench/replay_digest.py                  # 7 rounds of 50 games for 2, 3 and 4 players
    python bench/replay_digest.py --rounds 3 --games 20
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from typing import Any

from arboretum import GameState, ReplayRecorder, random_decision, verify_replay
from arboretum.replay import _decision_step


def record(players: int, seed: int) -> ReplayRecorder:
    state = GameState.new(players, seed)
    recorder = ReplayRecorder(state, match_id="bench", seats=["random"] * players)
    rng = random.Random(seed)
    while not state.is_over:
        recorder.apply(random_decision(state, rng), ms=rng.random() * 20)
    return recorder


Raw = tuple[ReplayRecorder, list[Any], GameState]
"""A recorder, its steps as applied and the game before them (taken before any conversion)."""


def steps_v1(raw: Raw) -> list[dict[str, Any]]:
    """The conversion of format version 1: the same steps, no digests."""
    return [_decision_step(*s) if isinstance(s, tuple) else dict(s) for s in raw[1]]


def steps_v2(raw: Raw) -> list[dict[str, Any]]:
    fresh = copy.copy(raw[0])
    fresh._steps = [s if isinstance(s, tuple) else dict(s) for s in raw[1]]
    fresh._converted, fresh._chain, fresh._start = 0, None, raw[2].copy()
    return fresh.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument("--games", type=int, default=50, help="games per player count (default 50)")
    args = parser.parse_args()
    for players in (2, 3, 4):
        recorders = [record(players, 1000 + i) for i in range(args.games)]
        raws = [(r, list(r._steps), r._start.copy()) for r in recorders]
        v2_docs = [json.loads(json.dumps(r.to_json())) for r in recorders]
        v1_docs = []
        for doc in v2_docs:
            old = copy.deepcopy(doc)
            old["version"] = 1
            for step in old["steps"]:
                del step["digest"]
            v1_docs.append(old)
        steps = sum(len(d["steps"]) for d in v2_docs) / len(v2_docs)
        times: dict[str, list[float]] = {
            "steps v1": [],
            "steps v2": [],
            "verify v1": [],
            "verify v2": [],
        }
        for _ in range(args.rounds):
            for name, work, items in (
                ("steps v1", steps_v1, raws),
                ("steps v2", steps_v2, raws),
                ("verify v1", verify_replay, v1_docs),
                ("verify v2", verify_replay, v2_docs),
            ):
                started = time.perf_counter()
                for item in items:
                    work(item)  # type: ignore[operator]
                times[name].append((time.perf_counter() - started) / len(items) * 1000)
        med = {k: statistics.median(v) for k, v in times.items()}
        per_step = (med["steps v2"] - med["steps v1"]) * 1000 / steps
        print(
            f"{players} players ({steps:.0f} steps a game): "
            f"steps {med['steps v1']:.2f} -> {med['steps v2']:.2f} ms a game "
            f"(+{per_step:.1f} us a step); "
            f"verify {med['verify v1']:.2f} -> {med['verify v2']:.2f} ms a game "
            f"(x{med['verify v2'] / med['verify v1']:.2f})"
        )


if __name__ == "__main__":
    main()
