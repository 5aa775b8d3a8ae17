"""The one conversion module between the engine's objects and the protobuf messages of protocol v1.

Both the referee and the bot client use it; nothing else in the project touches protobuf. Every
``*_to_pb`` takes engine (or :mod:`arboretum_sdk.info`) objects and builds a message; every
``*_from_pb`` validates strictly and raises :class:`WireError` naming the field, such as
``decision.play.cell is missing`` or ``view.hand[2].value is 9 (expected 1 to 8)``. A message that
decodes is well-formed; whether a decision is *legal* is the engine's business
(:meth:`arboretum.GameState.apply`), so "malformed" and "illegal" stay distinct faults.

Mapping notes (decisions taken here, documented for both sides):

- ``Species``: protobuf value = ``Species.index + 1`` (0 is ``SPECIES_UNSPECIFIED``).
- Draw source: ``arboretum.DECK`` (-1) is ``DrawSource.deck``; a seat number is ``discard_seat``.
- ``DecisionKind.GAME_OVER`` has no protobuf value; encoding it raises :class:`WireError`.
- ``SeatView``: the protobuf view lacks the species in play (they are in ``GameSetup``), the
  decision kind and ``discard_required`` (they are in the request). :func:`seat_view_from_pb` takes
  the species, *infers* the kind and ``discard_required`` from the board (the current seat's hand
  size: 7 = first draw, 8 = second draw, or a play without discard when no source is left,
  9 = play; 7 with an empty deck = game over), and checks them against the request's values
  when given. ``last_turn`` is ``deck_size == 0``. ``turn_number`` is the engine's ``turn + 1``.
- Known hand cards: the engine keeps them as a set and sends them sorted by card id.
- Events: one engine event may become several protobuf events (:func:`event_to_pb`):
  ``DrawEvent`` -> ``draw`` (which draw of the turn, first or second, must be given);
  ``PlayEvent`` with a discard -> ``play`` then ``discard``; ``PlayEvent`` without one (the second
  draw was skipped) -> ``second_draw_skipped`` then ``play``, the protocol's order within a turn;
  ``ForfeitEvent`` -> ``forfeit``. Fault events are referee data: :meth:`EventEncoder.fault` builds
  them and :class:`EventDecoder` skips them (they have no engine type). :class:`EventEncoder`
  numbers ``sequence`` and ``turn_number`` from the engine's event stream; :func:`redact_event`
  hides a deck card from everyone but its drawer.
- ``GameResult``: ``eight_cancelled`` is derived from the revealed hands when encoding, and not kept
  when decoding (the engine's result does not store it). Per-seat names, faults, the seed, the turn
  count and the final board are referee data, given as keyword arguments.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar, cast

from arboretum import (
    DECK,
    HAND_SIZE,
    SPECIES_PER_PLAYER_COUNT,
    Arboretum,
    Card,
    Cell,
    Decision,
    DecisionKind,
    Draw,
    DrawEvent,
    Event,
    ForfeitEvent,
    GameResult,
    PathScore,
    Play,
    PlayEvent,
    SeatScore,
    SeatView,
    Species,
    SpeciesScore,
)
from arboretum_proto.v1 import bot_pb2, common_pb2, game_pb2

from .errors import SdkError
from .info import (
    Clock,
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    SeatSummary,
    TimeControl,
)

__all__ = [
    "PROTOCOL_VERSION",
    "EventDecoder",
    "EventEncoder",
    "WireError",
    "answer_to_pb",
    "card_from_pb",
    "card_to_pb",
    "cell_from_pb",
    "cell_to_pb",
    "check_protocol_version",
    "clock_from_pb",
    "clock_to_pb",
    "decision_from_pb",
    "decision_to_pb",
    "event_to_pb",
    "events_from_pb",
    "fault_kind_from_pb",
    "fault_kind_to_pb",
    "fault_notice_from_pb",
    "fault_notice_to_pb",
    "fault_policy_from_pb",
    "fault_policy_to_pb",
    "game_end_from_pb",
    "game_result_from_pb",
    "game_result_to_pb",
    "game_setup_to_pb",
    "game_start_from_pb",
    "kind_from_pb",
    "kind_to_pb",
    "match_end_from_pb",
    "match_end_to_pb",
    "match_start_from_pb",
    "match_start_to_pb",
    "match_status_from_pb",
    "match_status_to_pb",
    "match_summary_to_pb",
    "public_state_to_pb",
    "redact_event",
    "seat_view_from_pb",
    "seat_view_to_pb",
    "source_from_pb",
    "source_to_pb",
    "species_from_pb",
    "species_to_pb",
    "time_control_from_pb",
    "time_control_to_pb",
]

_E = TypeVar("_E")

PROTOCOL_VERSION = 1
"""The protocol version this module speaks; every top-level message carries it."""

_LIMIT = (1 << 15) - 1  # the engine's packed-cell range; no real game comes near it


class WireError(SdkError, ValueError):
    """A malformed or incomplete protobuf message. ``field`` names the offending field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field} {problem}")


def _missing(field: str) -> WireError:
    return WireError(field, "is missing")


# --------------------------------------------------------------------------- enums


def species_to_pb(species: Species) -> common_pb2.Species:
    return cast(common_pb2.Species, species.index + 1)


def species_from_pb(value: int, field: str = "species") -> Species:
    if value == common_pb2.SPECIES_UNSPECIFIED:
        raise WireError(field, "is SPECIES_UNSPECIFIED")
    if not 1 <= value <= 10:
        raise WireError(field, f"has unknown species value {value}")
    return Species.from_index(value - 1)


_KIND_TO_PB: dict[DecisionKind, common_pb2.DecisionKind] = {
    DecisionKind.FIRST_DRAW: common_pb2.DECISION_KIND_FIRST_DRAW,
    DecisionKind.SECOND_DRAW: common_pb2.DECISION_KIND_SECOND_DRAW,
    DecisionKind.PLAY: common_pb2.DECISION_KIND_PLAY,
}
_KIND_FROM_PB: dict[int, DecisionKind] = {v: k for k, v in _KIND_TO_PB.items()}


def kind_to_pb(kind: DecisionKind) -> common_pb2.DecisionKind:
    try:
        return _KIND_TO_PB[kind]
    except KeyError:
        raise WireError("kind", f"{kind.value!r} has no protobuf value") from None


def _enum_from_pb(value: int, table: Mapping[int, _E], field: str, enum: str, what: str) -> _E:
    """Look ``value`` up in ``table``; 0 (``<enum>_UNSPECIFIED``) and unknown values are errors."""
    if value == 0:
        raise WireError(field, f"is {enum}_UNSPECIFIED")
    try:
        return table[value]
    except KeyError:
        raise WireError(field, f"has unknown {what} value {value}") from None


def kind_from_pb(value: int, field: str = "kind") -> DecisionKind:
    return _enum_from_pb(value, _KIND_FROM_PB, field, "DECISION_KIND", "decision kind")


_FAULT_TO_PB: dict[FaultKind, common_pb2.FaultKind] = {
    FaultKind.TIMEOUT: common_pb2.FAULT_KIND_TIMEOUT,
    FaultKind.CRASH: common_pb2.FAULT_KIND_CRASH,
    FaultKind.MALFORMED: common_pb2.FAULT_KIND_MALFORMED,
    FaultKind.ILLEGAL: common_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.DISCONNECT: common_pb2.FAULT_KIND_DISCONNECT,
}
_FAULT_FROM_PB: dict[int, FaultKind] = {v: k for k, v in _FAULT_TO_PB.items()}


