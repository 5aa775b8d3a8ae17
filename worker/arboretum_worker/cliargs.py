"""What the league's ``arena`` commands share: the ``--redis-url`` parent parser, the worker
settings and the Redis client of the parsed arguments, and the league a ``--league`` names."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from arboretum_sdk import clitools
from arboretum_sdk.clitools import UserError

if TYPE_CHECKING:
    import redis

__all__ = ["common", "league_name", "redis_of", "settings_of"]


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


def league_name(r: redis.Redis, name: str | None) -> str | None:
    """``name`` if that league exists (else :class:`UserError`), or the newest league."""
    from . import store

    if name:
        if store.get_league(r, name) is None:
            raise UserError(f"no league named {name!r} (arena league list shows them)")
        return name
    leagues = [store.get_league(r, n) for n in store.list_leagues(r)]
    found = [lg for lg in leagues if lg is not None]
    if not found:
        return None
    return max(found, key=lambda lg: lg.created).name
