"""How long a searching built-in bot thinks: a fixed number of simulations, or a wall-clock budget.

:attr:`Bot.compute <arboretum_sdk.Bot.compute>` chooses (``ARENA_COMPUTE``; a bot built with
``compute=`` overrides it):

- ``fixed``: exactly the bot's number of simulations for every decision, whatever the clock says, so
  that the same position and bot seed give the same decision on any machine (leagues, re-runs and
  the strength benchmarks use this);
- ``time``: as many simulations as fit in the budget (at most the fixed number), measured from the
  moment the request arrived (:attr:`Clock.received_at <arboretum_sdk.Clock.received_at>`), never
  more than half of the decision's free time left. The bot plans to stop at :func:`planned` of its
  budget and checks :meth:`Allowance.over` between simulations and between the steps of its
  preparation, so that it still answers within its budget when the machine stalls it (the p99
  figures are in docs/benchmarks.md).

How a bot uses it (``search`` does; a new bot should too)::

    allow = allowance(self, self.simulations, self.budget)   # at the start of choose()
    while rounds < allow.simulations and not allow.over():  # and in every long loop
        ...

The time a decision takes, as the referee measures it, is the bot's own time plus what it cannot
see: the request's and the answer's way through the machine, and the moments a loaded machine does
not run the process at all (on the two-core development machine under the series benchmark's
load, gaps of 100-300 ms between two clock checks that take microseconds on a quiet one). So the
plan keeps :data:`STALL_MARGIN` in hand as well as a share of the budget.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from arboretum_sdk import Bot
from arboretum_sdk.bot import Compute

__all__ = ["SAFETY", "STALL_MARGIN", "Allowance", "allowance", "planned"]

SAFETY = 0.85
"""The largest share of its budget a bot in time mode plans to use."""
STALL_MARGIN = 0.15
"""Seconds of its budget a bot in time mode keeps in hand (but never more than half the budget):
for the time between two clock checks, the request's and the answer's way, and a process that the
machine stalls now and then."""


def planned(budget: float) -> float:
    """The seconds a bot in time mode plans to spend of ``budget``: at most :data:`SAFETY` of it,
    and :data:`STALL_MARGIN` less than it unless that is under half of it."""
    budget = max(0.0, budget)
    return min(SAFETY * budget, max(0.5 * budget, budget - STALL_MARGIN))


@dataclass(frozen=True, slots=True)
class Allowance:
    """What one decision may spend: ``simulations`` at most, and, in time mode, until ``deadline``
    (a :func:`time.monotonic` instant)."""

    simulations: int
    deadline: float | None = None

    def over(self) -> bool:
        """Whether the time is up (never, in fixed mode)."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def left(self) -> float:
        """Seconds until the deadline (0 once it has passed; infinite in fixed mode)."""
        if self.deadline is None:
            return math.inf
        return max(0.0, self.deadline - time.monotonic())


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
    return Allowance(simulations, start + planned(seconds))
