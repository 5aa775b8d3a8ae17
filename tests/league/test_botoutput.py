"""Output per decision, the worker's side: the captured text split at the SDK's markers, the
referee's decision numbers read back from replays, the caps. The whole path (real bots, a real
referee, the sandbox) is tests/integration/test_output_per_decision.py."""

from __future__ import annotations

import os

from arboretum_sdk.output import MARK, DecisionFraming, parse_marker
from arboretum_worker import botoutput
from arboretum_worker.botoutput import DecisionStep, decision_steps, split_output

NONCE = "00112233aabbccdd"


def begin(n: int) -> str:
    return f"\n{MARK}{NONCE} {n}\n"


END = f"\n{MARK}{NONCE}\n"


def test_decision_numbers_follow_the_replays_draw_and_play_steps() -> None:
    g0 = {
        "game_index": 0,
        "steps": [
            {"kind": "draw", "seat": 0, "turn": 0},
            {"kind": "stale", "seat": 1, "turn": 0, "note": True},
            {"kind": "draw", "seat": 0, "turn": 0, "fault": {"kind": "timeout"}},
            {"kind": "play", "seat": 0, "turn": 0},
            {"kind": "forfeit", "seat": 0, "turn": 0},
            {"kind": "draw", "seat": 0, "turn": 1, "fault": {"kind": "forfeited"}},
            {"kind": "draw", "seat": 1, "turn": 1},
        ],
    }
    g1 = {"game_index": 1, "steps": [{"kind": "draw", "seat": 1, "turn": 0}]}
    steps = decision_steps([g0, g1])
    assert steps == {
        1: DecisionStep(0, 0, 0, 0, "draw"),
        2: DecisionStep(0, 2, 0, 0, "draw"),
        3: DecisionStep(0, 3, 0, 0, "play"),
        4: DecisionStep(0, 6, 1, 1, "draw"),
        5: DecisionStep(1, 0, 1, 0, "draw"),
    }


STEPS = {
    1: DecisionStep(0, 0, 0, 0, "draw"),
    2: DecisionStep(0, 1, 1, 0, "draw"),
    3: DecisionStep(0, 2, 0, 0, "play"),
}


def test_lines_go_to_their_step_and_the_log_names_the_replays_numbers() -> None:
    text = (
        "hello\n"
        + begin(1)
        + "thinking about decision 1\nsecond line\n"
        + END
        + "between\n"
        + begin(3)
        + "[match m seat 0] the bot failed on decision 3 (play)\n"
        + END
        + begin(3)  # its fault notice, framed under the same decision
        + "fault bot_error on decision 3 (play, game 0): KeyError\n"
        + END
    )
    out = split_output(text, NONCE, STEPS, 0)
    game = out.doc["games"]["0"]
    assert out.doc["before"] == ["hello"]
    assert game["between"] == ["between"]
    assert [(e["step"], e["lines"]) for e in game["steps"]] == [
        (0, ["thinking about step 0", "second line"]),
        (2, ["[match m seat 0] the bot failed on step 2 (play)",
             "fault bot_error on step 2 (play, game 0): KeyError"]),
    ]  # fmt: skip
    assert out.log.splitlines() == [
        "hello",
        "--- game 0, step 0 (turn 0, draw) ---",
        "thinking about step 0",
        "second line",
        "between",
        "--- game 0, step 2 (turn 0, play) ---",
        "[match m seat 0] the bot failed on step 2 (play)",
        "--- game 0, step 2 (turn 0, play) ---",
        "fault bot_error on step 2 (play, game 0): KeyError",
    ]


def test_a_marker_with_another_nonce_or_another_seats_decision_is_not_followed() -> None:
    forged = f"{MARK}ffffffffffffffff 3\n"
    text = begin(1) + "mine\n" + forged + "still mine\n" + END + begin(2) + "not my step\n"
    out = split_output(text, NONCE, STEPS, 0)
    game = out.doc["games"]["0"]
    assert game["steps"] == [
        {"step": 0, "turn": 0, "kind": "draw", "lines": ["mine", forged.strip("\n"), "still mine"],
         "dropped": 0}
    ]  # fmt: skip
    assert game["between"] == ["not my step"]  # decision 2 is seat 1's


def test_caps_per_decision_per_game_and_per_line(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(botoutput, "DECISION_LINES", 5)
    monkeypatch.setattr(botoutput, "GAME_LINES", 8)
    monkeypatch.setattr(botoutput, "LINE_CHARS", 10)
    text = (
        begin(1) + "".join(f"a{i}\n" for i in range(7)) + END
        + begin(3) + "".join(f"b{i}\n" for i in range(6)) + END
        + "x" * 25 + "\n"
    )  # fmt: skip
    out = split_output(text, NONCE, STEPS, 0)
    game = out.doc["games"]["0"]
    # the log keeps every line whole (its own byte cap applies when it is stored)
    assert {f"a{i}" for i in range(7)} | {f"b{i}" for i in range(6)} | {"x" * 25} <= set(
        out.log.splitlines()
    )
    first, second = game["steps"]
    assert first["lines"] == [f"a{i}" for i in range(5)] + [
        "[arena: 2 lines dropped (past 5 in a decision)]"
    ]
    assert first["dropped"] == 2
    # 5 kept in game 0 so far: 3 more fit under the game's cap, the rest is counted once
    assert second["lines"] == ["b0", "b1", "b2"] and second["dropped"] == 0
    assert game["dropped"] == 4
    assert game["between"] == ["[arena: 4 lines dropped (past 8 in a game)]"]


def test_a_long_line_is_cut() -> None:
    text = begin(1) + "y" * (botoutput.LINE_CHARS + 7) + "\n" + END
    line = split_output(text, NONCE, STEPS, 0).doc["games"]["0"]["steps"][0]["lines"][0]
    assert line == "y" * botoutput.LINE_CHARS + "[arena: 7 more characters cut]"


def test_the_sdk_writes_markers_the_worker_reads() -> None:
    read, write = os.pipe()
    framing = DecisionFraming(NONCE, fd=write)
    with framing.decision(42):
        os.write(write, b"inside\n")
    os.close(write)
    with open(read, "rb") as fh:
        lines = fh.read().decode().split("\n")
    markers = [parse_marker(line, NONCE) for line in lines]
    assert (True, 42) in markers and (False, None) in markers
    assert parse_marker(f"{MARK}{NONCE} 42", "0" * 16) is None
