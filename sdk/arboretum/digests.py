"""The digest chain of a replay (format version 2, ``docs/replay-format.md``): the deal's digest
starts it, and every step's ``digest`` hashes the previous link, the step as recorded and the whole
position after it, so that verification names the first step any edit changed.

:class:`Position` keeps a game's position bytes step by step and :class:`Chain` the links of a
recording; :mod:`arboretum.replay` re-exports :func:`chain_start`, :func:`position_bytes` and
:func:`step_digest`.
"""

from __future__ import annotations

import hashlib
import json
import sys
from array import array
from collections.abc import Mapping
from typing import Any

from .grid import BITS, OFFSET, STRIDE
from .state import GameState

__all__ = ["DIGEST_CHARS", "Chain", "Position", "chain_start", "position_bytes", "step_digest"]


def chain_start(state: GameState) -> str:
    """The chain's first link: the digest of the deal (players, species, full deck)."""
    deal = (
        f"arboretum-replay/2|{state.players}|{','.join(s.value for s in state.species)}|"
        f"{','.join(str(c) for c in state.initial_deck)}"
    )
    return hashlib.sha256(deal.encode()).hexdigest()[:DIGEST_CHARS]


def position_bytes(state: GameState) -> bytes:
    """The whole position as bytes in one canonical form: what a step's ``digest`` covers.

    The turn (2 bytes, big-endian), the seat due, the decision due (0 first draw, 1 second draw,
    2 play, 3 game over), 1 if the play must discard, the deck's size; then per seat in order: its
    hand's card ids sorted, its discard pile's bottom first, and its arboretum's cards in (x, y)
    order, each as x + 32768 and y + 32768 (2 bytes each, big-endian) and the card id, each of
    the three ended by a byte 255; last a byte per seat, 1 if it forfeited. A card's id is its
    species' index in the rules' order times 8, plus its value minus 1.
    """
    return Position(state).bytes()


def step_digest(
    previous: str, step: Mapping[str, Any], state: GameState, position: bytes | None = None
) -> str:
    """A step's ``digest``: the first 16 hex digits of SHA-256 over ``previous``, ``|``, the step
    and ``|``, then :func:`position_bytes` of the game after the step (``position``, when the
    caller has it). ``previous`` is the previous step's digest (or :func:`chain_start`). The step
    is its fields as compact JSON with sorted keys (UTF-8), without ``digest`` itself and without
    the details private to the seat's author, which a viewer may withhold: ``fault``, ``reason``."""
    body = _CANONICAL.encode({k: v for k, v in step.items() if k not in _UNDIGESTED})
    if position is None:
        position = position_bytes(state)
    data = f"{previous}|{body}|".encode() + position
    return hashlib.sha256(data).hexdigest()[:DIGEST_CHARS]


_UNDIGESTED = frozenset(("digest", "fault", "reason"))
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
DIGEST_CHARS = 16
_LITTLE_ENDIAN = sys.byteorder == "little"
_TO_UNSIGNED = (1 << 15) - OFFSET
"""From a packed coordinate (x + OFFSET) to x + 32768, as position_bytes writes it."""
_Y_MASK = STRIDE - 1


class Position:
    """:func:`position_bytes` of a game followed step by step: each seat's arboretum part is kept
    until the arboretum grows (one seat's, every third step or so)."""

    __slots__ = ("_arb_bytes", "_arb_sizes", "state")

    def __init__(self, state: GameState) -> None:
        self.state = state
        self._arb_bytes = [b"\xff"] * state.players
        self._arb_sizes = [0] * state.players

    def bytes(self) -> bytes:
        state = self.state
        out = bytearray(state.turn.to_bytes(2, "big"))
        out += bytes((state._seat, state._phase, state._discard_required, len(state._deck)))
        hands, piles, arbs = state._hands, state._piles, state._arbs
        sizes = self._arb_sizes
        for seat in range(state.players):
            out += bytes(sorted(hands[seat]))
            out += bytes(piles[seat]).join(_SEPARATORS)
            if len(arbs[seat]) != sizes[seat]:
                self._refresh(seat)
            out += self._arb_bytes[seat]
        out += bytes(state._forfeited)
        return bytes(out)

    def _refresh(self, seat: int) -> None:
        arb = self.state._arbs[seat]
        cells = sorted(arb)  # packed cells sort in (x, y) order
        coords = array("H")
        for packed in cells:
            coords.append((packed >> BITS) + _TO_UNSIGNED)
            coords.append((packed & _Y_MASK) + _TO_UNSIGNED)
        if _LITTLE_ENDIAN:
            coords.byteswap()
        raw = coords.tobytes()
        out = bytearray()
        for i, packed in enumerate(cells):
            out += raw[4 * i : 4 * i + 4]
            out.append(arb[packed])
        out.append(255)
        self._arb_bytes[seat] = bytes(out)
        self._arb_sizes[seat] = len(arb)


_SEPARATORS = (b"\xff", b"\xff")
"""A pile between two: the end of the hand before it and its own (see Position.bytes)."""


class Chain:
    """The digests of a recording: its own copy of the game, advanced step by step."""

    __slots__ = ("link_value", "position", "state")

    def __init__(self, state: GameState, start: str) -> None:
        self.state = state
        self.position = Position(state)
        self.link_value = start

    def link(self, step: dict[str, Any]) -> None:
        self.link_value = step["digest"] = step_digest(
            self.link_value, step, self.state, self.position.bytes()
        )