def fault_kind_to_pb(kind: FaultKind) -> common_pb2.FaultKind:
    return _FAULT_TO_PB[kind]


def fault_kind_from_pb(value: int, field: str = "kind") -> FaultKind:
    return _enum_from_pb(value, _FAULT_FROM_PB, field, "FAULT_KIND", "fault kind")


_STATUS_TO_PB: dict[MatchStatus, common_pb2.MatchStatus] = {
    MatchStatus.WAITING: common_pb2.MATCH_STATUS_WAITING,
    MatchStatus.RUNNING: common_pb2.MATCH_STATUS_RUNNING,
    MatchStatus.FINISHED: common_pb2.MATCH_STATUS_FINISHED,
    MatchStatus.CANCELLED: common_pb2.MATCH_STATUS_CANCELLED,
    MatchStatus.FAILED: common_pb2.MATCH_STATUS_FAILED,
}
_STATUS_FROM_PB: dict[int, MatchStatus] = {v: k for k, v in _STATUS_TO_PB.items()}


def match_status_to_pb(status: MatchStatus) -> common_pb2.MatchStatus:
    return _STATUS_TO_PB[status]


def match_status_from_pb(value: int, field: str = "status") -> MatchStatus:
    return _enum_from_pb(value, _STATUS_FROM_PB, field, "MATCH_STATUS", "match status")


# --------------------------------------------------------------------------- cards, cells, sources


def card_to_pb(card: Card) -> common_pb2.Card:
    return common_pb2.Card(species=species_to_pb(card.species), value=card.value)


def card_from_pb(pb: common_pb2.Card, field: str = "card") -> Card:
    card = _PB_CARDS.get((pb.species, pb.value))  # a valid card is one lookup
    if card is not None:
        return card
    species = species_from_pb(pb.species, f"{field}.species")
    if not 1 <= pb.value <= 8:
        raise WireError(f"{field}.value", f"is {pb.value} (expected 1 to 8)")
    return Card(species, pb.value)


def cell_to_pb(cell: Cell) -> common_pb2.Cell:
    return common_pb2.Cell(x=cell.x, y=cell.y)


def cell_from_pb(pb: common_pb2.Cell, field: str = "cell") -> Cell:
    return Cell(pb.x, pb.y)


def source_to_pb(source: int) -> common_pb2.DrawSource:
    if source == DECK:
        return common_pb2.DrawSource(deck=common_pb2.Deck())
    if source < 0:
        raise WireError("source", f"is {source} (expected DECK or a seat number)")
    return common_pb2.DrawSource(discard_seat=source)


def source_from_pb(pb: common_pb2.DrawSource, field: str = "source") -> int:
    which = pb.WhichOneof("source")
    if which is None:
        raise WireError(field, "is missing (set deck or discard_seat)")
    if which == "deck":
        return DECK
    return int(pb.discard_seat)


def _placed_to_pb(cell: Cell, card: Card) -> common_pb2.PlacedCard:
    return common_pb2.PlacedCard(card=card_to_pb(card), cell=cell_to_pb(cell))


def _placed_from_pb(pb: common_pb2.PlacedCard, field: str) -> tuple[Cell, Card]:
    if not pb.HasField("card"):
        raise _missing(f"{field}.card")
    if not pb.HasField("cell"):
        raise _missing(f"{field}.cell")
    return cell_from_pb(pb.cell, f"{field}.cell"), card_from_pb(pb.card, f"{field}.card")


# --------------------------------------------------------------------------- decisions

_DRAW_FIELDS = {DecisionKind.FIRST_DRAW: "first_draw", DecisionKind.SECOND_DRAW: "second_draw"}


def decision_to_pb(decision: Decision, kind: DecisionKind) -> common_pb2.Decision:
    """Encode ``decision`` as the answer to a decision of ``kind``.

    Raises :class:`WireError` when the decision's type does not fit the kind (a Draw
    for a play, ...).
    """
    if kind is DecisionKind.PLAY:
        if not isinstance(decision, Play):
            raise WireError("decision", f"must be a Play for a play decision, got {decision!r}")
        if not isinstance(decision.card, Card) or not isinstance(decision.cell, tuple):
            raise WireError("decision", f"is not a Play of a Card at a Cell: {decision!r}")
        play = common_pb2.PlayDecision(
            card=card_to_pb(decision.card),
            cell=common_pb2.Cell(x=decision.cell[0], y=decision.cell[1]),
        )
        if decision.discard is not None:
            if not isinstance(decision.discard, Card):
                raise WireError("decision.discard", f"is not a Card: {decision.discard!r}")
            play.discard.CopyFrom(card_to_pb(decision.discard))
        return common_pb2.Decision(play=play)
    if kind in _DRAW_FIELDS:
        if not isinstance(decision, Draw) or type(decision.source) is not int:
            raise WireError(
                "decision", f"must be a Draw for a {kind.value} decision, got {decision!r}"
            )
        msg = common_pb2.Decision()
        getattr(msg, _DRAW_FIELDS[kind]).CopyFrom(source_to_pb(decision.source))
        return msg
    raise WireError("kind", f"{kind.value!r} is not a decision kind that can be answered")


def decision_from_pb(
    pb: common_pb2.Decision,
    kind: DecisionKind,
    *,
    discard_required: bool | None = None,
    field: str = "decision",
) -> Decision:
    """Decode the answer to a decision of ``kind``.

    Raises :class:`WireError` for a missing or wrong oneof, a missing card or cell, an unknown
    species or a value outside 1..8, and (when ``discard_required`` is given) a discard present or
    absent against it. Seat numbers and cells are not range-checked here: an empty or missing pile
    or a bad cell is an *illegal* decision, for the engine to reject.
    """
    which = pb.WhichOneof("kind")
    if which is None:
        raise WireError(field, "is missing (set first_draw, second_draw or play)")
    expected = "play" if kind is DecisionKind.PLAY else _DRAW_FIELDS.get(kind)
    if expected is None:
        raise WireError("kind", f"{kind.value!r} is not a decision kind that can be answered")
    if which != expected:
        raise WireError(
            f"{field}.{which}", f"answers a {kind.value} decision (expected {expected})"
        )
    if which == "play":
        play = pb.play
        if not play.HasField("card"):
            raise _missing(f"{field}.play.card")
        if not play.HasField("cell"):
            raise _missing(f"{field}.play.cell")
        card = card_from_pb(play.card, f"{field}.play.card")
        cell = cell_from_pb(play.cell, f"{field}.play.cell")
        discard = None
        if play.HasField("discard"):
            if discard_required is False:
                raise WireError(
                    f"{field}.play.discard",
                    "is set but no discard is allowed (second draw skipped)",
                )
            discard = card_from_pb(play.discard, f"{field}.play.discard")
        elif discard_required:
            raise _missing(f"{field}.play.discard")
        return Play(card, cell, discard)
    return Draw(source_from_pb(getattr(pb, which), f"{field}.{which}"))


