"""The operator's ``arena web`` commands about the site: its main board and the authors' audit
log (``arena web main-board``, ``arena web audit-log``; Redis from ``--redis-url`` or
``$REDIS_URL``)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Callable
from typing import Any

from arboretum_sdk import argtypes
from arboretum_sdk.clitools import fail

__all__ = ["register"]

Client = Callable[[argparse.Namespace], Any]


def register(wsub: Any, common: argparse.ArgumentParser, client: Client) -> None:
    """Add ``main-board`` and ``audit-log`` under ``arena web``."""
    p = wsub.add_parser(
        "main-board",
        parents=[common],
        help="show or choose the league the front page shows",
        description="With NAME, make that league or ladder the site's main board (the front "
        "page and the API's default leaderboard); with --clear, go back to the default (the "
        "league with the most bot versions); with neither, print the main board.",
    )
    p.add_argument("name", nargs="?", metavar="NAME", help="a league or ladder")
    p.add_argument("--clear", action="store_true", help="forget the chosen main board")
    p.set_defaults(handler=lambda args: cmd_main_board(args, client))
    p = wsub.add_parser(
        "audit-log",
        parents=[common],
        help="what authors did, newest first",
        description="Print the audit log of what authors did through the web (who, what, on "
        "what, when, the HTTP status), newest first.",
    )
    p.add_argument("--author", metavar="NAME", help="only this author's entries")
    p.add_argument(
        "--limit", type=argtypes.positive, default=50, metavar="N", help="entries (default 50)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object a line")
    p.set_defaults(handler=lambda args: cmd_audit_log(args, client))


def cmd_main_board(args: argparse.Namespace, client: Client) -> int:
    from arboretum_worker.keys import StoreError

    from .mainboard import chosen_main_board, clear_main_board, front_league, set_main_board

    if args.clear and args.name:
        return fail("give NAME or --clear, not both", 2)
    r = client(args)
    if args.clear:
        clear_main_board(r)
        print(f"main board cleared; the front page shows {front_league(r) or 'no league'}")
        return 0
    if args.name:
        try:
            set_main_board(r, args.name)
        except StoreError as exc:
            return fail(str(exc))
        print(f"main board: {args.name}")
        return 0
    chosen = chosen_main_board(r)
    if chosen:
        print(f"main board: {chosen}")
    else:
        print(f"no main board chosen; the front page shows {front_league(r) or 'no league'}")
    return 0


def cmd_audit_log(args: argparse.Namespace, client: Client) -> int:
    from arboretum_worker.keys import StoreError

    from . import authorlog

    try:
        entries = authorlog.read(client(args), args.author, args.limit)
    except StoreError as exc:
        return fail(str(exc))
    if not entries and not args.json:
        who = f" of {args.author}" if args.author else ""
        print(f"no audit log entries{who}")
    for e in entries:
        if args.json:
            print(json.dumps(e.to_json()))
            continue
        when = dt.datetime.fromtimestamp(e.when, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        print(f"{when}\t{e.author}\t{e.action}\t{e.target}\t{e.result}\t{e.address}")
    return 0
