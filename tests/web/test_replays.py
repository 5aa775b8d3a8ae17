"""What a spectator may see of a replay (arboretum_web.replays), without HTTP."""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

import pytest

from arboretum import GameState, ReplayRecorder, random_decision
from arboretum_web.replays import is_complete, seat_view, strip_faults

CARD = re.compile(r'"([A-Z]{2}[1-8])"')


def _game(seed: int, steps: int | None = None, players: int = 2) -> dict[str, Any]:
    state = GameState.new(players, seed)
    rec = ReplayRecorder(state, match_id="m", seats=[f"b{i}" for i in range(players)])
    rng = random.Random(seed)
    n = 0
    while not state.is_over and (steps is None or n < steps):
        rec.apply(random_decision(state, rng))
        n += 1
    return rec.to_json() if state.is_over else rec.partial_json()


def _public_cards(doc: dict[str, Any], seat: int | None) -> set[str]:
    """Cards ``seat`` may know of: its own hand and deck draws, every pile draw, play and
    discard."""
    known = set(doc["hands"][seat]) if seat is not None else set()
    for step in doc["steps"]:
        if step["kind"] == "draw" and (step["source"] == "pile" or step["seat"] == seat):
            known.add(step["card"])
        elif step["kind"] == "play":
            known.add(step["card"])
            if step["discard"]:
                known.add(step["discard"])
    return known


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seat", [None, 0, 1])
def test_a_game_in_progress_leaks_no_hidden_card(players: int, seat: int | None) -> None:
    for seed in range(5):
        doc = _game(seed, steps=17 + seed, players=players)
        original = copy.deepcopy(doc)
        view = seat_view(doc, seat)
        assert doc == original  # never edited in place
        assert not is_complete(view)
        shown = set(CARD.findall(json.dumps(view)))
        assert shown <= _public_cards(doc, seat)
        assert view["seed"] is None and view["deck"] is None
        assert view["deck_size"] == len(doc["deck"]) - players * 7
        assert [len(h) for h in view["hands"]] == [7] * players
        # A digest covers the hidden cards (a deck draw could be found by trying each card).
        assert all("digest" in step for step in doc["steps"])
        assert not any("digest" in step for step in view["steps"])


def test_states_differing_only_in_hidden_cards_give_the_same_view() -> None:
    doc = _game(3, steps=10)
    other = copy.deepcopy(doc)
    # swap two cards between seat 1's dealt hand and the undealt deck: hidden from seat 0
    # (and from the public) as long as neither was drawn, played or discarded yet
    public = _public_cards(doc, 0)
    hidden_hand = next(c for c in doc["hands"][1] if c not in public)
    hidden_deck = next(c for c in doc["deck"][14:] if c not in public)
    for key in ("hands", "deck"):
        text = json.dumps(other[key])
        text = text.replace(hidden_hand, "TMP").replace(hidden_deck, hidden_hand)
        other[key] = json.loads(text.replace("TMP", hidden_deck))
    assert seat_view(doc, 0) == seat_view(other, 0)
    assert seat_view(doc, None) == seat_view(other, None)


def test_a_finished_game_keeps_its_scoring() -> None:
    doc = _game(11)
    assert is_complete(doc)
    view = seat_view(doc, 0)
    assert view["result"] == doc["result"] and view["final_hands"] == doc["final_hands"]
    assert view["hands"][0] == doc["hands"][0] and set(view["hands"][1]) == {None}


def test_the_clocks_are_public() -> None:
    """The match's clock and each seat's own (a casual game's) stay in every view: the viewer
    counts each seat's bank on them."""
    doc = _game(12, steps=9)
    doc["time_control"] = {"per_decision_ms": 120_000, "bank_ms": 600_000}
    doc["seat_time_controls"] = [doc["time_control"], {"per_decision_ms": 1000, "bank_ms": 10_000}]
    for seat in (None, 0, 1):
        view = seat_view(doc, seat)
        assert view["time_control"] == doc["time_control"]
        assert view["seat_time_controls"] == doc["seat_time_controls"]


def test_strip_faults() -> None:
    doc = _game(5, steps=6)
    doc["steps"][0]["fault"] = {"kind": "timeout", "reason": "slow"}
    doc["steps"].append({"turn": 1, "seat": 1, "kind": "forfeit", "reason": "3 faults"})
    seat0 = doc["steps"][0]["seat"]
    public = strip_faults(doc, set())
    assert all("fault" not in s for s in public["steps"])
    assert "reason" not in public["steps"][-1]
    assert "fault" in doc["steps"][0]  # a copy
    mine = strip_faults(doc, {seat0})
    assert mine["steps"][0]["fault"]["kind"] == "timeout"


def test_a_finished_game_without_its_private_details_still_verifies() -> None:
    """Digests do not cover fault details and reasons, which the web app withholds."""
    from arboretum import verify_replay

    state = GameState.new(2, 8)
    rec = ReplayRecorder(state, match_id="m", seats=["a", "b"])
    rng = random.Random(8)
    for _ in range(9):
        rec.apply(random_decision(state, rng))
    rec.note(0, "stale", "an answer for decision 3, not pending")
    rec.apply(state.fallback_decision(), fault={"kind": "timeout", "reason": "no answer in 1 s"})
    rec.forfeit(1, "3 faults")
    while not state.is_over:
        rec.apply(random_decision(state, rng))
    doc = json.loads(json.dumps(rec.to_json()))
    public = strip_faults(doc, set())
    assert "fault" not in json.dumps(public) and "3 faults" not in json.dumps(public)
    assert verify_replay(public) == verify_replay(doc)