def answer_to_pb(
    decision_number: int, decision: Decision, kind: DecisionKind
) -> bot_pb2.BotMessage:
    """The bot's whole message answering decision ``decision_number`` of ``kind``."""
    return bot_pb2.BotMessage(
        protocol_version=PROTOCOL_VERSION,
        answer=bot_pb2.DecisionAnswer(
            decision_number=decision_number, decision=decision_to_pb(decision, kind)
        ),
    )


def check_protocol_version(
    msg: bot_pb2.BotMessage | bot_pb2.RefereeMessage, field: str = "message"
) -> str:
    """Check a stream message's envelope: ``protocol_version == 1`` and a ``kind`` set.

    Returns the name of the kind set (``"answer"``, ``"decision_request"``, ...).
    """
    if msg.protocol_version != PROTOCOL_VERSION:
        raise WireError(
            f"{field}.protocol_version", f"is {msg.protocol_version} (expected {PROTOCOL_VERSION})"
        )
    which = msg.WhichOneof("kind")
    if which is None:
        raise WireError(f"{field}.kind", "is missing")
    return which


# --------------------------------------------------------------------------- clocks and policies


def time_control_to_pb(tc: TimeControl) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(per_decision_ms=tc.per_decision_ms, bank_ms=tc.bank_ms)


def time_control_from_pb(
    pb: common_pb2.TimeControl | None, field: str = "time_control"
) -> TimeControl:
    """Decode a time control; ``None`` (an absent field, where allowed) gives the defaults."""
    if pb is None:
        return TimeControl()
    if pb.per_decision_ms <= 0:
        raise WireError(f"{field}.per_decision_ms", "must be > 0")
    return TimeControl(pb.per_decision_ms, pb.bank_ms)


def fault_policy_to_pb(policy: FaultPolicy) -> common_pb2.FaultPolicy:
    return common_pb2.FaultPolicy(faults_to_forfeit=policy.faults_to_forfeit)


def fault_policy_from_pb(
    pb: common_pb2.FaultPolicy | None, field: str = "fault_policy"
) -> FaultPolicy:
    """Decode a fault policy; ``None`` (an absent field, where allowed) gives the default."""
    if pb is None:
        return FaultPolicy()
    if pb.faults_to_forfeit < 1:
        raise WireError(f"{field}.faults_to_forfeit", "must be >= 1")
    return FaultPolicy(pb.faults_to_forfeit)


def clock_to_pb(clock: Clock) -> common_pb2.DecisionClock:
    return common_pb2.DecisionClock(
        per_decision_ms=clock.per_decision_ms,
        bank_left_ms=clock.bank_left_ms,
        elapsed_ms=clock.elapsed_ms,
    )


def clock_from_pb(
    pb: common_pb2.DecisionClock, field: str = "clock", *, received_at: float | None = None
) -> Clock:
    if pb.per_decision_ms <= 0:
        raise WireError(f"{field}.per_decision_ms", "must be > 0")
    if received_at is None:
        return Clock(pb.per_decision_ms, pb.bank_left_ms, pb.elapsed_ms)
    return Clock(pb.per_decision_ms, pb.bank_left_ms, pb.elapsed_ms, received_at)


# --------------------------------------------------------------------------- views


def public_state_to_pb(
    view: SeatView,
    *,
    game_index: int = 0,
    bank_left_ms: Sequence[int] | None = None,
    faults: Sequence[int] | None = None,
) -> game_pb2.PublicState:
    """The public part of ``view`` (the same for every seat's view of one state)."""
    players = view.players
    banks = list(bank_left_ms) if bank_left_ms is not None else [0] * players
    fault_counts = list(faults) if faults is not None else [0] * players
    if len(banks) != players or len(fault_counts) != players:
        raise WireError(
            "board.seats", f"needs one bank_left_ms and faults value per seat ({players})"
        )
    board = game_pb2.PublicState(
        game_index=game_index,
        turn_number=view.turn + 1,
        current_seat=view.current_seat,
        deck_size=view.deck_size,
    )
    for seat in range(players):
        board.seats.append(
            game_pb2.SeatState(
                seat=seat,
                arboretum=[_placed_to_pb(c, card) for c, card in view.arboretums[seat].items()],
                discard_pile=[card_to_pb(c) for c in view.discard_piles[seat]],
                hand_size=view.hand_sizes[seat],
                known_hand_cards=[card_to_pb(c) for c in view.known_cards[seat]],
                bank_left_ms=max(0, int(banks[seat])),
                faults=int(fault_counts[seat]),
                forfeited=view.forfeited[seat],
            )
        )
    return board


def seat_view_to_pb(
    view: SeatView,
    *,
    game_index: int = 0,
    bank_left_ms: Sequence[int] | None = None,
    faults: Sequence[int] | None = None,
) -> game_pb2.SeatView:
    """Encode a seat's view. The per-seat clocks and fault counts are referee data (default 0)."""
    return game_pb2.SeatView(
        seat=view.seat,
        hand=[card_to_pb(c) for c in view.hand],
        board=public_state_to_pb(
            view, game_index=game_index, bank_left_ms=bank_left_ms, faults=faults
        ),
    )


def _infer_kind(
    hand_size: int, deck_size: int, piles_empty: bool, field: str
) -> tuple[DecisionKind, bool]:
    if hand_size == HAND_SIZE:
        return (DecisionKind.GAME_OVER if deck_size == 0 else DecisionKind.FIRST_DRAW), False
    if hand_size == HAND_SIZE + 1:
        if deck_size == 0 and piles_empty:
            return DecisionKind.PLAY, False
        return DecisionKind.SECOND_DRAW, False
    if hand_size == HAND_SIZE + 2:
        return DecisionKind.PLAY, True
    raise WireError(field, f"is {hand_size} for the current seat (expected 7, 8 or 9)")


def seat_view_from_pb(
    pb: game_pb2.SeatView,
    *,
    species: Sequence[Species],
    kind: DecisionKind | None = None,
    discard_required: bool | None = None,
    field: str = "view",
) -> SeatView:
    """Decode and check a seat's view (``species``: the game's species in play, from GameSetup).

    The decision kind and ``discard_required`` are inferred from the board; when ``kind`` or
    ``discard_required`` are given (from the request) they must agree. Checks: seat numbers, card
    species in play, values, no card seen twice, arboretums grown legally from (0, 0), hand sizes,
    and that the counts add up to the species' 8 cards each.
    """
    view = _seat_view_fast(pb, species, kind, discard_required)
    if view is not None:
        return view
    return _seat_view_checked(
        pb, species=species, kind=kind, discard_required=discard_required, field=field
    )


