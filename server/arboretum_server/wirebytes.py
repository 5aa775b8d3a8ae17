"""The referee's hot path on the wire: decision requests encoded straight to bytes, and answers
decoded straight from bytes.

Every decision sends a request that carries the whole board, and brings back an answer. Building
and parsing them as protobuf objects costs a message object per card, so the match keeps the
encoded pieces of its game (each seat's public state, each hand, each event; see
``game.Game``) and assembles a request by concatenation: a message's serialization is the
concatenation of its fields' encodings (key, then a varint or a length-prefixed payload). The
bytes are exactly those ``RefereeMessage.SerializeToString()`` gives (canonical field order,
proto3 defaults omitted); ``tests/server/test_referee_encoding.py`` checks that on random games.

:func:`decode_answer` reads an answer laid out the way protobuf runtimes write a well-formed one
(fields in order, nothing unknown, canonical varints, a card and cell the referee knows). Anything
else gives ``None``, and the caller reads the message with the protobuf runtime instead
(:func:`arboretum_server.edge.inbound_from_bytes`): both paths give the same result for every
input, and only the protobuf path has to explain what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arboretum import ALL_CARDS, DECK, Card, Cell, DecisionKind, Draw, Play
from arboretum_sdk import wire

from .messages import (
    Discard,
    Fault,
    FaultKind,
    Forfeit,
    LoggedEvent,
    Place,
    SecondDrawSkipped,
)
from .messages import Draw as DrawEvent
from .seats import Answer

__all__ = [
    "arboretum_fields",
    "cell_fields",
    "clock_field",
    "decision_request",
    "decode_answer",
    "event_field",
    "hand_fields",
    "known_fields",
    "placed_field",
    "seat_head",
    "seat_state_field",
    "seat_tail",
    "varint",
]

# ----------------------------------------------------------------------------- primitives


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_TABLED = 1 << 14
_VARINTS: tuple[bytes, ...] = tuple(_encode_varint(i) for i in range(_TABLED))
"""The varints of the values below ``_TABLED`` (two bytes at most)."""


def varint(value: int) -> bytes:
    """The varint encoding of a non-negative integer."""
    if value < _TABLED:
        return _VARINTS[value]
    return _encode_varint(value)


def _zigzag(value: int) -> bytes:
    """A ``sint32`` value's varint."""
    return varint(-2 * value - 1 if value < 0 else 2 * value)


def _field(key: bytes, payload: bytes) -> bytes:
    """A length-delimited field."""
    return key + varint(len(payload)) + payload


def _uint(key: bytes, value: int) -> bytes:
    """A varint field; proto3 omits a zero."""
    return key + varint(value) if value else b""


# The hot path takes the small varint fields from tables: a call to _uint() is most of what such a
# field costs. Larger values go through _uint() (decision numbers, which grow through a match, use
# the varint table).
_SMALL = 1024
_UINT1, _UINT2, _UINT3, _UINT4 = (
    tuple(_uint(key, value) for value in range(_SMALL))
    for key in (b"\x08", b"\x10", b"\x18", b"\x20")
)
"""Varint fields 1 to 4 by value."""


# ----------------------------------------------------------------------------- cards and cells

_CARD: dict[Card, bytes] = {
    card: b"\x08" + varint(card.species.index + 1) + b"\x10" + varint(card.value)
    for card in ALL_CARDS
}
"""The ``Card`` message of every card."""


def _card_fields(key: bytes) -> dict[Card, bytes]:
    return {card: _field(key, payload) for card, payload in _CARD.items()}


_CARD_1 = _card_fields(b"\x0a")  # PlacedCard/PlayEvent/DiscardEvent/PlayDecision .card
_CARD_2 = _card_fields(b"\x12")  # SeatView.hand
_CARD_3 = _card_fields(b"\x1a")  # SeatState.discard_pile, DrawEvent.card, PlayDecision.discard
_CARD_5 = _card_fields(b"\x2a")  # SeatState.known_hand_cards

_CACHE_LIMIT = 1 << 14
_CELLS: dict[tuple[int, int], bytes] = {}
"""``Cell`` messages by (x, y), filled as cells are met (a game's cells stay near the origin)."""
_CELLS_BY_PAYLOAD: dict[bytes, Cell] = {}
"""The reverse: the cells the referee has encoded, which are the cells bots answer with."""


def _cell_payload(cell: tuple[int, int]) -> bytes:
    encoded = _CELLS.get(cell)
    if encoded is None:
        x, y = cell
        encoded = (b"\x08" + _zigzag(x) if x else b"") + (b"\x10" + _zigzag(y) if y else b"")
        if len(_CELLS) < _CACHE_LIMIT:
            _CELLS[cell] = encoded
            _CELLS_BY_PAYLOAD[encoded] = Cell(x, y)
    return encoded


