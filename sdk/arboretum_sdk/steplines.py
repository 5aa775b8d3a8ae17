"""``arena match logs MATCH --step N [--game G]``: the checks and the text both ways share (the
league's Redis, :mod:`arboretum_worker.output_cli`; a web server, :func:`remote_step`), by the
replay's own step numbers."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["print_lines", "remote_step", "step_header", "step_problem"]


def step_problem(
    steps: list[dict[str, Any]],
    step: int,
    game: int,
    match_id: str,
    seats: list[int] | None,
    label: str,
) -> str | None:
    """Why step ``step`` of a game has no output to show (out of range, no decision, another
    seat's), or None."""
    if step >= len(steps):
        last = f"steps 0-{len(steps) - 1}" if steps else "no steps"
        return f"step {step} is out of range: game {game} of match {match_id} has {last}"
    found = steps[step]
    seat = int(found.get("seat", -1))
    kind = str(found.get("kind", "?"))
    if kind not in ("draw", "play") or found.get("note"):
        return (
            f"step {step} of game {game} is a {kind} of seat {seat}, not a decision: "
            "no bot output belongs to it"
        )
    if seats is not None and seat not in seats:
        return f"step {step} of game {game} is seat {seat}'s decision, not {label}'s"
    return None


def step_header(found: dict[str, Any], step: int, game: int) -> str:
    fault = (found.get("fault") or {}).get("kind")
    return (
        f"--- game {game}, step {step} (turn {found.get('turn')}, {found.get('kind')}), "
        f"seat {found.get('seat')}" + (f", fault {fault}" if fault else "")
    )


def print_lines(found: dict[str, Any], output: dict[str, Any] | None, step: int) -> None:
    """The step's lines from a seat's output of its game (``steps``: ``{step, lines}``)."""
    if (found.get("fault") or {}).get("kind") == "forfeited":
        print("(the seat had forfeited: the fallback played this step, no bot was asked)")
        return
    entry = next((e for e in (output or {}).get("steps", ()) if e.get("step") == step), None)
    if entry is None or not entry.get("lines"):
        print("(the bot printed nothing during this step)", file=sys.stderr)
        return
    for line in entry["lines"]:
        print(line)


def remote_step(args: argparse.Namespace) -> int:
    """``--step`` through a web server (``--server``): the replay, then the seat's output."""
    from .authorcli import client_of, fetch_match, web_call
    from .clitools import UserError
    from .webclient import quote

    client = client_of(args)
    m = fetch_match(client, args.match_id)
    seats = None
    if args.bot is not None:
        seats = [
            s["seat"]
            for s in m["seats"]
            if args.bot in (str(s["seat"]), s["version"], s["bot"])
            or (len(args.bot) >= 4 and s["version"].startswith(args.bot))
        ]
        if not seats:
            raise UserError(f"no bot {args.bot!r} in match {m['id']}")
    base = f"/matches/{quote(m['id'])}/games/{args.game}"
    steps = web_call(lambda: client.get(base + "/replay")).get("steps", [])
    problem = step_problem(steps, args.step, args.game, m["id"], seats, args.bot or "")
    if problem is not None:
        raise UserError(problem)
    found = steps[args.step]
    print(step_header(found, args.step, args.game))
    output = web_call(lambda: client.get(f"{base}/seats/{found['seat']}/output"))
    print_lines(found, output, args.step)
    return 0