def _seat_view_checked(
    pb: game_pb2.SeatView,
    *,
    species: Sequence[Species],
    kind: DecisionKind | None = None,
    discard_required: bool | None = None,
    field: str = "view",
) -> SeatView:
    """:func:`seat_view_from_pb` step by step, naming the field of the first problem found."""
    if not pb.HasField("board"):
        raise _missing(f"{field}.board")
    board = pb.board
    players = len(board.seats)
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.board.seats", f"has {players} seats (expected 2 to 4)")
    in_play = tuple(sorted(set(species), key=lambda s: s.index))
    if len(in_play) != SPECIES_PER_PLAYER_COUNT[players] or len(in_play) != len(species):
        raise WireError(
            "species_in_play",
            f"has {len(species)} species for {players} players "
            f"(expected {SPECIES_PER_PLAYER_COUNT[players]} distinct)",
        )
    if pb.seat >= players:
        raise WireError(f"{field}.seat", f"is {pb.seat} but there are {players} seats")
    if board.current_seat >= players:
        raise WireError(f"{field}.board.current_seat", f"is {board.current_seat} (>= {players})")
    if board.turn_number < 1:
        raise WireError(f"{field}.board.turn_number", "must be >= 1")
    allowed = set(in_play)
    seen: set[Card] = set()

    def card(pb_card: common_pb2.Card, where: str, *, unique: bool = True) -> Card:
        c = card_from_pb(pb_card, where)
        if c.species not in allowed:
            raise WireError(where, f"is {c}, a species not in play")
        if unique:
            if c in seen:
                raise WireError(where, f"is {c}, which is already elsewhere in the view")
            seen.add(c)
        return c

    hand = tuple(card(c, f"{field}.hand[{i}]") for i, c in enumerate(pb.hand))
    arboretums: list[Arboretum] = []
    piles: list[tuple[Card, ...]] = []
    known: list[tuple[Card, ...]] = []
    hand_sizes: list[int] = []
    forfeited: list[bool] = []
    for s, state in enumerate(board.seats):
        where = f"{field}.board.seats[{s}]"
        if state.seat != s:
            raise WireError(f"{where}.seat", f"is {state.seat} (expected {s})")
        cells: dict[Cell, Card] = {}
        for i, placed in enumerate(state.arboretum):
            pwhere = f"{where}.arboretum[{i}]"
            cell, _ = _placed_from_pb(placed, pwhere)
            c = card(placed.card, f"{pwhere}.card")
            if i == 0 and cell != (0, 0):
                raise WireError(f"{pwhere}.cell", f"is {cell} (the first card is at 0,0)")
            if abs(cell.x) > _LIMIT or abs(cell.y) > _LIMIT:
                raise WireError(f"{pwhere}.cell", f"is {cell}, out of range")
            if cell in cells:
                raise WireError(f"{pwhere}.cell", f"is {cell}, already occupied")
            if i > 0 and not any(n in cells for n in cell.neighbours()):
                raise WireError(f"{pwhere}.cell", f"is {cell}, not adjacent to an earlier card")
            cells[cell] = c
        arboretums.append(Arboretum(cells))
        piles.append(
            tuple(card(c, f"{where}.discard_pile[{i}]") for i, c in enumerate(state.discard_pile))
        )
        if s == pb.seat:
            if state.hand_size != len(hand):
                raise WireError(
                    f"{where}.hand_size", f"is {state.hand_size} but the hand has {len(hand)} cards"
                )
            own = []
            for i, pb_card in enumerate(state.known_hand_cards):
                kc = card(pb_card, f"{where}.known_hand_cards[{i}]", unique=False)
                if kc not in hand:
                    raise WireError(f"{where}.known_hand_cards[{i}]", f"is {kc}, not in the hand")
                own.append(kc)
            known.append(tuple(sorted(own)))
        else:
            if state.hand_size > HAND_SIZE + 2:
                raise WireError(f"{where}.hand_size", f"is {state.hand_size} (at most 9)")
            if len(state.known_hand_cards) > state.hand_size:
                raise WireError(f"{where}.known_hand_cards", "has more cards than the hand")
            known.append(
                tuple(
                    sorted(
                        card(c, f"{where}.known_hand_cards[{i}]")
                        for i, c in enumerate(state.known_hand_cards)
                    )
                )
            )
        hand_sizes.append(state.hand_size)
        forfeited.append(state.forfeited)
    total = board.deck_size + sum(hand_sizes) + sum(len(a) for a in arboretums)
    total += sum(len(p) for p in piles)
    if total != 8 * len(in_play):
        raise WireError(
            f"{field}.board",
            f"accounts for {total} cards (deck, hands, arboretums, piles) "
            f"but {len(in_play)} species make {8 * len(in_play)}",
        )
    inferred, inferred_discard = _infer_kind(
        hand_sizes[board.current_seat],
        board.deck_size,
        not any(piles),
        f"{field}.board.seats[{board.current_seat}].hand_size",
    )
    if kind is not None and kind is not inferred:
        raise WireError(
            "kind", f"is {kind.value} but the view's hand sizes say {inferred.value} is due"
        )
    if (
        discard_required is not None
        and inferred is DecisionKind.PLAY
        and discard_required != inferred_discard
    ):
        raise WireError(
            "discard_required",
            f"is {discard_required} but the view says {inferred_discard}",
        )
    return SeatView(
        seat=pb.seat,
        players=players,
        species=in_play,
        turn=board.turn_number - 1,
        current_seat=board.current_seat,
        kind=inferred,
        hand=tuple(sorted(hand)),
        arboretums=tuple(arboretums),
        discard_piles=tuple(piles),
        deck_size=board.deck_size,
        hand_sizes=tuple(hand_sizes),
        known_cards=tuple(known),
        discard_required=inferred_discard if inferred is DecisionKind.PLAY else True,
        last_turn=board.deck_size == 0,
        forfeited=tuple(forfeited),
    )


_PB_CARDS: dict[tuple[int, int], Card] = {
    (species.index + 1, value): Card(species, value) for species in Species for value in range(1, 9)
}
"""Every card by its protobuf (species value, value): decoding a card is one lookup."""

_IN_PLAY: dict[tuple[Species, ...], tuple[tuple[Species, ...], frozenset[int]]] = {}


def _in_play(species: Sequence[Species]) -> tuple[tuple[Species, ...], frozenset[int]]:
    """The species in play, sorted, and their protobuf values (cached per game's species)."""
    key = tuple(species)
    found = _IN_PLAY.get(key)
    if found is None:
        in_play = tuple(sorted(set(species), key=lambda s: s.index))
        found = (in_play, frozenset(s.index + 1 for s in in_play))
        if len(_IN_PLAY) < 1024:
            _IN_PLAY[key] = found
    return found


_DecodedSeat = tuple[Arboretum, tuple[Card, ...], tuple[Card, ...], int, bool, frozenset[Card]]
"""Another seat's part of a view: arboretum, pile, known cards, hand size, forfeited, and the
set of all those cards (each one once: checked)."""

_SEAT_CACHE_LIMIT = 4096
_OTHER_SEATS: dict[tuple[int, frozenset[int], bytes], _DecodedSeat] = {}
"""Other seats' parts of views, by (seat, species in play, serialized ``SeatState``): between two
requests most seats' states are unchanged, and serializing one costs far less than decoding it."""


def _decode_card(c: common_pb2.Card, allowed: frozenset[int]) -> Card | None:
    species = c.species
    card = _PB_CARDS.get((species, c.value))
    return card if species in allowed else None


def _decode_arboretum(
    state: game_pb2.SeatState, allowed: frozenset[int], seen: set[Card]
) -> Arboretum | None:
    cards = _PB_CARDS
    limit = _LIMIT
    cells: dict[Cell, Card] = {}
    for placed in state.arboretum:
        if not placed.HasField("card") or not placed.HasField("cell"):
            return None
        pc = placed.cell
        x, y = pc.x, pc.y
        c = placed.card
        species = c.species
        card = cards.get((species, c.value))
        if card is None or species not in allowed or card in seen:
            return None
        seen.add(card)
        if cells:
            if (x, y) in cells or abs(x) > limit or abs(y) > limit:
                return None
            if (
                (x + 1, y) not in cells
                and (x - 1, y) not in cells
                and (x, y + 1) not in cells
                and (x, y - 1) not in cells
            ):
                return None
        elif x or y:
            return None
        cells[Cell(x, y)] = card
    return Arboretum(cells)


