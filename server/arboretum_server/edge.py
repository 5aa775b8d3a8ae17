"""The protocol edge of the referee: its own values to protobuf messages, and back.

Values of the engine (cards, cells, decisions, results, ...) are converted by the SDK's one
conversion module, :mod:`arboretum_sdk.wire`; this module only assembles the referee's messages
(:mod:`arboretum_server.messages`) from those pieces, and reads what clients send: a bot's stream
messages (never raising: anything wrong becomes a fault or an ``InvalidMessage``) and the match
service's requests (raising :class:`~arboretum_server.errors.InvalidArgument`).

The one exception to "messages are built with protobuf objects" is the hottest message, a decision
request: :func:`referee_message_bytes` encodes it straight to the wire format from cached encodings
of cards, cells and unchanged seats (the same bytes the protobuf runtime produces).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from arboretum import ALL_CARDS, DECK, Card, Cell, DecisionKind, Species
from arboretum_proto.v1 import bot_pb2, common_pb2, game_pb2, match_pb2
from arboretum_sdk import wire
from arboretum_sdk.wire import WireError

from .clock import check_time_control
from .config import Settings
from .errors import InvalidArgument
from .match import MatchConfig
from .messages import (
    Board,
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
    GameOutcome,
    GameSetup,
    GameStart,
    LoggedEvent,
    MatchEnd,
    MatchInfo,
    MatchStart,
    Place,
    SeatPublic,
    SecondDrawSkipped,
    TimeControl,
    View,
    WatchGameStart,
)
from .seats import Answer, Inbound, InvalidMessage, MalformedAnswer

__all__ = [
    "PROTOCOL_VERSION",
    "Undecodable",
    "check_version",
    "decode_bot_message",
    "inbound_from_pb",
    "match_config_from_pb",
    "match_info_to_pb",
    "referee_message",
    "referee_message_bytes",
    "watch_message",
]

PROTOCOL_VERSION = wire.PROTOCOL_VERSION
MAX_NAME_CHARS = 64
MAX_START_TIMEOUT_MS = 3_600_000
MAX_REASON_CHARS = 500


# ----------------------------------------------------------------------------- bot stream in


@dataclass(frozen=True, slots=True)
class Undecodable:
    """A stream message whose bytes are not a ``BotMessage``."""

    reason: str


def decode_bot_message(data: bytes) -> bot_pb2.BotMessage | Undecodable:
    """The ``Play`` request deserializer: it never raises, so a garbage message is a fault."""
    try:
        return bot_pb2.BotMessage.FromString(data)
    except Exception as exc:  # the protobuf runtime raises DecodeError and others
        return Undecodable(f"the message does not decode as a BotMessage ({type(exc).__name__})")


def inbound_from_pb(message: bot_pb2.BotMessage | Undecodable) -> Inbound:
    """What a bot's stream message means to the match."""
    if isinstance(message, Undecodable):
        return InvalidMessage(message.reason)
    try:
        which = wire.check_protocol_version(message, "BotMessage")
    except WireError as exc:
        return InvalidMessage(str(exc))
    if which != "answer":
        return InvalidMessage(f"BotMessage.{which} is not a message a bot may send")
    answer = message.answer
    number = answer.decision_number
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


def outcome_to_pb(outcome: GameOutcome) -> game_pb2.GameResult:
    return wire.game_result_to_pb(
        outcome.result,
        game_index=outcome.game_index,
        seed=outcome.seed,
        turns=outcome.turns,
        species=outcome.species,
        seat_names=outcome.seat_names,
        faults=outcome.faults,
        final_board=board_to_pb(outcome.final_board),
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
            )
        )
    elif isinstance(message, GameEnd):
        pb.game_end.CopyFrom(
            bot_pb2.GameEnd(
                result=outcome_to_pb(message.outcome), events=events_to_pb(message.events)
            )
        )
    elif isinstance(message, MatchStart):
        pb.match_start.CopyFrom(wire.match_start_to_pb(message))
    elif isinstance(message, MatchEnd):
        pb.match_end.CopyFrom(wire.match_end_to_pb(message))
    else:
        raise TypeError(f"not a message to a seat: {message!r}")
    return pb


# ----------------------------------------------------------------------------- fast encoding
#
# A decision request is the referee's hottest message: one per decision, each carrying the whole
# board. Building it as protobuf objects costs a message object per card; instead it is encoded
# here directly to the wire format, from cached encodings of every card and cell. A message's
# serialization is the concatenation of its fields' encodings (tag, then varint or length-prefixed
# bytes), so these functions emit exactly the bytes ``RefereeMessage.SerializeToString()`` would
# (canonical field order, proto3 defaults omitted); tests/server checks that they are identical.


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL_VARINTS: tuple[bytes, ...] = tuple(_encode_varint(i) for i in range(1 << 14))


def _varint(value: int) -> bytes:
    """The varint encoding of a non-negative integer."""
    if value < 16384:
        return _SMALL_VARINTS[value]
    return _encode_varint(value)


def _zigzag(value: int) -> bytes:
    """A ``sint32`` value's varint."""
    return _varint(-2 * value - 1 if value < 0 else 2 * value)


