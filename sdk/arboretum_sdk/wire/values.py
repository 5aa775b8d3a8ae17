"""Protocol v1's small values: the enums, cards, cells and draw sources, and :class:`WireError`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar, cast

from arboretum import (
    DECK,
    Card,
    Cell,
    DecisionKind,
    Species,
)
from arboretum_proto.v1 import common_pb2

from ..errors import SdkError
from ..info import (
    FaultKind,
    MatchStatus,
)

__all__ = [
    "PROTOCOL_VERSION",
    "WireError",
    "card_from_pb",
    "card_to_pb",
    "cell_from_pb",
    "cell_to_pb",
    "fault_kind_from_pb",
    "fault_kind_to_pb",
    "kind_from_pb",
    "kind_to_pb",
    "match_status_from_pb",
    "match_status_to_pb",
    "source_from_pb",
    "source_to_pb",
    "species_from_pb",
    "species_to_pb",
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
    FaultKind.BOT_ERROR: common_pb2.FAULT_KIND_BOT_ERROR,
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


_PB_CARDS: dict[tuple[int, int], Card] = {
    (species.index + 1, value): Card(species, value) for species in Species for value in range(1, 9)
}
"""Every card by its protobuf (species value, value): decoding a card is one lookup."""


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