_PLACED: dict[tuple[Card, tuple[int, int]], bytes] = {}
"""``PlacedCard`` (and ``PlayEvent``) payloads by (card, cell): the same two fields."""


def _placed_payload(card: Card, cell: tuple[int, int]) -> bytes:
    key = (card, cell)
    encoded = _PLACED.get(key)
    if encoded is None:
        encoded = _CARD_1[card] + _field(b"\x12", _cell_payload(cell))
        if len(_PLACED) < _CACHE_LIMIT:
            _PLACED[key] = encoded
    return encoded


def placed_field(card: Card, cell: tuple[int, int]) -> bytes:
    """One card of an arboretum as a ``SeatState.arboretum`` field."""
    payload = _placed_payload(card, cell)
    return b"\x12" + varint(len(payload)) + payload


def arboretum_fields(arboretum: Iterable[tuple[Card, tuple[int, int]]]) -> bytes:
    """An arboretum as ``SeatState.arboretum`` fields (``PlacedCard`` messages), in the given
    order."""
    return b"".join([placed_field(card, cell) for card, cell in arboretum])


_HAND_BY_ID: tuple[bytes, ...] = tuple(_CARD_2[card] for card in ALL_CARDS)
"""``SeatView.hand`` fields by card id."""


def hand_fields(hand_ids: Iterable[int]) -> bytes:
    """A hand, given as card ids (``GameState.hand_ids``), as ``SeatView.hand`` fields."""
    cards = _HAND_BY_ID
    return b"".join([cards[c] for c in hand_ids])


_LEGAL_CELLS: dict[tuple[int, int], bytes] = {}


def cell_fields(cells: Iterable[tuple[int, int]]) -> bytes:
    """Cells as ``DecisionRequest.legal_cells`` fields."""
    parts = []
    for cell in cells:
        encoded = _LEGAL_CELLS.get(cell)
        if encoded is None:
            encoded = _field(b"\x4a", _cell_payload(cell))
            if len(_LEGAL_CELLS) < _CACHE_LIMIT:
                _LEGAL_CELLS[cell] = encoded
        parts.append(encoded)
    return b"".join(parts)


def _source_payload(source: int) -> bytes:
    if source == DECK:
        return b"\x0a\x00"  # DrawSource{deck: Deck{}}
    if source < 0:
        raise wire.WireError("source", f"is {source} (expected DECK or a seat number)")
    return b"\x10" + varint(source)  # a oneof member is written even when it is 0


_SOURCES: dict[int, bytes] = {s: _field(b"\x42", _source_payload(s)) for s in (DECK, 0, 1, 2, 3)}
"""``DecisionRequest.legal_sources`` fields."""

_KINDS: dict[DecisionKind, int] = {
    kind: int(wire.kind_to_pb(kind))
    for kind in (DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW, DecisionKind.PLAY)
}
_FAULT_KINDS: dict[FaultKind, int] = {kind: int(wire.fault_kind_to_pb(kind)) for kind in FaultKind}


def _kind(kind: DecisionKind) -> int:
    value = _KINDS.get(kind)
    if value is None:
        return int(wire.kind_to_pb(kind))  # raises WireError, as the protobuf path does
    return value


# ----------------------------------------------------------------------------- state and events


def seat_head(seat: int, arboretum: bytes, discard_pile: Sequence[Card]) -> bytes:
    """The first fields of a ``SeatState``: ``seat``, its arboretum (``arboretum`` from
    :func:`arboretum_fields`) and its discard pile."""
    pile = _CARD_3
    return b"".join([_uint(b"\x08", seat), arboretum, *[pile[c] for c in discard_pile]])


def known_fields(known_hand_cards: Iterable[Card]) -> bytes:
    """``SeatState.known_hand_cards`` fields."""
    known = _CARD_5
    return b"".join([known[c] for c in known_hand_cards])


def seat_tail(bank_left_ms: int, faults: int, forfeited: bool) -> bytes:
    """The last fields of a ``SeatState``."""
    return b"".join(
        [
            _uint(b"\x30", bank_left_ms),
            _uint(b"\x38", faults),
            b"\x40\x01" if forfeited else b"",
        ]
    )


def seat_state_field(head: bytes, hand_size: int, known: bytes, tail: bytes) -> bytes:
    """A ``SeatState`` as a ``PublicState.seats`` field, from its parts (:func:`seat_head`,
    :func:`known_fields`, :func:`seat_tail`)."""
    size = _UINT4[hand_size] if hand_size < _SMALL else _uint(b"\x20", hand_size)
    body = b"".join([head, size, known, tail])
    return b"\x2a" + varint(len(body)) + body


