"""``arena bot run``, ``list`` and ``submit``: the SDK's bot subcommands (registered by cli.py)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import argtypes, clitools
from .clitools import UsageError, fail

if TYPE_CHECKING:
    from .bot import Bot

__all__ = ["register"]

TOKEN_ENV = "ARENA_TOKEN"
"""A seat token for ``arena bot run``."""
AUTHOR_TOKEN_ENV = "ARENA_AUTHOR_TOKEN"
"""An author token for ``arena bot submit --server``."""
SERVER_ENV = "ARENA_SERVER"
"""The league's web server for ``arena bot submit``."""

LOCAL_SUBMIT = "local_submit"
"""The ``arena bot submit`` parser's default that the league sets: a handler that stores the bot
in the league's Redis (used without ``--server``)."""

EXIT_OK = 0
EXIT_CLIENT = 1
EXIT_USAGE = 2
EXIT_BOT_CRASHED = 3


def register(bot_subparsers: Any) -> None:
    """Add ``run``, ``list`` and ``submit`` to the ``arena bot`` group."""
    p = bot_subparsers.add_parser(
        "run",
        help="connect a bot to a referee and play one match",
        description="Load BOT (a built-in name, a .py file, a folder with bot.py, or a folder "
        "with an arena.toml naming a command) or run --cmd COMMAND, and play the match of the "
        "seat whose token is given. A command is a bot in any language: it runs as a child "
        "process speaking the line protocol on its stdin and stdout (docs/stdio-protocol.md), "
        "and this process speaks to the referee for it. The token comes from --token-file, "
        "--token or "
        f"the {TOKEN_ENV} environment variable (prefer the file or the variable: a command line "
        "is visible to other users). Exit status: 0 when the match ended, 1 when the referee "
        "cannot be reached, refuses the token or the stream fails, 2 for a bot that does not "
        "load or a missing token, 3 when the bot raised with --exit-on-error or its command "
        "exited before the match ended.",
    )
    p.add_argument(
        "bot", metavar="BOT", nargs="?", help="built-in name, .py file or folder (or --cmd)"
    )
    p.add_argument(
        "--cmd",
        metavar="COMMAND",
        help='a command speaking the line protocol, e.g. "node bot.js" (split into words like '
        "a shell does, run without a shell, in the current folder)",
    )
    p.add_argument(
        "--server",
        required=True,
        metavar="ADDR",
        help="the referee: host:port, or unix:/path/to/socket",
    )
    tokens = p.add_mutually_exclusive_group()
    tokens.add_argument("--token", metavar="T", help="the seat token")
    tokens.add_argument(
        "--token-file", type=Path, metavar="FILE", help="read the seat token from FILE"
    )
    p.add_argument("--name", help="the bot's name in logs (default: its class's name)")
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for the referee (default 10)",
    )
    p.add_argument(
        "--reconnect-for",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to keep reconnecting after the stream breaks (default 10)",
    )
    p.add_argument(
        "--exit-on-error",
        action="store_true",
        help="stop (status 3) when the bot raises; by default the decision is left unanswered "
        "and times out, and the bot plays on",
    )
    p.set_defaults(handler=cmd_run, log_level="info")

    _add_list(bot_subparsers)

    p = bot_subparsers.add_parser(
        "submit",
        help="submit a bot to the league",
        description="Submit a bot file (.py) or folder (with bot.py, or with an arena.toml naming "
        "the command of a bot in another language) as a new immutable version, "
        "named by the sha256 of its files. Authors submit to a league's web server with "
        f"--server URL and their author token (--token, --token-file or ${AUTHOR_TOKEN_ENV}); "
        "the server checks the bot in its sandbox. Operators with the league installed "
        "(arboretum-league) submit straight to its Redis by leaving out --server. Either way a "
        "bot gets at most $ARENA_SUBMIT_QUOTA new versions a UTC day (the operator's setting, "
        "default 5; 0 lifts it).",
    )
    p.add_argument(
        "path",
        type=Path,
        metavar="PATH",
        help="a .py file or a folder with bot.py or arena.toml; without --server also a "
        "built-in bot's name",
    )
    p.add_argument(
        "--name",
        required=True,
        type=argtypes.bot_name,
        help="the bot's name: 1-64 letters, digits, '_', '.' or '-', starting with a letter or "
        "digit",
    )
    p.add_argument(
        "--server",
        metavar="URL",
        default=os.environ.get(SERVER_ENV) or None,
        help=f"the league's web server, e.g. http://arena.example:8080 (or ${SERVER_ENV})",
    )
    p.add_argument("--token", help=f"your author token (or ${AUTHOR_TOKEN_ENV})")
    p.add_argument("--token-file", type=Path, metavar="FILE", help="read the author token here")
    p.add_argument("--redis-url", metavar="URL", help="without --server: the league's Redis")
    p.add_argument("--owner", help="without --server: the owning author, if any")
    p.set_defaults(handler=cmd_submit)


