"""The public history of a game: the :class:`Event` types, and the game's log records they are read
from (the state appends a record per move; :func:`events_from_log` shows them as a seat saw them).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import ALL_CARDS, Card, Cell
from .decisions import DECK
from .grid import unpack

__all__ = [
    "LOG_DRAW",
    "LOG_FORFEIT",
    "LOG_PLAY",
    "DrawEvent",
    "Event",
    "ForfeitEvent",
    "PlayEvent",
    "events_from_log",
]

# Log records (tuples, cheap to append and copy):
#   (LOG_DRAW, seat, source, card)       source is DECK or a seat
#   (LOG_PLAY, seat, cell, card, discard) discard is -1 when the second draw was skipped
#   (LOG_FORFEIT, seat)
LOG_DRAW, LOG_PLAY, LOG_FORFEIT = 0, 1, 2


@dataclass(frozen=True, slots=True)
class DrawEvent:
    """``seat`` drew from ``source`` (``DECK`` or a seat's pile). ``card`` is ``None`` for a deck
    draw seen by anyone but the drawer."""

    seat: int
    source: int
    card: Card | None

    def __str__(self) -> str:
        where = "deck" if self.source == DECK else f"pile {self.source}"
        return f"seat {self.seat} drew {self.card or 'a card'} from {where}"


@dataclass(frozen=True, slots=True)
class PlayEvent:
    """``seat`` played ``card`` at ``cell`` and discarded ``discard`` (None: no second draw)."""

    seat: int
    card: Card
    cell: Cell
    discard: Card | None

    def __str__(self) -> str:
        tail = f", discarded {self.discard}" if self.discard else ", no discard"
        return f"seat {self.seat} played {self.card} at {self.cell}{tail}"


@dataclass(frozen=True, slots=True)
class ForfeitEvent:
    seat: int

    def __str__(self) -> str:
        return f"seat {self.seat} forfeited"


Event = DrawEvent | PlayEvent | ForfeitEvent


def events_from_log(log: list[tuple[int, ...]], since: int, seat: int | None) -> list[Event]:
    events: list[Event] = []
    for record in log[since:]:
        kind = record[0]
        if kind == LOG_DRAW:
            _, who, source, cid = record
            visible = source != DECK or who == seat
            events.append(DrawEvent(who, source, ALL_CARDS[cid] if visible else None))
        elif kind == LOG_PLAY:
            _, who, p, cid, did = record
            discard = ALL_CARDS[did] if did >= 0 else None
            events.append(PlayEvent(who, ALL_CARDS[cid], unpack(p), discard))
        else:
            events.append(ForfeitEvent(record[1]))
    return events
