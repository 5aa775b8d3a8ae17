"""The legal options of one decision as a lazy sequence (:class:`LegalDecisions`), shared by the
game state (every option of the decision due) and a seat's view (its own decision's options)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from .cards import ALL_CARDS, Card, Cell
from .decisions import DECK, Decision, DecisionKind, Draw, Play
from .grid import in_range, pack, unpack

__all__ = ["LegalDecisions"]

_PLAY_KIND = DecisionKind.PLAY  # a module constant is cheaper to look up than an enum member
_DRAWS = tuple(Draw(source) for source in range(DECK, 4))
"""The draw options (the deck, then the piles of seats 0 to 3), indexed by ``source + 1``:
decisions are immutable, so they are shared."""


class LegalDecisions(Sequence[Decision]):
    """The legal options for one decision, as a lazy sequence.

    Supports ``len``, indexing (so ``random.choice`` works), iteration and ``in``. Elements are
    :class:`Draw` or :class:`Play` objects, built only when asked for. A play option is indexed as
    ``(card, cell, discard)`` with the discard varying fastest.
    """

    __slots__ = ("_per_card", "_size", "cells", "discard", "hand", "kind", "sources")

    def __init__(
        self,
        kind: DecisionKind,
        sources: tuple[int, ...],
        hand: tuple[int, ...],
        cells: tuple[int, ...],
        discard: bool,
    ) -> None:
        self.kind = kind
        self.sources = sources
        self.hand = hand
        self.cells = cells
        self.discard = discard
        if kind is _PLAY_KIND:
            h = len(hand)
            self._per_card = len(cells) * (h - 1 if discard else 1)
            self._size = h * self._per_card
        else:
            self._per_card = 0
            self._size = len(sources)

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Decision: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Decision]: ...

    def __getitem__(self, index: int | slice) -> Decision | Sequence[Decision]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._size))]
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(index)
        if self.kind is not _PLAY_KIND:
            return _DRAWS[self.sources[index] + 1]
        hand = self.hand
        per_card = self._per_card
        i = index // per_card
        rest = index - i * per_card
        if self.discard:
            others = len(hand) - 1
            c = rest // others
            j = rest - c * others
            if j >= i:
                j += 1
            return Play(ALL_CARDS[hand[i]], unpack(self.cells[c]), ALL_CARDS[hand[j]])
        return Play(ALL_CARDS[hand[i]], unpack(self.cells[rest]), None)

    def __iter__(self) -> Iterator[Decision]:
        for i in range(self._size):
            yield self[i]

    def __contains__(self, decision: object) -> bool:
        if self.kind is _PLAY_KIND:
            if type(decision) is not Play:
                return False
            if decision.card.id not in self.hand:
                return False
            x, y = decision.cell
            if not in_range(x, y) or pack(x, y) not in self.cells:
                return False
            if self.discard:
                d = decision.discard
                return d is not None and d.id in self.hand and d is not decision.card
            return decision.discard is None
        return type(decision) is Draw and decision.source in self.sources

    def cards(self) -> tuple[Card, ...]:
        """The cards that may be played (the hand), for a PLAY decision."""
        return tuple(ALL_CARDS[c] for c in self.hand)

    def cell_options(self) -> tuple[Cell, ...]:
        """The cells where a card may be played, for a PLAY decision, in (x, y) order."""
        return tuple(unpack(p) for p in self.cells)

    def __repr__(self) -> str:
        return f"<LegalDecisions {self.kind.value}: {len(self)} options>"
