"""The random playout: uniformly random legal decisions to the end of a game, on the game
state's own representation (lists of card ids, packed cells). It is the hot path of search bots'
rollouts (``GameState.playout`` hands it its lists); its moves are those of
``GameState._draw`` and ``GameState._play``, made on local variables: keep the three in step.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Callable
from itertools import compress

from .cards import ALL_CARDS
from .decisions import DECK, FIRST, OVER, PLAY, SECOND
from .events import LOG_DRAW, LOG_PLAY
from .grid import ORIGIN, STRIDE
from .seeds import SEATS

__all__ = ["play_out"]

_BIT_LENGTH = tuple(n.bit_length() for n in range(4 * len(ALL_CARDS)))
"""``n.bit_length()`` for any count of options in a game: the bits ``rng.randrange(n)`` draws."""

Turn = tuple[int, int, int, bool, bool]
"""Where a game stands: the seat due, the phase, the turn number, whether the play due must
discard, whether this turn is the last."""


def play_out(
    getrandbits: Callable[[int], int],
    players: int,
    deck: list[int],
    hands: list[list[int]],
    piles: list[list[int]],
    log: list[tuple[int, ...]],
    arbs: list[dict[int, int]],
    frontiers: list[set[int]],
    knowns: list[set[int]],
    now: Turn,
) -> Turn:
    """Play the game from ``now`` to its end, changing the lists in place; returns where it
    stands at the end. A draw picks one of the sources; a play picks a card of the hand, then a
    cell (in (x, y) order), then the discard among the other cards. Each pick below n is
    ``rng.randrange(n)`` computed from ``getrandbits`` as :class:`random.Random` does it, inlined:
    ``k = bit_length[n]; r = getrandbits(k); while r >= n: r = getrandbits(k)``.
    """
    bit_length = _BIT_LENGTH
    seats = SEATS[players]
    in_order = [sorted(frontier) for frontier in frontiers]  # kept sorted, to pick by index
    seat, phase, turn, discard_required, last_turn = now
    while phase != OVER:
        hand = hands[seat]
        if phase != PLAY:
            options = [DECK, *compress(seats, piles)] if deck else [*compress(seats, piles)]
            n = len(options)
            k = bit_length[n]
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            source = options[r]
            if source == DECK:
                cid = deck.pop()
                if not deck:
                    last_turn = True
            else:
                cid = piles[source].pop()
                knowns[seat].add(cid)
            hand.append(cid)
            log.append((LOG_DRAW, seat, source, cid))
            if phase == SECOND:
                phase = PLAY
                discard_required = True
            elif deck or any(piles):
                phase = SECOND
            else:
                phase = PLAY
                discard_required = False
            continue
        # The card, then the cell, then the discard among the other cards.
        n = len(hand)
        k = bit_length[n]
        i = getrandbits(k)
        while i >= n:
            i = getrandbits(k)
        cid = hand.pop(i)
        arb, frontier, cells = arbs[seat], frontiers[seat], in_order[seat]
        if arb:
            n = len(cells)
            k = bit_length[n]
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            p = cells.pop(r)
        else:
            p = ORIGIN
        if discard_required:
            n = len(hand)
            k = bit_length[n]
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            did = hand.pop(r)
        else:
            did = -1
        arb[p] = cid
        frontier.discard(p)
        for q in (p + 1, p - 1, p + STRIDE, p - STRIDE):
            if q not in arb and q not in frontier:
                frontier.add(q)
                insort(cells, q)
        known = knowns[seat]
        if known:
            known.discard(cid)
            known.discard(did)
        if did >= 0:
            piles[seat].append(did)
        log.append((LOG_PLAY, seat, p, cid, did))
        if last_turn:
            phase = OVER
        else:
            seat = (seat + 1) % players
            phase = FIRST
            discard_required = True
            turn += 1
    return seat, phase, turn, discard_required, last_turn
