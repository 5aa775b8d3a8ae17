"""The line protocol's pure conversion (``arboretum_sdk.stdio.lines``): round trips over whole
games, the request's legal options against the engine's, and every bad shape of an answer."""

from __future__ import annotations

import json
import random

import pytest

from arboretum import DECK, Card, Cell, DecisionKind, Draw, GameState, Play, random_decision
from arboretum.grid import LIMIT
from arboretum_sdk.info import (
    Clock,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    TimeControl,
)
from arboretum_sdk.stdio import lines
from arboretum_sdk.stdio.lines import LineError


def line_of(message: dict[str, object]) -> dict[str, object]:
    """Through the bytes: one line, compact, newline-terminated, and back."""
    raw = lines.encode(message)
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert b": " not in raw and b", " not in raw, "compact JSON"
    return json.loads(raw)  # type: ignore[no-any-return]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_views_and_decisions_round_trip_through_whole_games(players: int) -> None:
    for seed in range(3):
        state = GameState.new(players, seed)
        rng = random.Random(seed)
        while not state.is_over:
            for seat in range(players):
                view = state.view(seat)
                assert lines.view_from_json(line_of({"v": lines.view_to_json(view)})["v"]) == view
            view = state.view(state.current_seat)
            clock = Clock(1000, 2500, 40)
            request = line_of(lines.request_message(7, 2, view, clock))
            legal = view.legal_decisions()
            if view.kind is DecisionKind.PLAY:
                assert request["legal_sources"] == []
                cells = sorted({(d.cell.x, d.cell.y) for d in legal if isinstance(d, Play)})
                assert request["legal_cells"] == [list(c) for c in cells]
                assert request["discard_required"] == view.discard_required
            else:
                sources = [d.source for d in legal if isinstance(d, Draw)]
                assert request["legal_sources"] == ["deck" if s == DECK else s for s in sources]
                assert request["legal_cells"] == [] and request["discard_required"] is False
            assert request["clock"] == {
                "per_decision_ms": 1000,
                "bank_left_ms": 2500,
                "elapsed_ms": 40,
                "limit_ms": 3460,
            }
            assert (request["type"], request["id"], request["game"]) == ("request", 7, 2)
            assert request["kind"] == view.kind.value
            decision = random_decision(state, rng)
            answer = line_of({"id": 7, **lines.decision_to_json(decision)})
            assert lines.answer_id(answer) == 7
            parsed = lines.decision_from_json(answer, view.kind, view.discard_required)
            assert parsed == decision
            state.apply(decision)


def test_every_legal_decision_of_a_position_round_trips() -> None:
    state = GameState.new(3, 11)
    rng = random.Random(3)
    for _ in range(14):
        state.apply(random_decision(state, rng))
    assert state.decision_kind is DecisionKind.PLAY
    view = state.view(state.current_seat)
    for decision in view.legal_decisions():
        obj = line_of({"id": 1, **lines.decision_to_json(decision)})
        assert lines.decision_from_json(obj, view.kind, view.discard_required) == decision


def test_the_other_messages() -> None:
    tc, fp = TimeControl(300, 2000), FaultPolicy(4)
    assert line_of(lines.hello_message()) == {
        "type": "hello",
        "protocol": "arboretum-stdio",
        "version": 1,
        "max_line_bytes": 4096,
    }
    start = line_of(lines.match_start_message(MatchInfo("m-1", 1, 2, 3, ("a", "b"), tc, fp)))
    assert start == {
        "type": "match_start",
        "match_id": "m-1",
        "seat": 1,
        "players": 2,
        "games": 3,
        "names": ["a", "b"],
        "clock": {"per_decision_ms": 300, "bank_ms": 2000},
        "faults_to_forfeit": 4,
    }
    state = GameState.new(2, 5)
    view = state.view(1)
    info = GameInfo(0, 3, 2, state.species, 1, ("a", "b"), tc, fp, view, bot_seed=2**64 - 1)
    game = line_of(lines.game_start_message(info))
    assert game["seed"] == str(2**64 - 1) and game["species"] == [s.value for s in state.species]
    assert lines.view_from_json(game["view"]) == view
    fallback = Play(Card.parse("OA5"), Cell(0, 1), Card.parse("JA3"))
    notice = FaultNotice(9, 0, DecisionKind.PLAY, FaultKind.ILLEGAL, "why", fallback, 2, False)
    assert line_of(lines.fault_message(notice)) == {
        "type": "fault",
        "id": 9,
        "game": 0,
        "kind": "illegal",
        "reason": "why",
        "fallback": {"play": "OA5", "cell": [0, 1], "discard": "JA3"},
        "faults": 2,
        "forfeited": False,
    }
    end = line_of(lines.match_end_message(MatchEnd(MatchStatus.CANCELLED, None, 1, (), "stop")))
    assert end == {"type": "match_end", "status": "cancelled", "reason": "stop", "games": 1}