def _decode_pile(
    state: game_pb2.SeatState, allowed: frozenset[int], seen: set[Card]
) -> tuple[Card, ...] | None:
    cards = _PB_CARDS
    pile: list[Card] = []
    for c in state.discard_pile:
        species = c.species
        card = cards.get((species, c.value))
        if card is None or species not in allowed or card in seen:
            return None
        seen.add(card)
        pile.append(card)
    return tuple(pile)


_Board = tuple[Arboretum, tuple[Card, ...], frozenset[Card]]
"""A seat's arboretum and discard pile, and the set of their cards (each one once: checked)."""


def _decode_board(state: game_pb2.SeatState, allowed: frozenset[int]) -> _Board | None:
    seen: set[Card] = set()
    arboretum = _decode_arboretum(state, allowed, seen)
    if arboretum is None:
        return None
    pile = _decode_pile(state, allowed, seen)
    if pile is None:
        return None
    return arboretum, pile, frozenset(seen)


def _other_seat(state: game_pb2.SeatState, s: int, allowed: frozenset[int]) -> _DecodedSeat | None:
    key = (s, allowed, state.SerializeToString())
    found = _OTHER_SEATS.get(key)
    if found is not None:
        return found
    if state.seat != s:
        return None
    board = _decode_board(state, allowed)
    if board is None:
        return None
    arboretum, pile, placed = board
    seen = set(placed)
    hand_size = state.hand_size
    if hand_size > HAND_SIZE + 2 or len(state.known_hand_cards) > hand_size:
        return None
    known: list[Card] = []
    for c in state.known_hand_cards:
        card = _decode_card(c, allowed)
        if card is None or card in seen:
            return None
        seen.add(card)
        known.append(card)
    decoded = (arboretum, pile, tuple(sorted(known)), hand_size, state.forfeited, frozenset(seen))
    if len(_OTHER_SEATS) >= _SEAT_CACHE_LIMIT:
        _OTHER_SEATS.clear()
    _OTHER_SEATS[key] = decoded
    return decoded


_OWN_BOARDS: dict[tuple[frozenset[int], bytes], _Board] = {}
"""The seat's own arboretum and pile by (species in play, serialized ``SeatState`` without its hand
size, known cards, clock and faults): its own state changes with every draw, its arboretum and pile
only with its plays and with draws from its pile."""


def _own_board(state: game_pb2.SeatState, allowed: frozenset[int]) -> _Board | None:
    scratch = game_pb2.SeatState()
    scratch.CopyFrom(state)
    scratch.hand_size = scratch.bank_left_ms = scratch.faults = 0
    scratch.forfeited = False
    del scratch.known_hand_cards[:]
    key = (allowed, scratch.SerializeToString())
    found = _OWN_BOARDS.get(key)
    if found is not None:
        return found
    decoded = _decode_board(state, allowed)
    if decoded is None:
        return None
    if len(_OWN_BOARDS) >= _SEAT_CACHE_LIMIT:
        _OWN_BOARDS.clear()
    _OWN_BOARDS[key] = decoded
    return decoded


def _seat_view_fast(
    pb: game_pb2.SeatView,
    species: Sequence[Species],
    kind: DecisionKind | None,
    discard_required: bool | None,
) -> SeatView | None:
    """:func:`seat_view_from_pb` for a view that passes every check, without building a field
    name per card. It makes the same checks; on the first that fails it returns None, and the
    caller decodes again with :func:`_seat_view_checked`, which names the problem."""
    if not pb.HasField("board"):
        return None
    board = pb.board
    seats = board.seats
    players = len(seats)
    wanted = SPECIES_PER_PLAYER_COUNT.get(players)
    if wanted is None:
        return None
    in_play, allowed = _in_play(species)
    if len(in_play) != wanted or len(in_play) != len(species):
        return None
    me = pb.seat
    current = board.current_seat
    if me >= players or current >= players or board.turn_number < 1:
        return None
    seen: set[Card] = set()
    hand_list: list[Card] = []
    for c in pb.hand:
        card = _decode_card(c, allowed)
        if card is None or card in seen:
            return None
        seen.add(card)
        hand_list.append(card)
    hand = tuple(hand_list)
    arboretums: list[Arboretum] = []
    piles: list[tuple[Card, ...]] = []
    known: list[tuple[Card, ...]] = []
    hand_sizes: list[int] = []
    forfeited: list[bool] = []
    for s, state in enumerate(seats):
        if s != me:
            other = _other_seat(state, s, allowed)
            if other is None or not seen.isdisjoint(other[5]):
                return None
            seen.update(other[5])
            arboretums.append(other[0])
            piles.append(other[1])
            known.append(other[2])
            hand_sizes.append(other[3])
            forfeited.append(other[4])
            continue
        if state.seat != s:
            return None
        board_part = _own_board(state, allowed)
        if board_part is None or not seen.isdisjoint(board_part[2]):
            return None
        arboretum, pile, placed = board_part
        seen.update(placed)
        if state.hand_size != len(hand):
            return None
        own: list[Card] = []
        for c in state.known_hand_cards:
            card = _decode_card(c, allowed)
            if card is None or card not in hand:
                return None
            own.append(card)
        arboretums.append(arboretum)
        piles.append(pile)
        known.append(tuple(sorted(own)))
        hand_sizes.append(state.hand_size)
        forfeited.append(state.forfeited)
    deck_size = board.deck_size
    total = deck_size + sum(hand_sizes) + sum(len(a) for a in arboretums)
    total += sum(len(p) for p in piles)
    if total != 8 * len(in_play):
        return None
    current_hand = hand_sizes[current]
    if current_hand not in (HAND_SIZE, HAND_SIZE + 1, HAND_SIZE + 2):
        return None
    inferred, inferred_discard = _infer_kind(current_hand, deck_size, not any(piles), "")
    if kind is not None and kind is not inferred:
        return None
    if (
        discard_required is not None
        and inferred is DecisionKind.PLAY
        and discard_required != inferred_discard
    ):
        return None
    return SeatView(
        seat=me,
        players=players,
        species=in_play,
        turn=board.turn_number - 1,
        current_seat=current,
        kind=inferred,
        hand=tuple(sorted(hand)),
        arboretums=tuple(arboretums),
        discard_piles=tuple(piles),
        deck_size=deck_size,
        hand_sizes=tuple(hand_sizes),
        known_cards=tuple(known),
        discard_required=inferred_discard if inferred is DecisionKind.PLAY else True,
        last_turn=deck_size == 0,
        forfeited=tuple(forfeited),
    )


# --------------------------------------------------------------------------- events


