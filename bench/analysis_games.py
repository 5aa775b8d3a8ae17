"""Games for the analysis benchmarks (bench/analysis_speed.py, bench/analysis_honesty.py): built-in
bots played in-process with fixed compute, recorded as replays (``arboretum.ReplayRecorder``)."""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import Any

from arboretum import GameState, ReplayRecorder, derive_bot_seed
from arboretum_sdk.info import FaultPolicy, GameInfo, TimeControl
from arboretum_sdk.loader import load_bot

os.environ.setdefault("ARENA_COMPUTE", "fixed")

PAIRINGS = [
    ("greedy", "expert"),
    ("random", "greedy"),
    ("lookahead", "expert"),
    ("random", "expert"),
]
"""Pairings the benchmarks cycle through: strong and weak play, so that every mark occurs."""


def record_game(names: Sequence[str], seed: int) -> dict[str, Any]:
    """The replay of one game between the built-in bots ``names`` (seat order) from ``seed``."""
    state = GameState.new(len(names), seed)
    bots = []
    for seat, name in enumerate(names):
        bot = load_bot(name)
        bot.game = GameInfo(
            game_index=0,
            game_count=1,
            players=len(names),
            species=state.species,
            seat=seat,
            seat_names=tuple(names),
            time_control=TimeControl(),
            fault_policy=FaultPolicy(),
            view=state.view(seat),
            bot_seed=derive_bot_seed(seed, seat),
        )
        bot.rng = random.Random(bot.game.bot_seed)
        bots.append(bot)
    recorder = ReplayRecorder(state, match_id=f"bench-{seed}", seats=list(names))
    while not state.is_over:
        seat = state.current_seat
        recorder.apply(bots[seat].choose(state.view(seat)))
    return recorder.to_json()
