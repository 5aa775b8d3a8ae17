"""Replays for the analysis tests: built-in bots played in-process, recorded as the referee does."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from arboretum import GameState, ReplayRecorder, derive_bot_seed
from arboretum_sdk.bot import Bot
from arboretum_sdk.info import FaultPolicy, GameInfo, TimeControl
from arboretum_sdk.loader import load_bot


def record_game(names: Sequence[str], seed: int) -> dict[str, Any]:
    """The replay of one game between the built-in bots ``names`` (fixed compute) from ``seed``."""
    state = GameState.new(len(names), seed)
    bots: list[Bot] = []
    for seat, name in enumerate(names):
        bot = load_bot(name)
        bot.compute_mode = "fixed"  # type: ignore[attr-defined]
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
    recorder = ReplayRecorder(state, match_id="analysis-test", seats=list(names))
    while not state.is_over:
        seat = state.current_seat
        recorder.apply(bots[seat].choose(state.view(seat)))
    return recorder.to_json()
