"""Bot authors and their API tokens, in the league's Redis.

An operator creates an author with ``arena web author add NAME``, which prints a new token once.
Only the token's SHA-256 is stored, so a copy of the database does not hold a usable token.
A request authenticates with ``Authorization: Bearer <token>`` (or the ``arena_token`` cookie the
login page sets); the author's name becomes the ``owner`` of the bots it submits.

Keys (built by :class:`arboretum_worker.keys.Keys`, with the league's)::

    arena:authors                   set    author names
    arena:author:{name}             hash   name, created, token (sha256 hex of the token)
    arena:token:{sha256 hex}        string author name
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arboretum_worker.store import Keys, StoreError, validate_name

if TYPE_CHECKING:
    import redis

__all__ = [
    "TOKEN_PREFIX",
    "Author",
    "AuthorError",
    "add_author",
    "authenticate",
    "get_author",
    "hash_token",
    "list_authors",
    "remove_author",
    "rotate_token",
]

TOKEN_PREFIX = "arena_"
"""Tokens start with this, so a leaked one is easy to recognise (and to grep for)."""


class AuthorError(StoreError):
    """An author operation is refused (unknown or existing name)."""


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    created: float


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def add_author(r: redis.Redis, name: str) -> str:
    """Create author ``name`` and return its token (shown once; only its hash is kept)."""
    validate_name("author", name)
    key = Keys.author(name)
    if not r.hsetnx(key, "name", name):
        raise AuthorError(f"author {name!r} already exists")
    token = _new_token()
    digest = hash_token(token)
    pipe = r.pipeline()
    pipe.hset(key, mapping={"created": repr(time.time()), "token": digest})
    pipe.set(Keys.token(digest), name)
    pipe.sadd(Keys.AUTHORS, name)
    pipe.execute()
    return token


def rotate_token(r: redis.Redis, name: str) -> str:
    """Give author ``name`` a new token; the old one stops working."""
    key = Keys.author(name)
    old = r.hget(key, "token")
    if old is None:
        raise AuthorError(f"no author {name!r}")
    token = _new_token()
    digest = hash_token(token)
    pipe = r.pipeline()
    pipe.delete(Keys.token(_s(old)))
    pipe.hset(key, "token", digest)
    pipe.set(Keys.token(digest), name)
    pipe.execute()
    return token


def remove_author(r: redis.Redis, name: str) -> None:
    """Delete the author and its token (its bots keep their owner name)."""
    key = Keys.author(name)
    old = r.hget(key, "token")
    if old is None:
        raise AuthorError(f"no author {name!r}")
    pipe = r.pipeline()
    pipe.delete(Keys.token(_s(old)), key)
    pipe.srem(Keys.AUTHORS, name)
    pipe.execute()


def get_author(r: redis.Redis, name: str) -> Author | None:
    h = r.hgetall(Keys.author(name))
    if not h or b"created" not in h:
        return None
    return Author(name=_s(h[b"name"]), created=float(_s(h[b"created"])))


def list_authors(r: redis.Redis) -> list[str]:
    return sorted(_s(m) for m in r.smembers(Keys.AUTHORS))


def authenticate(r: redis.Redis, token: str | None) -> str | None:
    """The author a token belongs to, or None (unknown, malformed or revoked)."""
    if not token or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    digest = hash_token(token)
    name = r.get(Keys.token(digest))
    if name is None:
        return None
    author = _s(name)
    # The author's hash must still name this token (a rotated token is dead even if its
    # index key was left behind by a crash between the two writes).
    current = r.hget(Keys.author(author), "token")
    if current is None or not hmac.compare_digest(_s(current), digest):
        return None
    return author
