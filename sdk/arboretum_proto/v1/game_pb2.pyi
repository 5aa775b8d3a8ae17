from arboretum_proto.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GameSetup(_message.Message):
    __slots__ = ("game_index", "game_count", "player_count", "species_in_play", "time_control", "fault_policy", "seat_names")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    GAME_COUNT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_COUNT_FIELD_NUMBER: _ClassVar[int]
    SPECIES_IN_PLAY_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    game_count: int
    player_count: int
    species_in_play: _containers.RepeatedScalarFieldContainer[_common_pb2.Species]
    time_control: _common_pb2.TimeControl
    fault_policy: _common_pb2.FaultPolicy
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game_index: _Optional[int] = ..., game_count: _Optional[int] = ..., player_count: _Optional[int] = ..., species_in_play: _Optional[_Iterable[_Union[_common_pb2.Species, str]]] = ..., time_control: _Optional[_Union[_common_pb2.TimeControl, _Mapping]] = ..., fault_policy: _Optional[_Union[_common_pb2.FaultPolicy, _Mapping]] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class SeatState(_message.Message):
    __slots__ = ("seat", "arboretum", "discard_pile", "hand_size", "known_hand_cards", "bank_left_ms", "faults", "forfeited")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ARBORETUM_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    KNOWN_HAND_CARDS_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    arboretum: _containers.RepeatedCompositeFieldContainer[_common_pb2.PlacedCard]
    discard_pile: _containers.RepeatedCompositeFieldContainer[_common_pb2.Card]
    hand_size: int
    known_hand_cards: _containers.RepeatedCompositeFieldContainer[_common_pb2.Card]
    bank_left_ms: int
    faults: int
    forfeited: bool
    def __init__(self, seat: _Optional[int] = ..., arboretum: _Optional[_Iterable[_Union[_common_pb2.PlacedCard, _Mapping]]] = ..., discard_pile: _Optional[_Iterable[_Union[_common_pb2.Card, _Mapping]]] = ..., hand_size: _Optional[int] = ..., known_hand_cards: _Optional[_Iterable[_Union[_common_pb2.Card, _Mapping]]] = ..., bank_left_ms: _Optional[int] = ..., faults: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

class PublicState(_message.Message):
    __slots__ = ("game_index", "turn_number", "current_seat", "deck_size", "seats")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    TURN_NUMBER_FIELD_NUMBER: _ClassVar[int]
    CURRENT_SEAT_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    turn_number: int
    current_seat: int
    deck_size: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatState]
    def __init__(self, game_index: _Optional[int] = ..., turn_number: _Optional[int] = ..., current_seat: _Optional[int] = ..., deck_size: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatState, _Mapping]]] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("seat", "hand", "board")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedCompositeFieldContainer[_common_pb2.Card]
    board: PublicState
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_common_pb2.Card, _Mapping]]] = ..., board: _Optional[_Union[PublicState, _Mapping]] = ...) -> None: ...

class DrawEvent(_message.Message):
    __slots__ = ("draw", "source", "card")
    DRAW_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    draw: _common_pb2.DecisionKind
    source: _common_pb2.DrawSource
    card: _common_pb2.Card
    def __init__(self, draw: _Optional[_Union[_common_pb2.DecisionKind, str]] = ..., source: _Optional[_Union[_common_pb2.DrawSource, _Mapping]] = ..., card: _Optional[_Union[_common_pb2.Card, _Mapping]] = ...) -> None: ...

