"""wire: round-trips through protobuf over whole random games, and every malformed case."""

from __future__ import annotations

import random

import pytest

from arboretum import (
    DECK,
    Card,
    Cell,
    DecisionKind,
    Draw,
    GameState,
    Play,
    Species,
    random_decision,
)
from arboretum_proto.v1 import bot_pb2, common_pb2, game_pb2
from arboretum_sdk import wire
from arboretum_sdk.info import (
    Clock,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    SeatSummary,
    TimeControl,
)
from arboretum_sdk.wire import WireError

OAK5 = Card(Species.OAK, 5)


def play_random_game(players: int, seed: int, forfeit_rate: float = 0.0) -> None:
    """Plays a game, round-tripping every view, decision and event through protobuf."""
    state = GameState.new(players, seed)
    rng = random.Random(seed)
    encoder = wire.EventEncoder()
    decoders = [wire.EventDecoder(players) for _ in range(players)]
    seen = 0
    while not state.is_over:
        kind = state.decision_kind
        for seat in range(players):
            view = state.view(seat)
            pb = wire.seat_view_to_pb(view, game_index=2, bank_left_ms=[5] * players)
            pb = game_pb2.SeatView.FromString(pb.SerializeToString())
            back = wire.seat_view_from_pb(
                pb,
                species=state.species,
                kind=kind,
                discard_required=state.discard_required if kind is DecisionKind.PLAY else None,
            )
            assert back == view
        decision = random_decision(state, rng)
        pb_decision = wire.decision_to_pb(decision, kind)
        required = state.discard_required if kind is DecisionKind.PLAY else None
        assert wire.decision_from_pb(pb_decision, kind, discard_required=required) == decision
        actor = state.current_seat
        state.apply(decision)
        if rng.random() < forfeit_rate:
            state.forfeit(actor)
        new = state.events(seat=actor, since=seen)
        pbs = encoder.encode_all(new)
        for seat in range(players):
            got = decoders[seat].feed_all([wire.redact_event(p, seat) for p in pbs])
            assert got == state.events(seat=seat, since=seen)
        seen = state.event_count
    result = state.result()
    pb_result = wire.game_result_to_pb(
        result, game_index=1, seed=seed, turns=state.turn + 1, faults=[0] * players
    )
    pb_result = game_pb2.GameResult.FromString(pb_result.SerializeToString())
    assert wire.game_result_from_pb(pb_result) == result


@pytest.mark.parametrize("players", [2, 3, 4])
def test_round_trip_whole_games(players: int) -> None:
    for seed in range(3):
        play_random_game(players, seed, forfeit_rate=0.02)


def test_card_cell_source_round_trip() -> None:
    for species in Species:
        for value in range(1, 9):
            card = Card(species, value)
            assert wire.card_from_pb(wire.card_to_pb(card)) is card
    assert wire.cell_from_pb(wire.cell_to_pb(Cell(-3, 7))) == Cell(-3, 7)
    assert wire.source_from_pb(wire.source_to_pb(DECK)) == DECK
    assert wire.source_from_pb(wire.source_to_pb(2)) == 2
    assert wire.species_to_pb(Species.BLUE_SPRUCE) == common_pb2.SPECIES_BLUE_SPRUCE
    assert wire.species_to_pb(Species.WILLOW) == common_pb2.SPECIES_WILLOW


def test_play_event_mapping_is_documented_order() -> None:
    from arboretum import PlayEvent

    with_discard = wire.event_to_pb(
        PlayEvent(1, OAK5, Cell(0, 0), Card(Species.OAK, 1)), sequence=7, turn_number=3
    )
    assert [e.WhichOneof("kind") for e in with_discard] == ["play", "discard"]
    assert [e.sequence for e in with_discard] == [7, 8]
    skipped = wire.event_to_pb(PlayEvent(1, OAK5, Cell(0, 0), None), sequence=0, turn_number=3)
    assert [e.WhichOneof("kind") for e in skipped] == ["second_draw_skipped", "play"]
    assert wire.events_from_pb(skipped) == [PlayEvent(1, OAK5, Cell(0, 0), None)]


