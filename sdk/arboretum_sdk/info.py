"""Small engine-typed value objects that a bot receives besides its :class:`~arboretum.SeatView`.

They carry what the referee tells a seat about the match, a game, its clock and its faults, in the
engine's own types (:class:`~arboretum.Species`, :class:`~arboretum.Decision`,
:class:`~arboretum.GameResult`, ...). No protobuf here: :mod:`arboretum_sdk.wire` builds them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum

from arboretum import Decision, DecisionKind, Event, GameResult, SeatView, Species

__all__ = [
    "DEFAULT_BANK_MS",
    "DEFAULT_FAULTS_TO_FORFEIT",
    "DEFAULT_PER_DECISION_MS",
    "Clock",
    "FaultKind",
    "FaultNotice",
    "FaultPolicy",
    "GameEnd",
    "GameInfo",
    "MatchEnd",
    "MatchInfo",
    "MatchStatus",
    "SeatSummary",
    "TimeControl",
]


class FaultKind(StrEnum):
    """Why a decision faulted (see docs/protocol.md, "Faults, fallbacks and forfeits")."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    DISCONNECT = "disconnect"
    BOT_ERROR = "bot_error"


class MatchStatus(StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"


DEFAULT_PER_DECISION_MS = 1000
"""The free time per decision (L) wherever a match's clock is not given (docs/protocol.md)."""
DEFAULT_BANK_MS = 10_000
"""The bank per seat per game (B) wherever a match's clock is not given."""
DEFAULT_FAULTS_TO_FORFEIT = 3
"""The faults in a game that forfeit it wherever a match's fault policy is not given."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """A match's clock: ``per_decision_ms`` free per decision, then the per-game ``bank_ms``.

    The one definition: the referee, ``arena play``, ``arena sprt``, the league's settings and the
    web all use it and its defaults."""

    per_decision_ms: int = DEFAULT_PER_DECISION_MS
    """Time a seat may use per decision before its bank is drawn on."""
    bank_ms: int = DEFAULT_BANK_MS
    """Extra time for the whole game, drawn on when a decision takes longer."""


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """A seat forfeits the current game at its ``faults_to_forfeit``-th fault in that game
    (timeouts, illegal or malformed decisions, ...)."""

    faults_to_forfeit: int = DEFAULT_FAULTS_TO_FORFEIT


@dataclass(frozen=True, slots=True)
class Clock:
    """This seat's clock for the decision being asked.

    ``received_at`` is the :func:`time.monotonic` instant the request arrived; the referee's clock
    started a little earlier (network time counts), so keep a margin.
    """

    per_decision_ms: int
    """The free time for this decision."""
    bank_left_ms: int
    """The bank left in this game, before this decision is charged."""
    elapsed_ms: int = 0
    """Time already spent when the request was sent (non-zero only after a reconnection)."""
    received_at: float = field(default_factory=time.monotonic)

    @property
    def limit_ms(self) -> int:
        """Total time for this decision from the request's arrival: free time plus bank, minus
        the time already spent. Answering later than this is a timeout fault."""
        return max(0, self.per_decision_ms + self.bank_left_ms - self.elapsed_ms)

    @property
    def free_ms(self) -> int:
        """The part of :attr:`limit_ms` that does not touch the bank."""
        return max(0, self.per_decision_ms - self.elapsed_ms)

    @property
    def deadline(self) -> float:
        """The :func:`time.monotonic` instant at which this decision times out."""
        return self.received_at + self.limit_ms / 1000

    def remaining(self) -> float:
        """Seconds left before the timeout, now (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def free_remaining(self) -> float:
        """Seconds left before the bank starts being charged, now (never negative)."""
        return max(0.0, self.received_at + self.free_ms / 1000 - time.monotonic())


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """Sent at the start of every stream (``resumed`` after a reconnection)."""

    match_id: str
    seat: int
    players: int
    game_count: int
    seat_names: tuple[str, ...]
    time_control: TimeControl
    fault_policy: FaultPolicy
    resumed: bool = False


@dataclass(frozen=True, slots=True)
class GameInfo:
    """A game starts (or, ``resumed``, is in progress after a reconnection)."""

    game_index: int
    game_count: int
    players: int
    species: tuple[Species, ...]
    seat: int
    seat_names: tuple[str, ...]
    time_control: TimeControl
    fault_policy: FaultPolicy
    view: SeatView
    """This seat's view now: at a fresh start, the dealt hand."""
    events: tuple[Event, ...] = ()
    """On a resumed game, every event so far as this seat saw it; empty at a fresh start."""
    resumed: bool = False
    bot_seed: int = 0
    """This seat's own seed for the game, from the referee (``arboretum.derive_bot_seed`` of the
    game's seed and the seat): one-way, so it reveals nothing of the deal. :attr:`Bot.rng` is
    seeded from it."""


@dataclass(frozen=True, slots=True)
class FaultNotice:
    """One of this seat's decisions faulted; the referee applied ``fallback`` instead."""

    decision_number: int
    game_index: int
    decision_kind: DecisionKind
    kind: FaultKind
    reason: str
    fallback: Decision
    faults: int
    """This seat's fault count in this game, this fault included."""
    forfeited: bool
    """True when this fault made the seat forfeit the game."""

    def __str__(self) -> str:
        text = (
            f"fault {self.kind.value} on decision {self.decision_number} "
            f"({self.decision_kind.value}, game {self.game_index}): {self.reason}; "
            f"fallback applied: {self.fallback}; faults this game: {self.faults}"
        )
        return text + ("; the seat forfeits this game" if self.forfeited else "")


@dataclass(frozen=True, slots=True)
class GameEnd:
    """A finished game, as the referee reports it: the engine's result plus the referee's data."""

    game_index: int
    seed: int
    species: tuple[Species, ...]
    turns: int
    seat_names: tuple[str, ...]
    faults: tuple[int, ...]
    result: GameResult
    events: tuple[Event, ...] = ()
    """The game's last events, not yet seen by this seat."""


@dataclass(frozen=True, slots=True)
class SeatSummary:
    seat: int
    name: str
    total_points: int
    first_places: int
    rank_sum: int
    faults: int
    forfeits: int


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The match ended: every game played (``FINISHED``), or stopped early."""

    status: MatchStatus
    match_seed: int | None
    """Revealed only when the status is ``FINISHED``."""
    games_finished: int
    seats: tuple[SeatSummary, ...]
    reason: str = ""