_DRAW_KIND_FIELDS: dict[DecisionKind, bytes] = {
    kind: _uint(b"\x08", _KINDS[kind])
    for kind in (DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW)
}
"""``DrawEvent.draw`` fields."""
_SOURCE_FIELDS: dict[int, bytes] = {
    s: _field(b"\x12", _source_payload(s)) for s in (DECK, 0, 1, 2, 3)
}
"""``DrawEvent.source`` fields."""
_DISCARD_BODIES: dict[Card, bytes] = {card: _field(b"\x3a", _CARD_1[card]) for card in ALL_CARDS}
"""``Event.discard`` fields."""


def _event_body(body: object) -> bytes:
    """The ``Event.kind`` field of an event body."""
    kind = type(body)
    if kind is DrawEvent:
        draw: DrawEvent = body  # type: ignore[assignment]
        payload = b"".join(
            [
                _DRAW_KIND_FIELDS.get(draw.draw) or _uint(b"\x08", _kind(draw.draw)),
                _SOURCE_FIELDS.get(draw.source) or _field(b"\x12", _source_payload(draw.source)),
                b"" if draw.card is None else _CARD_3[draw.card],
            ]
        )
        return b"\x22" + varint(len(payload)) + payload
    if kind is Place:
        place: Place = body  # type: ignore[assignment]
        payload = _placed_payload(place.card, place.cell)
        return b"\x32" + varint(len(payload)) + payload
    if kind is Discard:
        return _DISCARD_BODIES[body.card]  # type: ignore[attr-defined]
    if kind is SecondDrawSkipped:
        return b"\x2a\x00"
    if kind is Fault:
        fault: Fault = body  # type: ignore[assignment]
        payload = (
            _uint(b"\x08", _FAULT_KINDS[fault.kind])
            + _uint(b"\x10", _kind(fault.decision_kind))
            + _uint(b"\x18", fault.decision_number)
            + _uint(b"\x20", fault.faults)
        )
        return _field(b"\x42", payload)
    if kind is Forfeit:
        return _field(b"\x4a", _uint(b"\x08", body.faults))  # type: ignore[attr-defined]
    raise TypeError(f"not an event: {body!r}")


def event_field(event: LoggedEvent) -> bytes:
    """An ``Event`` as a ``DecisionRequest.events`` field (the event as given: pass
    ``event.seen_by(viewer)``)."""
    sequence, turn, seat, body = event
    small = _SMALL
    payload = b"".join(
        [
            _UINT1[sequence] if sequence < small else _uint(b"\x08", sequence),
            _UINT2[turn] if turn < small else _uint(b"\x10", turn),
            _UINT3[seat] if seat < small else _uint(b"\x18", seat),
            _event_body(body),
        ]
    )
    return b"\x2a" + varint(len(payload)) + payload


# ----------------------------------------------------------------------------- requests

_ENVELOPE = b"\x08" + varint(wire.PROTOCOL_VERSION) + b"\x22"
"""``RefereeMessage.protocol_version``, then the key of ``decision_request``."""

_CLOCKS: dict[tuple[int, int, int], bytes] = {}


def clock_field(per_decision_ms: int, bank_left_ms: int, elapsed_ms: int) -> bytes:
    """``DecisionRequest.clock``. A match has few distinct clocks (the same L, a bank that changes
    only when an answer takes longer than L, an elapsed time that is 0 unless the request is
    sent again), so they are kept once encoded."""
    key = (per_decision_ms, bank_left_ms, elapsed_ms)
    encoded = _CLOCKS.get(key)
    if encoded is None:
        clock = b"".join(
            [
                _uint(b"\x08", per_decision_ms),
                _uint(b"\x10", bank_left_ms),
                _uint(b"\x18", elapsed_ms),
            ]
        )
        encoded = _field(b"\x32", clock)
        if len(_CLOCKS) < _CACHE_LIMIT:
            _CLOCKS[key] = encoded
    return encoded


_KIND_FIELDS: dict[DecisionKind, bytes] = {kind: b"\x10" + varint(v) for kind, v in _KINDS.items()}


