"""Arboretums: a player's grid of cards, an immutable mapping from :class:`Cell` to :class:`Card`.

Internally the engine stores a cell as one packed integer (see :func:`pack`), so that neighbours are
``p ± 1`` and ``p ± STRIDE`` and a whole arboretum is a ``dict[int, int]`` of card ids.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from .cards import ALL_CARDS, Card, Cell

__all__ = ["Arboretum", "pack", "unpack"]

BITS = 15
"""Bits per coordinate: a packed cell is below 2**30, a one-digit int for CPython, which keeps
sorting, hashing and arithmetic on them cheap."""
STRIDE = 1 << BITS
OFFSET = 1 << (BITS - 1)
ORIGIN = (OFFSET << BITS) | OFFSET
LIMIT = OFFSET - 1
"""Largest coordinate magnitude the packing holds; no game comes near it (one card per turn)."""

_CELL_CACHE_SIZE = 1 << 14
_cells: dict[int, Cell] = {}
"""Cells are immutable, so :func:`unpack` hands out shared ones; real games use a few hundred."""


def pack(x: int, y: int) -> int:
    """Pack a cell into one integer; neighbours differ by 1 (y) or STRIDE (x)."""
    return ((x + OFFSET) << BITS) | (y + OFFSET)


def unpack(p: int) -> Cell:
    cell = _cells.get(p)
    if cell is None:
        cell = Cell((p >> BITS) - OFFSET, (p & (STRIDE - 1)) - OFFSET)
        if len(_cells) < _CELL_CACHE_SIZE:
            _cells[p] = cell
    return cell


def in_range(x: int, y: int) -> bool:
    return -LIMIT <= x <= LIMIT and -LIMIT <= y <= LIMIT


class Arboretum(Mapping[Cell, Card]):
    """One player's arboretum, frozen at the moment it was taken. Iterates cells in play order."""

    __slots__ = ("_cards",)

    def __init__(self, cards: Mapping[Cell, Card] | None = None) -> None:
        self._cards: dict[Cell, Card] = dict(cards) if cards else {}

    @classmethod
    def _from_packed(cls, packed: Mapping[int, int]) -> Arboretum:
        arb = cls.__new__(cls)
        arb._cards = {unpack(p): ALL_CARDS[c] for p, c in packed.items()}
        return arb

    def __getitem__(self, cell: Cell) -> Card:
        return self._cards[cell]

    def __iter__(self) -> Iterator[Cell]:
        return iter(self._cards)

    def __len__(self) -> int:
        return len(self._cards)

    def __repr__(self) -> str:
        inner = ", ".join(f"{c}: {card}" for c, card in self._cards.items())
        return f"Arboretum({{{inner}}})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Arboretum):
            return self._cards == other._cards
        if isinstance(other, Mapping):  # Mapping semantics: equal items, whatever the type
            return self._cards == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._cards.items()))

    def legal_cells(self) -> tuple[Cell, ...]:
        """Cells where the next card may go, sorted by (x, y): (0, 0) for an empty arboretum."""
        if not self._cards:
            return (Cell(0, 0),)
        free = {n for cell in self._cards for n in cell.neighbours() if n not in self._cards}
        return tuple(sorted(free))

    def is_legal_cell(self, cell: tuple[int, int]) -> bool:
        """Whether ``cell`` is one of :meth:`legal_cells`, without listing them."""
        cards = self._cards
        if not cards:
            return cell == (0, 0)
        if cell in cards:
            return False
        x, y = cell
        return (
            (x + 1, y) in cards or (x - 1, y) in cards or (x, y + 1) in cards or (x, y - 1) in cards
        )

    def species_count(self) -> int:
        """The number of different species present: the first tie-break."""
        return len({card.species for card in self._cards.values()})

    def render(self) -> str:
        """A text drawing of the grid, rows from the top (highest y), for logs and the CLI."""
        if not self._cards:
            return "(empty)"
        xs = [c.x for c in self._cards]
        ys = [c.y for c in self._cards]
        rows = []
        for y in range(max(ys), min(ys) - 1, -1):
            row = []
            for x in range(min(xs), max(xs) + 1):
                card = self._cards.get(Cell(x, y))
                row.append(f"{card!s:>4}" if card else "   .")
            rows.append("".join(row))
        return "\n".join(rows)