class SecondDrawSkippedEvent(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PlayEvent(_message.Message):
    __slots__ = ("card", "cell")
    CARD_FIELD_NUMBER: _ClassVar[int]
    CELL_FIELD_NUMBER: _ClassVar[int]
    card: _common_pb2.Card
    cell: _common_pb2.Cell
    def __init__(self, card: _Optional[_Union[_common_pb2.Card, _Mapping]] = ..., cell: _Optional[_Union[_common_pb2.Cell, _Mapping]] = ...) -> None: ...

class DiscardEvent(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: _common_pb2.Card
    def __init__(self, card: _Optional[_Union[_common_pb2.Card, _Mapping]] = ...) -> None: ...

class FaultEvent(_message.Message):
    __slots__ = ("kind", "decision_kind", "decision_number", "faults")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DECISION_KIND_FIELD_NUMBER: _ClassVar[int]
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    kind: _common_pb2.FaultKind
    decision_kind: _common_pb2.DecisionKind
    decision_number: int
    faults: int
    def __init__(self, kind: _Optional[_Union[_common_pb2.FaultKind, str]] = ..., decision_kind: _Optional[_Union[_common_pb2.DecisionKind, str]] = ..., decision_number: _Optional[int] = ..., faults: _Optional[int] = ...) -> None: ...

class ForfeitEvent(_message.Message):
    __slots__ = ("faults",)
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    faults: int
    def __init__(self, faults: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("sequence", "turn_number", "seat", "draw", "second_draw_skipped", "play", "discard", "fault", "forfeit")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TURN_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DRAW_FIELD_NUMBER: _ClassVar[int]
    SECOND_DRAW_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    FORFEIT_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    turn_number: int
    seat: int
    draw: DrawEvent
    second_draw_skipped: SecondDrawSkippedEvent
    play: PlayEvent
    discard: DiscardEvent
    fault: FaultEvent
    forfeit: ForfeitEvent
    def __init__(self, sequence: _Optional[int] = ..., turn_number: _Optional[int] = ..., seat: _Optional[int] = ..., draw: _Optional[_Union[DrawEvent, _Mapping]] = ..., second_draw_skipped: _Optional[_Union[SecondDrawSkippedEvent, _Mapping]] = ..., play: _Optional[_Union[PlayEvent, _Mapping]] = ..., discard: _Optional[_Union[DiscardEvent, _Mapping]] = ..., fault: _Optional[_Union[FaultEvent, _Mapping]] = ..., forfeit: _Optional[_Union[ForfeitEvent, _Mapping]] = ...) -> None: ...

class SpeciesScore(_message.Message):
    __slots__ = ("species", "hand_total", "eight_cancelled", "has_right", "path", "card_points", "doubled", "start_bonus", "end_bonus", "points")
    SPECIES_FIELD_NUMBER: _ClassVar[int]
    HAND_TOTAL_FIELD_NUMBER: _ClassVar[int]
    EIGHT_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    HAS_RIGHT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CARD_POINTS_FIELD_NUMBER: _ClassVar[int]
    DOUBLED_FIELD_NUMBER: _ClassVar[int]
    START_BONUS_FIELD_NUMBER: _ClassVar[int]
    END_BONUS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    species: _common_pb2.Species
    hand_total: int
    eight_cancelled: bool
    has_right: bool
    path: _containers.RepeatedCompositeFieldContainer[_common_pb2.PlacedCard]
    card_points: int
    doubled: bool
    start_bonus: int
    end_bonus: int
    points: int
    def __init__(self, species: _Optional[_Union[_common_pb2.Species, str]] = ..., hand_total: _Optional[int] = ..., eight_cancelled: _Optional[bool] = ..., has_right: _Optional[bool] = ..., path: _Optional[_Iterable[_Union[_common_pb2.PlacedCard, _Mapping]]] = ..., card_points: _Optional[int] = ..., doubled: _Optional[bool] = ..., start_bonus: _Optional[int] = ..., end_bonus: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("seat", "name", "final_hand", "species_scores", "total", "species_in_arboretum", "forfeited", "rank", "faults")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FINAL_HAND_FIELD_NUMBER: _ClassVar[int]
    SPECIES_SCORES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    SPECIES_IN_ARBORETUM_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    final_hand: _containers.RepeatedCompositeFieldContainer[_common_pb2.Card]
    species_scores: _containers.RepeatedCompositeFieldContainer[SpeciesScore]
    total: int
    species_in_arboretum: int
    forfeited: bool
    rank: int
    faults: int
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., final_hand: _Optional[_Iterable[_Union[_common_pb2.Card, _Mapping]]] = ..., species_scores: _Optional[_Iterable[_Union[SpeciesScore, _Mapping]]] = ..., total: _Optional[int] = ..., species_in_arboretum: _Optional[int] = ..., forfeited: _Optional[bool] = ..., rank: _Optional[int] = ..., faults: _Optional[int] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("game_index", "seed", "species_in_play", "seats", "final_board", "turns")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SPECIES_IN_PLAY_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    FINAL_BOARD_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    seed: int
    species_in_play: _containers.RepeatedScalarFieldContainer[_common_pb2.Species]
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    final_board: PublicState
    turns: int
    def __init__(self, game_index: _Optional[int] = ..., seed: _Optional[int] = ..., species_in_play: _Optional[_Iterable[_Union[_common_pb2.Species, str]]] = ..., seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ..., final_board: _Optional[_Union[PublicState, _Mapping]] = ..., turns: _Optional[int] = ...) -> None: ...

class SeatSummary(_message.Message):
    __slots__ = ("seat", "name", "total_points", "first_places", "rank_sum", "faults", "forfeits")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOTAL_POINTS_FIELD_NUMBER: _ClassVar[int]
    FIRST_PLACES_FIELD_NUMBER: _ClassVar[int]
    RANK_SUM_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    total_points: int
    first_places: int
    rank_sum: int
    faults: int
    forfeits: int
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., total_points: _Optional[int] = ..., first_places: _Optional[int] = ..., rank_sum: _Optional[int] = ..., faults: _Optional[int] = ..., forfeits: _Optional[int] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("games_finished", "seats")
    GAMES_FINISHED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    games_finished: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatSummary]
    def __init__(self, games_finished: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatSummary, _Mapping]]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("status", "match_seed", "summary", "reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MATCH_SEED_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    status: _common_pb2.MatchStatus
    match_seed: int
    summary: MatchSummary
    reason: str
    def __init__(self, status: _Optional[_Union[_common_pb2.MatchStatus, str]] = ..., match_seed: _Optional[int] = ..., summary: _Optional[_Union[MatchSummary, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...
