"""The league worker's settings, from the environment and flags, validated at start-up.

======================  ================================  =====================================
setting                 environment                       default
======================  ================================  =====================================
Redis URL               ``REDIS_URL`` (``--redis-url``)   ``redis://localhost:6379/0``
rq queue                ``ARENA_QUEUE``                   ``arena``
per-match directories   ``ARENA_MATCH_ROOT``              ``arboretum-matches`` in the system
                                                          temporary directory
sandbox runner          ``ARENA_SANDBOX``                 ``auto`` (bwrap, else unshare, else
                                                          none: built-in bots only); ``docker``
bots' docker image      ``ARENA_BOT_IMAGE``               the docker runner's default
sandbox uid locks       ``ARENA_UID_LOCK_DIR``            ``/run/arboretum`` (one for the host)
bot output kept         ``ARENA_OUTPUT_CAP``              65536 bytes per bot and match
maintenance interval    ``ARENA_MAINTENANCE_INTERVAL_S``  10 s
heartbeat interval      ``ARENA_MONITOR_INTERVAL_S``      5 s
heartbeat margin        ``ARENA_HEARTBEAT_MARGIN_S``      15 s
retries per match       ``ARENA_RETRIES``                 2
time to finish on stop  ``ARENA_STOP_DRAIN_S``            180 s
======================  ================================  =====================================

The rq settings and why (also in docs/league.md, "Running a league"):

- **Queue** ``arena``: one queue for league matches; any number of workers listen on it.
- **Retries** ``Retry(max=2)``: a match whose attempt fails (referee error, bot sandbox failure,
  a worker killed mid-match) runs again up to twice, then is marked failed with the reason of the
  last attempt. A re-run replays the same match id and seed, and the result is recorded
  first-writer-wins, so a match is never counted twice.
- **Maintenance interval** 10 s (rq's default is 10 min): how often a worker looks for abandoned
  jobs (their worker died) and re-queues them; low, so a killed worker's match is found quickly.
- **Heartbeat**: ``arena worker`` heartbeats every ``ARENA_MONITOR_INTERVAL_S``; its execution
  entries expire ``ARENA_HEARTBEAT_MARGIN_S`` after the last heartbeat (rq's margin: 60 s). With
  the defaults a dead worker's match is re-queued 5 + 15 + 10 = 30 s after its last heartbeat at
  the latest. Plain ``rq worker arena`` works too, with rq's margins (about 100 s).
- **Job timeout**: see :func:`job_timeout`.
- **Stopping**: on SIGTERM a worker takes no new job and gives its running match
  ``ARENA_STOP_DRAIN_S`` to finish, then hands it back to the queue
  (:mod:`arboretum_worker.worker`); docker-compose.yml's ``stop_grace_period`` (4 min) leaves
  a minute on top for the hand back.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_QUEUE",
    "DEFAULT_REDIS_URL",
    "HEARTBEAT_MARGIN_S",
    "STARTUP_MARGIN_S",
    "MalformedRedisUrl",
    "RedisUnavailable",
    "SettingsError",
    "WorkerSettings",
    "add_deals_per_series",
    "add_games_per_pairing",
    "check_redis_url",
    "deals_per_series_of",
    "deck_size",
    "games_per_pairing_of",
    "job_timeout",
    "max_decisions_per_game",
    "seat_thinking_s",
]

DEFAULT_REDIS_URL = "redis://localhost:6379/0"
DEFAULT_QUEUE = "arena"
# Seconds allowed for everything in a match job that is not a game: starting the referee and the
# sandboxes, the bots' imports and connection, fetching results and replays, clean-up.
STARTUP_MARGIN_S = 90
# An execution whose worker stopped heartbeating expires this long after the last heartbeat.
HEARTBEAT_MARGIN_S = 15

_CARDS = 80
_HAND = 7
_SPECIES_CARDS = {2: 48, 3: 64, 4: _CARDS}


class SettingsError(ValueError):
    """An invalid league setting (named in the message)."""

    def line(self) -> str:
        """The error as a command says it."""
        return f"invalid league settings: {self}"


def numbers_from_env(
    env: Mapping[str, str], fields: Iterable[tuple[str, str, Callable[[str], object]]]
) -> dict[str, Any]:
    """The settings of ``fields`` (``(field, variable, int or float)``) that ``env`` sets, by
    field name; an empty variable is unset, one that is no number a :class:`SettingsError`."""
    values: dict[str, Any] = {}
    for name, var, kind in fields:
        text = env.get(var, "").strip()
        if text:
            try:
                values[name] = kind(text)
            except ValueError:
                raise SettingsError(f"{var} must be a number, got {text!r}") from None
    return values


class MalformedRedisUrl(SettingsError):
    """A Redis URL that does not parse (the setting it came from is named in the message)."""

    def line(self) -> str:
        return str(self)


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def check_redis_url(url: str, setting: str = "REDIS_URL") -> None:
    """Raise :class:`MalformedRedisUrl` unless ``url`` parses as a Redis URL (as the Redis
    client parses it); ``setting`` names where it came from (``REDIS_URL``, ``--redis-url``)."""
    if not url.startswith(REDIS_SCHEMES):
        reason = "it must start with redis://, rediss:// or unix://"
    else:
        from redis.connection import parse_url

        try:
            parse_url(url)
            return
        except ValueError as exc:
            reason = str(exc).rstrip(".") or type(exc).__name__
    raise MalformedRedisUrl(f"{setting} is a malformed Redis URL ({reason}): {redact_url(url)!r}")


def deck_size(players: int) -> int:
    """Cards in the draw pile after the deal: 34, 43 or 52 for 2, 3 or 4 players."""
    if players not in _SPECIES_CARDS:
        raise SettingsError(f"Arboretum is played by 2, 3 or 4 players, not {players}")
    return _SPECIES_CARDS[players] - _HAND * players


def max_decisions_per_game(players: int) -> int:
    """An upper bound on the decisions of one game: 3 per turn, at most ``deck_size`` turns.

    Each turn draws two cards and discards one, so the discard piles change by (cards drawn from
    the deck) - 1 per turn. They start empty and never go negative, hence after T turns at least
    T cards came from the deck; the game ends when the deck is empty, so T <= deck size.
    """
    return 3 * deck_size(players)


def job_timeout(
    players: int, games: int, per_decision_ms: int, bank_ms: int, margin_s: int = STARTUP_MARGIN_S
) -> int:
    """The rq job timeout of a match, in whole seconds.

    A decision times out after its free time L plus what is left of its seat's bank, and a bank
    (B) is spent at most once per seat and game, so a game lasts at most
    ``max_decisions_per_game(P) * L + P * B`` on the clocks. A match is ``games`` of them plus the
    start-up margin (referee, sandboxes, bot start-up, fetching results; the referee's own
    overhead per decision is far below L). Example: 2 players, 1 game, L = 1 s, B = 10 s gives
    102 + 20 + 90 = 212 s.
    """
    game_s = (max_decisions_per_game(players) * per_decision_ms + players * bank_ms) / 1000
    return math.ceil(games * game_s) + margin_s


def seat_thinking_s(players: int, games: int, per_decision_ms: int, bank_ms: int) -> float:
    """The most thinking time the clock can give one seat in a match, in seconds.

    Turns go round the seats and a game has at most ``deck_size(P)`` of them, so a seat has at
    most ``ceil(deck_size(P) / P)`` turns of 3 decisions, each with its free time L, plus its
    bank B once per game. The sandbox's CPU limit is derived from it
    (``SandboxLimits.for_match``). Example: 2 players, 1 game, L = 1 s, B = 10 s: 3 x 17 x 1 +
    10 = 61 s, hence a CPU limit of 1.5 x 61 + 15 = 107 s.
    """
    turns = -(-deck_size(players) // players)
    return games * (3 * turns * per_decision_ms + bank_ms) / 1000


@dataclass(frozen=True)
class WorkerSettings:
    """Validated settings of the league (workers and CLI)."""

    redis_url: str = DEFAULT_REDIS_URL
    queue: str = DEFAULT_QUEUE
    match_root: Path = Path(tempfile.gettempdir()) / "arboretum-matches"
    sandbox: str = "auto"
    bot_image: str | None = None
    output_cap: int = 64 * 1024
    maintenance_interval_s: int = 10
    monitor_interval_s: int = 5
    heartbeat_margin_s: int = HEARTBEAT_MARGIN_S
    retries: int = 2
    stop_drain_s: int = 180

    def __post_init__(self) -> None:
        check_redis_url(self.redis_url)
        if not self.queue:
            raise SettingsError("the queue name must not be empty")
        for name, low in (
            ("output_cap", 0),
            ("maintenance_interval_s", 1),
            ("monitor_interval_s", 1),
            ("heartbeat_margin_s", 1),
            ("retries", 0),
            ("stop_drain_s", 0),
        ):
            value = getattr(self, name)
            if type(value) is not int or value < low:
                raise SettingsError(f"{name} must be an integer >= {low}, got {value!r}")

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, *, redis_url: str | None = None
    ) -> WorkerSettings:
        """Settings from the environment (default ``os.environ``); ``redis_url`` wins if given."""
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        if redis_url:
            check_redis_url(redis_url, "--redis-url")
        url = redis_url or env.get("REDIS_URL")
        if url:
            values["redis_url"] = url
        if env.get("ARENA_QUEUE"):
            values["queue"] = env["ARENA_QUEUE"]
        if env.get("ARENA_MATCH_ROOT"):
            values["match_root"] = Path(env["ARENA_MATCH_ROOT"])
        if env.get("ARENA_SANDBOX"):
            values["sandbox"] = env["ARENA_SANDBOX"]
        if env.get("ARENA_BOT_IMAGE"):
            values["bot_image"] = env["ARENA_BOT_IMAGE"]
        lock_dir = env.get("ARENA_UID_LOCK_DIR", "").strip()
        if lock_dir and not os.path.isabs(lock_dir):  # read by the sandbox (uid_lock_dir)
            raise SettingsError(f"ARENA_UID_LOCK_DIR must be an absolute path, got {lock_dir!r}")
        for name, var in (
            ("output_cap", "ARENA_OUTPUT_CAP"),
            ("maintenance_interval_s", "ARENA_MAINTENANCE_INTERVAL_S"),
            ("monitor_interval_s", "ARENA_MONITOR_INTERVAL_S"),
            ("heartbeat_margin_s", "ARENA_HEARTBEAT_MARGIN_S"),
            ("retries", "ARENA_RETRIES"),
            ("stop_drain_s", "ARENA_STOP_DRAIN_S"),
        ):
            if env.get(var):
                try:
                    values[name] = int(env[var])
                except ValueError:
                    raise SettingsError(f"{var} must be an integer, got {env[var]!r}") from None
        return cls(**values)  # type: ignore[arg-type]


class RedisUnavailable(RuntimeError):
    """The league's Redis cannot be reached (or its URL cannot be used); the message says which."""


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages and logs), even in a URL
    that does not parse otherwise (a bad port, ...)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable URL>"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    if not at or ":" not in userinfo:
        return url
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{hostport}"))


