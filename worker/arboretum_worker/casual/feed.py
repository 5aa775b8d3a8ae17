"""A casual game's feed: every message the person's seat receives, in order, in a Redis stream.

The messages are the line protocol's (``docs/stdio-protocol.md``, built by
:mod:`arboretum_sdk.stdio.lines`) with the changes docs/play.md lists: ``game_start`` has no
``seed``, each ``request`` carries the public ``events`` since the seat's previous message,
``match_end`` the replay's URL path; and the casual messages ``queued``, ``started``,
``accepted``, ``rejected`` and ``error``. A reload reads the feed again from the start.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from arboretum import DECK, DrawEvent, Event, ForfeitEvent, PlayEvent

from ..keys import Keys

if TYPE_CHECKING:
    import redis

__all__ = ["FEED_MAXLEN", "add", "append", "events_to_json", "read_feed"]

FEED_MAXLEN = 20_000
"""A bound on a feed's length (a game sends its seat far fewer messages)."""
_FIELD = "m"


def append(r: redis.Redis, game_id: str, message: dict[str, Any]) -> str:
    """Add ``message`` to the game's feed; its stream id."""
    entry = add(r, game_id, message)
    return entry.decode() if isinstance(entry, bytes) else str(entry)


def add(r: redis.Redis, game_id: str, message: dict[str, Any]) -> Any:
    """The feed's ``XADD`` of ``message`` on ``r``, a connection or a pipeline (the relay sends a
    request and the record's pending request in one round trip)."""
    data = json.dumps(message, separators=(",", ":"))
    return r.xadd(Keys.casual_feed(game_id), {_FIELD: data}, maxlen=FEED_MAXLEN, approximate=True)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def read_feed(
    r: redis.Redis, game_id: str, after: str = "0", block_ms: int = 0, count: int = 200
) -> list[tuple[str, dict[str, Any]]]:
    """The feed's messages after stream id ``after`` (``"0"``: from the start), at most
    ``count``, in order; ``block_ms`` > 0 waits that long for a new one when there is none."""
    reply: Any = r.xread(
        {Keys.casual_feed(game_id): after or "0"},
        count=max(1, count),
        block=block_ms if block_ms > 0 else None,
    )
    out = []
    for _key, entries in reply or ():
        for entry_id, values in entries:
            data = {_text(k): v for k, v in values.items()}
            out.append((_text(entry_id), json.loads(_text(data[_FIELD]))))
    return out


def event_to_json(event: Event) -> dict[str, Any]:
    """A public event as the replay writes a step (without its turn, digest and timing)."""
    if isinstance(event, DrawEvent):
        out: dict[str, Any] = {"seat": event.seat, "kind": "draw"}
        if event.source == DECK:
            out["source"] = "deck"
        else:
            out["source"], out["pile"] = "pile", event.source
        out["card"] = None if event.card is None else str(event.card)
        return out
    if isinstance(event, PlayEvent):
        return {
            "seat": event.seat,
            "kind": "play",
            "card": str(event.card),
            "cell": [event.cell.x, event.cell.y],
            "discard": None if event.discard is None else str(event.discard),
        }
    if isinstance(event, ForfeitEvent):
        return {"seat": event.seat, "kind": "forfeit"}
    raise TypeError(f"not an event: {event!r}")


def events_to_json(events: Iterable[Event]) -> list[dict[str, Any]]:
    return [event_to_json(e) for e in events]