def test_redact_hides_deck_card_from_others_only() -> None:
    from arboretum import DrawEvent

    (pb,) = wire.event_to_pb(
        DrawEvent(0, DECK, OAK5), sequence=0, turn_number=1, draw_kind=DecisionKind.FIRST_DRAW
    )
    assert wire.redact_event(pb, 0).draw.HasField("card")
    assert not wire.redact_event(pb, 1).draw.HasField("card")
    assert not wire.redact_event(pb, None).draw.HasField("card")
    assert pb.draw.HasField("card")  # the original is untouched
    (pile,) = wire.event_to_pb(
        DrawEvent(0, 1, OAK5), sequence=0, turn_number=1, draw_kind=DecisionKind.SECOND_DRAW
    )
    assert wire.redact_event(pile, None).draw.HasField("card")


def test_info_messages_round_trip() -> None:
    info = MatchInfo("m1", 1, 2, 3, ("a", "b"), TimeControl(500, 0), FaultPolicy(2), True)
    assert wire.match_start_from_pb(wire.match_start_to_pb(info)) == info
    notice = FaultNotice(
        9, 0, DecisionKind.PLAY, FaultKind.ILLEGAL, "bad", Play(OAK5, Cell(0, 0), None), 1, False
    )
    assert wire.fault_notice_from_pb(wire.fault_notice_to_pb(notice)) == notice
    end = MatchEnd(MatchStatus.FINISHED, 2**64 - 1, 1, (SeatSummary(0, "a", 10, 1, 1, 0, 0),), "")
    assert wire.match_end_from_pb(wire.match_end_to_pb(end)) == end
    cancelled = MatchEnd(MatchStatus.CANCELLED, None, 0, (), "admin")
    assert wire.match_end_from_pb(wire.match_end_to_pb(cancelled)) == cancelled
    clock = wire.clock_from_pb(common_pb2.DecisionClock(per_decision_ms=100, bank_left_ms=50))
    assert isinstance(clock, Clock) and clock.limit_ms == 150
    assert wire.time_control_from_pb(None) == TimeControl()


def test_answer_envelope() -> None:
    msg = wire.answer_to_pb(42, Draw(1), DecisionKind.SECOND_DRAW)
    assert wire.check_protocol_version(msg) == "answer"
    assert msg.answer.decision_number == 42
    assert msg.answer.decision.second_draw.discard_seat == 1


def test_failure_envelope_is_one_line_and_cut() -> None:
    msg = wire.failure_to_pb(7, "KeyError", "'OA5'")
    assert wire.check_protocol_version(msg) == "failure"
    assert wire.failure_from_pb(msg.failure) == (7, "KeyError", "'OA5'")
    long = wire.failure_to_pb(8, "E" * 500, "first line\n\tsecond\x1b[2J " + "x" * 1000)
    number, error_type, message = wire.failure_from_pb(long.failure)
    assert number == 8 and len(error_type) == wire.ERROR_TYPE_CHARS
    assert len(message) == wire.ERROR_MESSAGE_CHARS and message.endswith("x...")
    assert message.startswith("first line second?[2J x")
    # What arrives is cleaned whatever the sender did, and an empty type still says something.
    raw = bot_pb2.DecisionFailure(decision_number=9, error_type="", message="a\r\nb\x00" * 200)
    number, error_type, message = wire.failure_from_pb(raw)
    assert error_type == "an error" and len(message) == 300 and message.isprintable()


def test_game_start_decodes_view_and_history() -> None:
    state = GameState.new(2, 5)
    rng = random.Random(0)
    for _ in range(7):
        state.apply(random_decision(state, rng))
    view = state.view(1)
    encoder = wire.EventEncoder()
    setup = wire.game_setup_to_pb(
        game_index=0,
        game_count=2,
        species=state.species,
        seat_names=["x", "y"],
        time_control=TimeControl(),
        fault_policy=FaultPolicy(),
    )
    # full information: each event as its own actor saw it
    full = [
        mine if mine.seat == 1 else theirs
        for mine, theirs in zip(state.events(seat=1), state.events(seat=0), strict=True)
    ]
    events = [wire.redact_event(e, 1) for e in encoder.encode_all(full)]
    pb = bot_pb2.GameStart(
        setup=setup, seat=1, view=wire.seat_view_to_pb(view), events=events, resumed=True
    )
    info, decoder = wire.game_start_from_pb(pb)
    assert info.view == view
    assert list(info.events) == state.events(seat=1)
    assert info.seat_names == ("x", "y") and info.resumed
    assert decoder.feed_all(events) == []  # already seen: skipped