def _len_field(tag: bytes, payload: bytes) -> bytes:
    """A length-delimited field: ``tag`` is its key byte(s)."""
    return tag + _varint(len(payload)) + payload


def _uint_field(tag: bytes, value: int) -> bytes:
    """A varint field; proto3 omits a zero."""
    return tag + _varint(value) if value else b""


def _card_payload(card: Card) -> bytes:
    return b"\x08" + _varint(card.species.index + 1) + b"\x10" + _varint(card.value)


_CARDS: dict[Card, bytes] = {card: _card_payload(card) for card in ALL_CARDS}
"""The ``Card`` message of every card."""


def _card_fields(tag: bytes) -> dict[Card, bytes]:
    """Every card as a field with key ``tag``."""
    return {card: _len_field(tag, payload) for card, payload in _CARDS.items()}


_CARD_F1 = _card_fields(b"\x0a")  # PlacedCard.card, PlayEvent.card, DiscardEvent.card
_CARD_F2 = _card_fields(b"\x12")  # SeatView.hand
_CARD_F3 = _card_fields(b"\x1a")  # SeatState.discard_pile, DrawEvent.card
_CARD_F5 = _card_fields(b"\x2a")  # SeatState.known_hand_cards

_CELL_CACHE_LIMIT = 1 << 14
_CELLS: dict[tuple[int, int], bytes] = {}
"""``Cell`` messages by (x, y), filled as cells are met (a game's cells stay near the origin)."""


def _cell_payload(cell: tuple[int, int]) -> bytes:
    encoded = _CELLS.get(cell)
    if encoded is None:
        x, y = cell
        encoded = (b"\x08" + _zigzag(x) if x else b"") + (b"\x10" + _zigzag(y) if y else b"")
        if len(_CELLS) < _CELL_CACHE_LIMIT:
            _CELLS[cell] = encoded
    return encoded


def _placed_card(card: Card, cell: tuple[int, int]) -> bytes:
    """A ``PlacedCard`` as a field 2 of ``SeatState`` (its arboretum)."""
    payload = _CARD_F1[card] + _len_field(b"\x12", _cell_payload(cell))
    return _len_field(b"\x12", payload)


_PLACED: dict[tuple[Card, tuple[int, int]], bytes] = {}


def _placed_field(card: Card, cell: tuple[int, int]) -> bytes:
    key = (card, cell)
    encoded = _PLACED.get(key)
    if encoded is None:
        encoded = _placed_card(card, cell)
        if len(_PLACED) < _CELL_CACHE_LIMIT:
            _PLACED[key] = encoded
    return encoded


def _arboretum_fields(arboretum: tuple[tuple[Card, Cell], ...]) -> bytes:
    cached = _ARBORETUMS.get(id(arboretum))
    if cached is not None and cached[0] is arboretum:
        return cached[1]
    encoded = b"".join([_placed_field(card, cell) for card, cell in arboretum])
    if len(_ARBORETUMS) >= _SEAT_CACHE_LIMIT:
        _ARBORETUMS.clear()
    _ARBORETUMS[id(arboretum)] = (arboretum, encoded)
    return encoded


def _seat_state(seat: SeatPublic) -> bytes:
    parts = [_uint_field(b"\x08", seat.seat), _arboretum_fields(seat.arboretum)]
    parts += [_CARD_F3[c] for c in seat.discard_pile]
    parts.append(_uint_field(b"\x20", seat.hand_size))
    parts += [_CARD_F5[c] for c in seat.known_hand_cards]
    parts.append(_uint_field(b"\x30", seat.bank_left_ms))
    parts.append(_uint_field(b"\x38", seat.faults))
    if seat.forfeited:
        parts.append(b"\x40\x01")
    return b"".join(parts)


_SEAT_CACHE_LIMIT = 8192
_SEATS: dict[int, tuple[SeatPublic, bytes]] = {}
"""Encoded ``SeatState`` fields by ``id`` of the (immutable) :class:`SeatPublic` they encode. The
match reuses a seat's ``SeatPublic`` object while that seat's public state stays the same (see
``_Game.board``), so most seats of a board are encoded once for many requests. Each entry keeps
its object alive, so an ``id`` cannot be reused while cached; the cache is emptied when full."""
_ARBORETUMS: dict[int, tuple[tuple[tuple[Card, Cell], ...], bytes]] = {}
"""Encoded arboretums (``SeatState.arboretum`` fields) the same way: an arboretum tuple is reused
until its seat plays a card."""


def _seat_field(seat: SeatPublic) -> bytes:
    cached = _SEATS.get(id(seat))
    if cached is not None and cached[0] is seat:
        return cached[1]
    encoded = _len_field(b"\x2a", _seat_state(seat))
    if len(_SEATS) >= _SEAT_CACHE_LIMIT:
        _SEATS.clear()
    _SEATS[id(seat)] = (seat, encoded)
    return encoded


def _board_bytes(board: Board) -> bytes:
    """A ``PublicState`` message."""
    parts = [
        _uint_field(b"\x08", board.game_index),
        _uint_field(b"\x10", board.turn_number),
        _uint_field(b"\x18", board.current_seat),
        _uint_field(b"\x20", board.deck_size),
    ]
    parts += [_seat_field(seat) for seat in board.seats]
    return b"".join(parts)