def decision_request(
    number: int,
    kind: DecisionKind,
    game_index: int,
    seat: int,
    hand: bytes,
    turn_number: int,
    current_seat: int,
    deck_size: int,
    seats: Iterable[bytes],
    events: bytes,
    clock: bytes,
    discard_required: bool,
    legal_sources: Iterable[int],
    legal_cells: bytes,
) -> bytes:
    """A whole ``RefereeMessage`` carrying a ``DecisionRequest``, from the values of its fields
    (in field order). ``hand``, ``seats``, ``events``, ``clock`` and ``legal_cells`` are encoded
    fields (:func:`hand_fields`, :func:`seat_state_field`, :func:`event_field`,
    :func:`clock_field`, :func:`cell_fields`)."""
    small, table, tabled = _SMALL, _VARINTS, _TABLED
    game = _UINT1[game_index] if game_index < small else _uint(b"\x08", game_index)
    board = b"".join(
        [
            game,
            _UINT2[turn_number] if turn_number < small else _uint(b"\x10", turn_number),
            _UINT3[current_seat] if current_seat < small else _uint(b"\x18", current_seat),
            _UINT4[deck_size] if deck_size < small else _uint(b"\x20", deck_size),
            *seats,
        ]
    )
    size = len(board)
    view = b"".join(
        [
            _UINT1[seat] if seat < small else _uint(b"\x08", seat),
            hand,
            b"\x1a",
            table[size] if size < tabled else varint(size),
            board,
        ]
    )
    size = len(view)
    sources = _SOURCES
    request = b"".join(
        [
            b"\x08" + table[number] if 0 < number < tabled else _uint(b"\x08", number),
            _KIND_FIELDS.get(kind) or b"\x10" + varint(_kind(kind)),
            _UINT3[game_index] if game_index < small else _uint(b"\x18", game_index),
            b"\x22",
            table[size] if size < tabled else varint(size),
            view,
            events,
            clock,
            b"\x38\x01" if discard_required else b"",
            *[sources.get(s) or _field(b"\x42", _source_payload(s)) for s in legal_sources],
            legal_cells,
        ]
    )
    size = len(request)
    return _ENVELOPE + (table[size] if size < tabled else varint(size)) + request


# ----------------------------------------------------------------------------- answers

_DRAWS: dict[bytes, tuple[DecisionKind, Draw]] = {}
"""``Decision`` payloads of the draws (either draw, from the deck or a seat's pile)."""
for _key, _draw_kind in ((b"\x0a", DecisionKind.FIRST_DRAW), (b"\x12", DecisionKind.SECOND_DRAW)):
    for _source in (DECK, 0, 1, 2, 3):
        _DRAWS[_field(_key, _source_payload(_source))] = (_draw_kind, Draw(_source))

_PLAYED_CARDS: dict[bytes, Card] = {encoded: card for card, encoded in _CARD_1.items()}
_DISCARDS: dict[bytes, Card] = {encoded: card for card, encoded in _CARD_3.items()}
_ANSWER_HEAD = b"\x08\x01\x12"


def decode_answer(data: bytes) -> Answer | None:
    """A ``BotMessage`` with a well-formed answer, laid out canonically, as the match's
    :class:`Answer`; ``None`` for anything else (see the module's docstring)."""
    # BotMessage: protocol_version = 1, then answer (field 2) holding the rest of the message
    # (at most 127 bytes, so that every length here is one byte). DecisionAnswer: decision_number
    # (field 1), then decision (field 2).
    end = len(data)
    if end > 131 or end < 8 or data[3] != end - 4 or data[4] != 0x08 or data[:3] != _ANSWER_HEAD:
        return None
    # The decision number: a minimal varint (its last byte is not 0), from 1 to 2**63 - 1.
    number = data[5]
    i = 6
    if number >= 0x80:
        number &= 0x7F
        shift = 7
        while True:
            if i >= end or shift > 56:
                return None
            byte = data[i]
            i += 1
            number |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        if byte == 0:
            return None
    elif number == 0:
        return None
    if i + 2 > end or data[i] != 0x12 or data[i + 1] != end - i - 2:
        return None
    decision = data[i + 2 :]
    draw = _DRAWS.get(decision)
    if draw is not None:
        return Answer(number, draw[0], draw[1])
    # Decision.play (field 3): PlayDecision{card, cell, discard?}.
    size = end - i - 2
    if size < 10 or decision[0] != 0x1A or decision[1] != size - 2 or decision[8] != 0x12:
        return None
    card = _PLAYED_CARDS.get(decision[2:8])
    cell_end = 10 + decision[9]
    cell = _CELLS_BY_PAYLOAD.get(decision[10:cell_end])
    if card is None or cell is None or cell_end > size:
        return None
    if cell_end == size:
        return Answer(number, DecisionKind.PLAY, Play(card, cell, None))
    discard = _DISCARDS.get(decision[cell_end:])
    if discard is None:
        return None
    return Answer(number, DecisionKind.PLAY, Play(card, cell, discard))
