"""docs/stdio-protocol.md is enough to write a bot: its examples are the bots of ``examples/``,
its messages are exactly what the bridge writes, and its commands run.

- The page's Python, JavaScript and C blocks are byte for byte ``examples/python-stdio``,
  ``examples/javascript`` and ``examples/c``.
- Every ```json block line is one message: the arena's (by ``type``) has exactly the keys, in
  the order, that :mod:`arboretum_sdk.stdio.lines` writes; the answers parse as decisions.
- The page's ```sh block runs line by line in a folder holding the three examples (the
  tests/bots/test_guide.py convention: ``# not run by the tests: REASON`` skips a line), and
  every game it plays is free of faults and verifies.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arboretum import DecisionKind, GameState, random_decision
from arboretum_sdk.info import (
    Clock,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    TimeControl,
)
from arboretum_sdk.stdio import lines, read_manifest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "stdio-protocol.md"
EXAMPLES = ROOT / "examples"
VENV_BIN = Path(sys.executable).parent
NOT_RUN = "# not run by the tests:"

# fence language -> (first line of the block, the example file)
CODE = {
    "python": ("# stdio_bot.py", EXAMPLES / "python-stdio" / "stdio_bot.py"),
    "js": ("// bot.js", EXAMPLES / "javascript" / "bot.js"),
    "c": ("/* cbot.c", EXAMPLES / "c" / "cbot.c"),
}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), re.S | re.M)


def test_the_pages_examples_are_the_example_bots() -> None:
    for language, (first, path) in CODE.items():
        found = [b for b in blocks(language) if b.startswith(first)]
        assert len(found) == 1, (language, first)
        assert found[0] == path.read_text(), f"{path} differs from the page's block"
    assert (EXAMPLES / "python-stdio" / "arena.toml").read_text() == (
        'command = "python3 stdio_bot.py"\n'
    )
    assert (EXAMPLES / "javascript" / "arena.toml").read_text() == 'command = "node bot.js"\n'
    assert (EXAMPLES / "c" / "arena.toml").read_text() == 'command = "./cbot"\n'
    for folder in ("python-stdio", "javascript"):
        assert read_manifest(EXAMPLES / folder).folder.name == folder


def _real_messages() -> dict[str, dict[str, Any]]:
    """One message of each type, as the bridge writes it, from a real game."""
    state = GameState.new(2, 4)
    r = random.Random(2)
    for _ in range(8):
        state.apply(random_decision(state, r))
    assert state.decision_kind is DecisionKind.PLAY
    view = state.view(state.current_seat)
    tc, fp = TimeControl(), FaultPolicy()
    info = MatchInfo("m-1", 0, 2, 10, ("a", "b"), tc, fp)
    start = GameInfo(0, 10, 2, state.species, 0, ("a", "b"), tc, fp, state.view(0), bot_seed=5)
    decision = random_decision(state, r)
    notice = FaultNotice(3, 0, DecisionKind.PLAY, FaultKind.MALFORMED, "x", decision, 1, False)
    while not state.is_over:
        state.apply(random_decision(state, r))
    end = GameEnd(0, 1, state.species, state.turn, ("a", "b"), (0, 0), state.result())
    out = [
        lines.hello_message(),
        lines.match_start_message(info),
        lines.game_start_message(start),
        lines.request_message(3, 0, view, Clock(1000, 10000)),
        lines.fault_message(notice),
        lines.game_end_message(end),
        lines.match_end_message(MatchEnd(MatchStatus.FINISHED, 1, 1, ())),
    ]
    return {str(m["type"]): m for m in out}


def test_every_message_of_the_page_has_the_keys_the_bridge_writes() -> None:
    real = _real_messages()
    seen: set[str] = set()
    answers = 0
    for block in blocks("json"):
        for text in block.splitlines():
            text = text.replace("{...}", "{}").replace("[...]", "[]")
            message = json.loads(text)
            if "type" not in message:
                if "seat" in message:  # the view
                    view = lines.view_to_json(GameState.new(2, 1).view(0))
                    assert list(message) == list(view)
                    continue
                kind = DecisionKind.PLAY if "play" in message else DecisionKind.FIRST_DRAW
                lines.decision_from_json(message, kind, "discard" in message)
                answers += 1
                continue
            kind = message["type"]
            assert list(message) == list(real[kind]), kind
            for key, value in message.items():
                if isinstance(value, dict) and value and key != "fallback":
                    assert list(value) == list(real[kind][key]), (kind, key)
            seen.add(kind)
    assert seen == set(real), "every message the bridge writes is shown"
    assert answers >= 3


def test_the_page_names_every_fault_reason_the_bridge_gives() -> None:
    text = DOC.read_text()
    for reason in (
        "the line is not JSON",
        "the line is not UTF-8",
        "not an object",
        "the line is longer than the 4096 bytes a line may have",
        "while no decision was asked (out of turn)",
    ):
        assert reason in text, reason
    assert f"**{lines.MAX_LINE_BYTES} bytes**" in text


def sh_lines() -> list[str]:
    out = []
    for block in blocks("sh"):
        out += [x.strip() for x in block.splitlines() if x.strip() and not x.startswith("#")]
    return out


@pytest.mark.integration
def test_the_pages_commands_run_and_play_without_a_fault(tmp_path: Path) -> None:
    for _, path in CODE.values():
        (tmp_path / path.name).write_text(path.read_text())
    env = dict(os.environ, PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    commands = sh_lines()
    assert any(c.startswith('arena play "cmd:node bot.js"') for c in commands)
    assert any(c.startswith("arena play jsbot") for c in commands)
    for line in commands:
        if NOT_RUN in line:
            assert line.split(NOT_RUN, 1)[1].strip(), f"a skipped command needs a reason: {line}"
            continue
        done = subprocess.run(
            ["bash", "-c", f"set -euo pipefail; {line}"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{line!r} failed ({done.returncode}):\n{output[-4000:]}"
        if line.startswith("arena play"):
            assert "finished" in output, output
    replays = sorted((tmp_path / "replays" / "stdio").glob("*/game-*.json"))
    assert len(replays) == 4 + 2 + 2
    for path in replays:
        doc = json.loads(path.read_text())
        assert not [s for s in doc["steps"] if "fault" in s], path
        assert {s["bot"] for s in doc["seats"]} & {"bot.js", "stdio_bot.py", "cbot", "jsbot"}
