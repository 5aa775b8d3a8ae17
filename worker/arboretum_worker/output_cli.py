"""``arena match logs MATCH --step N [--game G]``: what a bot printed during one decision, named
by the replay's game and step (:mod:`.botoutput`)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from arboretum_sdk import argtypes
from arboretum_sdk.clitools import fail
from arboretum_sdk.steplines import print_lines, step_header, step_problem

from . import botoutput, replays

if TYPE_CHECKING:
    import redis

__all__ = ["add_step_options", "print_step"]


def add_step_options(p: argparse.ArgumentParser) -> None:
    """``--step`` and ``--game`` of ``arena match logs``."""
    p.add_argument(
        "--step",
        type=argtypes.non_negative,
        metavar="N",
        help="only what the bot printed during step N of the game's replay (the step numbers "
        "of the replay and its viewer, from 0); --bot may then be left out",
    )
    p.add_argument(
        "--game",
        type=argtypes.non_negative,
        default=0,
        metavar="G",
        help="the game of --step, its index in the match from 0 (default 0)",
    )


def _replay_steps(r: redis.Redis, match_id: str, game: int) -> list[dict[str, Any]] | None:
    raw = replays.get_replay(r, match_id, game)
    if raw is None:
        return None
    steps = json.loads(raw).get("steps", [])
    return steps if isinstance(steps, list) else []


def print_step(
    r: redis.Redis, record: Any, step: int, game: int, seats: list[int] | None, label: str
) -> int:
    """Print the lines of step ``step`` of game ``game``; ``seats``, when given, are the seats
    ``--bot`` named (the step must be one of theirs), ``label`` what it said."""
    steps = _replay_steps(r, record.id, game)
    if steps is None:
        games = replays.replay_games(r, record.id)
        have = f" (games with a replay: {', '.join(map(str, games))})" if games else ""
        return fail(f"no replay of game {game} of match {record.id}{have}")
    problem = step_problem(steps, step, game, record.id, seats, label)
    if problem is not None:
        return fail(problem)
    found = steps[step]
    print(step_header(found, step, game))
    seat = int(found["seat"])
    doc = botoutput.get_output(r, record.id, seat)
    if doc is None and (found.get("fault") or {}).get("kind") != "forfeited":
        return fail(
            f"match {record.id} has no output per decision for seat {seat} "
            f"(status {record.status.value}; matches played before it was kept have none)"
        )
    print_lines(found, botoutput.game_output(doc, game), step)
    return 0
