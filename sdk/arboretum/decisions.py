"""Decisions: what a player chooses, and the kind of decision due now.

A turn is three decisions: :class:`Draw` (first draw), :class:`Draw` (second draw) and :class:`Play`
(a card into the arboretum plus a discard). The discard is ``None`` only on the rare turn whose
second draw had no source at all.

Text forms round-trip through :func:`parse_decision`::

    draw deck            Draw(DECK)
    draw pile 1          Draw(1): the top of seat 1's discard pile
    play OA5 0,1 discard JA3
    play OA5 0,1         (no discard: the second draw was skipped)
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .cards import Card, Cell
from .errors import NotationError

__all__ = ["DECK", "Decision", "DecisionKind", "Draw", "Play", "parse_decision"]

DECK = -1
"""The draw source meaning the face-down draw pile; any other source is a seat's discard pile."""


class DecisionKind(StrEnum):
    FIRST_DRAW = "first-draw"
    SECOND_DRAW = "second-draw"
    PLAY = "play"
    GAME_OVER = "game-over"


# The decision due as the engine's internal int (a phase), in DecisionKind's order.
FIRST, SECOND, PLAY, OVER = 0, 1, 2, 3


@dataclass(frozen=True, slots=True)
class Draw:
    """Draw one card: from the deck (``source == DECK``) or the top of seat ``source``'s pile."""

    source: int = DECK

    @property
    def from_deck(self) -> bool:
        return self.source == DECK

    def __str__(self) -> str:
        return "draw deck" if self.source == DECK else f"draw pile {self.source}"

    def text(self) -> str:
        return str(self)


@dataclass(frozen=True, slots=True)
class Play:
    """Play ``card`` at ``cell`` of the player's own arboretum, then discard ``discard``."""

    card: Card
    cell: Cell
    discard: Card | None

    def __str__(self) -> str:
        text = f"play {self.card} {self.cell}"
        return text if self.discard is None else f"{text} discard {self.discard}"

    def text(self) -> str:
        return str(self)


Decision = Draw | Play


def parse_decision(text: str) -> Decision:
    """Parse the text form of a decision; raises :class:`NotationError` naming what is wrong."""
    words = text.split()
    if not words:
        raise NotationError(
            "empty decision; expected 'draw deck', 'draw pile N' or 'play CARD X,Y ...'"
        )
    verb = words[0].lower()
    if verb == "draw":
        if [w.lower() for w in words[1:]] == ["deck"]:
            return Draw(DECK)
        if len(words) == 3 and words[1].lower() == "pile":
            try:
                pile = int(words[2])
            except ValueError:
                raise NotationError(f"not a pile number: {words[2]!r}") from None
            if pile < 0:
                raise NotationError(f"pile numbers are seats, 0 or more; got {pile}")
            return Draw(pile)
        raise NotationError(f"bad draw {text!r}; expected 'draw deck' or 'draw pile N'")
    if verb == "play":
        if len(words) == 3:
            return Play(Card.parse(words[1]), Cell.parse(words[2]), None)
        if len(words) == 5 and words[3].lower() == "discard":
            return Play(Card.parse(words[1]), Cell.parse(words[2]), Card.parse(words[4]))
        raise NotationError(f"bad play {text!r}; expected 'play CARD X,Y discard CARD'")
    raise NotationError(f"unknown decision {words[0]!r}; expected 'draw' or 'play'")