def connect_redis(url: str, setting: str = "REDIS_URL") -> Any:
    """A client of the Redis at ``url`` that has answered a PING; else :class:`RedisUnavailable`
    (a malformed URL is named as ``setting``'s)."""
    import redis

    shown = redact_url(url)
    try:
        check_redis_url(url, setting)
        client = redis.Redis.from_url(url)
    except ValueError as exc:
        raise RedisUnavailable(str(exc)) from None
    try:
        client.ping()
    except redis.exceptions.RedisError as exc:
        client.close()
        raise RedisUnavailable(f"cannot reach Redis at {shown}: {exc}") from None
    return client


def _deals_per_series(text: str) -> int:
    from arboretum_sdk import argtypes

    from .schedule import MAX_DEALS_PER_SERIES

    return argtypes.int_range(1, MAX_DEALS_PER_SERIES)(text)


def add_deals_per_series(parser: argparse.ArgumentParser) -> None:
    """``--deals-per-series N``, the same in every command that creates a league. Its default
    is None: the command takes :data:`DEFAULT_DEALS_PER_SERIES` for a round robin and the
    ladder's unit (``ladder.DEALS_PER_UNIT``) for a ladder (:func:`deals_per_series_of`)."""
    from .ladder import DEALS_PER_UNIT
    from .schedule import DEFAULT_DEALS_PER_SERIES, MAX_DEALS_PER_SERIES

    parser.add_argument(
        "--deals-per-series",
        type=_deals_per_series,
        default=None,
        metavar="N",
        help=f"most deals one match plays in one seat order, with the same bot processes "
        f"(1 to {MAX_DEALS_PER_SERIES}; default {DEFAULT_DEALS_PER_SERIES}, or "
        f"{DEALS_PER_UNIT} for a ladder, whose unit of a pairing is these deals)",
    )


