"""Output per decision in a real league: `arena worker` (rq), the referee inside it, both bots
in the sandbox. A Python bot prints (print and logging) during every third of its decisions and
floods one; a line-protocol bot's child writes to stderr during every third of its requests
(and a line that looks like a marker). Each line must be stored at exactly the replay step of
the decision it was printed in; `arena match logs --step` prints a step's lines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arboretum_worker import botoutput, replays, store

from .conftest import BOTS, Arena
from .test_league import CLOCK

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


def step_text(step: dict[str, Any]) -> str:
    """A replay step in the engine's decision text (``draw deck``, ``play OA5 0,1 discard JA3``)."""
    if step["kind"] == "draw":
        return "draw deck" if step["source"] == "deck" else f"draw pile {step['pile']}"
    x, y = step["cell"]
    text = f"play {step['card']} {x},{y}"
    return text if step["discard"] is None else f"{text} discard {step['discard']}"


def own_decisions(steps: list[dict[str, Any]], seat: int) -> list[int]:
    return [
        i
        for i, s in enumerate(steps)
        if s.get("seat") == seat
        and s["kind"] in ("draw", "play")
        and (s.get("fault") or {}).get("kind") != "forfeited"
    ]


def test_each_line_is_stored_at_the_step_of_its_decision(arena: Arena) -> None:
    r = arena.r
    arena.run("bot", "submit", str(BOTS / "stepprinter.py"), "--name", "stepprinter")
    arena.run("bot", "submit", str(BOTS / "stdio_printer"), "--name", "stdioprinter")
    arena.start_worker()
    arena.wait_workers(1)
    arena.run(
        "league", "create", "out", "--bots", "stepprinter", "stdioprinter", "--players", "2",
        "--games-per-pairing", "1", "--seed", "5", *CLOCK,
    )  # fmt: skip
    arena.run("league", "run", "out")
    assert arena.wait_league("out", timeout=200) == {"finished": 2}, arena.worker_logs()

    for match_id in store.league_matches(r, "out"):
        record = store.get_match(r, match_id)
        assert record is not None
        steps = json.loads(replays.get_replay(r, match_id, 0) or b"{}")["steps"]
        for seat, vid in enumerate(record.seats):
            version = store.get_version(r, vid)
            assert version is not None
            python = version.name == "stepprinter"
            prefix = "stepprinter chose " if python else "stdio chose "
            doc = botoutput.get_output(r, match_id, seat)
            assert doc is not None, (match_id, seat)
            game = doc["games"]["0"]
            own = own_decisions(steps, seat)
            faulted = {own[19]} if python else set()
            assert {i for i in own if "fault" in steps[i]} == faulted
            printed = {}
            for entry in game["steps"]:
                at = steps[entry["step"]]
                assert at["seat"] == seat and entry["turn"] == at["turn"]
                for line in entry["lines"]:
                    if line.startswith(prefix):
                        # the decision the bot said it took is the one the replay has there
                        assert line[len(prefix) :] == step_text(at), (entry, at)
                        printed[entry["step"]] = line
            # every third of its decisions, and no other
            assert set(printed) == {own[k] for k in range(2, len(own), 3)}, (version.name, game)
            if python:
                for step in printed:
                    entry = next(e for e in game["steps"] if e["step"] == step)
                    assert any(f"stepprinter logged {step_text(steps[step])}" in line
                               for line in entry["lines"])  # fmt: skip
                flood = next(e for e in game["steps"] if e["step"] == own[9])
                assert flood["lines"][:200] == [f"flood {i}" for i in range(200)]
                assert flood["lines"][200:] == [
                    "[arena: 60 lines dropped (past 200 in a decision)]"
                ]
                assert flood["dropped"] == 60
                assert "stepprinter: game 0 starts" in doc["before"]
                # the fault: the SDK's lines about it at its step, by the replay's number
                at = own[19]
                assert steps[at]["fault"]["kind"] == "bot_error"
                lines = next(e for e in game["steps"] if e["step"] == at)["lines"]
                assert any(f"the bot failed on step {at} (" in x for x in lines), lines
                assert any(f"fault bot_error on step {at} (" in x for x in lines), lines
                assert any("KeyError: 'OA5'" in x for x in lines)
            else:
                # the child's look-alike marker is kept as text, at its step
                for step in printed:
                    entry = next(e for e in game["steps"] if e["step"] == step)
                    assert "\x1f0123456789abcdef 1" in entry["lines"]
                # written between decisions: before the first, or with it (docs/bot-runtime.md)
                first = game["steps"][0]["lines"] if game["steps"][0]["step"] == own[0] else []
                assert "stdio child: game 0 starts" in doc["before"] + first

        # the CLI: one step's lines, by the replay's numbers; the whole log headed by them
        seat0 = own_decisions(steps, 0)
        step = seat0[2]
        out = arena.run("match", "logs", match_id, "--step", str(step), "--game", "0").stdout
        assert out.splitlines()[0].startswith(f"--- game 0, step {step} (turn ")
        assert f"chose {step_text(steps[step])}" in out
        log = arena.run("match", "logs", match_id, "--bot", "0").stdout
        assert (
            f"--- game 0, step {step} (turn {steps[step]['turn']}, {steps[step]['kind']}) ---"
            in log
        )
        assert "\x1f" not in log.replace("\x1f0123456789abcdef 1", "")
        wrong = arena.run("match", "logs", match_id, "--bot", "1", "--step", str(step), check=False)
        assert wrong.returncode == 1
        assert wrong.stderr.strip() == (
            f"arena: step {step} of game 0 is seat 0's decision, not 1's"
        )
        far = arena.run("match", "logs", match_id, "--step", "5000", check=False)
        assert far.returncode == 1
        assert far.stderr.strip() == (
            f"arena: step 5000 is out of range: game 0 of match {match_id} has steps "
            f"0-{len(steps) - 1}"
        )
        nogame = arena.run("match", "logs", match_id, "--step", "1", "--game", "7", check=False)
        assert nogame.returncode == 1 and "no replay of game 7" in nogame.stderr
