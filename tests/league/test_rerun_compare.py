"""How ``arena match rerun`` compares a stored game with its re-run (arboretum_worker.rerun), and
the league's compute setting it re-runs with."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from arboretum import GameState, ReplayRecorder, random_decision
from arboretum_worker.rerun import Difference, GameCheck, RerunReport, compare_games, format_report
from arboretum_worker.store import LeagueSettings, StoreError


def _replay(seed: int, policy: int) -> dict[str, Any]:
    state = GameState.new(2, seed)
    recorder = ReplayRecorder(state, match_id="m", seats=["a", "b"])
    rng = random.Random(policy)
    while not state.is_over:
        recorder.apply(random_decision(state, rng))
    return recorder.to_json()


def _decisions(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in doc["steps"] if s["kind"] in ("draw", "play")]


def test_the_same_game_is_identical_whatever_the_timing() -> None:
    stored = _replay(5, 1)
    again = copy.deepcopy(stored)
    for step in again["steps"]:
        step["ms"] = 999  # timing is the machine's, not the bot's
    stored["steps"].insert(3, {"turn": 0, "seat": 1, "kind": "stale", "reason": "x", "note": True})
    assert compare_games(stored, again) is None


def test_the_first_other_decision_is_named() -> None:
    stored, other = _replay(5, 1), _replay(5, 2)
    found = compare_games(stored, other)
    assert found is not None
    first = next(
        i
        for i, (a, b) in enumerate(zip(_decisions(stored), _decisions(other), strict=False))
        if json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True)
    )
    assert found.decision == first
    step = _decisions(stored)[first]
    assert (found.turn, found.seat) == (step["turn"], step["seat"])
    assert found.stored != found.rerun
    assert found.stored.startswith(("draw ", "play "))


def test_a_fallback_and_a_shorter_game_differ() -> None:
    stored = _replay(7, 3)
    faulted = copy.deepcopy(stored)
    _decisions(faulted)[4]["fault"] = {"kind": "timeout", "reason": "took 2 s"}
    found = compare_games(stored, faulted)
    assert found is not None and found.decision == 4
    assert (
        found.step == [i for i, s in enumerate(stored["steps"]) if s["kind"] in ("draw", "play")][4]
    )
    assert found.rerun.endswith("(fallback after a timeout fault)")
    reworded = copy.deepcopy(faulted)
    _decisions(reworded)[4]["fault"]["reason"] = "took 3 s"  # the wording is not compared
    assert compare_games(faulted, reworded) is None
    short = copy.deepcopy(stored)
    short["steps"] = short["steps"][:10]
    found = compare_games(stored, short)
    assert found is not None and found.rerun == "(no decision: the game had ended)"


def test_report_text() -> None:
    report = RerunReport(
        "m1",
        games=[
            GameCheck(0, 80, None, (1, 2), (1, 2)),
            GameCheck(1, 81, Difference(17, 5, 1, "draw deck", "draw pile 0"), (2, 1), (1, 2)),
        ],
    )
    assert not report.identical and report.first_difference is report.games[1]
    text = format_report(report, ["a@1", "b@2"])
    assert "game 0: identical (80 decisions)" in text
    assert (
        "game 1: differs at decision 17 of 81 (turn 5, seat 1 (b@2)): "
        "stored 'draw deck', re-run 'draw pile 0'" in text
    )
    # with the replay's step number, as the viewer, the faults JSON and arena match logs --step
    report.games[1] = GameCheck(
        1, 81, Difference(17, 5, 1, "draw deck", "draw pile 0", step=18), (2, 1), (1, 2)
    )
    assert (
        "game 1: differs at step 18 (decision 17 of 81, turn 5, seat 1 (b@2)): "
        in format_report(report, ["a@1", "b@2"])
    )


def test_leagues_compute_fixed_by_default_and_old_ones_read_as_time() -> None:
    settings = LeagueSettings(players=2, games_per_pairing=1, bots=("a", "b"), seed=1)
    assert settings.compute == "fixed"
    assert LeagueSettings.from_json(settings.to_json()) == settings
    old = json.loads(settings.to_json())
    del old["compute"]
    assert LeagueSettings.from_json(json.dumps(old)).compute == "time"
    with pytest.raises(StoreError, match="compute must be fixed or time, not 'fast'"):
        LeagueSettings(players=2, games_per_pairing=1, bots=("a", "b"), seed=1, compute="fast")
