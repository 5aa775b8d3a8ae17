"""The legal options of one decision as a lazy sequence (:class:`LegalDecisions`), shared by the
game state (every option of the decision due) and a seat's view (its own decision's options);
the fallback decision among them; and the checks of a decision from outside
(:func:`check_draw`, :func:`check_play`), each raising :class:`IllegalDecisionError` naming the
rule broken, on the game state's own representation (card ids, packed cells)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from .cards import ALL_CARDS, Card, Cell
from .decisions import DECK, PLAY, Decision, DecisionKind, Draw, Play
from .errors import IllegalDecisionError, NotationError, Rule
from .grid import BITS, LIMIT, OFFSET, ORIGIN, in_range, pack, unpack

__all__ = ["LegalDecisions", "check_draw", "check_play"]

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

    def fallback(self) -> Decision:
        """The documented decision the referee applies for a seat that faulted or forfeited: a
        draw takes the first source (the deck if it has cards, else the lowest-numbered non-empty
        pile); a play puts the lowest card of the hand on the first legal cell in (x, y) order and
        discards the lowest remaining card."""
        if self.kind is not _PLAY_KIND:
            return _DRAWS[self.sources[0] + 1]
        hand = self.hand
        discard = ALL_CARDS[hand[1]] if self.discard else None
        return Play(ALL_CARDS[hand[0]], unpack(self.cells[0]), discard)

    def cards(self) -> tuple[Card, ...]:
        """The cards that may be played (the hand), for a PLAY decision."""
        return tuple(ALL_CARDS[c] for c in self.hand)

    def cell_options(self) -> tuple[Cell, ...]:
        """The cells where a card may be played, for a PLAY decision, in (x, y) order."""
        return tuple(unpack(p) for p in self.cells)

    def __repr__(self) -> str:
        return f"<LegalDecisions {self.kind.value}: {len(self)} options>"


def check_draw(
    phase: int, source: object, players: int, deck: list[int], piles: list[list[int]]
) -> None:
    """Raise unless a draw from ``source`` is legal now (``phase``: the decision due)."""
    if phase == PLAY:
        raise IllegalDecisionError(Rule.WRONG_DECISION, "a play is due, not a draw")
    if source == DECK:
        if not deck:
            raise IllegalDecisionError(Rule.EMPTY_SOURCE, "the deck is empty")
    elif type(source) is not int or not 0 <= source < players:
        raise IllegalDecisionError(
            Rule.NO_SUCH_PILE, f"pile {source!r} (seats are 0 to {players - 1})"
        )
    elif not piles[source]:
        raise IllegalDecisionError(Rule.EMPTY_SOURCE, f"the discard pile of seat {source} is empty")


def check_play(
    phase: int,
    play: Play,
    hand: list[int],
    arb: dict[int, int],
    frontier: set[int],
    discard_required: bool,
) -> tuple[int, int, int]:
    """The card id, packed cell and discard id (-1: none) of ``play`` by the seat due, whose
    ``hand``, arboretum and frontier are given; raises unless it is legal now."""
    if phase != PLAY:
        raise IllegalDecisionError(Rule.WRONG_DECISION, "a draw is due, not a play")
    card, cell, discard = play.card, play.cell, play.discard
    if not isinstance(card, Card) or not isinstance(cell, tuple) or len(cell) != 2:
        raise NotationError("a play needs a Card and a Cell")
    cid = card.id
    if cid not in hand:
        raise IllegalDecisionError(Rule.CARD_NOT_IN_HAND, f"{card} is not in your hand")
    x, y = cell
    if type(x) is not int or type(y) is not int:
        raise NotationError(f"cell coordinates must be integers, got {cell!r}")
    if not arb:
        if x != 0 or y != 0:
            raise IllegalDecisionError(Rule.FIRST_CARD_AT_ORIGIN, f"got {x},{y}")
        p = ORIGIN
    else:
        # in_range(x, y), then pack(x, y), inlined
        if not (-LIMIT <= x <= LIMIT and -LIMIT <= y <= LIMIT):
            raise IllegalDecisionError(Rule.CELL_NOT_ADJACENT, f"cell {x},{y}")
        p = ((x + OFFSET) << BITS) | (y + OFFSET)
        if p in arb:
            raise IllegalDecisionError(Rule.CELL_OCCUPIED, f"cell {x},{y}")
        if p not in frontier:
            raise IllegalDecisionError(Rule.CELL_NOT_ADJACENT, f"cell {x},{y}")
    if not discard_required:
        if discard is not None:
            raise IllegalDecisionError(Rule.DISCARD_NOT_ALLOWED)
        return cid, p, -1
    if discard is None:
        raise IllegalDecisionError(Rule.DISCARD_REQUIRED)
    if not isinstance(discard, Card):
        raise NotationError("a discard must be a Card")
    did = discard.id
    if did == cid or did not in hand:
        raise IllegalDecisionError(
            Rule.DISCARD_NOT_IN_HAND, f"{discard} is not in your hand after the play"
        )
    return cid, p, did
