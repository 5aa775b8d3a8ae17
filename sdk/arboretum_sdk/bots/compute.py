"""How long a searching built-in bot thinks: a fixed number of simulations, or a wall-clock budget.

:attr:`Bot.compute <arboretum_sdk.Bot.compute>` chooses (``ARENA_COMPUTE``; a bot built with
``compute=`` overrides it):

- ``fixed``: exactly the bot's number of simulations for every decision, whatever the clock says, so
  that the same position and bot seed give the same decision on any machine (leagues, re-runs and
  the strength benchmarks use this);
- ``time``: as many simulations as fit in the budget (at most the fixed number), measured from the
  moment the request arrived (:attr:`Clock.received_at <arboretum_sdk.Clock.received_at>`), never
  more than half of the decision's free time left. The bot plans to stop at ``SAFETY`` of its
  budget and checks the clock between simulations and between the steps of its preparation, so that
  a stalled process still answers within its budget (the p99 figures are in docs/benchmarks.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from arboretum_sdk import Bot
from arboretum_sdk.bot import Compute

__all__ = ["SAFETY", "Allowance", "allowance"]

SAFETY = 0.85
"""The share of its budget a bot in time mode plans to use: the rest absorbs the time between two
clock checks, the answer's way out and a process the machine stalls now and then."""


@dataclass(frozen=True, slots=True)
class Allowance:
    """What one decision may spend: ``simulations`` at most, and, in time mode, until ``deadline``
    (a :func:`time.monotonic` instant)."""

    simulations: int
    deadline: float | None = None

    def over(self) -> bool:
        """Whether the time is up (never, in fixed mode)."""
        return self.deadline is not None and time.monotonic() >= self.deadline


def allowance(
    bot: Bot, simulations: int, budget: float, compute: Compute | None = None
) -> Allowance:
    """The allowance of the decision ``bot`` is asked now: ``simulations`` in fixed mode, or up to
    that many within ``budget`` seconds in time mode (``compute`` overrides ``bot.compute``)."""
    mode = compute or bot.compute
    if mode == "fixed":
        return Allowance(simulations)
    clock = bot.clock
    start = clock.received_at if clock is not None else time.monotonic()
    seconds = budget
    if clock is not None:
        # Never plan to use the bank: at most half of the free time of this decision.
        seconds = min(seconds, 0.5 * max(0.0, clock.free_ms / 1000))
    return Allowance(simulations, start + SAFETY * max(0.0, seconds))
