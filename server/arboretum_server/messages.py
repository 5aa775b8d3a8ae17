"""What the referee tells bots and spectators, as plain values (no protobuf).

The match loop builds these from engine state only; the service layer turns them into protocol
messages (:mod:`arboretum_server.edge`). Nothing here is ever copied from what a bot sent.

Hidden information is kept out by construction: a :class:`Draw` of a deck card carries the card
only in the copy made for the drawer (:meth:`LoggedEvent.seen_by`), a :class:`View` holds one hand,
and a :class:`Board` holds public facts only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from arboretum import DECK, Card, Cell, DecisionKind, Species
from arboretum_sdk.info import Clock as ClockState
from arboretum_sdk.info import (
    FaultKind,
    FaultNotice,
    FaultPolicy,
    GameEnd,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    SeatSummary,
    TimeControl,
)

__all__ = [
    "Board",
    "ClockState",
    "DecisionPending",
    "DecisionRequest",
    "Discard",
    "Draw",
    "Fault",
    "FaultKind",
    "FaultNotice",
    "FaultPolicy",
    "Forfeit",
    "GameEnd",
    "GameOver",
    "GameSetup",
    "GameStart",
    "LoggedEvent",
    "MatchEnd",
    "MatchInfo",
    "MatchSnapshot",
    "MatchStatus",
    "MatchSummary",
    "Place",
    "SeatPublic",
    "SeatSummary",
    "SecondDrawSkipped",
    "View",
    "WatchGameEnd",
    "WatchGameStart",
    "is_over",
]


def is_over(status: MatchStatus) -> bool:
    return status in (MatchStatus.FINISHED, MatchStatus.CANCELLED, MatchStatus.FAILED)


# ----------------------------------------------------------------------------- events


# Event bodies are named tuples, not frozen dataclasses: the referee makes one or two per
# decision, and a named tuple is made in half the time. Their types differ in length or in what
# their fields hold, so no two bodies of different kinds are equal.


class Draw(NamedTuple):
    draw: DecisionKind
    source: int
    """``DECK`` or a seat whose discard pile was drawn from."""
    card: Card | None


class SecondDrawSkipped(NamedTuple):
    pass


class Place(NamedTuple):
    card: Card
    cell: Cell


class Discard(NamedTuple):
    card: Card


class Fault(NamedTuple):
    kind: FaultKind
    decision_kind: DecisionKind
    decision_number: int
    faults: int


class Forfeit(NamedTuple):
    faults: int


EventBody = Draw | SecondDrawSkipped | Place | Discard | Fault | Forfeit


class LoggedEvent(NamedTuple):
    """One event of a game's log, as the referee holds it (deck draws with their card). A named
    tuple, not a dataclass: the referee makes one or two per decision."""

    sequence: int
    turn_number: int
    seat: int
    body: EventBody

    def seen_by(self, viewer: int | None) -> LoggedEvent:
        """The event as ``viewer`` may see it (``None``: a spectator)."""
        body = self.body
        if isinstance(body, Draw) and body.source == DECK and viewer != self.seat:
            if body.card is None:
                return self
            hidden = Draw(body.draw, body.source, None)
            return LoggedEvent(self.sequence, self.turn_number, self.seat, hidden)
        return self


# ----------------------------------------------------------------------------- state


@dataclass(frozen=True, slots=True)
class SeatPublic:
    seat: int
    arboretum: tuple[tuple[Card, Cell], ...]
    discard_pile: tuple[Card, ...]
    hand_size: int
    known_hand_cards: tuple[Card, ...]
    bank_left_ms: int
    faults: int
    forfeited: bool


@dataclass(frozen=True, slots=True)
class Board:
    game_index: int
    turn_number: int
    current_seat: int
    deck_size: int
    seats: tuple[SeatPublic, ...]


@dataclass(frozen=True, slots=True)
class View:
    seat: int
    hand: tuple[Card, ...]
    board: Board


@dataclass(frozen=True, slots=True)
class GameSetup:
    game_index: int
    game_count: int
    players: int
    species: tuple[Species, ...]
    time_control: TimeControl
    fault_policy: FaultPolicy
    seat_names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MatchSummary:
    games_finished: int
    seats: tuple[SeatSummary, ...]


# ----------------------------------------------------------------------------- bot stream


@dataclass(frozen=True, slots=True)
class GameStart:
    setup: GameSetup
    seat: int
    view: View
    events: tuple[LoggedEvent, ...]
    resumed: bool
    bot_seed: int
    """The seat's own seed for this game (``arboretum.derive_bot_seed``)."""


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    number: int
    kind: DecisionKind
    game_index: int
    view: View
    events: tuple[LoggedEvent, ...]
    clock: ClockState
    discard_required: bool
    legal_sources: tuple[int, ...]
    legal_cells: tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class GameOver:
    """A game's end as a seat is told it: the result (the SDK's :class:`GameEnd`: the engine's
    result, the faults, the seed), the public board at the end, the events the seat has not
    seen yet."""

    game: GameEnd
    final_board: Board
    events: tuple[LoggedEvent, ...]


# ----------------------------------------------------------------------------- spectators


@dataclass(frozen=True, slots=True)
class SeatConnection:
    seat: int
    name: str
    connected: bool


@dataclass(frozen=True, slots=True)
class MatchSnapshot:
    """A match as anyone may see it at one moment: the seed only once the match is finished (the
    protocol's ``MatchInfo``; :class:`MatchInfo` is the SDK's, what a seat is told at its start)."""

    match_id: str
    players: int
    game_count: int
    match_seed: int | None
    species: tuple[Species, ...] | None
    time_control: TimeControl
    fault_policy: FaultPolicy
    seat_names: tuple[str, ...]
    start_timeout_ms: int
    status: MatchStatus
    current_game_index: int | None
    results: tuple[GameEnd, ...]
    final_boards: tuple[Board, ...]
    """The public board at the end of each game of ``results``."""
    summary: MatchSummary
    seats: tuple[SeatConnection, ...]
    created_unix_ms: int
    reason: str
    seat_time_controls: tuple[TimeControl, ...] = ()
    """Empty, or each seat's own clock (``MatchConfig.seat_time_controls``)."""


@dataclass(frozen=True, slots=True)
class WatchGameStart:
    setup: GameSetup
    board: Board
    events: tuple[LoggedEvent, ...]
    in_progress: bool


@dataclass(frozen=True, slots=True)
class WatchGameEnd:
    """A game's end as spectators are told it: its result and the public board at the end."""

    game: GameEnd
    final_board: Board


@dataclass(frozen=True, slots=True)
class DecisionPending:
    game_index: int
    seat: int
    number: int
    kind: DecisionKind
    clock: ClockState


BotMessage = MatchInfo | GameStart | DecisionRequest | FaultNotice | GameOver | MatchEnd
WatchMessage = (
    MatchSnapshot | WatchGameStart | LoggedEvent | DecisionPending | WatchGameEnd | MatchEnd
)
