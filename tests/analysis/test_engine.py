"""The analysis engine (arboretum_sdk.analysis): reproducible, fair, and it marks a terrible
decision as a blunder."""

from __future__ import annotations

import copy
import json
import math
import random
from typing import Any

import pytest

from arboretum import DecisionKind, Draw, GameState
from arboretum_sdk.analysis import AnalysisConfig, AnalysisError, analyse_position, analyse_replay
from arboretum_sdk.analysis.engine import game_state_at
from arboretum_sdk.analysis.report import accuracy, analysis_json, render_text
from arboretum_sdk.bots.planning import TurnPlanner

from .support import record_game

FAST = AnalysisConfig(samples=3)


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return record_game(["greedy", "random"], 11)


def late_steps(doc: dict[str, Any], count: int) -> set[int]:
    return set(range(len(doc["steps"]) - count, len(doc["steps"])))


def test_the_same_replay_and_seed_give_the_same_analysis(doc: dict[str, Any]) -> None:
    steps = late_steps(doc, 12)
    first = analysis_json(doc, analyse_replay(doc, None, FAST, steps), FAST)
    again = analysis_json(doc, analyse_replay(doc, None, FAST, steps), FAST)
    assert first == again
    assert first["decisions"], "the late steps hold decisions with a choice"
    other = AnalysisConfig(samples=3, seed=1)
    moved = analysis_json(doc, analyse_replay(doc, None, other, steps), other)
    values = [d["value_taken"] for d in first["decisions"]]
    assert values != [d["value_taken"] for d in moved["decisions"]]


def test_the_analysis_never_reads_the_hidden_cards(doc: dict[str, Any]) -> None:
    """Two replays that differ only in cards the seat could not see (the opponent's hidden hand
    and the deck's order, as dealt by another determinization) analyse the same for that seat at
    the same decision."""
    step = len(doc["steps"]) - 9
    state = game_state_at(doc, step)
    seat = state.current_seat
    view = state.view(seat)
    taken = state.legal_decisions()[0]
    other = view.determinize(random.Random(5))
    assert other.view(seat) == view
    rng_a, rng_b = random.Random("x"), random.Random("x")
    assert analyse_position(view, taken, rng_a, FAST) == analyse_position(
        other.view(seat), taken, rng_b, FAST
    )


def test_decisions_are_those_with_a_choice_of_the_seat(doc: dict[str, Any]) -> None:
    steps = late_steps(doc, 10)
    found = analyse_replay(doc, [1], FAST, steps)
    assert found and all(d.seat == 1 for d in found)
    for d in found:
        assert doc["steps"][d.step]["seat"] == 1
        assert d.loss >= 0 and d.candidates >= 2
        assert d.mark == FAST.mark(d.loss)
        if d.best == d.taken:
            assert d.loss == 0 and d.mark is None


def test_the_taken_decision_equal_to_the_best_loses_nothing(doc: dict[str, Any]) -> None:
    for step in range(len(doc["steps"]) - 1, 0, -1):
        state = game_state_at(doc, step)
        if state.decision_kind is not DecisionKind.PLAY and len(state.draw_sources()) > 1:
            break
    view = state.view(state.current_seat)
    values, _ = analyse_position(view, Draw(state.draw_sources()[0]), random.Random(3), FAST)
    best = values[0][0]
    again, loss = analyse_position(view, best, random.Random(3), FAST)
    assert loss == 0.0
    assert again[0] == (best, values[0][1])


def test_a_terrible_play_is_a_blunder() -> None:
    """A late position of a game between greedy bots; the play taken is the worst of 60 legal
    plays (by the same playouts, on other determinizations): the analysis finds a far better one
    and marks it a blunder."""
    doc = record_game(["greedy", "greedy"], 4)
    for step in range(len(doc["steps"]) - 1, 0, -1):
        state = game_state_at(doc, step)
        if state.decision_kind is DecisionKind.PLAY and state.deck_size >= 6:
            break
    view = state.view(state.current_seat)
    planner = TurnPlanner(view, replies=-1)
    dets = [view.determinize(random.Random(i)) for i in range(3)]
    legal = list(state.legal_decisions())
    some = random.Random(0).sample(legal, min(60, len(legal)))
    worst = min(some, key=lambda d: sum(planner.margin(det, d) for det in dets))
    values, loss = analyse_position(view, worst, random.Random(1), AnalysisConfig())
    assert values[0][0] != worst
    assert loss >= AnalysisConfig().blunder
    assert AnalysisConfig().mark(loss) == "blunder"


def test_a_replay_that_does_not_verify_is_refused(doc: dict[str, Any]) -> None:
    edited = copy.deepcopy(doc)
    play = next(s for s in edited["steps"] if s["kind"] == "play" and s["discard"])
    play["discard"], play["card"] = play["card"], play["discard"]
    with pytest.raises(AnalysisError, match=r"^the replay does not verify: step \d+: "):
        analyse_replay(edited, None, FAST)
    with pytest.raises(AnalysisError, match="does not verify: not an Arboretum replay"):
        analyse_replay({"format": "x"}, None, FAST)
    with pytest.raises(AnalysisError, match=r"seat 2 is not in this game \(seats 0 to 1\)"):
        analyse_replay(doc, [2], FAST)


def test_the_report_sums_up_each_seat(doc: dict[str, Any]) -> None:
    found = analyse_replay(doc, None, FAST, late_steps(doc, 16))
    report = analysis_json(doc, found, FAST)
    assert report["format"] == "arboretum-analysis" and report["version"] == 1
    json.dumps(report)  # plain JSON
    for summary in report["seats"]:
        mine = [d for d in report["decisions"] if d["seat"] == summary["seat"]]
        assert summary["decisions"] == len(mine)
        assert summary["total_loss"] == pytest.approx(sum(d["loss"] for d in mine), abs=0.02)
        assert summary["blunders"] == sum(d["mark"] == "blunder" for d in mine)
        assert summary["bot"] == doc["seats"][summary["seat"]]["bot"]
    text = render_text(report)
    assert "seat 0 (greedy):" in text and "seat 1 (random):" in text


def test_accuracy_falls_with_the_loss() -> None:
    assert accuracy([]) == 100.0
    assert accuracy([0.0, 0.0]) == 100.0
    assert accuracy([4.0]) == pytest.approx(100 / math.e)
    assert accuracy([0.0, 1.0]) > accuracy([0.0, 3.0])


def test_a_game_state_at_a_step_is_the_replayed_game(doc: dict[str, Any]) -> None:
    state = game_state_at(doc, len(doc["steps"]))
    assert isinstance(state, GameState) and state.is_over
