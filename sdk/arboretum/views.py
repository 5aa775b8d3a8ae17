"""What a seat may know: :class:`SeatView`, and the public :class:`Event` history.

A view is built by copying the fields a seat may see, never by blanking parts of the state: its
own hand, every arboretum, every discard pile, the deck size, the hand sizes, the cards publicly
known to be in each hand (taken from a discard pile and not yet played or discarded), and whose
decision is due.
Two states that differ only in cards hidden from a seat give equal views.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cards import ALL_CARDS, Card, Species
from .decisions import DECK, DecisionKind, Draw, Play
from .events import DrawEvent, Event, ForfeitEvent, PlayEvent
from .grid import ORIGIN, Arboretum, in_range, pack
from .legal import LegalDecisions

if TYPE_CHECKING:  # the annotation of SeatView.determinize only: nothing here imports the state
    from .state import GameState

# Module constants: a bot asks for its options once per decision, and an enum member looked up on
# its class costs several times more than a global.
_PLAY = DecisionKind.PLAY
_GAME_OVER = DecisionKind.GAME_OVER

__all__ = ["DrawEvent", "Event", "ForfeitEvent", "PlayEvent", "SeatView", "use_determinizer"]


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything ``seat`` may know at one moment. Bots receive this; it holds no hidden card."""

    seat: int
    players: int
    species: tuple[Species, ...]
    turn: int
    current_seat: int
    kind: DecisionKind
    """The decision due now, for ``current_seat``."""
    hand: tuple[Card, ...]
    arboretums: tuple[Arboretum, ...]
    discard_piles: tuple[tuple[Card, ...], ...]
    """Each seat's discard pile, bottom first (the top card is last)."""
    deck_size: int
    hand_sizes: tuple[int, ...]
    known_cards: tuple[tuple[Card, ...], ...]
    """Per seat, the cards publicly known to be in that hand (taken from a discard pile)."""
    discard_required: bool
    """False only on a play whose turn skipped the second draw (no source was left)."""
    last_turn: bool
    """True once the last deck card is drawn: this turn ends the game."""
    forfeited: tuple[bool, ...]

    @property
    def my_turn(self) -> bool:
        return self.current_seat == self.seat and self.kind is not _GAME_OVER

    @property
    def arboretum(self) -> Arboretum:
        """This seat's own arboretum."""
        return self.arboretums[self.seat]

    def legal_decisions(self) -> LegalDecisions:
        """The legal options, when the decision due is this seat's; empty otherwise."""
        if not self.my_turn:
            return LegalDecisions(_GAME_OVER, (), (), (), False)
        if self.kind is _PLAY:
            arb = self.arboretum
            cells = tuple(pack(c.x, c.y) for c in arb.legal_cells()) if arb else (ORIGIN,)
            return LegalDecisions(
                self.kind, (), tuple(sorted(c.id for c in self.hand)), cells, self.discard_required
            )
        return LegalDecisions(self.kind, self._draw_sources(), (), (), False)

    def _draw_sources(self) -> tuple[int, ...]:
        sources = [DECK] if self.deck_size else []
        sources += [s for s, pile in enumerate(self.discard_piles) if pile]
        return tuple(sources)

    def is_legal(self, decision: object) -> bool:
        """Whether ``decision`` is one of :meth:`legal_decisions` (``decision in
        view.legal_decisions()``), without listing them: cheaper for a single decision."""
        if not self.my_turn:
            return False
        if self.kind is not _PLAY:
            return type(decision) is Draw and decision.source in self._draw_sources()
        if type(decision) is not Play:
            return False
        card = decision.card
        hand = {c.id for c in self.hand}
        if card.id not in hand:
            return False
        x, y = decision.cell
        if not in_range(x, y) or not self.arboretum.is_legal_cell((x, y)):
            return False
        if self.discard_required:
            d = decision.discard
            return d is not None and d.id in hand and d.id != card.id
        return decision.discard is None

    def top_of_pile(self, seat: int) -> Card | None:
        pile = self.discard_piles[seat]
        return pile[-1] if pile else None

    def draw_options(self) -> tuple[Draw, ...]:
        return tuple(d for d in self.legal_decisions() if isinstance(d, Draw))

    def unseen_cards(self) -> tuple[Card, ...]:
        """Cards in play that this seat cannot locate: the deck plus the unknown parts of the other
        hands. Sorted by card id."""
        seen = {c.id for c in self.hand}
        for arb in self.arboretums:
            seen.update(c.id for c in arb.values())
        for pile in self.discard_piles:
            seen.update(c.id for c in pile)
        for known in self.known_cards:
            seen.update(c.id for c in known)
        return tuple(
            ALL_CARDS[s.index * 8 + v]
            for s in self.species
            for v in range(8)
            if s.index * 8 + v not in seen
        )

    def determinize(self, rng: random.Random) -> GameState:
        """A full game state consistent with this view; see :func:`arboretum.determinize`."""
        return _determinizer(self, rng)


def _no_determinizer(view: SeatView, rng: random.Random) -> GameState:
    raise RuntimeError("arboretum.determinize is not loaded")  # importing arboretum loads it


_determinizer: Callable[[SeatView, random.Random], GameState] = _no_determinizer


def use_determinizer(function: Callable[[SeatView, random.Random], GameState]) -> None:
    """Make ``function`` what :meth:`SeatView.determinize` calls. :mod:`arboretum.determinize`
    registers itself when it is imported (``import arboretum`` does): it builds game states, so
    this module, which the state imports, cannot import it."""
    global _determinizer
    _determinizer = function
