"""Live games: what a running league match publishes for the web's spectators, through Redis.

The worker's private referee runs in the job's process; :class:`LivePublisher` subscribes to the
match's spectator stream through the match API (``MatchHandle.watch()`` of
:mod:`arboretum_server.runner`: the public messages of the ``WatchMatch`` RPC, as plain values)
as soon as the match is created, turns each message into public JSON events
(:class:`LiveEncoder`) and appends them, in batches, to the Redis stream ``arena:live:{match}``
(:func:`live_key`; entry fields ``a``, the attempt, and ``e``, one JSON event). The web relays
them to browsers (``arboretum_web.live``).

The events hold only what the match's public replay shows, in its format (docs/replay-format.md):

- ``{"type": "start", "attempt", "players", "games", "seats": [names]}``, once per attempt (a
  retried match starts over with a new attempt id);
- ``{"type": "game", "game", "players", "species", "seats": [{"seat", "bot"}], "deck_size"}``;
- ``{"type": "step", "game", "step"}``, a replay step: ``draw`` (a deck draw's card is ``null``),
  ``play``, ``forfeit`` (no reason);
- ``{"type": "game_end", "game", "final_hands", "result"}`` (what a finished game's public replay
  shows);
- ``{"type": "end", "status", "games_finished"}``.

Never a hand, a deck card, a seed, a clock or a fault's detail. Publishing never blocks the
match: the referee only puts messages on a queue, the writes run in a thread, and any failure
(Redis gone, a queue overflow) stops the publishing, not the match.

A match is written only once someone watches it: the web marks a match it relays as watched
(:func:`mark_watched`, the key ``arena:live-watched:{match}``, renewed while its feed runs).
Until then the publisher only keeps the referee's messages; from the first mark it finds on, it
writes them all (the stream then holds the whole attempt, as if it had been written from the
start) and every new one, until the match ends. It looks at the queue and the mark every
:data:`FLUSH_S` and writes all that came meanwhile in one round trip, so a match costs one
wake-up of its event loop per interval, not one per event; a viewer sees a step that much later
at most (the web holds back the last turns anyway). A match nobody watches costs its process
nothing but keeping its messages and one ``EXISTS`` per interval (docs/benchmarks.md, "200
viewers of one live match"); viewers cost the match nothing more (the web reads the stream once
per match).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any, Protocol

from .store import Keys

__all__ = [
    "FLUSH_S",
    "LIVE_END_TTL_S",
    "LIVE_TTL_S",
    "WATCHED_TTL_S",
    "LiveEncoder",
    "LivePublisher",
    "live_key",
    "mark_watched",
    "watched_key",
]

log = logging.getLogger(__name__)

LIVE_TTL_S = 6 * 3600
"""How long a live stream is kept after its last write (a match lives less long)."""
LIVE_END_TTL_S = 600
"""... and after its match ended (the web shows the stored replays then)."""
MAX_ENTRIES = 50_000
"""Entries a stream keeps (a series of 100 deals is about 30,000 events)."""
HAND_SIZE = 7
FLUSH_S = 0.25
"""How often the publisher takes the referee's new messages and, when watched, writes them."""
WATCHED_TTL_S = 30
"""How long a watched mark lasts; the web renews it well before (while a feed of the match runs)."""


def live_key(match_id: str) -> str:
    """The match's stream (``Keys.live``)."""
    return Keys.live(match_id)


def watched_key(match_id: str) -> str:
    """The match's watched mark (``Keys.live_watched``)."""
    return Keys.live_watched(match_id)


def mark_watched(r: Any, match_id: str, ttl_s: int = WATCHED_TTL_S) -> None:
    """Someone watches ``match_id`` (the web, while it relays it): its publisher writes it."""
    r.set(watched_key(match_id), b"1", ex=ttl_s)


class Watchable(Protocol):
    """What the publisher watches: a match on the private referee
    (``arboretum_server.runner.MatchHandle``), whose ``watch()`` is a subscription with a
    ``queue`` of messages (``None`` at the end), ``overflowed`` and ``close()``."""

    def watch(self) -> Any: ...


