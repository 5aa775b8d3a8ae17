"""Species, cards and cells: the small value types, each with a text form that round-trips.

Cards are interned: ``Card(Species.OAK, 5) is Card.parse("OA5")``. Each card also has a dense
integer ``id`` (0..79; ``ALL_CARDS[id]`` is the card) that the engine uses internally. Code that
works on ids, such as the built-in bots' path tables, reads them through :data:`ID_SPECIES`,
:data:`ID_VALUE` and :func:`card_id`, never from how an id is made.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple

from .errors import NotationError

__all__ = ["ALL_CARDS", "ID_SPECIES", "ID_VALUE", "Card", "Cell", "Species", "card_id"]


class Species(StrEnum):
    """The ten species, in the rules' order. ``index`` is the position in that order."""

    BLUE_SPRUCE = "BLUE_SPRUCE"
    CASSIA = "CASSIA"
    CHERRY_BLOSSOM = "CHERRY_BLOSSOM"
    DOGWOOD = "DOGWOOD"
    JACARANDA = "JACARANDA"
    MAPLE = "MAPLE"
    OAK = "OAK"
    ROYAL_POINCIANA = "ROYAL_POINCIANA"
    TULIP_POPLAR = "TULIP_POPLAR"
    WILLOW = "WILLOW"

    # ``index`` shadows ``str.index`` on purpose: a species' position is what the engine means by
    # it everywhere, and no code calls ``str.index`` on a species.
    @property
    def index(self) -> int:  # type: ignore[override]
        """The species' position in the rules' order, 0..9."""
        return _SPECIES_INDEX[self]

    @property
    def code(self) -> str:
        """Two-letter code used in card text: ``OA`` for Oak."""
        return _CODES[self]

    @property
    def display(self) -> str:
        """The printed name, such as ``Royal Poinciana``."""
        return self.value.replace("_", " ").title()

    @classmethod
    def from_index(cls, index: int) -> Species:
        return _SPECIES_BY_INDEX[index]

    @classmethod
    def parse(cls, text: str) -> Species:
        """Parse an identifier (``OAK``), a two-letter code (``OA``) or a display name, any case."""
        key = text.strip().upper().replace(" ", "_").replace("-", "_")
        found = _SPECIES_BY_KEY.get(key)
        if found is None:
            raise NotationError(
                f"unknown species {text!r}; expected one of {', '.join(_CODES.values())}"
            )
        return found


_SPECIES_BY_INDEX: tuple[Species, ...] = tuple(Species)
_SPECIES_INDEX = {s: i for i, s in enumerate(_SPECIES_BY_INDEX)}
_CODES = {
    Species.BLUE_SPRUCE: "BS",
    Species.CASSIA: "CA",
    Species.CHERRY_BLOSSOM: "CB",
    Species.DOGWOOD: "DO",
    Species.JACARANDA: "JA",
    Species.MAPLE: "MA",
    Species.OAK: "OA",
    Species.ROYAL_POINCIANA: "RP",
    Species.TULIP_POPLAR: "TP",
    Species.WILLOW: "WI",
}
_SPECIES_BY_KEY: dict[str, Species] = {}
for _s in _SPECIES_BY_INDEX:
    _SPECIES_BY_KEY[_s.value] = _s
    _SPECIES_BY_KEY[_CODES[_s]] = _s

_CARD_RE = re.compile(r"^\s*([A-Za-z][A-Za-z _]*?)[\s\-]?([1-8])\s*$")


class Card:
    """One card: a species and a value from 1 to 8. Immutable and interned.

    Text form: the species code and the value, ``OA5``. :meth:`parse` also accepts ``OAK5``,
    ``OAK-5`` and ``oak 5``.
    """

    __slots__ = ("id", "species", "value")
    _interned: ClassVar[dict[tuple[Species, int], Card]] = {}

    species: Species
    value: int
    id: int

    def __new__(cls, species: Species, value: int) -> Card:
        # Look up only exact types: (OAK, True), (OAK, 5.0) and ("OAK", 5) hash like real keys and
        # would otherwise skip the validation below.
        exact = type(value) is int and type(species) is Species
        card = cls._interned.get((species, value)) if exact else None
        if card is None:
            if not isinstance(species, Species):
                raise NotationError(f"not a species: {species!r}")
            if type(value) is not int or not 1 <= value <= 8:
                raise NotationError(f"card value must be an integer from 1 to 8, got {value!r}")
            card = object.__new__(cls)
            object.__setattr__(card, "species", species)
            object.__setattr__(card, "value", value)
            object.__setattr__(card, "id", species.index * 8 + value - 1)
            cls._interned[(species, value)] = card
        return card

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Card, (self.species, self.value))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: Any) -> Card:
        return self

    def __repr__(self) -> str:
        return f"Card(Species.{self.species.name}, {self.value})"

    def __str__(self) -> str:
        return f"{_CODES[self.species]}{self.value}"

    def text(self) -> str:
        return str(self)

    def __lt__(self, other: Card) -> bool:
        return self.id < other.id

    @classmethod
    def from_id(cls, card_id: int) -> Card:
        return ALL_CARDS[card_id]

    @classmethod
    def parse(cls, text: str) -> Card:
        match = _CARD_RE.match(text)
        if match is None:
            raise NotationError(
                f"not a card: {text!r}; expected a species code and a value, like OA5"
            )
        return cls(Species.parse(match.group(1)), int(match.group(2)))


ALL_CARDS: tuple[Card, ...] = tuple(Card(s, v) for s in _SPECIES_BY_INDEX for v in range(1, 9))

ID_SPECIES: tuple[int, ...] = tuple(card.species.index for card in ALL_CARDS)
"""``Card.id`` -> the index of the card's species (:attr:`Species.index`)."""
ID_VALUE: tuple[int, ...] = tuple(card.value for card in ALL_CARDS)
"""``Card.id`` -> the card's value, 1 to 8."""


def card_id(species_index: int, value: int) -> int:
    """The ``id`` of the card of this species (its :attr:`Species.index`) and value (1 to 8)."""
    return species_index * 8 + value - 1


_CELL_RE = re.compile(r"^\s*\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?\s*$")


class Cell(NamedTuple):
    """A grid cell of an arboretum.

    Text form: ``x,y`` (``-1,2``); parsing also accepts ``(x, y)``.
    """

    x: int
    y: int

    def __str__(self) -> str:
        return f"{self.x},{self.y}"

    def text(self) -> str:
        return str(self)

    def neighbours(self) -> tuple[Cell, Cell, Cell, Cell]:
        x, y = self.x, self.y
        return (Cell(x + 1, y), Cell(x - 1, y), Cell(x, y + 1), Cell(x, y - 1))

    @classmethod
    def parse(cls, text: str) -> Cell:
        match = _CELL_RE.match(text)
        if match is None:
            raise NotationError(f"not a cell: {text!r}; expected x,y like 0,-1")
        return cls(int(match.group(1)), int(match.group(2)))
