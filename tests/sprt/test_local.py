"""``arena sprt NEW OLD`` played here, end to end: real bot processes on a referee on loopback, the
verdict, the pairs (one deal, seats swapped), the cap, and bad input refused before any game."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arboretum_worker.sprt.stats import SprtSettings, wald_bounds

pytestmark = pytest.mark.integration

BOTS = Path(__file__).parent / "bots"
ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]


def arena(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
        stdin=subprocess.DEVNULL,
    )


def sprt_json(*args: str) -> dict[str, Any]:
    done = arena("sprt", *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_much_stronger_bot_is_accepted_and_every_pair_is_one_deal_with_seats_swapped(
    tmp_path: Path,
) -> None:
    replays = tmp_path / "replays"
    report = sprt_json(
        "greedy", "random", "--elo1", "50", "--batch", "4", "--seed", "3",
        "--replays", str(replays),
    )  # fmt: skip
    lower, upper = wald_bounds(0.05, 0.05)
    assert report["verdict"] == "H1"
    assert report["upper_bound"] == pytest.approx(upper)
    pairs = report["pairs"]
    assert sum(report["pentanomial"]) == pairs
    assert report["wins"] + report["draws"] + report["losses"] == 2 * pairs
    # The LLR after every pair; the test stopped at the first pair whose LLR reached a bound.
    history = report["llr_history"]
    assert len(history) == pairs and history[-1] == pytest.approx(report["llr"])
    assert report["llr"] >= upper
    assert all(lower < v < upper for v in history[:-1])
    assert report["seed"] == 3 and report["problems"] == []

    # Replays: both matches of a batch play the same deals, NEW first in one, second in the other.
    docs: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for path in sorted(replays.glob("*/game-*.json")):
        doc = json.loads(path.read_text())
        docs.setdefault(tuple(s["bot"] for s in doc["seats"]), []).append(doc)
    assert set(docs) == {("greedy", "random"), ("random", "greedy")}
    decks = {
        seating: {(d["seed"], tuple(d["deck"])) for d in games} for seating, games in docs.items()
    }
    # (the batch running at the verdict was cancelled: its games have no replay)
    both = decks[("greedy", "random")] & decks[("random", "greedy")]
    assert len(both) >= pairs - 4
    assert len({seed for seed, _ in both}) == len(both)  # a new deal for every pair
    verify = arena("replay", "verify", *map(str, replays.glob("*/game-*.json")))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_the_cap_ends_the_test_without_a_verdict(tmp_path: Path) -> None:
    done = arena(
        "sprt", str(BOTS / "random_copy.py"), "random", "--max-pairs", "3", "--batch", "2",
        "--seed", "5", "--per-decision-ms", "200",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no verdict: the cap of 3 pairs was reached" in done.stdout
    assert "3 pairs" in done.stdout and "6 games counted" in done.stdout
    # the live progress line went to stderr
    assert "random_copy vs random: LLR" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--elo0", "5", "--elo1", "5"], "elo0 must be below elo1"),
        (["--elo0", "10", "--elo1", "0"], "elo0 must be below elo1"),
        (["--alpha", "0"], "alpha must be between 0 and 0.5"),
        (["--alpha", "0.5"], "alpha must be between 0 and 0.5"),
        (["--beta", "0.9"], "beta must be between 0 and 0.5"),
        (["--beta", "-1"], "beta must be between 0 and 0.5"),
        (["--alpha", "x"], "not a number: 'x'"),
    ],
)
def test_bad_settings_are_one_line_errors_before_any_game(
    tmp_path: Path, args: list[str], message: str
) -> None:
    replays = tmp_path / "replays"
    done = arena("sprt", "greedy", "random", *args, "--replays", str(replays))
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.startswith("arena")]
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert not replays.exists()  # no match was created


def test_bots_that_cannot_be_loaded_or_are_the_same_version_are_refused(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    copy = tmp_path / "copy_of_random_copy.py"
    shutil.copy(BOTS / "random_copy.py", copy)
    cases = [
        (["nosuchbot", "random"], "cannot load bot 'nosuchbot'"),
        ([str(BOTS / "not_a_bot.py"), "random"], "not_a_bot.py"),
        (["random", "random"], "NEW and OLD are the same version (random)"),
        ([str(BOTS / "random_copy.py"), str(copy)], "NEW and OLD are the same version"),
    ]
    for bots, message in cases:
        done = arena("sprt", *bots, "--replays", str(replays), "--quiet")
        assert done.returncode == 2, (bots, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("arena: "), done.stderr
        assert message in done.stderr
        assert not replays.exists() or not any(replays.iterdir())  # no match was created


def test_settings_cover_the_cli_defaults() -> None:
    done = arena("sprt", "--help")
    assert done.returncode == 0
    assert "pentanomial" in done.stdout and "--max-pairs" in done.stdout
    s = SprtSettings()
    assert (s.elo0, s.elo1, s.alpha, s.beta) == (0.0, 5.0, 0.05, 0.05)