def event_to_pb(
    event: Event,
    *,
    sequence: int,
    turn_number: int,
    draw_kind: DecisionKind | None = None,
    faults: int = 0,
) -> list[game_pb2.Event]:
    """Encode one engine event as one or two protobuf events, numbered from ``sequence``.

    ``draw_kind`` (FIRST_DRAW or SECOND_DRAW) is required for a :class:`DrawEvent`; ``faults`` is
    the seat's fault count, for a :class:`ForfeitEvent`. A :class:`PlayEvent` gives
    ``[play, discard]``, or ``[second_draw_skipped, play]`` when it has no discard.
    """
    seat = event.seat
    if isinstance(event, DrawEvent):
        if draw_kind not in (DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW):
            raise WireError("draw_kind", "must be FIRST_DRAW or SECOND_DRAW for a draw event")
        draw = game_pb2.DrawEvent(draw=kind_to_pb(draw_kind), source=source_to_pb(event.source))
        if event.card is not None:
            draw.card.CopyFrom(card_to_pb(event.card))
        return [game_pb2.Event(sequence=sequence, turn_number=turn_number, seat=seat, draw=draw)]
    if isinstance(event, PlayEvent):
        play = game_pb2.Event(
            turn_number=turn_number,
            seat=seat,
            play=game_pb2.PlayEvent(card=card_to_pb(event.card), cell=cell_to_pb(event.cell)),
        )
        if event.discard is None:
            skipped = game_pb2.Event(
                sequence=sequence,
                turn_number=turn_number,
                seat=seat,
                second_draw_skipped=game_pb2.SecondDrawSkippedEvent(),
            )
            play.sequence = sequence + 1
            return [skipped, play]
        play.sequence = sequence
        discard = game_pb2.Event(
            sequence=sequence + 1,
            turn_number=turn_number,
            seat=seat,
            discard=game_pb2.DiscardEvent(card=card_to_pb(event.discard)),
        )
        return [play, discard]
    if isinstance(event, ForfeitEvent):
        return [
            game_pb2.Event(
                sequence=sequence,
                turn_number=turn_number,
                seat=seat,
                forfeit=game_pb2.ForfeitEvent(faults=faults),
            )
        ]
    raise WireError("event", f"is not an engine event: {event!r}")


class EventEncoder:
    """Numbers a game's events: feed it every engine event of one game, in order, from the start.

    It tracks ``sequence`` (gap-free from 0), ``turn_number`` (1-based; a play ends a turn) and
    which draw of the turn a draw is. Referee recipe: after applying seat S's decision, encode
    ``state.events(seat=S, since=n)`` (the acting seat sees its own deck card: full information),
    keep the results as the game's public log, and send each viewer :func:`redact_event` copies.
    """

    def __init__(self) -> None:
        self.sequence = 0
        self.turn_number = 1
        self._draws = 0

    def encode(self, event: Event, *, faults: int = 0) -> list[game_pb2.Event]:
        draw_kind = None
        if isinstance(event, DrawEvent):
            draw_kind = DecisionKind.FIRST_DRAW if self._draws == 0 else DecisionKind.SECOND_DRAW
        out = event_to_pb(
            event,
            sequence=self.sequence,
            turn_number=self.turn_number,
            draw_kind=draw_kind,
            faults=faults,
        )
        self.sequence += len(out)
        if isinstance(event, DrawEvent):
            self._draws += 1
        elif isinstance(event, PlayEvent):
            self._draws = 0
            self.turn_number += 1
        return out

    def encode_all(self, events: Iterable[Event]) -> list[game_pb2.Event]:
        return [pb for event in events for pb in self.encode(event)]

    def fault(
        self,
        seat: int,
        kind: FaultKind,
        decision_kind: DecisionKind,
        decision_number: int,
        faults: int,
    ) -> game_pb2.Event:
        """A fault event (it precedes the events of the fallback decision)."""
        event = game_pb2.Event(
            sequence=self.sequence,
            turn_number=self.turn_number,
            seat=seat,
            fault=game_pb2.FaultEvent(
                kind=fault_kind_to_pb(kind),
                decision_kind=kind_to_pb(decision_kind),
                decision_number=decision_number,
                faults=faults,
            ),
        )
        self.sequence += 1
        return event


def redact_event(event: game_pb2.Event, viewer: int | None) -> game_pb2.Event:
    """``event`` as ``viewer`` may see it (``None``: a spectator): a card drawn from the deck is
    shown only to its drawer. Returns the same object when nothing is hidden."""
    if (
        event.WhichOneof("kind") == "draw"
        and event.draw.source.WhichOneof("source") == "deck"
        and event.draw.HasField("card")
        and event.seat != viewer
    ):
        hidden = game_pb2.Event()
        hidden.CopyFrom(event)
        hidden.draw.ClearField("card")
        return hidden
    return event


class EventDecoder:
    """Turns a game's protobuf events back into engine events, across messages.

    Events already seen (by ``sequence``) are skipped, so the full history of a resumed game can be
    fed again. Fault events have no engine type and are skipped after validation. A ``play`` is held
    until its ``discard`` arrives (a ``second_draw_skipped`` before it means no discard).
    """

    def __init__(self, players: int | None = None) -> None:
        self.players = players
        self.next_sequence = 0
        self._skipped = False
        self._pending: tuple[int, Card, Cell] | None = None

    def feed(self, pb: game_pb2.Event, field: str = "event") -> list[Event]:
        if pb.sequence < self.next_sequence:
            return []
        if pb.sequence != self.next_sequence:
            raise WireError(
                f"{field}.sequence", f"is {pb.sequence} (expected {self.next_sequence}, gap-free)"
            )
        seat = pb.seat
        if self.players is not None and seat >= self.players:
            raise WireError(f"{field}.seat", f"is {seat} but there are {self.players} seats")
        which = pb.WhichOneof("kind")
        if which is None:
            raise WireError(f"{field}.kind", "is missing")
        if self._pending is not None and which != "discard":
            raise WireError(f"{field}.{which}", "follows a play that still needs its discard event")
        out: list[Event] = []
        if which == "draw":
            kind_from_pb(pb.draw.draw, f"{field}.draw.draw")
            if not pb.draw.HasField("source"):
                raise _missing(f"{field}.draw.source")
            source = source_from_pb(pb.draw.source, f"{field}.draw.source")
            card = (
                card_from_pb(pb.draw.card, f"{field}.draw.card")
                if pb.draw.HasField("card")
                else None
            )
            if source != DECK and card is None:
                raise _missing(f"{field}.draw.card")
            out.append(DrawEvent(seat, source, card))
        elif which == "second_draw_skipped":
            self._skipped = True
        elif which == "play":
            if not pb.play.HasField("card"):
                raise _missing(f"{field}.play.card")
            if not pb.play.HasField("cell"):
                raise _missing(f"{field}.play.cell")
            card = card_from_pb(pb.play.card, f"{field}.play.card")
            cell = cell_from_pb(pb.play.cell, f"{field}.play.cell")
            if self._skipped:
                self._skipped = False
                out.append(PlayEvent(seat, card, cell, None))
            else:
                self._pending = (seat, card, cell)
        elif which == "discard":
            if self._pending is None:
                raise WireError(f"{field}.discard", "does not follow a play event")
            if not pb.discard.HasField("card"):
                raise _missing(f"{field}.discard.card")
            discard = card_from_pb(pb.discard.card, f"{field}.discard.card")
            p_seat, p_card, p_cell = self._pending
            if p_seat != seat:
                raise WireError(f"{field}.seat", f"is {seat} but the play was by seat {p_seat}")
            self._pending = None
            out.append(PlayEvent(seat, p_card, p_cell, discard))
        elif which == "fault":
            fault_kind_from_pb(pb.fault.kind, f"{field}.fault.kind")
            kind_from_pb(pb.fault.decision_kind, f"{field}.fault.decision_kind")
        elif which == "forfeit":
            out.append(ForfeitEvent(seat))
        self.next_sequence = pb.sequence + 1
        return out

    def feed_all(self, events: Iterable[game_pb2.Event], field: str = "events") -> list[Event]:
        out: list[Event] = []
        for i, pb in enumerate(events):
            out.extend(self.feed(pb, f"{field}[{i}]"))
        return out


