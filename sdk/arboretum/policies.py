"""The built-in random policy, shared by ``arena simulate``, the ``random`` bot and benchmarks.

It picks uniformly among the legal options of each decision: a draw source, then a (card, cell,
discard) combination.
"""

from __future__ import annotations

import random

from .decisions import Decision
from .state import GameState
from .views import SeatView

__all__ = ["random_decision"]


def random_decision(position: GameState | SeatView, rng: random.Random) -> Decision:
    """A uniformly random legal decision for the seat due in ``position``."""
    legal = position.legal_decisions()
    count = len(legal)
    if not count:
        raise ValueError("no decision is due")
    if type(rng) is not random.Random:
        return legal[rng.randrange(count)]
    # rng.randrange(count), draw for draw, without its argument checks (a hot path of simulations).
    bits = count.bit_length()
    index = rng.getrandbits(bits)
    while index >= count:
        index = rng.getrandbits(bits)
    return legal[index]