def deals_per_series_of(args: argparse.Namespace, *, ladder: bool = False) -> int:
    """The ``--deals-per-series`` given, else the default of a round robin or a ladder."""
    from .ladder import DEALS_PER_UNIT
    from .schedule import DEFAULT_DEALS_PER_SERIES

    if args.deals_per_series is not None:
        return int(args.deals_per_series)
    return DEALS_PER_UNIT if ladder else DEFAULT_DEALS_PER_SERIES


def add_games_per_pairing(parser: argparse.ArgumentParser) -> None:
    """``--games-per-pairing N`` and ``--allow-unbalanced``, the same in every command that
    creates a round robin. The default is None: the smallest number that balances the seat
    orders for the league's players (:func:`games_per_pairing_of`)."""
    from arboretum_sdk import argtypes

    parser.add_argument(
        "--games-per-pairing",
        type=argtypes.positive,
        default=None,
        metavar="N",
        help="deals per combination of bots, each in every seat rotation (default: the "
        "smallest number that balances who sits directly before whom, (P-1)!: 1, 2 or 6 for "
        "2, 3 or 4 players); a number that is not a multiple of it is refused",
    )
    parser.add_argument(
        "--allow-unbalanced",
        action="store_true",
        help="accept a --games-per-pairing that is not a multiple of (P-1)! (then some bots "
        "sit directly before others more often)",
    )


def games_per_pairing_of(args: argparse.Namespace) -> int:
    """The ``--games-per-pairing`` given, else the balanced default for ``--players``; a number
    that leaves the seat orders unbalanced is a usage error unless ``--allow-unbalanced``."""
    from arboretum_sdk.clitools import UsageError

    from .schedule import balance_problem, balanced_games_per_pairing

    if args.games_per_pairing is None:
        return balanced_games_per_pairing(args.players)
    problem = balance_problem(args.players, args.games_per_pairing)
    if problem is not None and not args.allow_unbalanced:
        block = balanced_games_per_pairing(args.players)
        raise UsageError(
            f"--games-per-pairing {args.games_per_pairing}: {problem} (use a multiple of "
            f"{block}, or --allow-unbalanced)"
        )
    return int(args.games_per_pairing)
