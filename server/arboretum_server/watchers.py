"""Spectators of a match: a :class:`Watcher` is one subscription, a bounded queue of public
messages (``None`` at its end); :class:`Spectators`, a match's watchers, to which it publishes.

:class:`PublicFeed` reads a subscription's messages as :class:`SpectatorEvent` values, the match
API's one spectator type (``MatchHandle.watch()``): what the match's public replay shows, in its
terms (docs/replay-format.md), ready to be written as JSON. The admin service's ``WatchMatch``
sends the messages themselves, as protobuf (:mod:`arboretum_server.edge`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from arboretum import DECK
from arboretum.replay import result_to_json

from .messages import (
    Discard,
    Draw,
    Forfeit,
    LoggedEvent,
    MatchEnd,
    MatchSnapshot,
    Place,
    SecondDrawSkipped,
    WatchGameEnd,
    WatchGameStart,
    WatchMessage,
)

__all__ = ["PublicFeed", "SpectatorEvent", "Spectators", "Watcher"]

HAND_SIZE = 7

WATCHER_QUEUE_LIMIT = 4096


class Watcher:
    """A spectator's subscription: a queue of public messages, ``None`` at the end."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[WatchMessage | None] = asyncio.Queue()
        self.overflowed = False
        self.closed = False

    def put(self, message: WatchMessage | None) -> None:
        if self.closed:
            return
        if message is not None and self.queue.qsize() >= WATCHER_QUEUE_LIMIT:
            self.overflowed = True
            message = None
        if message is None:
            self.closed = True
        self.queue.put_nowait(message)


class Spectators:
    """The watchers of one match. ``watchers`` is tested before building a message to publish
    (most matches have none): it is always the same set."""

    __slots__ = ("watchers",)

    def __init__(self) -> None:
        self.watchers: set[Watcher] = set()

    def subscribe(self, greeting: list[WatchMessage], over: bool = False) -> Watcher:
        """A new watcher, its queue opened with ``greeting`` (and ended at once when the match
        is ``over``), then every message published."""
        watcher = Watcher()
        for message in greeting:
            watcher.put(message)
        if over:
            watcher.put(None)
        else:
            self.watchers.add(watcher)
        return watcher

    def remove(self, watcher: Watcher) -> None:
        """The spectator left: nothing more is put on its queue."""
        self.watchers.discard(watcher)
        watcher.closed = True

    def publish(self, message: WatchMessage) -> None:
        """Put ``message`` on every queue; a watcher that overflowed (and closed) is dropped."""
        watchers = self.watchers
        for watcher in list(watchers):
            watcher.put(message)
            if watcher.closed:
                watchers.discard(watcher)

    def close(self) -> None:
        """The match is over: end every queue."""
        for watcher in list(self.watchers):
            watcher.put(None)
        self.watchers.clear()


@dataclass(frozen=True, slots=True)
class SpectatorEvent:
    """One public event of a match: ``type`` and its fields (JSON values), never a hand, a deck
    card, a seed, a clock or a fault's detail.

    - ``start``: ``players``, ``games``, ``seats`` (names), once per subscription;
    - ``game``: ``game``, ``players``, ``species``, ``seats`` (``[{"seat", "bot"}]``),
      ``deck_size``;
    - ``step``: ``game``, ``step`` (a replay step: ``draw``, a deck draw's card ``null``; ``play``;
      ``forfeit``, no reason);
    - ``game_end``: ``game``, ``final_hands``, ``result`` (as the public replay shows them);
    - ``end``: ``status``, ``games_finished``.
    """

    type: str
    fields: dict[str, Any]

    def to_json(self, **extra: Any) -> dict[str, Any]:
        """The event as one JSON object (``extra`` fields after ``type``)."""
        return {"type": self.type, **extra, **self.fields}


class PublicFeed:
    """A subscription's messages in, :class:`SpectatorEvent` values out (one feed per
    subscription: it follows the deck's size and pairs each play with its discard)."""

    def __init__(self) -> None:
        self._game: int | None = None
        self._deck = 0
        self._skipped = False  # the turn's second draw was skipped: its play has no discard
        self._place: dict[str, Any] | None = None
        self._last: dict[str, Any] | None = None

    def events(self, message: object) -> list[SpectatorEvent]:
        if isinstance(message, LoggedEvent):
            return self._event(message)
        if isinstance(message, MatchSnapshot):
            fields = {
                "players": message.players,
                "games": message.game_count,
                "seats": list(message.seat_names),
            }
            return [SpectatorEvent("start", fields)]
        if isinstance(message, WatchGameStart):
            setup = message.setup
            self._game = setup.game_index
            self._deck = len(setup.species) * 8 - setup.players * HAND_SIZE
            self._skipped, self._place, self._last = False, None, None
            fields = {
                "game": setup.game_index,
                "players": setup.players,
                "species": [s.value for s in setup.species],
                "seats": [{"seat": i, "bot": n} for i, n in enumerate(setup.seat_names)],
                "deck_size": self._deck,
            }
            out = [SpectatorEvent("game", fields)]
            for event in message.events:  # a game joined in progress
                out += self._event(event)
            return out
        if isinstance(message, WatchGameEnd):
            result = message.game.result
            fields = {
                "game": message.game.game_index,
                "final_hands": [[str(c) for c in hand] for hand in result.hands],
                "result": result_to_json(result),
            }
            return [SpectatorEvent("game_end", fields)]
        if isinstance(message, MatchEnd):
            fields = {"status": message.status.value, "games_finished": message.games_finished}
            return [SpectatorEvent("end", fields)]
        return []  # DecisionPending (clocks are not public)

    def _step(self, step: dict[str, Any]) -> list[SpectatorEvent]:
        self._last = step
        return [SpectatorEvent("step", {"game": self._game, "step": step})]

    def _event(self, event: LoggedEvent) -> list[SpectatorEvent]:
        body = event.body
        turn = event.turn_number - 1  # the replay format counts turns from 0
        seat = event.seat
        if isinstance(body, Draw):
            step: dict[str, Any] = {"turn": turn, "seat": seat, "kind": "draw"}
            if body.source == DECK:
                self._deck -= 1
                step.update(source="deck", card=None)  # never a deck card, whoever drew it
            else:
                step.update(source="pile", pile=body.source, card=str(body.card))
            self._skipped = False
            return self._step(step)
        if isinstance(body, SecondDrawSkipped):
            self._skipped = True
            return []
        if isinstance(body, Place):
            play = {
                "turn": turn,
                "seat": seat,
                "kind": "play",
                "card": str(body.card),
                "cell": [body.cell.x, body.cell.y],
                "discard": None,
            }
            if self._skipped:
                self._skipped = False
                return self._step(play)
            self._place = play  # its discard is the next event
            return []
        if isinstance(body, Discard) and self._place is not None:
            play, self._place = self._place, None
            play["discard"] = str(body.card)
            return self._step(play)
        if isinstance(body, Forfeit):
            # As the replay records it: the turn after the fallback's decision (a play ends
            # the turn, unless it was the game's last).
            last = self._last
            ended = last is not None and last["kind"] == "play" and last["seat"] == seat
            after = turn + 1 if ended and self._deck > 0 else turn
            return self._step({"turn": after, "seat": seat, "kind": "forfeit"})
        return []  # Fault: its detail is the seat's author's
