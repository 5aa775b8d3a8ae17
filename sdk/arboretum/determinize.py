"""Determinization for search bots: deal the cards a seat cannot see, consistently with its view.

The cards a seat can place are its own hand, every arboretum, every discard pile, and the cards each
opponent is publicly known to hold (taken from a discard pile and not yet played or discarded; the
view's ``known_cards``, derived from the public history). Every other card of the species in play is
unseen: it is in the deck or in the unknown part of an opponent's hand. A determinization shuffles
the unseen cards and deals them: each opponent's hand gets its known cards plus enough unseen ones
to reach its public hand size, and the rest form the deck, whose size must match the view's.
"""

from __future__ import annotations

import random

from .decisions import FIRST, OVER, PLAY, SECOND, DecisionKind
from .errors import DeterminizationError
from .grid import STRIDE, pack
from .state import GameState
from .views import SeatView, use_determinizer

__all__ = ["determinize"]


def determinize(view: SeatView, rng: random.Random) -> GameState:
    """A full :class:`GameState` consistent with ``view``, the hidden cards dealt at random."""
    pool = [c.id for c in view.unseen_cards()]
    rng.shuffle(pool)
    hands: list[list[int]] = []
    for seat in range(view.players):
        if seat == view.seat:
            hands.append([c.id for c in view.hand])
            continue
        known = [c.id for c in view.known_cards[seat]]
        need = view.hand_sizes[seat] - len(known)
        if need < 0 or need > len(pool):
            raise DeterminizationError(
                f"seat {seat} holds {view.hand_sizes[seat]} cards but {len(known)} are known "
                f"and {len(pool)} are unseen"
            )
        hands.append(known + [pool.pop() for _ in range(need)])
    if len(pool) != view.deck_size:
        raise DeterminizationError(
            f"{len(pool)} unseen cards are left for a deck of {view.deck_size}"
        )
    state = GameState.__new__(GameState)
    state.players = view.players
    state.species = view.species
    state._species_ids = tuple(s.index for s in view.species)
    state.seed = None
    state.initial_deck = ()
    state.initial_hands = ()
    state._deck = pool
    state._hands = hands
    state._piles = [[c.id for c in pile] for pile in view.discard_piles]
    state._arbs = [
        {pack(cell.x, cell.y): card.id for cell, card in arb.items()} for arb in view.arboretums
    ]
    state._frontier = [
        {n for p in arb for n in (p + 1, p - 1, p + STRIDE, p - STRIDE) if n not in arb}
        for arb in state._arbs
    ]
    state._known = [{c.id for c in known} for known in view.known_cards]
    state._forfeited = list(view.forfeited)
    state._log = []
    state._seat = view.current_seat
    state._phase = {
        DecisionKind.FIRST_DRAW: FIRST,
        DecisionKind.SECOND_DRAW: SECOND,
        DecisionKind.PLAY: PLAY,
        DecisionKind.GAME_OVER: OVER,
    }[view.kind]
    state._discard_required = view.discard_required
    state._last_turn = view.last_turn
    state.turn = view.turn
    return state


use_determinizer(determinize)
