"""What the league's ``arena`` commands share: the ``--redis-url`` parent parser, the worker
settings and the Redis client of the parsed arguments, and the league a ``--league`` names."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from arboretum_sdk import clitools
from arboretum_sdk.clitools import UserError

if TYPE_CHECKING:
    import redis

__all__ = ["common", "known_league", "league_name", "redis_address", "redis_of", "settings_of"]


def common() -> argparse.ArgumentParser:
    """The parent parser of every command that reaches Redis (``--redis-url``)."""
    parent = argparse.ArgumentParser(add_help=False)
    clitools.add_redis_url(parent)
    return parent


def settings_of(args: argparse.Namespace) -> Any:
    from .settings import SettingsError, WorkerSettings

    try:
        return WorkerSettings.from_env(redis_url=getattr(args, "redis_url", None))
    except SettingsError as exc:
        raise UserError(exc.line()) from None


def redis_of(args: argparse.Namespace) -> Any:
    from .settings import RedisUnavailable, connect_redis

    try:
        client = connect_redis(settings_of(args).redis_url)
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None
    from .progress import prepare_store

    prepare_store(client)  # one GET, unless matches stored before the indexes are there
    return client


def known_league(r: redis.Redis, name: str) -> str:
    """``name``, if that league exists; else :class:`UserError` naming the Redis read."""
    from . import store

    if store.get_league(r, name) is None:
        raise UserError(
            f"no league named {name!r} in the Redis at {redis_address(r)} "
            "(arena league list shows them)"
        )
    return name


def league_name(r: redis.Redis, name: str | None) -> str | None:
    """``name`` if that league exists (else :class:`UserError`), or the newest league."""
    from . import store

    if name:
        return known_league(r, name)
    leagues = [store.get_league(r, n) for n in store.list_leagues(r)]
    found = [lg for lg in leagues if lg is not None]
    if not found:
        return None
    return max(found, key=lambda lg: lg.created).name


def redis_address(r: redis.Redis) -> str:
    """Which Redis ``r`` reads, for a message: its URL without user or password."""
    kwargs = r.connection_pool.connection_kwargs
    db = kwargs.get("db", 0)
    if kwargs.get("path"):
        return f"unix://{kwargs['path']}?db={db}"
    scheme = "rediss" if "SSL" in r.connection_pool.connection_class.__name__ else "redis"
    return f"{scheme}://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{db}"
