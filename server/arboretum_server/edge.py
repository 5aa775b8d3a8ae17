"""The protocol edge of the referee: its own values to protobuf messages, and back.

Values of the engine (cards, cells, decisions, results, ...) are converted by the SDK's one
conversion module, :mod:`arboretum_sdk.wire`; this module only assembles the referee's messages
(:mod:`arboretum_server.messages`) from those pieces, and reads what clients send: a bot's stream
messages (never raising: anything wrong becomes a fault or an ``InvalidMessage``) and the match
service's requests (raising :class:`~arboretum_server.errors.InvalidArgument`).

The one exception to "messages are built with protobuf objects" is the hottest pair, a decision
request and its answer: the match encodes requests straight to bytes, and
:func:`inbound_from_bytes` reads a well-formed answer straight from its bytes
(:mod:`arboretum_server.wirebytes`; the same results the protobuf runtime gives).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from arboretum import DecisionKind, Species
from arboretum_proto.v1 import bot_pb2, common_pb2, game_pb2, match_pb2
from arboretum_sdk import wire
from arboretum_sdk.clitools import plural
from arboretum_sdk.wire import WireError

from . import wirebytes
from .config import Settings
from .errors import InvalidArgument
from .matchconfig import MatchConfig, check_time_control
from .messages import (
    Board,
    BotMessage,
    ClockState,
    DecisionPending,
    DecisionRequest,
    Discard,
    Draw,
    Fault,
    FaultNotice,
    FaultPolicy,
    Forfeit,
    GameEnd,
    GameOver,
    GameSetup,
    GameStart,
    LoggedEvent,
    MatchEnd,
    MatchInfo,
    MatchSnapshot,
    Place,
    SecondDrawSkipped,
    TimeControl,
    View,
    WatchGameEnd,
    WatchGameStart,
)
from .seats import Answer, Failure, Inbound, InvalidMessage, MalformedAnswer

__all__ = [
    "PROTOCOL_VERSION",
    "Undecodable",
    "check_version",
    "decode_bot_message",
    "inbound_from_bytes",
    "inbound_from_pb",
    "match_config_from_pb",
    "match_info_to_pb",
    "referee_bytes",
    "referee_message",
    "watch_message",
]

PROTOCOL_VERSION = wire.PROTOCOL_VERSION
MAX_NAME_CHARS = 64
MAX_START_TIMEOUT_MS = 3_600_000
MAX_REASON_CHARS = 500
MAX_BRIDGE_REASON = 300
"""Characters kept of a ``DecisionAnswer.malformed_reason``."""


# ----------------------------------------------------------------------------- bot stream in


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A stream message whose bytes are not a ``BotMessage``."""

    reason: str


def decode_bot_message(data: bytes) -> bot_pb2.BotMessage | Undecodable:
    """A bot's stream message; it never raises, so a garbage message is a fault."""
    try:
        return bot_pb2.BotMessage.FromString(data)
    except Exception as exc:  # the protobuf runtime raises DecodeError and others
        return Undecodable(f"the message does not decode as a BotMessage ({type(exc).__name__})")


def inbound_from_bytes(data: bytes) -> Inbound:
    """What a bot's serialized stream message means to the match: a canonically encoded, well-formed
    answer is read straight from its bytes; anything else goes through the protobuf runtime."""
    return wirebytes.decode_answer(data) or inbound_from_pb(decode_bot_message(data))


def inbound_from_pb(message: bot_pb2.BotMessage | Undecodable) -> Inbound:
    """What a bot's stream message means to the match."""
    if isinstance(message, Undecodable):
        return InvalidMessage(message.reason)
    try:
        which = wire.check_protocol_version(message, "BotMessage")
    except WireError as exc:
        return InvalidMessage(str(exc))
    if which == "failure":
        return Failure(*wire.failure_from_pb(message.failure))
    if which != "answer":
        return InvalidMessage(f"BotMessage.{which} is not a message a bot may send")
    answer = message.answer
    number = answer.decision_number
    if answer.malformed_reason:
        return MalformedAnswer(number, _printable(answer.malformed_reason, MAX_BRIDGE_REASON))
    if not answer.HasField("decision"):
        return MalformedAnswer(number, "answer.decision is missing")
    pb = answer.decision
    which_decision = pb.WhichOneof("kind")
    if which_decision is None:
        return MalformedAnswer(
            number, "answer.decision is missing (set first_draw, second_draw or play)"
        )
    kind = _DECISION_FIELDS[which_decision]
    try:
        decision = wire.decision_from_pb(pb, kind, field="answer.decision")
    except WireError as exc:
        return MalformedAnswer(number, str(exc))
    return Answer(number, kind, decision)