# --------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    ("pb", "text"),
    [
        (common_pb2.Card(species=0, value=3), "card.species is SPECIES_UNSPECIFIED"),
        (common_pb2.Card(species=11, value=3), "card.species has unknown species value 11"),
        (common_pb2.Card(species=7, value=0), "card.value is 0 (expected 1 to 8)"),
        (common_pb2.Card(species=7, value=9), "card.value is 9 (expected 1 to 8)"),
    ],
)
def test_bad_cards(pb: common_pb2.Card, text: str) -> None:
    with pytest.raises(WireError, match=text.replace("(", r"\(").replace(")", r"\)")):
        wire.card_from_pb(pb)


def _play(**kw: object) -> common_pb2.Decision:
    play = common_pb2.PlayDecision(**kw)  # type: ignore[arg-type]
    return common_pb2.Decision(play=play)


CARD = common_pb2.Card(species=7, value=5)
CELL = common_pb2.Cell(x=0, y=0)


@pytest.mark.parametrize(
    ("pb", "kind", "required", "text"),
    [
        (common_pb2.Decision(), DecisionKind.PLAY, True, "decision is missing"),
        (
            common_pb2.Decision(first_draw=common_pb2.DrawSource(discard_seat=0)),
            DecisionKind.SECOND_DRAW,
            None,
            "decision.first_draw answers a second-draw decision",
        ),
        (
            common_pb2.Decision(first_draw=common_pb2.DrawSource(discard_seat=0)),
            DecisionKind.PLAY,
            True,
            "decision.first_draw answers a play decision",
        ),
        (
            common_pb2.Decision(first_draw=common_pb2.DrawSource()),
            DecisionKind.FIRST_DRAW,
            None,
            "decision.first_draw is missing",
        ),
        (_play(cell=CELL, discard=CARD), DecisionKind.PLAY, True, "decision.play.card is missing"),
        (_play(card=CARD, discard=CARD), DecisionKind.PLAY, True, "decision.play.cell is missing"),
        (_play(card=CARD, cell=CELL), DecisionKind.PLAY, True, "decision.play.discard is missing"),
        (
            _play(card=CARD, cell=CELL, discard=CARD),
            DecisionKind.PLAY,
            False,
            "decision.play.discard is set but no discard is allowed",
        ),
        (
            _play(card=common_pb2.Card(species=7, value=12), cell=CELL, discard=CARD),
            DecisionKind.PLAY,
            True,
            "decision.play.card.value is 12",
        ),
        (
            _play(card=CARD, cell=CELL, discard=common_pb2.Card(value=1)),
            DecisionKind.PLAY,
            True,
            "decision.play.discard.species is SPECIES_UNSPECIFIED",
        ),
    ],
)
def test_bad_decisions(
    pb: common_pb2.Decision, kind: DecisionKind, required: bool | None, text: str
) -> None:
    with pytest.raises(WireError) as info:
        wire.decision_from_pb(pb, kind, discard_required=required)
    assert str(info.value).startswith(text)


def test_decision_encoding_rejects_wrong_types() -> None:
    with pytest.raises(WireError, match=r"must be a Play"):
        wire.decision_to_pb(Draw(DECK), DecisionKind.PLAY)
    with pytest.raises(WireError, match=r"must be a Draw"):
        wire.decision_to_pb(Play(OAK5, Cell(0, 0), None), DecisionKind.FIRST_DRAW)
    with pytest.raises(WireError, match=r"must be a Draw"):
        wire.decision_to_pb(None, DecisionKind.FIRST_DRAW)  # type: ignore[arg-type]
    with pytest.raises(WireError):
        wire.decision_to_pb(Draw(DECK), DecisionKind.GAME_OVER)
    with pytest.raises(WireError):
        wire.kind_to_pb(DecisionKind.GAME_OVER)


