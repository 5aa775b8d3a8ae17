"""Live games: what a running league match publishes for the web's spectators, through Redis.

The worker's private referee runs in the job's process; :class:`LivePublisher` subscribes to the
match's public events through the match API (``MatchHandle.watch()`` of
:mod:`arboretum_server.runner`: ``SpectatorEvent`` values, a type and its JSON fields) as soon as
the match is created, encodes each to one JSON object (the attempt added to ``start``) and appends
them, in batches, to the Redis stream ``arena:live:{match}`` (:func:`live_key`; entry fields
``a``, the attempt, and ``e``, one JSON event). The web relays them to browsers
(``arboretum_web.live``). This is the one codec between the worker and the web.

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
from typing import TYPE_CHECKING, Any, Protocol

from .store import Keys

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT, FieldT

__all__ = [
    "FLUSH_S",
    "LIVE_END_TTL_S",
    "LIVE_TTL_S",
    "WATCHED_TTL_S",
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


def mark_watched(r: redis.Redis, match_id: str, ttl_s: int = WATCHED_TTL_S) -> None:
    """Someone watches ``match_id`` (the web, while it relays it): its publisher writes it."""
    r.set(watched_key(match_id), b"1", ex=ttl_s)


class Watchable(Protocol):
    """What the publisher watches: a match on the private referee
    (``arboretum_server.runner.MatchHandle``), whose ``watch()`` is a subscription
    (``arboretum_server.runner.MatchWatch``) with a ``queue`` of items (``None`` at the end),
    ``public(items)`` (their public events), ``overflowed`` and ``close()``."""

    def watch(self) -> Any: ...


class LivePublisher:
    """Publishes one league match's spectator stream to Redis (see the module's docstring).

    ``always``: write from the start, watched or not (no mark is looked for)."""

    def __init__(
        self, r: redis.Redis, match_id: str, *, always: bool = False, flush_s: float = FLUSH_S
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
        queue: asyncio.Queue[Any] = watch.queue
        pending: list[Any] = []  # the subscription's items not written yet
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
                    await asyncio.to_thread(self._write, watch, batch, over)
                if over:
                    if watch.overflowed:
                        log.warning("match %s: live stream fell behind; stopped", self.match_id)
                    return
        except Exception as exc:
            log.warning("match %s: live publishing stopped: %s", self.match_id, exc)
        finally:
            watch.close()

    def _write(self, watch: Any, items: list[Any], over: bool) -> None:
        """Encode and write ``items`` (in the writer thread: a late first viewer's backlog can
        be a whole series, not to be encoded on the match's event loop)."""
        attempt = {"attempt": self.attempt}
        events = [
            e.to_json(**attempt) if e.type == "start" else e.to_json() for e in watch.public(items)
        ]
        if events:
            self.publish(events, over)

    def publish(self, events: list[dict[str, Any]], over: bool = False) -> None:
        """Append ``events`` to the stream (in one round trip); ``over``: the match ended."""
        pipe = self.r.pipeline(transaction=False)
        for event in events:
            fields: dict[FieldT, EncodableT] = {
                "a": self.attempt,
                "e": json.dumps(event, separators=(",", ":")),
            }
            pipe.xadd(self.key, fields, maxlen=MAX_ENTRIES, approximate=True)
        ended = over or events[-1]["type"] == "end"
        pipe.expire(self.key, LIVE_END_TTL_S if ended else LIVE_TTL_S)
        pipe.execute()
        self.written += len(events)
