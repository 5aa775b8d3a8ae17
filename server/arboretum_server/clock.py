"""Clocks: the time control of a match and each seat's clock within a game.

Every decision has ``per_decision_ms`` (L) free; time beyond L comes from the seat's bank (B),
refilled at every game's start. A decision times out once its elapsed time exceeds L + bank left,
and the bank is then empty. Time is measured by the referee, from sending the request to receiving
the answer, on the event loop's monotonic clock.
"""

from __future__ import annotations

from arboretum_sdk.info import TimeControl

__all__ = ["MAX_BANK_MS", "MAX_PER_DECISION_MS", "SeatClock", "TimeControl", "check_time_control"]

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


class SeatClock:
    """One seat's clock in one game."""

    __slots__ = ("bank_left_ms", "per_decision_ms")

    def __init__(self, control: TimeControl) -> None:
        self.per_decision_ms = control.per_decision_ms
        self.bank_left_ms = control.bank_ms

    @property
    def budget_ms(self) -> int:
        """The longest a decision may take now: L + bank left."""
        return self.per_decision_ms + self.bank_left_ms

    def charge(self, elapsed_ms: float) -> None:
        """Charge an answered decision: the bank loses the time beyond L."""
        over = max(0.0, elapsed_ms - self.per_decision_ms)
        self.bank_left_ms = max(0, self.bank_left_ms - round(over))

    def expire(self) -> None:
        """The decision timed out: the bank is empty from now on."""
        self.bank_left_ms = 0
