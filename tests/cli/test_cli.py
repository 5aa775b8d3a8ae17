"""The ``arena`` command (``python -m arboretum_sdk.cli``) run as a subprocess, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arboretum import derive_game_seed, verify_replay

SDK = Path(__file__).resolve().parents[2] / "sdk"


def arena(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SDK), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "arboretum_sdk.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture(scope="module")
def replays(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = tmp_path_factory.mktemp("replays")
    done = arena("simulate", "--players", "3", "--games", "5", "--seed", "1", "--replays", out)
    return out, done


def test_simulate_writes_replays_and_prints_a_summary(
    replays: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, done = replays
    assert done.returncode == 0, done.stderr
    files = sorted(out.glob("*.json"))
    assert len(files) == 5
    assert "5 games, 3 players" in done.stdout
    assert "5 replays written" in done.stdout
    # One row per seat; the wins add up to the number of games (shared games split a win).
    rows = [
        line.split()
        for line in done.stdout.splitlines()
        if line.split()[:1] in (["0"], ["1"], ["2"])
    ]
    assert [r[0] for r in rows] == ["0", "1", "2"]
    assert sum(float(r[1]) for r in rows) == pytest.approx(5)
    for index, path in enumerate(files):
        doc = json.loads(path.read_text())
        assert doc["players"] == 3 and doc["game_index"] == index
        assert doc["seed"] == str(derive_game_seed(1, index))
        verify_replay(doc)


def test_simulate_is_deterministic(
    tmp_path: Path, replays: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    out, _ = replays
    again = arena(
        "simulate", "--players", "3", "--games", "5", "--seed", "1", "--replays", tmp_path
    )
    assert again.returncode == 0, again.stderr
    for path in sorted(out.glob("*.json")):
        assert (tmp_path / path.name).read_text() == path.read_text()


def test_replay_verify_passes_on_simulated_replays(
    replays: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, _ = replays
    files = sorted(out.glob("*.json"))
    done = arena("replay", "verify", *files)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 5 and all(line.startswith("ok") for line in lines)


def test_replay_verify_fails_on_a_tampered_copy_naming_the_step(
    tmp_path: Path, replays: tuple[Path, subprocess.CompletedProcess[str]]
) -> None:
    out, _ = replays
    good = sorted(out.glob("*.json"))[0]
    doc = json.loads(good.read_text())
    i = next(n for n, s in enumerate(doc["steps"]) if n > 10 and s["kind"] == "draw")
    doc["steps"][i]["card"] = next(c for c in doc["deck"] if c != doc["steps"][i]["card"])
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc))
    done = arena("replay", "verify", good, bad)
    assert done.returncode == 1
    assert f"arena: {bad}: step {i}:" in done.stderr
    assert f"ok   {good}" in done.stdout and str(bad) not in done.stdout
    assert done.stderr.splitlines()[-1] == "arena: 1 of 2 replays failed verification"


def test_replay_verify_fails_on_non_json_and_missing_files(tmp_path: Path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text("this is not a replay")
    done = arena("replay", "verify", junk, tmp_path / "missing.json")
    assert done.returncode == 1
    assert f"arena: {junk}: not JSON" in done.stderr
    assert f"arena: {tmp_path / 'missing.json'}: cannot read" in done.stderr
    assert "2 of 2 replays failed" in done.stderr
    assert "Traceback" not in done.stdout + done.stderr


def test_replay_show_renders_a_game(replays: tuple[Path, subprocess.CompletedProcess[str]]) -> None:
    out, _ = replays
    done = arena("replay", "show", sorted(out.glob("*.json"))[0])
    assert done.returncode == 0, done.stderr
    assert "turn 0 (seat 0)" in done.stdout and "scoring:" in done.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["simulate", "--players", "5", "--games", "5"], ["--players", "2, 3 or 4"]),
        (["simulate", "--players", "1", "--games", "5"], ["--players", "2, 3 or 4"]),
        (["simulate", "--players", "x", "--games", "5"], ["--players", "'x'"]),
        (["simulate", "--players", "3", "--games", "0"], ["--games", "at least 1"]),
        (["simulate", "--players", "3", "--games", "2", "--seed", "-1"], ["--seed"]),
        (
            ["simulate", "--players", "3", "--games", "2", "--seed", str(2**64)],
            ["--seed", "2**64-1"],
        ),
        (["simulate", "--games", "5"], ["--players"]),
        (["replay", "verify"], ["FILE"]),
        (
            ["league", "create", "x", "--bots", "a", "b", "--deals-per-series", "0"],
            ["--deals-per-series", "from 1 to 100, got 0"],
        ),
        (
            ["league", "create", "x", "--bots", "a", "b", "--deals-per-series", "101"],
            ["--deals-per-series", "from 1 to 100, got 101"],
        ),
        (["demo", "--workers", "0"], ["--workers", "from 1 to 16, got 0"]),
        (["demo", "--workers", "99"], ["--workers", "from 1 to 16, got 99"]),
        (["fly"], ["invalid choice", "fly"]),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message(args: list[str], words: list[str]) -> None:
    done = arena(*args)
    assert done.returncode == 2
    assert "usage:" in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_replay_verify_partial_checks_an_unfinished_game(tmp_path: Path) -> None:
    import random

    from arboretum import GameState, ReplayRecorder, random_decision

    state = GameState.new(2, 5)
    recorder = ReplayRecorder(state, match_id="m", seats=["a", "b"])
    rng = random.Random(1)
    for _ in range(30):
        recorder.apply(random_decision(state, rng))
    recorder.note(state.current_seat, "stopped", "match cancelled")
    path = tmp_path / "game-0.partial.json"
    path.write_text(json.dumps(recorder.partial_json("match cancelled")))

    plain = arena("replay", "verify", path)
    assert plain.returncode == 1
    assert "steps end before the game does" in plain.stderr and "--partial" in plain.stderr

    done = arena("replay", "verify", "--partial", path)
    assert done.returncode == 0, done.stderr
    assert f"ok   {path}: 31 steps, digests checked; unfinished: turn" in done.stdout
    assert "stopped: match cancelled" in done.stdout

    doc = json.loads(path.read_text())
    doc["steps"][12]["discard"] = None if doc["steps"][12]["kind"] == "play" else "OA1"
    doc["steps"][12]["seat"] = 1 - doc["steps"][12]["seat"]
    path.write_text(json.dumps(doc))
    bad = arena("replay", "verify", "--partial", path)
    assert bad.returncode == 1 and f"arena: {path}: step 12:" in bad.stderr

    shown = arena("replay", "show", path)
    assert shown.returncode == 0 and "no result: the game did not finish" in shown.stdout


def test_replay_show_names_a_missing_field(tmp_path: Path) -> None:
    path = tmp_path / "nosteps.json"
    path.write_text(json.dumps({"format": "arboretum-replay", "version": 2, "match_id": "m",
                                "game_index": 0, "seed": None, "engine": {"version": "1"},
                                "species": [], "seats": [], "hands": []}))  # fmt: skip
    done = arena("replay", "show", path)
    assert done.returncode == 1
    assert done.stderr == f"arena: {path}: cannot show this replay: a field 'steps' is missing\n"


def test_a_missing_replay_or_bot_file_is_named_once_with_a_hint(tmp_path: Path) -> None:
    missing = tmp_path / "nosuch.json"
    done = arena("replay", "show", missing)
    assert done.returncode == 1
    assert done.stderr == f"arena: {missing}: cannot read the file: No such file or directory\n"
    (tmp_path / "mybot.py").write_text("from arboretum_sdk.bots.random_bot import RandomBot\n")
    done = arena("play", "mybot", "random", "--games", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("; did you mean mybot.py?"), done.stderr
