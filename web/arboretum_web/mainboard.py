"""The site's main board: the league or ladder that ``/`` and the API's default leaderboard show.

The operator chooses it (``arena web main-board NAME``); it is kept under ``arena:main-board``.
With none chosen (or the chosen league deleted), the front page shows the league with the most
bot versions, the newest of those first: a throwaway two-bot league created later never
replaces a bigger board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arboretum_worker import store
from arboretum_worker.keys import Keys, StoreError

if TYPE_CHECKING:
    import redis

__all__ = ["chosen_main_board", "clear_main_board", "front_league", "set_main_board"]


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def set_main_board(r: redis.Redis, name: str) -> None:
    """Make league ``name`` the main board (StoreError if there is no such league)."""
    store.validate_name("league", name)
    if store.get_league(r, name) is None:
        raise StoreError(f"no league {name!r}")
    r.set(Keys.MAIN_BOARD, name)


def clear_main_board(r: redis.Redis) -> None:
    r.delete(Keys.MAIN_BOARD)


def chosen_main_board(r: redis.Redis) -> str | None:
    """The league the operator chose, or None (none chosen, or it no longer exists)."""
    name = r.get(Keys.MAIN_BOARD)
    if name is None:
        return None
    text = _s(name)
    return text if text in store.list_leagues(r) else None


def _size(r: redis.Redis, league: store.League) -> int:
    if league.settings.ladder is not None:
        return int(r.hlen(Keys.ladder(league.name)))
    return len(league.settings.bots)


def front_league(r: redis.Redis) -> str | None:
    """The main board if one is chosen, else the league with the most versions (newest first
    among equals), else None."""
    chosen = chosen_main_board(r)
    if chosen is not None:
        return chosen
    leagues = store.get_leagues(r)  # newest first
    if not leagues:
        return None
    return max(leagues, key=lambda lg: _size(r, lg)).name  # max keeps the first (newest) of ties