def _add_list(bot_subparsers: Any) -> None:
    from .clitools import add_server_options

    p = bot_subparsers.add_parser(
        "list",
        help="list the built-in bots (with --server: your bots on the league)",
        description="List the built-in bots. With --server URL (or $ARENA_SERVER) and your "
        "author token, list your own bots on that league instead: their versions and the "
        "latest.",
    )
    add_server_options(p)
    p.set_defaults(handler=cmd_list)


def _token(args: argparse.Namespace) -> str | None:
    if args.token_file is not None:
        try:
            return args.token_file.read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise UsageError(f"cannot read the token file: {exc}") from None
    if args.token:
        return str(args.token)
    return os.environ.get(TOKEN_ENV) or None


def cmd_run(args: argparse.Namespace) -> int:
    from . import grpc_setup
    from .errors import BotLoadError
    from .loader import load_bot
    from .output import take_framing
    from .stdio.child import StdioBot
    from .stdio.guard import hide_argument

    # gRPC loads now, with its transport settings; the bot's code (and a line-protocol bot's
    # command) then sees the environment it was started with, without them.
    grpc_setup.settle()
    # The output markers' nonce leaves the environment before the bot's code (or its command) can
    # read it (arboretum_sdk.output).
    take_framing()

    token = _token(args)
    if token is None:
        return fail(
            f"no seat token; give --token-file FILE, --token T or set {TOKEN_ENV}", EXIT_USAGE
        )
    if (args.bot is None) == (args.cmd is None):
        raise UsageError("give either BOT or --cmd COMMAND")
    spec = args.bot if args.cmd is None else f"cmd:{args.cmd}"
    try:
        bot = load_bot(spec)
    except BotLoadError as exc:
        return fail(str(exc), EXIT_USAGE)
    if args.name:
        bot.name = args.name
    if isinstance(bot, StdioBot):
        bot.on_exit = _exit_crashed
        if args.token:  # the command line is open to the child: the token goes before it starts
            hide_argument(args.token)
        try:
            bot.start()
        except BotLoadError as exc:
            return fail(str(exc), EXIT_USAGE)
    try:
        return _run(bot, args, token)
    finally:
        if isinstance(bot, StdioBot):
            bot.finish()


def _exit_crashed(reason: str) -> None:
    """A line-protocol bot's command ended before the match did: stop at once (status 3), so
    that the runner that started this process sees it end and reports a crash."""
    sys.stderr.write(f"arena: {reason} before the match ended\n")
    sys.stderr.flush()
    os._exit(EXIT_BOT_CRASHED)


def _run(bot: Bot, args: argparse.Namespace, token: str) -> int:
    from .client import run_bot
    from .errors import BotCrashed, ClientError

    try:
        end = run_bot(
            bot,
            args.server,
            token,
            connect_timeout=args.connect_timeout,
            reconnect_for=args.reconnect_for,
            exit_on_error=args.exit_on_error,
        )
    except BotCrashed as exc:
        return fail(str(exc), EXIT_BOT_CRASHED)
    except ClientError as exc:
        return fail(str(exc), EXIT_CLIENT)
    logging.getLogger(__name__).info("match ended: %s", end.status.value)
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from . import authorcli

    if clitools.remote(args):
        return authorcli.bot_list(args)
    from .loader import builtin_bots

    for name, description in builtin_bots().items():
        print(f"{name:<10} {description}")
    return EXIT_OK


def cmd_submit(args: argparse.Namespace) -> int:
    if args.server is None:
        # The league (arboretum-league), when installed, registers how to store a bot in its
        # Redis directly (LOCAL_SUBMIT): the SDK does not import the league.
        local_submit = getattr(args, LOCAL_SUBMIT, None)
        if local_submit is None:
            return fail(
                "give --server URL (the league's web server) and your author token; submitting "
                "straight to Redis needs the league (pip install arboretum-league)",
                EXIT_USAGE,
            )
        return int(local_submit(args))
    from .submit import SubmitError, submit_bot

    token = args.token
    if args.token_file is not None:
        try:
            token = args.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            return fail(f"cannot read the token file: {exc}", EXIT_USAGE)
    token = token or os.environ.get(AUTHOR_TOKEN_ENV)
    if not token:
        return fail(
            f"no author token; give --token, --token-file or set {AUTHOR_TOKEN_ENV}", EXIT_USAGE
        )
    try:
        done = submit_bot(args.server, token, args.name, args.path)
    except SubmitError as exc:
        return fail(str(exc), EXIT_CLIENT)
    state = "new version" if done.created else "already submitted as version"
    print(f"bot {done.bot}: {state} {done.version[:12]} ({done.version})\n{done.url}")
    return EXIT_OK
