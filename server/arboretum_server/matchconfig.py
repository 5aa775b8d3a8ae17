"""What defines a match: its seats, games, seeds, clock and fault policy (:class:`MatchConfig`).

The clock: every decision has ``per_decision_ms`` (L) free; time beyond L comes from the seat's
bank (B), refilled at every game's start. A decision times out once its elapsed time exceeds
L + bank left, and the bank is then empty (``game.SeatClock``). Time is measured by the referee,
from sending the request to receiving the answer, on the event loop's monotonic clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arboretum import (
    Species,
)
from arboretum_sdk.clitools import plural
from arboretum_sdk.info import TimeControl

from .messages import FaultPolicy, MatchInfo

__all__ = [
    "MAX_BANK_MS",
    "MAX_PER_DECISION_MS",
    "MatchConfig",
    "TimeControl",
    "check_time_control",
]

MAX_PER_DECISION_MS = 600_000
MAX_BANK_MS = 3_600_000


def check_time_control(control: TimeControl) -> TimeControl:
    """``control`` if it is valid (L > 0, B >= 0, neither absurd); raises ValueError otherwise."""
    if not 0 < control.per_decision_ms <= MAX_PER_DECISION_MS:
        raise ValueError(
            f"per_decision_ms must be 1 to {MAX_PER_DECISION_MS}, got {control.per_decision_ms}"
        )
    if not 0 <= control.bank_ms <= MAX_BANK_MS:
        raise ValueError(f"bank_ms must be 0 to {MAX_BANK_MS}, got {control.bank_ms}")
    return control


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """Everything that defines a match. ``match_seed`` is always set on a created match.

    ``game_seeds``: empty, or each game's seed (then ``match_seed`` derives none of them).
    ``seat_time_controls``: empty, or each seat's own clock in place of ``time_control`` (a
    person's seat with a generous clock among bots with the usual one, docs/play.md)."""

    players: int
    match_seed: int
    game_count: int = 1
    species: tuple[Species, ...] | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    seat_names: tuple[str, ...] = ()
    start_timeout_ms: int = 60000
    game_seeds: tuple[int, ...] = ()
    seat_time_controls: tuple[TimeControl, ...] = ()

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise ValueError(f"a match has 2, 3 or 4 seats, not {self.players}")
        if self.game_count < 1:
            raise ValueError(f"a match has at least 1 game, not {self.game_count}")
        if not 0 <= self.match_seed < 1 << 64:
            raise ValueError("a match seed is an integer from 0 to 2**64-1")
        if self.game_seeds:
            if len(self.game_seeds) != self.game_count:
                raise ValueError(
                    f"{plural(len(self.game_seeds), 'game seed')} for "
                    f"{plural(self.game_count, 'game')}"
                )
            if not all(0 <= seed < 1 << 64 for seed in self.game_seeds):
                raise ValueError("a game seed is an integer from 0 to 2**64-1")
        if not self.seat_names:
            object.__setattr__(self, "seat_names", tuple(f"seat {i}" for i in range(self.players)))
        if len(self.seat_names) != self.players:
            raise ValueError(f"{self.players} seats need {self.players} names")
        if self.start_timeout_ms < 1:
            raise ValueError("start_timeout_ms must be > 0")
        check_time_control(self.time_control)
        if self.seat_time_controls:
            if len(self.seat_time_controls) != self.players:
                raise ValueError(
                    f"{plural(len(self.seat_time_controls), 'seat time control')} for "
                    f"{plural(self.players, 'seat')}"
                )
            for seat, control in enumerate(self.seat_time_controls):
                try:
                    check_time_control(control)
                except ValueError as exc:
                    raise ValueError(f"seat {seat}'s time control: {exc}") from None
        if self.fault_policy.faults_to_forfeit < 1:
            raise ValueError("faults_to_forfeit must be >= 1")
        if self.species is not None and len(set(self.species)) != len(self.species):
            raise ValueError("the species must be distinct")

    def seat_clock(self, seat: int) -> TimeControl:
        """The time control of ``seat``: its own, or the match's."""
        return self.seat_time_controls[seat] if self.seat_time_controls else self.time_control

    def seat_info(self, match_id: str, seat: int, resumed: bool) -> MatchInfo:
        """What ``seat`` is told when its stream opens (``resumed``: it had one before)."""
        return MatchInfo(
            match_id=match_id,
            seat=seat,
            players=self.players,
            game_count=self.game_count,
            seat_names=self.seat_names,
            time_control=self.seat_clock(seat),
            fault_policy=self.fault_policy,
            resumed=resumed,
        )
