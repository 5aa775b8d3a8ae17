"""The operator's audit log of what authors did: who, what action, on what, when, and the result.

:class:`~.ratelimit.RateLimitMiddleware` records every state-changing request of a signed-in
author (``POST /api/v1/bots/{name}/versions``, the upload form, ...) whatever its route, so new
endpoints are logged without a line of their own; an endpoint may add a richer entry with
:func:`record` (``action`` such as ``challenge.create``, ``target`` an id).

Two capped Redis streams (``Keys.AUDIT_LOG`` for everyone, ``Keys.author_audit`` per author), so
the log of one author stays readable however busy the others are. The operator reads it with
``arena web audit-log [--author NAME]``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from arboretum_worker.keys import Keys

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT, FieldT

__all__ = ["AUTHOR_ENTRIES", "ENTRIES", "Entry", "read", "record"]

ENTRIES = 100_000
"""Entries kept in the whole log (about: Redis trims whole nodes)."""
AUTHOR_ENTRIES = 2_000
"""Entries kept per author."""
_FIELD_CAP = 300


@dataclass(frozen=True, slots=True)
class Entry:
    when: float
    author: str
    action: str
    target: str
    result: str
    address: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _s(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def record(
    r: redis.Redis,
    author: str,
    action: str,
    target: str,
    result: str | int,
    *,
    address: str = "",
    when: float | None = None,
) -> None:
    """Add one entry to the log (and to the author's own)."""
    fields: dict[FieldT, EncodableT] = {
        "when": repr(when if when is not None else time.time()),
        "author": author[:_FIELD_CAP],
        "action": action[:_FIELD_CAP],
        "target": target[:_FIELD_CAP],
        "result": str(result)[:_FIELD_CAP],
        "address": address[:_FIELD_CAP],
    }
    pipe = r.pipeline(transaction=False)
    pipe.xadd(Keys.AUDIT_LOG, fields, maxlen=ENTRIES, approximate=True)
    pipe.xadd(Keys.author_audit(author), fields, maxlen=AUTHOR_ENTRIES, approximate=True)
    pipe.execute()


def read(r: redis.Redis, author: str | None = None, limit: int = 100) -> list[Entry]:
    """The latest ``limit`` entries, newest first (of one author when ``author`` is given)."""
    key = Keys.author_audit(author) if author else Keys.AUDIT_LOG
    out = []
    entries: Any = r.xrevrange(key, count=limit)  # [(id, {field: value})], bytes
    for _id, raw in entries:
        f = {_s(k): _s(v) for k, v in raw.items()}
        out.append(
            Entry(
                when=float(f.get("when", "0") or 0),
                author=f.get("author", ""),
                action=f.get("action", ""),
                target=f.get("target", ""),
                result=f.get("result", ""),
                address=f.get("address", ""),
            )
        )
    return out
