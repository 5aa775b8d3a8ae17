"""Authors' webhooks: a signed HTTP POST when one of their tests or challenges ends, or when one
of their bots faults in a league match.

An author sets one URL (``PUT /api/v1/me/webhook``); the arena answers with a signing secret,
shown once. :func:`notify` records a delivery and enqueues :func:`deliver` on the rq queue
``arena-webhooks`` (:func:`webhook_queue`); the job POSTs the JSON body with

- ``X-Arena-Event``: the event (``test.finished``, ``challenge.finished``, ``match.fault``);
- ``X-Arena-Delivery``: the delivery's id (the same on every attempt: a receiver drops repeats);
- ``X-Arena-Timestamp``: Unix seconds of the attempt;
- ``X-Arena-Signature``: ``sha256=`` HMAC-SHA256, keyed with the secret, of
  ``"{timestamp}.{body}"`` (a receiver refuses a stale timestamp, so a captured request cannot
  be replayed later: :func:`verify`).

An attempt that fails (no connection, a timeout, 5xx, 408 or 429) is retried after a backoff
that doubles (``ARENA_WEBHOOK_BACKOFF`` seconds, default 1, then twice that, ...) up to
``ARENA_WEBHOOK_ATTEMPTS`` attempts (default 5), inside the job (no rq scheduler is needed);
another 4xx is final. Redirects are not followed. Each attempt is recorded on the delivery
(:func:`deliveries`). Private, loopback and link-local addresses are refused unless
``ARENA_WEBHOOK_PRIVATE=1`` (a webhook must not reach the arena's own network).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import logging
import os
import re
import secrets
import socket
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import store
from .keys import Keys

if TYPE_CHECKING:
    import redis

__all__ = [
    "EVENTS",
    "MAX_URL",
    "URL_PATTERN",
    "WEBHOOK_QUEUE",
    "Webhook",
    "WebhookError",
    "clear_webhook",
    "deliver",
    "deliveries",
    "fault_step",
    "get_webhook",
    "notify",
    "notify_faults",
    "set_webhook",
    "sign",
    "verify",
    "webhook_queue",
]

log = logging.getLogger(__name__)

WEBHOOK_QUEUE = "arena-webhooks"
EVENTS = ("test.finished", "challenge.finished", "match.fault")
MAX_URL = 500
_PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
URL_PATTERN = r"^https?://[!-\"$-.0-9;->A-Z\\^-~]+(:" + _PORT + r")?(/[!-~]*)?$"
"""What a webhook URL may be (the OpenAPI document's pattern too): printable ASCII, a host name
or IPv4 address (no user, password, or ``[IPv6]``), an optional port and path."""
_URL_RE = re.compile(URL_PATTERN)
KEPT = 50
"""Deliveries kept per author (the newest)."""
DELIVERY_TTL_S = 7 * 86400
TIMEOUT_S = 5.0
TOLERANCE_S = 300
_RETRIED = frozenset({408, 429})


class WebhookError(ValueError):
    """A webhook URL is refused."""


@dataclass(frozen=True, slots=True)
class Webhook:
    url: str
    secret: str
    created: float


def _s(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def validate_url(url: str) -> str:
    """An ``http`` or ``https`` URL with a host, at most :data:`MAX_URL` characters, no
    credentials and no spaces; WebhookError naming what is wrong."""
    if not isinstance(url, str) or not url:
        raise WebhookError("the webhook URL is empty")
    if len(url) > MAX_URL:
        raise WebhookError(f"the webhook URL is {len(url)} characters; at most {MAX_URL}")
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise WebhookError("the webhook URL holds a space or a control character")
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:  # a bad [IPv6] host
        raise WebhookError(f"the webhook URL is malformed: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookError(f"the webhook URL must start with http:// or https://, not {url[:20]!r}")
    if not parts.hostname:
        raise WebhookError("the webhook URL has no host")
    if parts.username or parts.password:
        raise WebhookError("the webhook URL must not hold a user or password")
    try:
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise WebhookError("the webhook URL's port is not a number from 0 to 65535") from None
    if not _URL_RE.fullmatch(url):
        raise WebhookError("the webhook URL is not http(s)://HOST[:PORT][/PATH] in printable ASCII")
    return url


def set_webhook(r: redis.Redis, author: str, url: str) -> str:
    """Set the author's webhook; returns its new signing secret (shown once)."""
    validate_url(url)
    secret = "whsec_" + secrets.token_urlsafe(32)
    r.hset(
        Keys.author_webhook(author),
        mapping={"url": url, "secret": secret, "created": repr(time.time())},
    )
    return secret


def get_webhook(r: redis.Redis, author: str) -> Webhook | None:
    h = {_s(k): _s(v) for k, v in r.hgetall(Keys.author_webhook(author)).items()}
    if "url" not in h:
        return None
    return Webhook(url=h["url"], secret=h.get("secret", ""), created=float(h.get("created", 0)))


def clear_webhook(r: redis.Redis, author: str) -> bool:
    """Remove the author's webhook; False if there was none."""
    return bool(r.delete(Keys.author_webhook(author)))


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def verify(
    secret: str,
    timestamp: str,
    body: bytes,
    signature: str,
    *,
    tolerance_s: int = TOLERANCE_S,
    now: float | None = None,
) -> bool:
    """What a receiver checks: the signature, and a timestamp within ``tolerance_s``."""
    if not timestamp.isdigit():
        return False
    now = time.time() if now is None else now
    if abs(now - int(timestamp)) > tolerance_s:
        return False
    return hmac.compare_digest(sign(secret, timestamp, body), signature)


def notify(
    r: redis.Redis, author: str, event: str, payload: dict[str, Any], *, enqueue: bool = True
) -> str | None:
    """Record a delivery of ``event`` to ``author``'s webhook and enqueue it; None when the
    author has no webhook. Never raises for the receiver's sake: its failures are recorded."""
    hook = get_webhook(r, author)
    if hook is None:
        return None
    delivery = secrets.token_hex(10)
    body = json.dumps(
        {
            "event": event,
            "author": author,
            "delivery": delivery,
            "sent_at": time.time(),
            "data": payload,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    key = Keys.webhook_delivery(delivery)
    pipe = r.pipeline()
    pipe.hset(
        key,
        mapping={
            "id": delivery,
            "author": author,
            "event": event,
            "url": hook.url,
            "body": body,
            "status": "pending",
            "attempts": "[]",
            "created": repr(time.time()),
        },
    )
    pipe.expire(key, DELIVERY_TTL_S)
    pipe.lpush(Keys.author_deliveries(author), delivery)
    pipe.ltrim(Keys.author_deliveries(author), 0, KEPT - 1)
    pipe.execute()
    if enqueue:
        from rq import Queue

        Queue(webhook_queue(), connection=r).enqueue(
            "arboretum_worker.webhooks.deliver",
            delivery,
            job_id=f"arena-webhook-{delivery}",
            job_timeout=int(attempts_from_env() * (TIMEOUT_S + 1) + 2 * _backoff_total()),
            result_ttl=3600,
            failure_ttl=86400,
        )
    return delivery


def webhook_queue() -> str:
    """The rq queue of deliveries: ``BASE-webhooks`` for the workers' base ``ARENA_QUEUE``
    (``arena-webhooks`` by default), the first the workers take from."""
    from .queues import QueueKind, queue_name
    from .settings import WorkerSettings

    return queue_name(QueueKind.WEBHOOKS, WorkerSettings.from_env().queue)


def attempts_from_env() -> int:
    text = os.environ.get("ARENA_WEBHOOK_ATTEMPTS", "5")
    return max(1, min(10, int(text))) if text.isdigit() else 5


def backoff_from_env() -> float:
    try:
        return max(0.0, min(60.0, float(os.environ.get("ARENA_WEBHOOK_BACKOFF", "1"))))
    except ValueError:
        return 1.0


def _backoff_total() -> float:
    return backoff_from_env() * (2 ** attempts_from_env())


def _private_allowed() -> bool:
    return os.environ.get("ARENA_WEBHOOK_PRIVATE", "") == "1"


def _refused_address(host: str, port: int) -> str | None:
    """Why the host may not be called (a private address), else None."""
    if _private_allowed():
        return None
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        return f"cannot resolve {host}: {getattr(exc, 'strerror', None) or exc}"
    for info in infos:
        ip = ipaddress.ip_address(info[4][0])
        if not ip.is_global:
            return f"{host} is a private or local address ({ip}); webhooks go to public hosts"
    return None


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int | None, str, bool]:
    """One POST: (status, reason, False), or (None, why it failed, whether that is final)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    refused = _refused_address(host, port)
    if refused:
        return None, refused, not refused.startswith("cannot resolve")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    conn_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = conn_type(host, port, timeout=TIMEOUT_S)
    try:
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read(4096)
        return resp.status, resp.reason or "", False
    except (OSError, UnicodeError, ValueError, http.client.HTTPException) as exc:
        return None, f"{type(exc).__name__}: {exc}"[:200], False
    finally:
        conn.close()


def _connection() -> Any:
    from rq import get_current_job

    job = get_current_job()
    if job is not None and job.connection is not None:
        return job.connection
    import redis

    from .settings import WorkerSettings

    return redis.Redis.from_url(WorkerSettings.from_env().redis_url)


def deliver(
    delivery_id: str,
    *,
    r: redis.Redis | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """The rq job: POST the delivery, retrying with backoff; returns its final status
    (``delivered``, ``failed``, or ``dropped`` when the author removed the webhook)."""
    r = r if r is not None else _connection()
    key = Keys.webhook_delivery(delivery_id)
    d = {_s(k): _s(v) for k, v in r.hgetall(key).items()}
    if not d:
        log.warning("webhook delivery %s: not found (expired?)", delivery_id)
        return "missing"
    hook = get_webhook(r, d["author"])
    if hook is None:
        r.hset(key, "status", "dropped")
        return "dropped"
    body = d["body"].encode()
    attempts: list[dict[str, Any]] = json.loads(d.get("attempts") or "[]")
    total, backoff = attempts_from_env(), backoff_from_env()
    status = "failed"
    for n in range(total):
        ts = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "arboretum-arena-webhook/1",
            "X-Arena-Event": d["event"],
            "X-Arena-Delivery": delivery_id,
            "X-Arena-Timestamp": ts,
            "X-Arena-Signature": sign(hook.secret, ts, body),
        }
        started = time.time()
        code, note, refused = _post(d["url"], body, headers)
        attempts.append({"at": started, "status": code, "note": note})
        r.hset(key, mapping={"attempts": json.dumps(attempts), "status": "retrying"})
        if code is not None and 200 <= code < 300:
            status = "delivered"
            break
        final = code is not None and 400 <= code < 500 and code not in _RETRIED
        if final or refused or n == total - 1:
            break
        sleep(backoff * 2**n)
    r.hset(key, "status", status)
    log.info("webhook delivery %s to %s: %s", delivery_id, d["author"], status)
    return status


def deliveries(r: redis.Redis, author: str, limit: int = 20) -> list[dict[str, Any]]:
    """The author's latest deliveries, newest first: id, event, status, attempts, created."""
    ids = [_s(i) for i in r.lrange(Keys.author_deliveries(author), 0, limit - 1)]
    pipe = r.pipeline(transaction=False)
    for i in ids:
        pipe.hgetall(Keys.webhook_delivery(i))
    out = []
    for raw in pipe.execute():
        d = {_s(k): _s(v) for k, v in raw.items()}
        if not d:
            continue  # expired
        out.append(
            {
                "id": d["id"],
                "event": d["event"],
                "status": d["status"],
                "created": float(d.get("created", 0)),
                "attempts": json.loads(d.get("attempts") or "[]"),
            }
        )
    return out


def fault_step(doc: dict[str, Any], seat: int) -> int | None:
    """The first step of a replay document at which ``seat`` faulted or forfeited, or None."""
    for index, step in enumerate(doc.get("steps", [])):
        if step.get("seat") == seat and ("fault" in step or step.get("kind") == "forfeit"):
            return index
    return None


def notify_faults(r: redis.Redis, result: store.MatchResult, replay_docs: list[str]) -> list[str]:
    """After a league match is recorded: a ``match.fault`` notice to the owner of each seat with
    a fault, linking to the first one's step in the replay viewer. Returns the deliveries."""
    sent = []
    for seat, vid in enumerate(result.seats):
        counts = [g.faults[seat] for g in result.games]
        if not any(counts):
            continue
        version = store.get_version(r, vid)
        bot = store.get_bot(r, version.name) if version else None
        if bot is None or not bot.owner:
            continue
        game = next(i for i, c in enumerate(counts) if c)
        step = None
        if game < len(replay_docs):
            try:
                step = fault_step(json.loads(replay_docs[game]), seat)
            except ValueError:
                step = None
        url = f"/matches/{result.match_id}/games/{game}" + (
            f"#step={step}" if step is not None else ""
        )
        payload = {
            "match": result.match_id,
            "league": result.league,
            "seat": seat,
            "bot": bot.name,
            "version": vid,
            "faults": sum(counts),
            "faults_per_game": counts,
            "game": game,
            "step": step,
            "url": url,
        }
        delivery = notify(r, bot.owner, "match.fault", payload)
        if delivery:
            sent.append(delivery)
    return sent
