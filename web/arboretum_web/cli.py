"""``arena web``: serve the web viewer and HTTP API, and manage bot authors.

The SDK's ``arena`` imports this module and calls :func:`register`::

    arena web [--host H] [--port P] [--redis-url URL]     serve (uvicorn)
    arena web author add NAME                              create an author, print its token once
    arena web author list | rotate NAME | remove NAME
    arena web main-board [NAME | --clear]                 the front page's league
    arena web audit-log [--author NAME] [--limit N]       what authors did, newest first

Redis is ``--redis-url``, else ``$REDIS_URL``, else ``redis://localhost:6379/0``. The submission
check runs in the league's sandbox (``$ARENA_SANDBOX``, as ``arena bot submit``).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from typing import Any

from arboretum_sdk import argtypes, clitools
from arboretum_sdk.clitools import UsageError, UserError, fail

from . import opscli

__all__ = ["main", "register"]

DEFAULT_REDIS_URL = "redis://localhost:6379/0"


def _redis_url(args: argparse.Namespace) -> str:
    return str(getattr(args, "redis_url", None) or os.environ.get("REDIS_URL") or DEFAULT_REDIS_URL)


def _redis_setting(args: argparse.Namespace) -> str:
    """Where the Redis URL came from, to name it in an error."""
    return "--redis-url" if getattr(args, "redis_url", None) else "REDIS_URL"


def _turns(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of turns: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"a delay is from 0 to 100 turns, not {value}")
    return value


def register(
    subparsers: Any, groups: dict[str, Any], only: str | None = None, action: str | None = None
) -> None:
    """Add ``web`` (and ``web author ...``) to the ``arena`` parser (with ``only``, when it is
    ``web``; ``action`` is not used: ``arena web`` serves, and its few actions are built
    always)."""
    if only not in (None, "web"):
        return
    p = subparsers.add_parser(
        "web",
        help="serve the web viewer",
        description="Serve the leaderboard, bot, league, match and replay pages and the HTTP "
        "API (/api/v1, OpenAPI at /api/v1/openapi.json). See docs/web.md.",
    )
    clitools.add_redis_url(p)
    p.add_argument(
        "--host",
        default=os.environ.get("ARENA_WEB_HOST", "127.0.0.1"),
        metavar="HOST",
        help="address to listen on (default: $ARENA_WEB_HOST, else 127.0.0.1)",
    )
    p.add_argument(
        "--port",
        type=argtypes.port,
        default=os.environ.get("ARENA_WEB_PORT", "8080"),
        metavar="PORT",
        help="port to listen on (default: $ARENA_WEB_PORT, else 8080)",
    )
    p.add_argument(
        "--secure-cookies",
        action="store_true",
        help="mark the sign-in cookie Secure (when served over HTTPS)",
    )
    p.add_argument(
        "--live-delay",
        type=_turns,
        default=os.environ.get("ARENA_LIVE_DELAY", "0"),
        metavar="TURNS",
        help="show the moves of a running game this many turns late, as broadcasts do "
        "(default: $ARENA_LIVE_DELAY, else 0)",
    )
    p.set_defaults(handler=cmd_serve, log_level="info")
    # Also accepted after the action (`arena web author add NAME --redis-url URL`); SUPPRESS
    # keeps a value given before it (`arena web --redis-url URL author add NAME`).
    common = argparse.ArgumentParser(add_help=False)
    clitools.add_redis_url(common, default=argparse.SUPPRESS)
    wsub = p.add_subparsers(dest="web_command", metavar="ACTION")
    author = wsub.add_parser("author", help="manage bot authors and their tokens")
    asub = author.add_subparsers(dest="author_command", metavar="ACTION")
    asub.required = True
    a = asub.add_parser("add", parents=[common], help="create an author; prints its token once")
    a.add_argument("name", metavar="NAME", help="the author's name")
    a.set_defaults(handler=cmd_author_add)
    a = asub.add_parser("rotate", parents=[common], help="replace an author's token")
    a.add_argument("name", metavar="NAME", help="the author's name")
    a.set_defaults(handler=cmd_author_rotate)
    a = asub.add_parser("remove", parents=[common], help="delete an author and its token")
    a.add_argument("name", metavar="NAME", help="the author's name")
    a.set_defaults(handler=cmd_author_remove)
    a = asub.add_parser("list", parents=[common], help="list authors")
    a.set_defaults(handler=cmd_author_list)
    opscli.register(wsub, common, _client)


def _client(args: argparse.Namespace) -> Any:
    from arboretum_worker.settings import RedisUnavailable, connect_redis

    try:
        return connect_redis(_redis_url(args), _redis_setting(args))
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from arboretum_worker.league import prepare_store
    from arboretum_worker.settings import MalformedRedisUrl, check_redis_url, redact_url

    from .app import WebSettings, create_app

    try:  # before the app makes its client of it
        check_redis_url(_redis_url(args), _redis_setting(args))
    except MalformedRedisUrl as exc:
        raise UserError(exc.line()) from None
    try:
        settings = WebSettings(
            redis_url=_redis_url(args),
            secure_cookies=args.secure_cookies,
            live_delay_turns=args.live_delay,
        )
    except ValueError as exc:  # ARENA_RATE_LIMITS, ARENA_CASUAL_*
        raise UsageError(str(exc)) from None
    # Live streams stay open while their viewers watch: a stop waits this long for them.
    config = uvicorn.Config(create_app(settings), log_level="info", timeout_graceful_shutdown=5)
    # Bound first: an address in use is the only line, before any work or output.
    with _listen(args.host, args.port, config.backlog) as sock:
        client = _client(args)
        indexed = prepare_store(client)  # matches stored before the match indexes, once
        client.close()
        if indexed:
            noun = clitools.plural(indexed, "stored match", "stored matches")
            print(f"arena web: indexed {noun}")
        print(
            f"arena web: serving on http://{args.host}:{args.port}/ "
            f"(Redis {redact_url(settings.redis_url)})",
            flush=True,
        )
        uvicorn.Server(config).run(sockets=[sock])
    return 0


def _listen(host: str, port: int, backlog: int) -> socket.socket:
    """A socket listening on ``host:port`` for uvicorn, bound here so that an address in use is
    one ``arena:`` line before anything is printed (uvicorn's own bind reports it in its log,
    after its start-up lines, and exits 3). Bound as uvicorn binds (``SO_REUSEADDR``)."""
    from arboretum_server.errors import BindError

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        shown = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        raise UserError(str(BindError.of(shown, exc))) from None
    return sock


def cmd_author_add(args: argparse.Namespace) -> int:
    from .authors import AuthorError, add_author

    try:
        token = add_author(_client(args), args.name)
    except AuthorError as exc:
        return fail(str(exc))
    print(f"author {args.name} created; its token (shown once, keep it secret):", file=sys.stderr)
    print(token)
    return 0


def cmd_author_rotate(args: argparse.Namespace) -> int:
    from .authors import AuthorError, rotate_token

    try:
        token = rotate_token(_client(args), args.name)
    except AuthorError as exc:
        return fail(str(exc))
    print(f"author {args.name}: new token (the old one no longer works):", file=sys.stderr)
    print(token)
    return 0


def cmd_author_remove(args: argparse.Namespace) -> int:
    from .authors import AuthorError, remove_author

    try:
        remove_author(_client(args), args.name)
    except AuthorError as exc:
        return fail(str(exc))
    print(f"author {args.name} removed (their bots keep their owner)")
    return 0


def cmd_author_list(args: argparse.Namespace) -> int:
    from .authors import get_author, list_authors

    r = _client(args)
    names = list_authors(r)
    if not names:
        print("no authors yet (arena web author add NAME)")
    for name in names:
        author = get_author(r, name)
        if author is not None:
            import datetime as dt

            when = dt.datetime.fromtimestamp(author.created, dt.UTC).strftime("%Y-%m-%d %H:%M")
            print(f"{name}\t{when} UTC")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m arboretum_web``: the same commands without the SDK's ``arena``."""
    import logging

    parser = clitools.ArenaParser(prog="python -m arboretum_web")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register(sub, {})
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.handler(args))
    except UserError as exc:
        return fail(str(exc), exc.status)
