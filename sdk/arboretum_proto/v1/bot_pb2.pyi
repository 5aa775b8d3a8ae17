from arboretum_proto.v1 import common_pb2 as _common_pb2
from arboretum_proto.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("protocol_version", "answer", "failure")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    FAILURE_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    answer: DecisionAnswer
    failure: DecisionFailure
    def __init__(self, protocol_version: _Optional[int] = ..., answer: _Optional[_Union[DecisionAnswer, _Mapping]] = ..., failure: _Optional[_Union[DecisionFailure, _Mapping]] = ...) -> None: ...

class DecisionAnswer(_message.Message):
    __slots__ = ("decision_number", "decision", "malformed_reason")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    MALFORMED_REASON_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    decision: _common_pb2.Decision
    malformed_reason: str
    def __init__(self, decision_number: _Optional[int] = ..., decision: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., malformed_reason: _Optional[str] = ...) -> None: ...

class DecisionFailure(_message.Message):
    __slots__ = ("decision_number", "error_type", "message")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ERROR_TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    error_type: str
    message: str
    def __init__(self, decision_number: _Optional[int] = ..., error_type: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("protocol_version", "match_start", "game_start", "decision_request", "fault_notice", "game_end", "match_end")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    FAULT_NOTICE_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_start: MatchStart
    game_start: GameStart
    decision_request: DecisionRequest
    fault_notice: FaultNotice
    game_end: GameEnd
    match_end: _game_pb2.MatchEnd
    def __init__(self, protocol_version: _Optional[int] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., game_start: _Optional[_Union[GameStart, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., fault_notice: _Optional[_Union[FaultNotice, _Mapping]] = ..., game_end: _Optional[_Union[GameEnd, _Mapping]] = ..., match_end: _Optional[_Union[_game_pb2.MatchEnd, _Mapping]] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "player_count", "game_count", "seat_names", "time_control", "fault_policy", "resumed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_COUNT_FIELD_NUMBER: _ClassVar[int]
    GAME_COUNT_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    player_count: int
    game_count: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    time_control: _common_pb2.TimeControl
    fault_policy: _common_pb2.FaultPolicy
    resumed: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., player_count: _Optional[int] = ..., game_count: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ..., time_control: _Optional[_Union[_common_pb2.TimeControl, _Mapping]] = ..., fault_policy: _Optional[_Union[_common_pb2.FaultPolicy, _Mapping]] = ..., resumed: _Optional[bool] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("setup", "seat", "view", "events", "resumed", "bot_seed")
    SETUP_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    setup: _game_pb2.GameSetup
    seat: int
    view: _game_pb2.SeatView
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    resumed: bool
    bot_seed: int
    def __init__(self, setup: _Optional[_Union[_game_pb2.GameSetup, _Mapping]] = ..., seat: _Optional[int] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., resumed: _Optional[bool] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("decision_number", "kind", "game_index", "view", "events", "clock", "discard_required", "legal_sources", "legal_cells")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    DISCARD_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    LEGAL_SOURCES_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CELLS_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    kind: _common_pb2.DecisionKind
    game_index: int
    view: _game_pb2.SeatView
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    clock: _common_pb2.DecisionClock
    discard_required: bool
    legal_sources: _containers.RepeatedCompositeFieldContainer[_common_pb2.DrawSource]
    legal_cells: _containers.RepeatedCompositeFieldContainer[_common_pb2.Cell]
    def __init__(self, decision_number: _Optional[int] = ..., kind: _Optional[_Union[_common_pb2.DecisionKind, str]] = ..., game_index: _Optional[int] = ..., view: _Optional[_Union[_game_pb2.SeatView, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., clock: _Optional[_Union[_common_pb2.DecisionClock, _Mapping]] = ..., discard_required: _Optional[bool] = ..., legal_sources: _Optional[_Iterable[_Union[_common_pb2.DrawSource, _Mapping]]] = ..., legal_cells: _Optional[_Iterable[_Union[_common_pb2.Cell, _Mapping]]] = ...) -> None: ...

class FaultNotice(_message.Message):
    __slots__ = ("decision_number", "game_index", "decision_kind", "kind", "reason", "fallback", "faults", "forfeited")
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    DECISION_KIND_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    decision_number: int
    game_index: int
    decision_kind: _common_pb2.DecisionKind
    kind: _common_pb2.FaultKind
    reason: str
    fallback: _common_pb2.Decision
    faults: int
    forfeited: bool
    def __init__(self, decision_number: _Optional[int] = ..., game_index: _Optional[int] = ..., decision_kind: _Optional[_Union[_common_pb2.DecisionKind, str]] = ..., kind: _Optional[_Union[_common_pb2.FaultKind, str]] = ..., reason: _Optional[str] = ..., fallback: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., faults: _Optional[int] = ..., forfeited: _Optional[bool] = ...) -> None: ...

class GameEnd(_message.Message):
    __slots__ = ("result", "events")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    result: _game_pb2.GameResult
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, result: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...