def _printable(text: str, limit: int) -> str:
    """``text`` without control characters, cut to ``limit`` characters."""
    clean = "".join(c if c.isprintable() else " " for c in text[: limit * 2])
    return clean[:limit].strip() or "the answer was refused by the bot's client"


_DECISION_FIELDS = {
    "first_draw": DecisionKind.FIRST_DRAW,
    "second_draw": DecisionKind.SECOND_DRAW,
    "play": DecisionKind.PLAY,
}


# ----------------------------------------------------------------------------- values out


def event_to_pb(event: LoggedEvent) -> game_pb2.Event:
    pb = game_pb2.Event(sequence=event.sequence, turn_number=event.turn_number, seat=event.seat)
    body = event.body
    if isinstance(body, Draw):
        pb.draw.draw = wire.kind_to_pb(body.draw)
        pb.draw.source.CopyFrom(wire.source_to_pb(body.source))
        if body.card is not None:
            pb.draw.card.CopyFrom(wire.card_to_pb(body.card))
    elif isinstance(body, SecondDrawSkipped):
        pb.second_draw_skipped.SetInParent()
    elif isinstance(body, Place):
        pb.play.card.CopyFrom(wire.card_to_pb(body.card))
        pb.play.cell.CopyFrom(wire.cell_to_pb(body.cell))
    elif isinstance(body, Discard):
        pb.discard.card.CopyFrom(wire.card_to_pb(body.card))
    elif isinstance(body, Fault):
        pb.fault.kind = wire.fault_kind_to_pb(body.kind)
        pb.fault.decision_kind = wire.kind_to_pb(body.decision_kind)
        pb.fault.decision_number = body.decision_number
        pb.fault.faults = body.faults
    elif isinstance(body, Forfeit):
        pb.forfeit.faults = body.faults
    return pb


def events_to_pb(events: Iterable[LoggedEvent]) -> list[game_pb2.Event]:
    return [event_to_pb(e) for e in events]


def board_to_pb(board: Board) -> game_pb2.PublicState:
    pb = game_pb2.PublicState(
        game_index=board.game_index,
        turn_number=board.turn_number,
        current_seat=board.current_seat,
        deck_size=board.deck_size,
    )
    for seat in board.seats:
        pb.seats.append(
            game_pb2.SeatState(
                seat=seat.seat,
                arboretum=[
                    common_pb2.PlacedCard(card=wire.card_to_pb(c), cell=wire.cell_to_pb(cell))
                    for c, cell in seat.arboretum
                ],
                discard_pile=[wire.card_to_pb(c) for c in seat.discard_pile],
                hand_size=seat.hand_size,
                known_hand_cards=[wire.card_to_pb(c) for c in seat.known_hand_cards],
                bank_left_ms=seat.bank_left_ms,
                faults=seat.faults,
                forfeited=seat.forfeited,
            )
        )
    return pb


def view_to_pb(view: View) -> game_pb2.SeatView:
    return game_pb2.SeatView(
        seat=view.seat,
        hand=[wire.card_to_pb(c) for c in view.hand],
        board=board_to_pb(view.board),
    )


def setup_to_pb(setup: GameSetup) -> game_pb2.GameSetup:
    return wire.game_setup_to_pb(
        game_index=setup.game_index,
        game_count=setup.game_count,
        species=setup.species,
        seat_names=setup.seat_names,
        time_control=setup.time_control,
        fault_policy=setup.fault_policy,
    )


def clock_to_pb(clock: ClockState) -> common_pb2.DecisionClock:
    return wire.clock_to_pb(clock)


def outcome_to_pb(outcome: GameEnd, final_board: Board) -> game_pb2.GameResult:
    return wire.game_result_to_pb(
        outcome.result,
        game_index=outcome.game_index,
        seed=outcome.seed,
        turns=outcome.turns,
        species=outcome.species,
        seat_names=outcome.seat_names,
        faults=outcome.faults,
        final_board=board_to_pb(final_board),
    )


def _request_to_pb(req: DecisionRequest) -> bot_pb2.DecisionRequest:
    return bot_pb2.DecisionRequest(
        decision_number=req.number,
        kind=wire.kind_to_pb(req.kind),
        game_index=req.game_index,
        view=view_to_pb(req.view),
        events=events_to_pb(req.events),
        clock=clock_to_pb(req.clock),
        discard_required=req.discard_required,
        legal_sources=[wire.source_to_pb(s) for s in req.legal_sources],
        legal_cells=[wire.cell_to_pb(c) for c in req.legal_cells],
    )


