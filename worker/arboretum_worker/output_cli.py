"""``arena match logs MATCH --step N [--game G]``: what a bot printed during one decision, named
by the replay's game and step (:mod:`.botoutput`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from arboretum_sdk import argtypes
from arboretum_sdk.clitools import fail

from . import botoutput, replays

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


def _replay_steps(r: Any, match_id: str, game: int) -> list[dict[str, Any]] | None:
    raw = replays.get_replay(r, match_id, game)
    if raw is None:
        return None
    steps = json.loads(raw).get("steps", [])
    return steps if isinstance(steps, list) else []


def print_step(
    r: Any, record: Any, step: int, game: int, seats: list[int] | None, label: str
) -> int:
    """Print the lines of step ``step`` of game ``game``; ``seats``, when given, are the seats
    ``--bot`` named (the step must be one of theirs). ``label(seat)`` names a seat's bot."""
    steps = _replay_steps(r, record.id, game)
    if steps is None:
        games = replays.replay_games(r, record.id)
        have = f" (games with a replay: {', '.join(map(str, games))})" if games else ""
        return fail(f"no replay of game {game} of match {record.id}{have}")
    if step >= len(steps):
        last = f"steps 0-{len(steps) - 1}" if steps else "no steps"
        return fail(f"step {step} is out of range: game {game} of match {record.id} has {last}")
    found = steps[step]
    seat = int(found.get("seat", -1))
    kind = str(found.get("kind", "?"))
    if kind not in ("draw", "play") or found.get("note"):
        return fail(
            f"step {step} of game {game} is a {kind} of seat {seat}, not a decision: "
            "no bot output belongs to it"
        )
    if seats is not None and seat not in seats:
        return fail(f"step {step} of game {game} is seat {seat}'s decision, not {label}'s")
    fault = (found.get("fault") or {}).get("kind")
    print(
        f"--- game {game}, step {step} (turn {found.get('turn')}, {kind}), seat {seat}"
        + (f", fault {fault}" if fault else "")
    )
    if fault == "forfeited":
        print("(the seat had forfeited: the fallback played this step, no bot was asked)")
        return 0
    doc = botoutput.get_output(r, record.id, seat)
    if doc is None:
        return fail(
            f"match {record.id} has no output per decision for seat {seat} "
            f"(status {record.status.value}; matches played before it was kept have none)"
        )
    entry = next(
        (e for e in botoutput.game_output(doc, game)["steps"] if e.get("step") == step), None
    )
    if entry is None or not entry.get("lines"):
        print("(the bot printed nothing during this step)", file=sys.stderr)
        return 0
    for line in entry["lines"]:
        print(line)
    return 0
