from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Species(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SPECIES_UNSPECIFIED: _ClassVar[Species]
    SPECIES_BLUE_SPRUCE: _ClassVar[Species]
    SPECIES_CASSIA: _ClassVar[Species]
    SPECIES_CHERRY_BLOSSOM: _ClassVar[Species]
    SPECIES_DOGWOOD: _ClassVar[Species]
    SPECIES_JACARANDA: _ClassVar[Species]
    SPECIES_MAPLE: _ClassVar[Species]
    SPECIES_OAK: _ClassVar[Species]
    SPECIES_ROYAL_POINCIANA: _ClassVar[Species]
    SPECIES_TULIP_POPLAR: _ClassVar[Species]
    SPECIES_WILLOW: _ClassVar[Species]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_FIRST_DRAW: _ClassVar[DecisionKind]
    DECISION_KIND_SECOND_DRAW: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_CRASH: _ClassVar[FaultKind]
    FAULT_KIND_MALFORMED: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECT: _ClassVar[FaultKind]
    FAULT_KIND_BOT_ERROR: _ClassVar[FaultKind]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_CANCELLED: _ClassVar[MatchStatus]
    MATCH_STATUS_FAILED: _ClassVar[MatchStatus]
SPECIES_UNSPECIFIED: Species
SPECIES_BLUE_SPRUCE: Species
SPECIES_CASSIA: Species
SPECIES_CHERRY_BLOSSOM: Species
SPECIES_DOGWOOD: Species
SPECIES_JACARANDA: Species
SPECIES_MAPLE: Species
SPECIES_OAK: Species
SPECIES_ROYAL_POINCIANA: Species
SPECIES_TULIP_POPLAR: Species
SPECIES_WILLOW: Species
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_FIRST_DRAW: DecisionKind
DECISION_KIND_SECOND_DRAW: DecisionKind
DECISION_KIND_PLAY: DecisionKind
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_CRASH: FaultKind
FAULT_KIND_MALFORMED: FaultKind
FAULT_KIND_ILLEGAL: FaultKind
FAULT_KIND_DISCONNECT: FaultKind
FAULT_KIND_BOT_ERROR: FaultKind
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_CANCELLED: MatchStatus
MATCH_STATUS_FAILED: MatchStatus

class Card(_message.Message):
    __slots__ = ("species", "value")
    SPECIES_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    species: Species
    value: int
    def __init__(self, species: _Optional[_Union[Species, str]] = ..., value: _Optional[int] = ...) -> None: ...

class Cell(_message.Message):
    __slots__ = ("x", "y")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    x: int
    y: int
    def __init__(self, x: _Optional[int] = ..., y: _Optional[int] = ...) -> None: ...

class PlacedCard(_message.Message):
    __slots__ = ("card", "cell")
    CARD_FIELD_NUMBER: _ClassVar[int]
    CELL_FIELD_NUMBER: _ClassVar[int]
    card: Card
    cell: Cell
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ..., cell: _Optional[_Union[Cell, _Mapping]] = ...) -> None: ...

class Deck(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DrawSource(_message.Message):
    __slots__ = ("deck", "discard_seat")
    DECK_FIELD_NUMBER: _ClassVar[int]
    DISCARD_SEAT_FIELD_NUMBER: _ClassVar[int]
    deck: Deck
    discard_seat: int
    def __init__(self, deck: _Optional[_Union[Deck, _Mapping]] = ..., discard_seat: _Optional[int] = ...) -> None: ...

class PlayDecision(_message.Message):
    __slots__ = ("card", "cell", "discard")
    CARD_FIELD_NUMBER: _ClassVar[int]
    CELL_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    cell: Cell
    discard: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ..., cell: _Optional[_Union[Cell, _Mapping]] = ..., discard: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("first_draw", "second_draw", "play")
    FIRST_DRAW_FIELD_NUMBER: _ClassVar[int]
    SECOND_DRAW_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    first_draw: DrawSource
    second_draw: DrawSource
    play: PlayDecision
    def __init__(self, first_draw: _Optional[_Union[DrawSource, _Mapping]] = ..., second_draw: _Optional[_Union[DrawSource, _Mapping]] = ..., play: _Optional[_Union[PlayDecision, _Mapping]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("per_decision_ms", "bank_ms")
    PER_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    per_decision_ms: int
    bank_ms: int
    def __init__(self, per_decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class DecisionClock(_message.Message):
    __slots__ = ("per_decision_ms", "bank_left_ms", "elapsed_ms")
    PER_DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    per_decision_ms: int
    bank_left_ms: int
    elapsed_ms: int
    def __init__(self, per_decision_ms: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., elapsed_ms: _Optional[int] = ...) -> None: ...

class FaultPolicy(_message.Message):
    __slots__ = ("faults_to_forfeit",)
    FAULTS_TO_FORFEIT_FIELD_NUMBER: _ClassVar[int]
    faults_to_forfeit: int
    def __init__(self, faults_to_forfeit: _Optional[int] = ...) -> None: ...