def referee_message(message: object) -> bot_pb2.RefereeMessage:
    """The stream message for one of the match's messages to a seat."""
    pb = bot_pb2.RefereeMessage(protocol_version=PROTOCOL_VERSION)
    if isinstance(message, DecisionRequest):
        pb.decision_request.CopyFrom(_request_to_pb(message))
    elif isinstance(message, FaultNotice):
        pb.fault_notice.CopyFrom(wire.fault_notice_to_pb(message))
    elif isinstance(message, GameStart):
        pb.game_start.CopyFrom(
            bot_pb2.GameStart(
                setup=setup_to_pb(message.setup),
                seat=message.seat,
                view=view_to_pb(message.view),
                events=events_to_pb(message.events),
                resumed=message.resumed,
                bot_seed=message.bot_seed,
            )
        )
    elif isinstance(message, GameOver):
        pb.game_end.CopyFrom(
            bot_pb2.GameEnd(
                result=outcome_to_pb(message.game, message.final_board),
                events=events_to_pb(message.events),
            )
        )
    elif isinstance(message, MatchInfo):
        pb.match_start.CopyFrom(wire.match_start_to_pb(message))
    elif isinstance(message, MatchEnd):
        pb.match_end.CopyFrom(wire.match_end_to_pb(message))
    else:
        raise TypeError(f"not a message to a seat: {message!r}")
    return pb


def referee_bytes(item: BotMessage | bytes) -> bytes:
    """One item of a seat's outbox as the bytes of its stream message: a message of the match
    serialized (:func:`referee_message`), or bytes the match encoded already (a request)."""
    return item if type(item) is bytes else referee_message(item).SerializeToString()


# ----------------------------------------------------------------------------- match service


def match_info_to_pb(info: MatchSnapshot) -> match_pb2.MatchInfo:
    config = match_pb2.MatchConfig(
        player_count=info.players,
        game_count=info.game_count,
        species=[wire.species_to_pb(s) for s in info.species or ()],
        time_control=wire.time_control_to_pb(info.time_control),
        fault_policy=wire.fault_policy_to_pb(info.fault_policy),
        seat_names=list(info.seat_names),
        start_timeout_ms=info.start_timeout_ms,
        seat_time_controls=[wire.time_control_to_pb(c) for c in info.seat_time_controls],
    )
    if info.match_seed is not None:
        config.match_seed = info.match_seed
    pb = match_pb2.MatchInfo(
        match_id=info.match_id,
        config=config,
        status=wire.match_status_to_pb(info.status),
        results=[outcome_to_pb(o, b) for o, b in zip(info.results, info.final_boards, strict=True)],
        summary=wire.match_summary_to_pb(info.summary.games_finished, info.summary.seats),
        seats=[
            match_pb2.SeatConnection(seat=s.seat, name=s.name, connected=s.connected)
            for s in info.seats
        ],
        created_unix_ms=info.created_unix_ms,
        reason=info.reason,
    )
    if info.current_game_index is not None:
        pb.current_game_index = info.current_game_index
    return pb


def watch_message(message: object) -> match_pb2.WatchMatchResponse:
    """The spectator stream message for one of the match's public messages."""
    pb = match_pb2.WatchMatchResponse(protocol_version=PROTOCOL_VERSION)
    if isinstance(message, LoggedEvent):
        pb.event.CopyFrom(event_to_pb(message))
    elif isinstance(message, DecisionPending):
        pb.decision_pending.CopyFrom(
            match_pb2.DecisionPending(
                game_index=message.game_index,
                seat=message.seat,
                decision_number=message.number,
                kind=wire.kind_to_pb(message.kind),
                clock=clock_to_pb(message.clock),
            )
        )
    elif isinstance(message, WatchGameStart):
        pb.game_start.CopyFrom(
            match_pb2.WatchGameStart(
                setup=setup_to_pb(message.setup),
                board=board_to_pb(message.board),
                events=events_to_pb(message.events),
                in_progress=message.in_progress,
            )
        )
    elif isinstance(message, WatchGameEnd):
        pb.game_end.CopyFrom(outcome_to_pb(message.game, message.final_board))
    elif isinstance(message, MatchSnapshot):
        pb.match.CopyFrom(match_info_to_pb(message))
    elif isinstance(message, MatchEnd):
        pb.match_end.CopyFrom(wire.match_end_to_pb(message))
    else:
        raise TypeError(f"not a spectator message: {message!r}")
    return pb


def check_version(request: object, name: str) -> None:
    """Raise InvalidArgument unless ``request.protocol_version`` is 1."""
    version = getattr(request, "protocol_version", None)
    if version != PROTOCOL_VERSION:
        raise InvalidArgument(
            f"{name}.protocol_version is {version} (this referee speaks {PROTOCOL_VERSION})"
        )