# line -> the reason parse_line gives
BAD_LINES = {
    b"draw deck": "the line is not JSON (Expecting value at column 1)",
    b'{"id": 1, "draw": "deck"': "the line is not JSON (Expecting ',' delimiter at column 25)",
    b"[1, 2]": "the line is a JSON list, not an object",
    b'"deck"': "the line is a JSON string, not an object",
    b"7": "the line is a JSON number, not an object",
    b"null": "the line is a JSON null, not an object",
    b"true": "the line is a JSON boolean, not an object",
    b'{"id": "\xff"}': "the line is not UTF-8",
    b"[" * 100_000: "the line is longer than the 4096 bytes a line may have",
    b'{"id": 1, "pad": "' + b"x" * 4090 + b'"}': "the line is longer than the 4096 bytes",
}


@pytest.mark.parametrize("raw", list(BAD_LINES), ids=range(len(BAD_LINES)))
def test_a_line_that_is_not_a_json_object(raw: bytes) -> None:
    with pytest.raises(LineError) as caught:
        lines.parse_line(raw)
    assert BAD_LINES[raw] in caught.value.reason
    assert "deck" not in caught.value.reason and "xxx" not in caught.value.reason


def test_a_deeply_nested_line_under_the_limit_is_not_json() -> None:
    with pytest.raises(LineError) as caught:
        lines.parse_line(b"[" * 4000)
    assert caught.value.reason.startswith("the line is not JSON")


@pytest.mark.parametrize("value", [None, "1", 1.0, True, [1]])
def test_an_answer_without_an_integer_id(value: object) -> None:
    obj = {"draw": "deck"} if value is None else {"id": value, "draw": "deck"}
    with pytest.raises(LineError, match='"id" is missing or not an integer'):
        lines.answer_id(obj)


