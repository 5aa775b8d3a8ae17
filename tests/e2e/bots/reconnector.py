"""Drops its connection mid-game and reconnects with the same token: at its E2E_DROP_AT-th
decision (default 6) of game E2E_DROP_GAME (default 0) it replaces itself (``os.execv``) with a
fresh ``arena bot run`` of the same command, so the socket closes, and the new program (same pid,
same ARENA_TOKEN) connects again; the referee resumes the seat and re-sends the pending decision."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from arboretum import Decision, SeatView
from arboretum_sdk import Bot, GameInfo, MatchInfo

sys.path.insert(0, str(Path(__file__).parent))
from _common import knob, trace


class ReconnectBot(Bot):
    def __init__(self) -> None:
        self.rng = random.Random(5)
        self.decisions = 0

    def on_match_start(self, info: MatchInfo) -> None:
        trace(f"match start resumed={info.resumed}")

    def on_game_start(self, info: GameInfo) -> None:
        trace(f"game={info.game_index} start resumed={info.resumed}")
        if not info.resumed:
            self.decisions = 0

    def choose(self, view: SeatView) -> Decision:
        self.decisions += 1
        game = self.game.game_index if self.game else -1
        again = os.environ.get("E2E_RECONNECTED") == "1"
        if not again and game == knob("DROP_GAME", 0) and self.decisions == knob("DROP_AT", 6):
            trace(f"game={game} dropping the connection")
            os.environ["E2E_RECONNECTED"] = "1"
            sys.stderr.flush()
            os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
        legal = view.legal_decisions()
        return legal[self.rng.randrange(len(legal))]