def test_bad_enums() -> None:
    with pytest.raises(WireError, match=r"kind is DECISION_KIND_UNSPECIFIED"):
        wire.kind_from_pb(0)
    with pytest.raises(WireError, match=r"unknown decision kind value 9"):
        wire.kind_from_pb(9)
    with pytest.raises(WireError, match=r"FAULT_KIND_UNSPECIFIED"):
        wire.fault_kind_from_pb(0)
    with pytest.raises(WireError, match=r"unknown fault kind"):
        wire.fault_kind_from_pb(17)
    with pytest.raises(WireError, match=r"MATCH_STATUS_UNSPECIFIED"):
        wire.match_status_from_pb(0)
    with pytest.raises(WireError, match=r"not an end status"):
        wire.match_end_from_pb(game_pb2.MatchEnd(status=common_pb2.MATCH_STATUS_RUNNING))


def test_bad_envelopes_and_settings() -> None:
    with pytest.raises(WireError, match=r"message.protocol_version is 2 \(expected 1\)"):
        wire.check_protocol_version(bot_pb2.BotMessage(protocol_version=2))
    with pytest.raises(WireError, match=r"message.kind is missing"):
        wire.check_protocol_version(bot_pb2.BotMessage(protocol_version=1))
    with pytest.raises(WireError, match=r"time_control.per_decision_ms must be > 0"):
        wire.time_control_from_pb(common_pb2.TimeControl(per_decision_ms=0, bank_ms=5))
    with pytest.raises(WireError, match=r"fault_policy.faults_to_forfeit must be >= 1"):
        wire.fault_policy_from_pb(common_pb2.FaultPolicy())
    with pytest.raises(WireError, match=r"clock.per_decision_ms"):
        wire.clock_from_pb(common_pb2.DecisionClock())
    good = wire.match_start_to_pb(MatchInfo("m", 0, 2, 1, ("a", "b"), TimeControl(), FaultPolicy()))
    for change, text in [
        ({"seat": 2}, "match_start.seat is 2 but there are 2 seats"),
        ({"player_count": 5}, "match_start.player_count is 5"),
        ({"game_count": 0}, "match_start.game_count must be >= 1"),
    ]:
        bad = bot_pb2.MatchStart()
        bad.CopyFrom(good)
        for key, value in change.items():
            setattr(bad, key, value)
        with pytest.raises(WireError, match=text):
            wire.match_start_from_pb(bad)
    bad = bot_pb2.MatchStart()
    bad.CopyFrom(good)
    bad.ClearField("time_control")
    with pytest.raises(WireError, match=r"match_start.time_control is missing"):
        wire.match_start_from_pb(bad)
    notice = bot_pb2.FaultNotice(decision_kind=common_pb2.DECISION_KIND_PLAY, kind=1)
    with pytest.raises(WireError, match=r"fault_notice.fallback is missing"):
        wire.fault_notice_from_pb(notice)


def _midgame(players: int = 2, steps: int = 19) -> tuple[GameState, game_pb2.SeatView]:
    state = GameState.new(players, 11)
    rng = random.Random(3)
    for _ in range(steps):
        state.apply(random_decision(state, rng))
    return state, wire.seat_view_to_pb(state.view(0))


def _decode(state: GameState, pb: game_pb2.SeatView, **kw: object) -> None:
    wire.seat_view_from_pb(pb, species=state.species, **kw)  # type: ignore[arg-type]


