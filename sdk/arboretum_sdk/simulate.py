"""In-process simulation with the built-in random policy (``arena simulate``)."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from arboretum import GameState, ReplayRecorder, derive_game_seed, random_decision

from .clitools import output_dir, plural

__all__ = ["SimulationSummary", "simulate"]


@dataclass
class SimulationSummary:
    players: int
    seed: int = 0
    games: int = 0
    wins: list[float] = field(default_factory=list)
    """Per seat; a shared game gives each winner an equal part of one win."""
    points: list[int] = field(default_factory=list)
    shared_games: int = 0
    turns: int = 0
    decisions: int = 0
    seconds: float = 0.0
    replays: list[Path] = field(default_factory=list)

    def format(self) -> str:
        games = max(self.games, 1)
        lines = [
            f"{plural(self.games, 'game')}, {self.players} players, random policy, "
            f"seed {self.seed} ({self.seconds:.2f} s, "
            f"{self.games / max(self.seconds, 1e-9):.0f} games/s)",
            f"mean turns per game: {self.turns / max(self.games, 1):.1f}; "
            f"decisions: {self.decisions}; shared games: {self.shared_games}",
            "",
            f"{'seat':>4}  {'wins':>7}  {'win %':>6}  {'mean score':>10}",
        ]
        for seat in range(self.players):
            lines.append(
                f"{seat:>4}  {self.wins[seat]:>7.2f}  {100 * self.wins[seat] / games:>5.1f}%"
                f"  {self.points[seat] / games:>10.2f}"
            )
        if self.replays:
            lines += [
                "",
                f"{plural(len(self.replays), 'replay')} written to {self.replays[0].parent}",
            ]
        return "\n".join(lines)


def simulate(
    players: int, games: int, seed: int, replays: Path | None = None, match_id: str = "sim"
) -> SimulationSummary:
    """Play ``games`` games in-process; game ``i`` uses the seed derived from ``seed`` and ``i``."""
    summary = SimulationSummary(players, seed, wins=[0.0] * players, points=[0] * players)
    rng = random.Random(seed)
    if replays is not None:
        output_dir(replays)
    started = time.perf_counter()
    for index in range(games):
        state = GameState.new(players, derive_game_seed(seed, index))
        recorder = ReplayRecorder(
            state, match_id=f"{match_id}-{seed}", seats=["random"] * players, game_index=index
        )
        while not state.is_over:
            recorder.apply(random_decision(state, rng))
        result = state.result()
        summary.games += 1
        summary.turns += state.turn + 1
        summary.decisions += len(recorder.steps)
        for seat in result.winners:
            summary.wins[seat] += 1 / len(result.winners)
        for seat, total in enumerate(result.totals):
            summary.points[seat] += total
        summary.shared_games += result.shared
        if replays is not None:
            path = replays / f"{match_id}-{seed}-game{index:04d}.json"
            path.write_text(json.dumps(recorder.to_json(), indent=1) + "\n")
            summary.replays.append(path)
    summary.seconds = time.perf_counter() - started
    return summary
