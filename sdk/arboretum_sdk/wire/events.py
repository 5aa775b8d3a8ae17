"""Public events, to and from protobuf: :class:`EventEncoder` numbers them, :func:`redact_event`
hides a deck card from all but its drawer, :class:`EventDecoder` reads them back."""

from __future__ import annotations

from collections.abc import Iterable

from arboretum import (
    DECK,
    Card,
    Cell,
    DecisionKind,
    DrawEvent,
    Event,
    ForfeitEvent,
    PlayEvent,
)
from arboretum_proto.v1 import common_pb2, game_pb2

from ..info import (
    FaultKind,
)
from .values import (
    WireError,
    _missing,
    card_from_pb,
    card_to_pb,
    cell_from_pb,
    cell_to_pb,
    fault_kind_from_pb,
    fault_kind_to_pb,
    kind_from_pb,
    kind_to_pb,
    source_from_pb,
    source_to_pb,
)

__all__ = ["EventDecoder", "EventEncoder", "event_to_pb", "events_from_pb", "redact_event"]


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
            # Skipped (it has no engine type); a kind this SDK does not know is accepted, so that
            # a kind added to v1 later leaves older clients working (docs/protocol.md).
            if pb.fault.kind == common_pb2.FAULT_KIND_UNSPECIFIED:
                fault_kind_from_pb(pb.fault.kind, f"{field}.fault.kind")  # raises, naming it
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