DRAW, PLAY = DecisionKind.FIRST_DRAW, DecisionKind.PLAY
# (answer without id, kind, discard required) -> reason
BAD_ANSWERS: list[tuple[dict[str, object], DecisionKind, bool, str]] = [
    (
        {"play": "OA5", "cell": [0, 0], "discard": "OA6"},
        DRAW,
        False,
        'first-draw was asked, but the answer has "play"',
    ),
    ({}, DRAW, False, 'first-draw was asked, but the answer has no "draw"'),
    ({"draw": "Deck"}, DRAW, False, 'the answer\'s "draw" is neither "deck" nor a seat number'),
    ({"draw": 1.0}, DRAW, False, 'the answer\'s "draw" is neither "deck" nor a seat number'),
    ({"draw": True}, DRAW, False, 'the answer\'s "draw" is neither "deck" nor a seat number'),
    ({"draw": -1}, DRAW, False, 'the answer\'s "draw" is not a seat number (0 or more)'),
    (
        {"draw": "deck", "card": "OA5"},
        DRAW,
        False,
        "the answer has a key the protocol does not define",
    ),
    ({"draw": "deck"}, PLAY, True, 'a play was asked, but the answer has "draw"'),
    (
        {"cell": [0, 0], "discard": "OA6"},
        PLAY,
        True,
        'a play was asked, but the answer has no "play"',
    ),
    (
        {"play": "OA9", "cell": [0, 0], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "play" is not a card',
    ),
    (
        {"play": 5, "cell": [0, 0], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "play" is not a card',
    ),
    ({"play": "OA5", "discard": "OA6"}, PLAY, True, 'the answer has no "cell"'),
    (
        {"play": "OA5", "cell": "0,0", "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "cell" is not [x, y]',
    ),
    (
        {"play": "OA5", "cell": [0], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "cell" is not [x, y]',
    ),
    (
        {"play": "OA5", "cell": [0, 0.5], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "cell" is not [x, y]',
    ),
    (
        {"play": "OA5", "cell": [0, False], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "cell" is not [x, y]',
    ),
    (
        {"play": "OA5", "cell": [LIMIT + 1, 0], "discard": "OA6"},
        PLAY,
        True,
        'the answer\'s "cell" is out of range',
    ),
    (
        {"play": "OA5", "cell": [0, 0]},
        PLAY,
        True,
        'the answer has no "discard" (a discard is required)',
    ),
    ({"play": "OA5", "cell": [0, 0], "discard": None}, PLAY, True, 'the answer has no "discard"'),
    (
        {"play": "OA5", "cell": [0, 0], "discard": "OA6"},
        PLAY,
        False,
        'the answer has a "discard", but none is allowed',
    ),
    (
        {"play": "OA5", "cell": [0, 0], "discard": "XX1"},
        PLAY,
        True,
        'the answer\'s "discard" is not a card',
    ),
    (
        {"play": "OA5", "cell": [0, 0], "discard": "OA6", "why": 1},
        PLAY,
        True,
        "the answer has a key the protocol does not define",
    ),
]


@pytest.mark.parametrize(("obj", "kind", "required", "reason"), BAD_ANSWERS)
def test_every_bad_shape_of_an_answer_is_named(
    obj: dict[str, object], kind: DecisionKind, required: bool, reason: str
) -> None:
    with pytest.raises(LineError) as caught:
        lines.decision_from_json({"id": 3, **obj}, kind, required)
    assert reason in caught.value.reason
    assert "why" not in caught.value.reason and "XX1" not in caught.value.reason
    assert caught.value.detail, "the detail for the log quotes the answer"


def test_well_formed_answers_that_the_referee_judges() -> None:
    """The bridge checks the form only: a seat out of range or a card not in hand is a decision
    (the referee names the broken rule, an illegal fault)."""
    assert lines.decision_from_json({"id": 1, "draw": 9}, DRAW, False) == Draw(9)
    assert lines.decision_from_json({"id": 1, "draw": "deck"}, DRAW, False) == Draw(DECK)
    play = lines.decision_from_json({"id": 1, "play": "WI8", "cell": [5, -3]}, PLAY, False)
    assert play == Play(Card.parse("WI8"), Cell(5, -3), None)


def test_a_malformed_view_is_refused() -> None:
    good = lines.view_to_json(GameState.new(2, 1).view(0))
    with pytest.raises(ValueError, match="view: not an object"):
        lines.view_from_json([])
    with pytest.raises(ValueError, match="view: no key 'hand'"):
        lines.view_from_json({k: v for k, v in good.items() if k != "hand"})
    with pytest.raises(ValueError, match=r"view\.seat: not an integer"):
        lines.view_from_json({**good, "seat": "0"})
    with pytest.raises(ValueError, match="view"):
        lines.view_from_json({**good, "hand": ["ZZ1"]})


def test_the_referee_reads_a_refused_answer_as_a_malformed_one_with_its_reason() -> None:
    """``DecisionAnswer.malformed_reason`` (what the bridge sends for a bad line): a malformed
    answer with that reason, control characters blanked and cut at 300 characters, on both of
    the referee's decoding paths."""
    from arboretum_sdk import wire
    from arboretum_server import edge
    from arboretum_server.seats import MalformedAnswer

    message = wire.refused_answer_to_pb(42, "the line is not JSON\n\x1b[31m" + "x" * 400)
    inbound = edge.inbound_from_bytes(message.SerializeToString())
    assert isinstance(inbound, MalformedAnswer)
    assert inbound.number == 42
    assert inbound.reason.startswith("the line is not JSON  [31mxxx")
    assert len(inbound.reason) == edge.MAX_BRIDGE_REASON
    both = wire.answer_to_pb(42, Draw(DECK), DecisionKind.FIRST_DRAW)
    both.answer.malformed_reason = "refused"
    again = edge.inbound_from_bytes(both.SerializeToString())
    assert isinstance(again, MalformedAnswer) and again.reason == "refused"
