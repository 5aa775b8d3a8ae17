"""``arena replay analyze`` run as a user would: the table, the JSON, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .support import record_game

SDK = Path(__file__).resolve().parents[2] / "sdk"


def arena(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SDK), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "arboretum_sdk.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


@pytest.fixture(scope="module")
def replay_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("analyze") / "game.json"
    path.write_text(json.dumps(record_game(["greedy", "random"], 3)))
    return path


def test_the_table_and_the_json_agree(replay_file: Path) -> None:
    table = arena("replay", "analyze", replay_file, "--seat", "0", "--samples", "1")
    assert table.returncode == 0, table.stderr
    assert "seat 0 (greedy):" in table.stdout and "seat 1" not in table.stdout
    done = arena("replay", "analyze", replay_file, "--seat", "0", "--samples", "1", "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["format"] == "arboretum-analysis"
    assert report["method"]["samples"] == 1
    assert [s["seat"] for s in report["seats"]] == [0]
    rows = [line.split() for line in table.stdout.splitlines() if line[:4].strip().isdigit()]
    assert [int(r[0]) for r in rows] == [d["step"] for d in report["decisions"]]
    summary = report["seats"][0]
    assert f"accuracy {summary['accuracy']:.1f}%" in table.stdout


def test_bad_input_is_one_line(replay_file: Path, tmp_path: Path) -> None:
    doc = json.loads(replay_file.read_text())
    doc["steps"][4]["turn"] = 9
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    for args, message in [
        ((edited,), "the replay does not verify: step 4: recorded in turn 9"),
        ((replay_file, "--seat", "2"), "seat 2 is not in this game (seats 0 to 1)"),
        ((tmp_path / "missing.json",), "cannot read"),
    ]:
        done = arena("replay", "analyze", *args)
        assert done.returncode == 1, done.stdout
        assert done.stderr.startswith("arena: ") and done.stderr.count("\n") == 1, done.stderr
        assert message in done.stderr
    done = arena("replay", "analyze", replay_file, "--samples", "0")
    assert done.returncode == 2 and "--samples" in done.stderr
