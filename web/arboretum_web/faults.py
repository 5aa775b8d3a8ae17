"""A seat's faults, read from its stored replays, for the pages that show them.

Each fault is named by the replay's own numbers (``docs/replay-format.md``): the game (from 0),
the step (its index in the replay's ``steps``, from 0) and the turn (from 0), as the faults JSON
(``GET /api/v1/matches/{id}/seats/{seat}/faults``), the replay viewer (``#step=N``) and
``arena match logs --step N`` name them. The reason is the seat's author's only: callers show
these to the author (see :func:`.resources.owned_seats`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arboretum_worker import replays

if TYPE_CHECKING:
    import redis

__all__ = ["Fault", "seat_faults"]


@dataclass(frozen=True)
class Fault:
    game: int
    step: int
    turn: int | None
    kind: str
    reason: str

    def viewer(self, match_id: str) -> str:
        """The replay viewer at this step."""
        return f"/matches/{match_id}/games/{self.game}#step={self.step}"


def _of_step(game: int, index: int, step: dict[str, Any]) -> Fault | None:
    if isinstance(step.get("fault"), dict):
        f = step["fault"]
        kind, reason = str(f.get("kind", "fault")), str(f.get("reason", ""))
    elif step.get("kind") == "forfeit" or step.get("note"):
        kind, reason = str(step.get("kind")), str(step.get("reason", ""))
    else:
        return None
    turn = step.get("turn")
    return Fault(game, index, turn if isinstance(turn, int) else None, kind, reason)


def seat_faults(r: redis.Redis, match_id: str, seat: int) -> list[Fault]:
    """Every fault, forfeit and note of ``seat`` in the match's stored replays, in order."""
    out: list[Fault] = []
    for game in replays.replay_games(r, match_id):
        raw = replays.get_replay(r, match_id, game)
        doc = json.loads(raw) if raw else {}
        for index, step in enumerate(doc.get("steps", [])):
            if isinstance(step, dict) and step.get("seat") == seat:
                fault = _of_step(game, index, step)
                if fault is not None:
                    out.append(fault)
    return out
