"""How a sequential test's pairs are laid out, wherever they are played (locally or on league
workers): deals, batches and the scores read from a game's result.

**Batches.** Pairs are played in batches of ``batch`` pairs: one match per seating, each of
``batch`` games, so a bot process starts once per batch and seating instead of once per game.
Batch ``b`` holds pairs ``b * batch`` to ``b * batch + batch - 1`` (the last batch stops at the
cap). Its two matches have the same match seed, :func:`batch_seed`, so game ``i`` of both is the
same deal (``arboretum.derive_game_seed(seed, i)``): NEW moves first in one match and second in
the other, and the pair is complete when both have played game ``i``. Each match has its own bot
processes, so no process ever sees a deal twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from .stats import game_score

__all__ = ["NEW", "OLD", "SEATINGS", "batch_pairs", "batch_seed", "new_score"]

NEW, OLD = 0, 1
SEATINGS = ((NEW, OLD), (OLD, NEW))
"""Who sits where in the batch's two matches: NEW first, then OLD first."""


def batch_seed(test_seed: int, batch: int) -> int:
    """The match seed of both matches of batch ``batch``: first 8 bytes of
    sha256("arboretum-sprt:{test seed}:{batch}")."""
    digest = hashlib.sha256(f"arboretum-sprt:{test_seed}:{batch}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def batch_pairs(batch: int, size: int, max_pairs: int | None) -> int:
    """How many pairs batch ``batch`` holds (0 past the cap)."""
    if max_pairs is None:
        return size
    return max(0, min(size, max_pairs - batch * size))


def new_score(seats: Sequence[int], ranks: Sequence[int]) -> float:
    """NEW's score in a game: ``seats[s]`` is who sat at seat s, ``ranks[s]`` that seat's rank."""
    seat = list(seats).index(NEW)
    return game_score(ranks[seat], ranks)