_NEW_MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_new_match_id(match_id: str) -> str | None:
    """The id a client asks CreateMatch to give its match, or None for the referee to choose."""
    if not match_id:
        return None
    if not _NEW_MATCH_ID.fullmatch(match_id):
        raise InvalidArgument(
            "CreateMatchRequest.match_id is 1 to 64 characters of A-Z a-z 0-9 . _ -, starting "
            "with a letter or digit"
        )
    return match_id


def check_match_id(match_id: str, name: str) -> str:
    if not match_id:
        raise InvalidArgument(f"{name}.match_id is missing")
    if len(match_id) > 64:
        raise InvalidArgument(f"{name}.match_id is too long")
    return match_id


def match_config_from_pb(pb: match_pb2.MatchConfig, settings: Settings) -> MatchConfig:
    """A validated match configuration; absent fields take the referee's defaults."""
    where = "CreateMatchRequest.config"
    players = pb.player_count
    if players not in (2, 3, 4):
        raise InvalidArgument(f"{where}.player_count is {players} (expected 2, 3 or 4)")
    if not 1 <= pb.game_count <= settings.max_games:
        raise InvalidArgument(
            f"{where}.game_count is {pb.game_count} (expected 1 to {settings.max_games})"
        )
    seed = pb.match_seed if pb.HasField("match_seed") else secrets.randbits(64)
    if pb.game_seeds and len(pb.game_seeds) != pb.game_count:
        raise InvalidArgument(
            f"{where}.game_seeds must be empty or hold one seed per game "
            f"({plural(pb.game_count, 'game')}, got {len(pb.game_seeds)})"
        )
    species: tuple[Species, ...] | None = None
    try:
        if pb.species:
            species = tuple(
                wire.species_from_pb(v, f"{where}.species[{i}]") for i, v in enumerate(pb.species)
            )
            wanted = {2: 6, 3: 8, 4: 10}[players]
            if len(set(species)) != len(species) or len(species) != wanted:
                raise InvalidArgument(
                    f"{where}.species must be empty or {wanted} distinct species for "
                    f"{players} players (got {len(species)})"
                )
        if pb.HasField("time_control"):
            time_control = wire.time_control_from_pb(pb.time_control, f"{where}.time_control")
        else:
            time_control = TimeControl(settings.per_decision_ms, settings.bank_ms)
        if pb.HasField("fault_policy"):
            fault_policy = wire.fault_policy_from_pb(pb.fault_policy, f"{where}.fault_policy")
        else:
            fault_policy = FaultPolicy(settings.faults_to_forfeit)
    except WireError as exc:
        raise InvalidArgument(str(exc)) from None
    try:
        check_time_control(time_control)
    except ValueError as exc:
        raise InvalidArgument(f"{where}.time_control: {exc}") from None
    seat_clocks = _seat_time_controls_from_pb(pb, where)
    names = tuple(pb.seat_names)
    if names and len(names) != players:
        raise InvalidArgument(
            f"{where}.seat_names has {plural(len(names), 'name')} for {players} seats"
        )
    for i, name in enumerate(names):
        if not name or len(name) > MAX_NAME_CHARS or not name.isprintable():
            raise InvalidArgument(
                f"{where}.seat_names[{i}] must be 1 to {MAX_NAME_CHARS} printable characters"
            )
    start_timeout = pb.start_timeout_ms or settings.start_timeout_ms
    if start_timeout > MAX_START_TIMEOUT_MS:
        raise InvalidArgument(
            f"{where}.start_timeout_ms is {start_timeout} (at most {MAX_START_TIMEOUT_MS})"
        )
    return MatchConfig(
        players=players,
        match_seed=seed,
        game_count=pb.game_count,
        species=species,
        time_control=time_control,
        fault_policy=fault_policy,
        seat_names=names,
        start_timeout_ms=start_timeout,
        game_seeds=tuple(pb.game_seeds),
        seat_time_controls=seat_clocks,
    )


def _seat_time_controls_from_pb(pb: match_pb2.MatchConfig, where: str) -> tuple[TimeControl, ...]:
    """Each seat's own clock: empty, or one valid time control per seat."""
    clocks = pb.seat_time_controls
    if clocks and len(clocks) != pb.player_count:
        raise InvalidArgument(
            f"{where}.seat_time_controls must be empty or hold one time control per seat "
            f"({plural(pb.player_count, 'seat')}, got {len(clocks)})"
        )
    seat_clocks = []
    for seat, clock in enumerate(clocks):
        name = f"{where}.seat_time_controls[{seat}]"
        try:
            seat_clocks.append(check_time_control(wire.time_control_from_pb(clock, name)))
        except WireError as exc:
            raise InvalidArgument(str(exc)) from None
        except ValueError as exc:
            raise InvalidArgument(f"{name}: {exc}") from None
    return tuple(seat_clocks)