def _view_bytes(view: View) -> bytes:
    """A ``SeatView`` message."""
    parts = [_uint_field(b"\x08", view.seat)]
    parts += [_CARD_F2[c] for c in view.hand]
    parts.append(_len_field(b"\x1a", _board_bytes(view.board)))
    return b"".join(parts)


_DECK_SOURCE = b"\x0a\x00"  # DrawSource{deck: Deck{}}


def _source_payload(source: int) -> bytes:
    if source == DECK:
        return _DECK_SOURCE
    if source < 0:
        raise WireError("source", f"is {source} (expected DECK or a seat number)")
    return b"\x10" + _varint(source)


_KIND_VALUES: dict[DecisionKind, int] = {
    DecisionKind.FIRST_DRAW: common_pb2.DECISION_KIND_FIRST_DRAW,
    DecisionKind.SECOND_DRAW: common_pb2.DECISION_KIND_SECOND_DRAW,
    DecisionKind.PLAY: common_pb2.DECISION_KIND_PLAY,
}


def _kind_value(kind: DecisionKind) -> int:
    value = _KIND_VALUES.get(kind)
    if value is None:
        return int(wire.kind_to_pb(kind))  # raises WireError, as the protobuf path does
    return value


def _event_bytes(event: LoggedEvent) -> bytes:
    """An ``Event`` message."""
    head = (
        _uint_field(b"\x08", event.sequence)
        + _uint_field(b"\x10", event.turn_number)
        + _uint_field(b"\x18", event.seat)
    )
    body = event.body
    if isinstance(body, Draw):
        payload = _uint_field(b"\x08", _kind_value(body.draw)) + _len_field(
            b"\x12", _source_payload(body.source)
        )
        if body.card is not None:
            payload += _CARD_F3[body.card]
        return head + _len_field(b"\x22", payload)
    if isinstance(body, Place):
        payload = _CARD_F1[body.card] + _len_field(b"\x12", _cell_payload(body.cell))
        return head + _len_field(b"\x32", payload)
    if isinstance(body, Discard):
        return head + _len_field(b"\x3a", _CARD_F1[body.card])
    if isinstance(body, SecondDrawSkipped):
        return head + b"\x2a\x00"
    # Fault and Forfeit events are rare: the protobuf path encodes them.
    return event_to_pb(event).SerializeToString()


def _request_bytes(req: DecisionRequest) -> bytes:
    """A ``DecisionRequest`` message."""
    clock = req.clock
    clock_payload = (
        _uint_field(b"\x08", clock.per_decision_ms)
        + _uint_field(b"\x10", clock.bank_left_ms)
        + _uint_field(b"\x18", clock.elapsed_ms)
    )
    parts = [
        _uint_field(b"\x08", req.number),
        _uint_field(b"\x10", _kind_value(req.kind)),
        _uint_field(b"\x18", req.game_index),
        _len_field(b"\x22", _view_bytes(req.view)),
    ]
    parts += [_len_field(b"\x2a", _event_bytes(e)) for e in req.events]
    parts.append(_len_field(b"\x32", clock_payload))
    if req.discard_required:
        parts.append(b"\x38\x01")
    parts += [_len_field(b"\x42", _source_payload(s)) for s in req.legal_sources]
    parts += [_len_field(b"\x4a", _cell_payload(c)) for c in req.legal_cells]
    return b"".join(parts)


_ENVELOPE = _uint_field(b"\x08", PROTOCOL_VERSION)


def referee_message_bytes(message: object) -> bytes:
    """The serialized stream message for one of the match's messages to a seat: the same bytes as
    ``referee_message(message).SerializeToString()``, built faster for decision requests."""
    if isinstance(message, DecisionRequest):
        return _ENVELOPE + _len_field(b"\x22", _request_bytes(message))
    return referee_message(message).SerializeToString()


# ----------------------------------------------------------------------------- match service


def match_info_to_pb(info: MatchInfo) -> match_pb2.MatchInfo:
    config = match_pb2.MatchConfig(
        player_count=info.players,
        game_count=info.game_count,
        species=[wire.species_to_pb(s) for s in info.species or ()],
        time_control=wire.time_control_to_pb(info.time_control),
        fault_policy=wire.fault_policy_to_pb(info.fault_policy),
        seat_names=list(info.seat_names),
        start_timeout_ms=info.start_timeout_ms,
    )
    if info.match_seed is not None:
        config.match_seed = info.match_seed
    pb = match_pb2.MatchInfo(
        match_id=info.match_id,
        config=config,
        status=wire.match_status_to_pb(info.status),
        results=[outcome_to_pb(o) for o in info.results],
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
    elif isinstance(message, GameOutcome):
        pb.game_end.CopyFrom(outcome_to_pb(message))
    elif isinstance(message, MatchInfo):
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
    names = tuple(pb.seat_names)
    if names and len(names) != players:
        raise InvalidArgument(f"{where}.seat_names has {len(names)} names for {players} seats")
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
    )