class LiveEncoder:
    """Spectator messages in, public JSON events out (one encoder per match)."""

    def __init__(self, attempt: str) -> None:
        self.attempt = attempt
        self._game: int | None = None
        self._deck = 0
        self._skipped = False  # the turn's second draw was skipped: its play has no discard
        self._place: dict[str, Any] | None = None
        self._last: dict[str, Any] | None = None

    def encode(self, message: object) -> list[dict[str, Any]]:
        from arboretum_server import runner as m

        if isinstance(message, m.MatchSnapshot):
            return [
                {
                    "type": "start",
                    "attempt": self.attempt,
                    "players": message.players,
                    "games": message.game_count,
                    "seats": list(message.seat_names),
                }
            ]
        if isinstance(message, m.WatchGameStart):
            setup = message.setup
            self._game = setup.game_index
            self._deck = len(setup.species) * 8 - setup.players * HAND_SIZE
            self._skipped, self._place, self._last = False, None, None
            out: list[dict[str, Any]] = [
                {
                    "type": "game",
                    "game": setup.game_index,
                    "players": setup.players,
                    "species": [s.value for s in setup.species],
                    "seats": [{"seat": i, "bot": n} for i, n in enumerate(setup.seat_names)],
                    "deck_size": self._deck,
                }
            ]
            for event in message.events:  # a game joined in progress
                out += self.encode(event)
            return out
        if isinstance(message, m.LoggedEvent):
            return self._event(message)
        if isinstance(message, m.GameOutcome):
            result = message.result
            from arboretum.replay import result_to_json

            return [
                {
                    "type": "game_end",
                    "game": message.game_index,
                    "final_hands": [[str(c) for c in hand] for hand in result.hands],
                    "result": result_to_json(result),
                }
            ]
        if isinstance(message, m.MatchEnd):
            return [
                {
                    "type": "end",
                    "status": message.status.value,
                    "games_finished": message.games_finished,
                }
            ]
        return []  # DecisionPending (clocks are not public), anything new

    def _step(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        self._last = step
        return [{"type": "step", "game": self._game, "step": step}]

    def _event(self, event: Any) -> list[dict[str, Any]]:
        from arboretum import DECK
        from arboretum_server import runner as m

        body = event.body
        turn = event.turn_number - 1  # the replay format counts turns from 0
        seat = event.seat
        if isinstance(body, m.Draw):
            step: dict[str, Any] = {"turn": turn, "seat": seat, "kind": "draw"}
            if body.source == DECK:
                self._deck -= 1
                step.update(source="deck", card=None)  # never a deck card, whoever drew it
            else:
                step.update(source="pile", pile=body.source, card=str(body.card))
            self._skipped = False
            return self._step(step)
        if isinstance(body, m.SecondDrawSkipped):
            self._skipped = True
            return []
        if isinstance(body, m.Place):
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
        if isinstance(body, m.Discard) and self._place is not None:
            play, self._place = self._place, None
            play["discard"] = str(body.card)
            return self._step(play)
        if isinstance(body, m.Forfeit):
            # As the replay records it: the turn after the fallback's decision (a play ends
            # the turn, unless it was the game's last).
            last = self._last
            ended = last is not None and last["kind"] == "play" and last["seat"] == seat
            after = turn + 1 if ended and self._deck > 0 else turn
            return self._step({"turn": after, "seat": seat, "kind": "forfeit"})
        return []  # Fault: its detail is the seat's author's


class LivePublisher:
    """Publishes one league match's spectator stream to Redis (see the module's docstring).

    ``always``: write from the start, watched or not (no mark is looked for)."""

    def __init__(
        self, r: Any, match_id: str, *, always: bool = False, flush_s: float = FLUSH_S
    ) -> None:
        self.r = r
        self.match_id = match_id
        self.key = live_key(match_id)
        self.watched_key = watched_key(match_id)
        self.attempt = secrets.token_hex(6)
        self.always = always
        self.flush_s = flush_s
        self.written = 0
        """Events written so far (0 for a match nobody watched)."""
        self._task: asyncio.Task[None] | None = None
        self._flush_now = asyncio.Event()

    def start(self, match: Watchable) -> None:
        """Subscribe to the match on the private referee (call it right after creating it)."""
        try:
            watch = match.watch()
        except Exception as exc:
            log.warning("match %s: not published live: %s", self.match_id, exc)
            return
        self._task = asyncio.create_task(self._pump(watch), name=f"live {self.match_id}")

    async def stop(self, timeout: float = 5.0) -> None:
        """Write what is left at once and wait for it (the stream ends with the match)."""
        task = self._task
        if task is None:
            return
        self._flush_now.set()
        try:
            await asyncio.wait_for(task, timeout)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
        except Exception as exc:  # already logged by the task
            log.debug("match %s: live publishing: %r", self.match_id, exc)

    async def _pump(self, watch: Any) -> None:
        encoder = LiveEncoder(self.attempt)
        queue: asyncio.Queue[Any] = watch.queue
        pending: list[Any] = []  # the referee's messages not written yet
        watched = self.always
        try:
            while True:
                pending.append(await queue.get())
                if pending[-1] is not None and not self._flush_now.is_set():
                    # the messages of an interval gather in the queue without waking this task
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._flush_now.wait(), self.flush_s)
                while not queue.empty():
                    pending.append(queue.get_nowait())
                over = pending[-1] is None
                if not watched:
                    watched = await asyncio.to_thread(self.r.exists, self.watched_key) > 0
                if watched:
                    batch, pending = pending, []
                    await asyncio.to_thread(self._write, encoder, batch, over)
                if over:
                    if watch.overflowed:
                        log.warning("match %s: live stream fell behind; stopped", self.match_id)
                    return
        except Exception as exc:
            log.warning("match %s: live publishing stopped: %s", self.match_id, exc)
        finally:
            watch.close()

    def _write(self, encoder: LiveEncoder, messages: list[Any], over: bool) -> None:
        """Encode and write ``messages`` (in the writer thread: a late first viewer's backlog can
        be a whole series, not to be encoded on the match's event loop)."""
        events = [e for msg in messages if msg is not None for e in encoder.encode(msg)]
        if events:
            self.publish(events, over)

    def publish(self, events: list[dict[str, Any]], over: bool = False) -> None:
        """Append ``events`` to the stream (in one round trip); ``over``: the match ended."""
        pipe = self.r.pipeline(transaction=False)
        for event in events:
            fields = {"a": self.attempt, "e": json.dumps(event, separators=(",", ":"))}
            pipe.xadd(self.key, fields, maxlen=MAX_ENTRIES, approximate=True)
        ended = over or events[-1]["type"] == "end"
        pipe.expire(self.key, LIVE_END_TTL_S if ended else LIVE_TTL_S)
        pipe.execute()
        self.written += len(events)