def events_from_pb(events: Iterable[game_pb2.Event], players: int | None = None) -> list[Event]:
    """Decode a complete run of events (a play must be followed by its discard within it)."""
    decoder = EventDecoder(players)
    out = decoder.feed_all(events)
    if decoder._pending is not None:
        raise WireError("events", "end with a play event that has no discard event")
    return out


# --------------------------------------------------------------------------- results


def _eight_cancelled(hands: Sequence[Sequence[Card]], seat: int, species: Species) -> bool:
    eight, one = Card(species, 8), Card(species, 1)
    if eight not in hands[seat]:
        return False
    return any(one in hand for s, hand in enumerate(hands) if s != seat)


def game_result_to_pb(
    result: GameResult,
    *,
    game_index: int,
    seed: int,
    turns: int,
    species: Sequence[Species] | None = None,
    seat_names: Sequence[str] | None = None,
    faults: Sequence[int] | None = None,
    final_board: game_pb2.PublicState | None = None,
) -> game_pb2.GameResult:
    """Encode a finished game's result; the keyword arguments are the referee's data."""
    in_play = (
        tuple(species) if species is not None else tuple(s.species for s in result.seats[0].species)
    )
    pb = game_pb2.GameResult(
        game_index=game_index,
        seed=seed,
        species_in_play=[species_to_pb(s) for s in in_play],
        turns=turns,
    )
    for seat_score in result.seats:
        s = seat_score.seat
        seat_pb = game_pb2.SeatResult(
            seat=s,
            name=seat_names[s] if seat_names else "",
            final_hand=[card_to_pb(c) for c in result.hands[s]],
            total=seat_score.total,
            species_in_arboretum=seat_score.species_in_arboretum,
            forfeited=seat_score.forfeited,
            rank=seat_score.rank,
            faults=faults[s] if faults else 0,
        )
        for sp in seat_score.species:
            score = game_pb2.SpeciesScore(
                species=species_to_pb(sp.species),
                hand_total=sp.hand_total,
                eight_cancelled=_eight_cancelled(result.hands, s, sp.species),
                has_right=sp.has_right,
                points=sp.points,
            )
            if sp.path is not None:
                path = sp.path
                score.path.extend(
                    _placed_to_pb(c, card) for c, card in zip(path.cells, path.cards, strict=True)
                )
                score.card_points = path.card_points
                score.doubled = path.doubled
                score.start_bonus = path.start_bonus
                score.end_bonus = path.end_bonus
            seat_pb.species_scores.append(score)
        pb.seats.append(seat_pb)
    if final_board is not None:
        pb.final_board.CopyFrom(final_board)
    return pb


def game_result_from_pb(pb: game_pb2.GameResult, field: str = "result") -> GameResult:
    """Decode and check a game result (scores must add up; ranks >= 1)."""
    in_play = tuple(
        species_from_pb(v, f"{field}.species_in_play[{i}]")
        for i, v in enumerate(pb.species_in_play)
    )
    players = len(pb.seats)
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.seats", f"has {players} seats (expected 2 to 4)")
    if len(set(in_play)) != SPECIES_PER_PLAYER_COUNT[players] or len(in_play) != len(set(in_play)):
        raise WireError(
            f"{field}.species_in_play",
            f"is not {SPECIES_PER_PLAYER_COUNT[players]} distinct species",
        )
    seats: list[SeatScore] = []
    hands: list[tuple[Card, ...]] = []
    for s, seat_pb in enumerate(pb.seats):
        where = f"{field}.seats[{s}]"
        if seat_pb.seat != s:
            raise WireError(f"{where}.seat", f"is {seat_pb.seat} (expected {s})")
        if not 1 <= seat_pb.rank <= players:
            raise WireError(f"{where}.rank", f"is {seat_pb.rank} (expected 1 to {players})")
        hands.append(
            tuple(
                card_from_pb(c, f"{where}.final_hand[{i}]")
                for i, c in enumerate(seat_pb.final_hand)
            )
        )
        if len(seat_pb.species_scores) != len(in_play):
            raise WireError(
                f"{where}.species_scores",
                f"has {len(seat_pb.species_scores)} entries (expected {len(in_play)})",
            )
        scores: list[SpeciesScore] = []
        for i, sc in enumerate(seat_pb.species_scores):
            swhere = f"{where}.species_scores[{i}]"
            sp = species_from_pb(sc.species, f"{swhere}.species")
            if sp is not in_play[i]:
                raise WireError(f"{swhere}.species", f"is {sp.value} (expected {in_play[i].value})")
            path: PathScore | None = None
            if len(sc.path) == 1:
                raise WireError(f"{swhere}.path", "has a single card (a path has at least 2)")
            if sc.path:
                placed = [_placed_from_pb(p, f"{swhere}.path[{j}]") for j, p in enumerate(sc.path)]
                path = PathScore(
                    cells=tuple(c for c, _ in placed),
                    cards=tuple(card for _, card in placed),
                    card_points=sc.card_points,
                    doubled=sc.doubled,
                    start_bonus=sc.start_bonus,
                    end_bonus=sc.end_bonus,
                )
                if path.points != sc.points:
                    raise WireError(
                        f"{swhere}.points", f"is {sc.points} but the path makes {path.points}"
                    )
                if not sc.has_right:
                    raise WireError(f"{swhere}.path", "is set without the right to score")
            elif sc.points:
                raise WireError(f"{swhere}.points", f"is {sc.points} without a path")
            scores.append(SpeciesScore(sp, sc.hand_total, sc.has_right, path, sc.points))
        if sum(sc.points for sc in scores) != seat_pb.total:
            raise WireError(
                f"{where}.total",
                f"is {seat_pb.total} but the species make {sum(sc.points for sc in scores)}",
            )
        seats.append(
            SeatScore(
                seat=s,
                total=seat_pb.total,
                species_in_arboretum=seat_pb.species_in_arboretum,
                forfeited=seat_pb.forfeited,
                rank=seat_pb.rank,
                species=tuple(scores),
            )
        )
    return GameResult(tuple(seats), tuple(hands))


# --------------------------------------------------------------------------- stream messages


def match_start_to_pb(info: MatchInfo) -> bot_pb2.MatchStart:
    return bot_pb2.MatchStart(
        match_id=info.match_id,
        seat=info.seat,
        player_count=info.players,
        game_count=info.game_count,
        seat_names=list(info.seat_names),
        time_control=time_control_to_pb(info.time_control),
        fault_policy=fault_policy_to_pb(info.fault_policy),
        resumed=info.resumed,
    )


