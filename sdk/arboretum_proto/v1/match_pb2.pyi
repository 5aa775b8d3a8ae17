from arboretum_proto.v1 import common_pb2 as _common_pb2
from arboretum_proto.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MatchConfig(_message.Message):
    __slots__ = ("player_count", "match_seed", "game_count", "species", "time_control", "fault_policy", "seat_names", "start_timeout_ms", "game_seeds", "seat_time_controls")
    PLAYER_COUNT_FIELD_NUMBER: _ClassVar[int]
    MATCH_SEED_FIELD_NUMBER: _ClassVar[int]
    GAME_COUNT_FIELD_NUMBER: _ClassVar[int]
    SPECIES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    START_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    GAME_SEEDS_FIELD_NUMBER: _ClassVar[int]
    SEAT_TIME_CONTROLS_FIELD_NUMBER: _ClassVar[int]
    player_count: int
    match_seed: int
    game_count: int
    species: _containers.RepeatedScalarFieldContainer[_common_pb2.Species]
    time_control: _common_pb2.TimeControl
    fault_policy: _common_pb2.FaultPolicy
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    start_timeout_ms: int
    game_seeds: _containers.RepeatedScalarFieldContainer[int]
    seat_time_controls: _containers.RepeatedCompositeFieldContainer[_common_pb2.TimeControl]
    def __init__(self, player_count: _Optional[int] = ..., match_seed: _Optional[int] = ..., game_count: _Optional[int] = ..., species: _Optional[_Iterable[_Union[_common_pb2.Species, str]]] = ..., time_control: _Optional[_Union[_common_pb2.TimeControl, _Mapping]] = ..., fault_policy: _Optional[_Union[_common_pb2.FaultPolicy, _Mapping]] = ..., seat_names: _Optional[_Iterable[str]] = ..., start_timeout_ms: _Optional[int] = ..., game_seeds: _Optional[_Iterable[int]] = ..., seat_time_controls: _Optional[_Iterable[_Union[_common_pb2.TimeControl, _Mapping]]] = ...) -> None: ...

class SeatToken(_message.Message):
    __slots__ = ("seat", "name", "token")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    token: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., token: _Optional[str] = ...) -> None: ...

class SeatConnection(_message.Message):
    __slots__ = ("seat", "name", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., connected: _Optional[bool] = ...) -> None: ...

class MatchInfo(_message.Message):
    __slots__ = ("match_id", "config", "status", "current_game_index", "results", "summary", "seats", "created_unix_ms", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    config: MatchConfig
    status: _common_pb2.MatchStatus
    current_game_index: int
    results: _containers.RepeatedCompositeFieldContainer[_game_pb2.GameResult]
    summary: _game_pb2.MatchSummary
    seats: _containers.RepeatedCompositeFieldContainer[SeatConnection]
    created_unix_ms: int
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., config: _Optional[_Union[MatchConfig, _Mapping]] = ..., status: _Optional[_Union[_common_pb2.MatchStatus, str]] = ..., current_game_index: _Optional[int] = ..., results: _Optional[_Iterable[_Union[_game_pb2.GameResult, _Mapping]]] = ..., summary: _Optional[_Union[_game_pb2.MatchSummary, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatConnection, _Mapping]]] = ..., created_unix_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("protocol_version", "config", "match_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    config: MatchConfig
    match_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., config: _Optional[_Union[MatchConfig, _Mapping]] = ..., match_id: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("protocol_version", "match_id", "seat_tokens")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    seat_tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("protocol_version", "match_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("protocol_version", "match")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match: MatchInfo
    def __init__(self, protocol_version: _Optional[int] = ..., match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("protocol_version", "status", "page_size", "page_token")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    status: _common_pb2.MatchStatus
    page_size: int
    page_token: str
    def __init__(self, protocol_version: _Optional[int] = ..., status: _Optional[_Union[_common_pb2.MatchStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("protocol_version", "matches", "next_page_token")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    matches: _containers.RepeatedCompositeFieldContainer[MatchInfo]
    next_page_token: str
    def __init__(self, protocol_version: _Optional[int] = ..., matches: _Optional[_Iterable[_Union[MatchInfo, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("protocol_version", "match_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ...) -> None: ...

class WatchGameStart(_message.Message):
    __slots__ = ("setup", "board", "events", "in_progress")
    SETUP_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    IN_PROGRESS_FIELD_NUMBER: _ClassVar[int]
    setup: _game_pb2.GameSetup
    board: _game_pb2.PublicState
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    in_progress: bool
    def __init__(self, setup: _Optional[_Union[_game_pb2.GameSetup, _Mapping]] = ..., board: _Optional[_Union[_game_pb2.PublicState, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., in_progress: _Optional[bool] = ...) -> None: ...

class DecisionPending(_message.Message):
    __slots__ = ("game_index", "seat", "decision_number", "kind", "clock")
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECISION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    game_index: int
    seat: int
    decision_number: int
    kind: _common_pb2.DecisionKind
    clock: _common_pb2.DecisionClock
    def __init__(self, game_index: _Optional[int] = ..., seat: _Optional[int] = ..., decision_number: _Optional[int] = ..., kind: _Optional[_Union[_common_pb2.DecisionKind, str]] = ..., clock: _Optional[_Union[_common_pb2.DecisionClock, _Mapping]] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("protocol_version", "match", "game_start", "event", "decision_pending", "game_end", "match_end")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    GAME_START_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    DECISION_PENDING_FIELD_NUMBER: _ClassVar[int]
    GAME_END_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match: MatchInfo
    game_start: WatchGameStart
    event: _game_pb2.Event
    decision_pending: DecisionPending
    game_end: _game_pb2.GameResult
    match_end: _game_pb2.MatchEnd
    def __init__(self, protocol_version: _Optional[int] = ..., match: _Optional[_Union[MatchInfo, _Mapping]] = ..., game_start: _Optional[_Union[WatchGameStart, _Mapping]] = ..., event: _Optional[_Union[_game_pb2.Event, _Mapping]] = ..., decision_pending: _Optional[_Union[DecisionPending, _Mapping]] = ..., game_end: _Optional[_Union[_game_pb2.GameResult, _Mapping]] = ..., match_end: _Optional[_Union[_game_pb2.MatchEnd, _Mapping]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("protocol_version", "match_id", "game_index")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    game_index: int
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ..., game_index: _Optional[int] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("protocol_version", "match_id", "game_index", "replay_json", "complete")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_INDEX_FIELD_NUMBER: _ClassVar[int]
    REPLAY_JSON_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    game_index: int
    replay_json: str
    complete: bool
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ..., game_index: _Optional[int] = ..., replay_json: _Optional[str] = ..., complete: _Optional[bool] = ...) -> None: ...

class CancelMatchRequest(_message.Message):
    __slots__ = ("protocol_version", "match_id", "reason")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match_id: str
    reason: str
    def __init__(self, protocol_version: _Optional[int] = ..., match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelMatchResponse(_message.Message):
    __slots__ = ("protocol_version", "match")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    match: MatchInfo
    def __init__(self, protocol_version: _Optional[int] = ..., match: _Optional[_Union[MatchInfo, _Mapping]] = ...) -> None: ...
