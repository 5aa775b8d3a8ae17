"""The league's ``arena`` subcommands. The SDK's ``arena`` imports this module and calls
:func:`register`.

Commands: ``worker``, ``league create|run|status|cancel|retry|list``, ``leaderboard``, ``ratings``,
``match show|logs|replay``, ``bot submit``, ``bot versions`` and ``sprt`` (:mod:`.sprt.cli`);
``arena demo`` is
:mod:`arboretum_worker.demo`. Redis is ``--redis-url``, else ``$REDIS_URL``, else
``redis://localhost:6379/0``; the rq queue is ``$ARENA_QUEUE`` (``arena``).
"""

from __future__ import annotations

import argparse
from typing import Any

# Every league command needs Redis: without the module, importing this one fails and `arena`
# names it ("arena league needs arboretum-league: the 'redis' module is missing").
import redis  # noqa: F401

from arboretum_sdk.clitools import UserError

from . import league_cli
from .cliargs import common as common_parser
from .cliargs import settings_of

__all__ = ["register"]


def register(
    subparsers: Any, groups: dict[str, Any], only: str | None = None, action: str | None = None
) -> None:
    """Add the league's subcommands to the ``arena`` parser (and ``versions`` to ``groups["bot"]``);
    with ``only`` (a top-level command, such as ``league``), just that command, and with
    ``action`` (such as ``run``) just that action of the ``league`` group.

    ``arena bot submit`` belongs to the SDK (authors submit remotely with the SDK alone); without
    ``--server`` it calls :func:`.bot_cli.cmd_bot_submit`, which stores the bot in Redis directly.
    Each command group registers its own subcommands (:mod:`.league_cli`, :mod:`.match_cli`,
    :mod:`.sprt.cli`, :mod:`.bot_cli`)."""
    common = common_parser()
    if only in (None, "demo"):
        _add_demo(subparsers)
    if only in (None, "worker"):
        _add_worker(subparsers, common)
    league_cli.register(subparsers, common, only, action)
    if only in (None, "match"):
        from . import match_cli

        match_cli.register(subparsers, common)
    if only in (None, "sprt"):
        from .sprt import cli as sprt_cli

        sprt_cli.register(subparsers)
    if only in (None, "bot"):
        from . import bot_cli

        bot_cli.register(groups, common)


def _add_demo(subparsers: Any) -> None:
    from .demo import add_arguments as demo_arguments
    from .demo import main as demo_main

    p = subparsers.add_parser(
        "demo",
        help="the main demo: a league of the built-in bots on this machine",
        description="A whole league on this machine: a private Redis (unless $REDIS_URL is set), "
        "a referee, league workers, the built-in bots submitted and checked in the sandbox, a "
        "round robin with a progress bar, the leaderboard and the fitted ratings; every game's "
        "replay is written to --replays. Everything it started is stopped at the end, on Ctrl-C "
        "or SIGTERM too. With --serve it then serves the site (arena web, on 127.0.0.1) with "
        "casual workers, so that people play the bots on its /play page, until Ctrl-C or "
        "SIGTERM. This is what scripts/demo runs.",
    )
    demo_arguments(p)
    p.set_defaults(handler=demo_main)


def _add_worker(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "worker",
        parents=[common],
        help="run a league worker (rq)",
        description="Run an rq worker on the league queue (ARENA_QUEUE, default 'arena') and "
        "the others named from it, highest priority first: webhooks, the league's, authors' "
        "challenges, authors' tests, casual, analysis (ARENA_QUEUES=KIND,... listens to some); "
        "leagues keep ARENA_LADDER_SHARE (0.5) of the busy workers, and authors' work is "
        "released round robin, one unit per author at a time. "
        "Like `rq worker arena --url $REDIS_URL --maintenance-interval 10`, with a short "
        "heartbeat margin so a killed worker's match is re-queued within about 30 s. "
        "Redis unreachable, at start or later, for any length of time: the worker says so in "
        "one line, retries with backoff (at most 2 s apart), says when Redis answers again and "
        "carries on; it never exits for it, and its running match finishes and is recorded. "
        "SIGTERM (or Ctrl-C): no new match; the running one gets ARENA_STOP_DRAIN_S (180 s) to "
        "finish, then is handed back to the queue, as is at once on a second SIGTERM. "
        "Settings: docs/league.md.",
    )
    p.add_argument("--burst", action="store_true", help="stop when the queues are empty")
    p.add_argument(
        "--name",
        help="worker name, unique among the running workers "
        "(default: arena-<host>-<pid>-<random>, new at every start)",
    )
    p.set_defaults(handler=cmd_worker, log_level="info")


def cmd_worker(args: argparse.Namespace) -> int:
    from .settings import RedisUnavailable
    from .worker import run_worker

    settings = settings_of(args)  # a bad URL or setting is an error; an unreachable Redis is not
    try:
        run_worker(settings, burst=args.burst, name=args.name)
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None
    return 0