def match_start_from_pb(pb: bot_pb2.MatchStart, field: str = "match_start") -> MatchInfo:
    players = pb.player_count
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.player_count", f"is {players} (expected 2 to 4)")
    if pb.seat >= players:
        raise WireError(f"{field}.seat", f"is {pb.seat} but there are {players} seats")
    if pb.game_count < 1:
        raise WireError(f"{field}.game_count", "must be >= 1")
    if pb.seat_names and len(pb.seat_names) != players:
        raise WireError(
            f"{field}.seat_names", f"has {len(pb.seat_names)} names for {players} seats"
        )
    if not pb.HasField("time_control"):
        raise _missing(f"{field}.time_control")
    if not pb.HasField("fault_policy"):
        raise _missing(f"{field}.fault_policy")
    names = tuple(pb.seat_names) or tuple(f"seat {s}" for s in range(players))
    return MatchInfo(
        match_id=pb.match_id,
        seat=pb.seat,
        players=players,
        game_count=pb.game_count,
        seat_names=names,
        time_control=time_control_from_pb(pb.time_control, f"{field}.time_control"),
        fault_policy=fault_policy_from_pb(pb.fault_policy, f"{field}.fault_policy"),
        resumed=pb.resumed,
    )


def game_setup_to_pb(
    *,
    game_index: int,
    game_count: int,
    species: Sequence[Species],
    seat_names: Sequence[str],
    time_control: TimeControl,
    fault_policy: FaultPolicy,
) -> game_pb2.GameSetup:
    return game_pb2.GameSetup(
        game_index=game_index,
        game_count=game_count,
        player_count=len(seat_names),
        species_in_play=[species_to_pb(s) for s in sorted(species, key=lambda s: s.index)],
        time_control=time_control_to_pb(time_control),
        fault_policy=fault_policy_to_pb(fault_policy),
        seat_names=list(seat_names),
    )


def game_start_from_pb(
    pb: bot_pb2.GameStart, field: str = "game_start"
) -> tuple[GameInfo, EventDecoder]:
    """Decode a GameStart; also returns the game's event decoder, already fed its events."""
    if not pb.HasField("setup"):
        raise _missing(f"{field}.setup")
    if not pb.HasField("view"):
        raise _missing(f"{field}.view")
    setup = pb.setup
    species = tuple(
        species_from_pb(v, f"{field}.setup.species_in_play[{i}]")
        for i, v in enumerate(setup.species_in_play)
    )
    view = seat_view_from_pb(pb.view, species=species, field=f"{field}.view")
    if setup.player_count != view.players:
        raise WireError(
            f"{field}.setup.player_count",
            f"is {setup.player_count} but the view has {view.players}",
        )
    if pb.seat != view.seat:
        raise WireError(f"{field}.seat", f"is {pb.seat} but the view is seat {view.seat}'s")
    if setup.game_index >= setup.game_count:
        raise WireError(
            f"{field}.setup.game_index", f"is {setup.game_index} of {setup.game_count} games"
        )
    decoder = EventDecoder(view.players)
    events = tuple(decoder.feed_all(pb.events, f"{field}.events"))
    names = tuple(setup.seat_names) or tuple(f"seat {s}" for s in range(view.players))
    info = GameInfo(
        game_index=setup.game_index,
        game_count=setup.game_count,
        players=view.players,
        species=view.species,
        seat=pb.seat,
        seat_names=names,
        time_control=time_control_from_pb(
            setup.time_control if setup.HasField("time_control") else None,
            f"{field}.setup.time_control",
        ),
        fault_policy=fault_policy_from_pb(
            setup.fault_policy if setup.HasField("fault_policy") else None,
            f"{field}.setup.fault_policy",
        ),
        view=view,
        events=events,
        resumed=pb.resumed,
        bot_seed=pb.bot_seed,
    )
    return info, decoder


def fault_notice_to_pb(notice: FaultNotice) -> bot_pb2.FaultNotice:
    return bot_pb2.FaultNotice(
        decision_number=notice.decision_number,
        game_index=notice.game_index,
        decision_kind=kind_to_pb(notice.decision_kind),
        kind=fault_kind_to_pb(notice.kind),
        reason=notice.reason,
        fallback=decision_to_pb(notice.fallback, notice.decision_kind),
        faults=notice.faults,
        forfeited=notice.forfeited,
    )


def fault_notice_from_pb(pb: bot_pb2.FaultNotice, field: str = "fault_notice") -> FaultNotice:
    decision_kind = kind_from_pb(pb.decision_kind, f"{field}.decision_kind")
    if not pb.HasField("fallback"):
        raise _missing(f"{field}.fallback")
    return FaultNotice(
        decision_number=pb.decision_number,
        game_index=pb.game_index,
        decision_kind=decision_kind,
        kind=fault_kind_from_pb(pb.kind, f"{field}.kind"),
        reason=pb.reason,
        fallback=decision_from_pb(pb.fallback, decision_kind, field=f"{field}.fallback"),
        faults=pb.faults,
        forfeited=pb.forfeited,
    )


def game_end_from_pb(
    pb: bot_pb2.GameEnd, decoder: EventDecoder | None = None, field: str = "game_end"
) -> GameEnd:
    """Decode a GameEnd; ``decoder`` (the game's, from :func:`game_start_from_pb`) decodes its
    events, so that a play split from its discard across messages still decodes."""
    if not pb.HasField("result"):
        raise _missing(f"{field}.result")
    result_pb = pb.result
    result = game_result_from_pb(result_pb, f"{field}.result")
    decoder = decoder or EventDecoder(len(result.seats))
    events = tuple(decoder.feed_all(pb.events, f"{field}.events"))
    return GameEnd(
        game_index=result_pb.game_index,
        seed=result_pb.seed,
        species=tuple(species_from_pb(v) for v in result_pb.species_in_play),
        turns=result_pb.turns,
        seat_names=tuple(s.name for s in result_pb.seats),
        faults=tuple(s.faults for s in result_pb.seats),
        result=result,
        events=events,
    )


def match_summary_to_pb(games_finished: int, seats: Iterable[SeatSummary]) -> game_pb2.MatchSummary:
    return game_pb2.MatchSummary(
        games_finished=games_finished,
        seats=[
            game_pb2.SeatSummary(
                seat=s.seat,
                name=s.name,
                total_points=s.total_points,
                first_places=s.first_places,
                rank_sum=s.rank_sum,
                faults=s.faults,
                forfeits=s.forfeits,
            )
            for s in seats
        ],
    )


def match_end_to_pb(end: MatchEnd) -> game_pb2.MatchEnd:
    pb = game_pb2.MatchEnd(
        status=match_status_to_pb(end.status),
        summary=match_summary_to_pb(end.games_finished, end.seats),
        reason=end.reason,
    )
    if end.match_seed is not None:
        pb.match_seed = end.match_seed
    return pb


def match_end_from_pb(pb: game_pb2.MatchEnd, field: str = "match_end") -> MatchEnd:
    status = match_status_from_pb(pb.status, f"{field}.status")
    if status not in (MatchStatus.FINISHED, MatchStatus.CANCELLED, MatchStatus.FAILED):
        raise WireError(f"{field}.status", f"is {status.value}, not an end status")
    seats = tuple(
        SeatSummary(
            seat=s.seat,
            name=s.name,
            total_points=s.total_points,
            first_places=s.first_places,
            rank_sum=s.rank_sum,
            faults=s.faults,
            forfeits=s.forfeits,
        )
        for s in pb.summary.seats
    )
    return MatchEnd(
        status=status,
        match_seed=pb.match_seed if pb.HasField("match_seed") else None,
        games_finished=pb.summary.games_finished,
        seats=seats,
        reason=pb.reason,
    )