def test_bad_views() -> None:
    state, good = _midgame()
    assert state.decision_kind is DecisionKind.SECOND_DRAW

    def bad() -> game_pb2.SeatView:
        pb = game_pb2.SeatView()
        pb.CopyFrom(good)
        return pb

    pb = bad()
    pb.ClearField("board")
    with pytest.raises(WireError, match=r"view.board is missing"):
        _decode(state, pb)
    pb = bad()
    pb.seat = 2
    with pytest.raises(WireError, match=r"view.seat is 2 but there are 2 seats"):
        _decode(state, pb)
    with pytest.raises(WireError, match=r"species_in_play has 5 species"):
        wire.seat_view_from_pb(good, species=state.species[:5])
    pb = bad()
    pb.hand[0].value = 9
    with pytest.raises(WireError, match=r"view.hand\[0\].value is 9"):
        _decode(state, pb)
    pb = bad()
    missing = next(s for s in Species if s not in state.species)
    pb.hand[0].species = wire.species_to_pb(missing)
    with pytest.raises(WireError, match=r"view.hand\[0\] is .*, a species not in play"):
        _decode(state, pb)
    pb = bad()
    pb.hand[1].CopyFrom(pb.hand[0])
    with pytest.raises(WireError, match=r"view.hand\[1\] is .*, which is already elsewhere"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[0].arboretum[0].cell.x = 1
    with pytest.raises(WireError, match=r"arboretum\[0\].cell is 1,0 \(the first card is at 0,0\)"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[0].arboretum[1].cell.x = 5
    pb.board.seats[0].arboretum[1].cell.y = 5
    with pytest.raises(WireError, match=r"arboretum\[1\].cell is 5,5, not adjacent"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[0].arboretum[1].cell.CopyFrom(pb.board.seats[0].arboretum[0].cell)
    with pytest.raises(WireError, match=r"already occupied"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[0].arboretum[1].ClearField("card")
    with pytest.raises(WireError, match=r"arboretum\[1\].card is missing"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[0].hand_size += 1
    with pytest.raises(WireError, match=r"seats\[0\].hand_size is 9 but the hand has 8 cards"):
        _decode(state, pb)
    pb = bad()
    pb.board.seats[1].seat = 0
    with pytest.raises(WireError, match=r"seats\[1\].seat is 0 \(expected 1\)"):
        _decode(state, pb)
    pb = bad()
    pb.board.deck_size += 1
    with pytest.raises(WireError, match=r"view.board accounts for 49 cards"):
        _decode(state, pb)
    pb = bad()
    pb.board.turn_number = 0
    with pytest.raises(WireError, match=r"turn_number must be >= 1"):
        _decode(state, pb)
    pb = bad()
    pb.board.current_seat = 3
    with pytest.raises(WireError, match=r"current_seat is 3"):
        _decode(state, pb)
    with pytest.raises(WireError, match=r"kind is play but the view's hand sizes say second-draw"):
        _decode(state, good, kind=DecisionKind.PLAY)
    _decode(state, good, kind=DecisionKind.SECOND_DRAW)


def test_view_discard_required_must_agree() -> None:
    state, _ = _midgame(steps=20)
    assert state.decision_kind is DecisionKind.PLAY
    pb = wire.seat_view_to_pb(state.view(0))
    _decode(state, pb, kind=DecisionKind.PLAY, discard_required=True)
    with pytest.raises(WireError, match=r"discard_required is False but the view says True"):
        _decode(state, pb, kind=DecisionKind.PLAY, discard_required=False)


def test_bad_events() -> None:
    state, _ = _midgame(steps=5)
    pbs = wire.EventEncoder().encode_all(state.events(seat=0))
    kinds = [e.WhichOneof("kind") for e in pbs]
    assert kinds == ["draw", "draw", "play", "discard", "draw", "draw"]
    decoder = wire.EventDecoder(2)
    with pytest.raises(WireError, match=r"event.sequence is 1 \(expected 0, gap-free\)"):
        decoder.feed(pbs[1])
    with pytest.raises(WireError, match=r"events\[2\].discard does not follow a play event"):
        discard = game_pb2.Event()
        discard.CopyFrom(pbs[3])
        discard.sequence = 2
        wire.EventDecoder(2).feed_all([*pbs[:2], discard])
    out_of_order = [pbs[0], pbs[1], pbs[2]]
    nxt = game_pb2.Event()
    nxt.CopyFrom(pbs[4])
    nxt.sequence = 3
    with pytest.raises(
        WireError, match=r"events\[3\].draw follows a play that still needs its discard event"
    ):
        wire.EventDecoder(2).feed_all([*out_of_order, nxt])
    with pytest.raises(WireError, match=r"end with a play event that has no discard"):
        wire.events_from_pb(pbs[:3])
    with pytest.raises(WireError, match=r"event.kind is missing"):
        wire.EventDecoder(2).feed(game_pb2.Event(sequence=0))
    with pytest.raises(WireError, match=r"event.seat is 5 but there are 2 seats"):
        wire.EventDecoder(2).feed(game_pb2.Event(sequence=0, seat=5, forfeit={}))
    draw = game_pb2.Event()
    draw.CopyFrom(pbs[0])
    draw.draw.draw = 0
    with pytest.raises(WireError, match=r"event.draw.draw is DECISION_KIND_UNSPECIFIED"):
        wire.EventDecoder(2).feed(draw)
    draw.draw.draw = 1
    draw.draw.source.Clear()
    with pytest.raises(WireError, match=r"event.draw.source is missing"):
        wire.EventDecoder(2).feed(draw)
    pile = game_pb2.Event(
        sequence=0, draw=game_pb2.DrawEvent(draw=1, source=common_pb2.DrawSource(discard_seat=1))
    )
    with pytest.raises(WireError, match=r"event.draw.card is missing"):
        wire.EventDecoder(2).feed(pile)
    # Another seat's fault event is skipped: a kind added to the protocol later is accepted (so
    # that older clients keep working), an unset one is not.
    fault = game_pb2.FaultEvent(kind=99, decision_kind=1, decision_number=3, faults=1)
    assert wire.EventDecoder(2).feed(game_pb2.Event(sequence=0, seat=1, fault=fault)) == []
    fault.kind = 0  # type: ignore[assignment]
    with pytest.raises(WireError, match=r"event.fault.kind is FAULT_KIND_UNSPECIFIED"):
        wire.EventDecoder(2).feed(game_pb2.Event(sequence=0, seat=1, fault=fault))


def test_bad_results() -> None:
    state = GameState.new(2, 1)
    rng = random.Random(1)
    while not state.is_over:
        state.apply(random_decision(state, rng))
    good = wire.game_result_to_pb(state.result(), game_index=0, seed=1, turns=state.turn + 1)
    scored = next(
        (s, i)
        for s, seat in enumerate(good.seats)
        for i, sc in enumerate(seat.species_scores)
        if sc.path
    )

    def bad() -> game_pb2.GameResult:
        pb = game_pb2.GameResult()
        pb.CopyFrom(good)
        return pb

    s, i = scored
    pb = bad()
    pb.seats[s].species_scores[i].points += 1
    with pytest.raises(WireError, match=rf"seats\[{s}\].species_scores\[{i}\].points is"):
        wire.game_result_from_pb(pb)
    pb = bad()
    pb.seats[s].total += 1
    with pytest.raises(WireError, match=rf"result.seats\[{s}\].total is"):
        wire.game_result_from_pb(pb)
    pb = bad()
    pb.seats[0].rank = 0
    with pytest.raises(WireError, match=r"result.seats\[0\].rank is 0"):
        wire.game_result_from_pb(pb)
    pb = bad()
    del pb.seats[s].species_scores[i].path[1:]
    with pytest.raises(WireError, match=r"has a single card"):
        wire.game_result_from_pb(pb)
    pb = bad()
    pb.seats[s].species_scores[i].has_right = False
    with pytest.raises(WireError, match=r"is set without the right to score"):
        wire.game_result_from_pb(pb)
    pb = bad()
    del pb.species_in_play[0]
    with pytest.raises(WireError, match=r"result.species_in_play"):
        wire.game_result_from_pb(pb)
    pb = bad()
    pb.seats[1].seat = 0
    with pytest.raises(WireError, match=r"result.seats\[1\].seat is 0 \(expected 1\)"):
        wire.game_result_from_pb(pb)


def test_eight_cancelled_is_derived() -> None:
    for seed in range(40):
        state = GameState.new(2, seed)
        rng = random.Random(seed)
        while not state.is_over:
            state.apply(random_decision(state, rng))
        result = state.result()
        pb = wire.game_result_to_pb(result, game_index=0, seed=seed, turns=1)
        for seat, seat_pb in enumerate(pb.seats):
            for sc in seat_pb.species_scores:
                species = wire.species_from_pb(sc.species)
                raw = sum(c.value for c in result.hands[seat] if c.species is species)
                assert sc.eight_cancelled == (raw - sc.hand_total == 8)
