"""``arena bot versions``, and ``arena bot submit`` without ``--server`` (the bot stored in
Redis directly; the SDK owns the command, since authors submit remotely with the SDK alone)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from arboretum_sdk.clitools import add_server_options, fail, plural, remote, table

from .cliargs import redis_of, settings_of

__all__ = ["register"]


def register(groups: dict[str, Any], common: argparse.ArgumentParser) -> None:
    """Add ``versions`` to ``groups["bot"]`` and make ``submit`` store locally."""
    bot = groups.get("bot")
    if bot is not None:
        p = bot.add_parser("versions", parents=[common], help="a bot's submitted versions")
        p.add_argument("name", metavar="NAME", help="the bot's name")
        add_server_options(p)
        p.set_defaults(handler=cmd_bot_versions)
        submit = bot.choices.get("submit")
        if submit is not None:  # without --server, `arena bot submit` stores the bot in Redis
            from arboretum_sdk.botcli import LOCAL_SUBMIT

            submit.set_defaults(**{LOCAL_SUBMIT: cmd_bot_submit})


def cmd_bot_submit(args: argparse.Namespace) -> int:
    from . import registry, store
    from .bots import submit_bot
    from .sandbox import SandboxUnavailableError

    try:
        quota = registry.quota_from_env()
    except registry.RegistryError as exc:
        return fail(str(exc))
    settings = settings_of(args)
    r = redis_of(args)
    before = set(registry.versions(r, args.name))
    try:
        vid = submit_bot(r, args.path, args.name, settings, owner=args.owner, quota=quota)
    except (store.StoreError, OSError, SandboxUnavailableError) as exc:
        return fail(f"bot refused: {exc}")
    count = len(registry.versions(r, args.name))
    # as a submit through the web server says it
    state = "already submitted as version" if vid in before else "new version"
    print(f"bot {args.name}: {state} {vid[:12]} ({vid}); {plural(count, 'version')} in all")
    from .ladder.ops import notice_submission

    for ladder in notice_submission(r, args.name, settings):
        print(f"it enters ladder {ladder} at its next tick (the previous version stops there)")
    return 0


def cmd_bot_versions(args: argparse.Namespace) -> int:
    from . import registry, store

    if remote(args):
        from arboretum_sdk.authorcli import bot_versions

        return bot_versions(args)
    r = redis_of(args)
    versions = registry.versions(r, args.name)
    if not versions:
        return fail(f"no bot named {args.name!r}")
    rows = []
    for i, vid in enumerate(versions, 1):
        version = store.get_version(r, vid)
        created = (
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(version.created)) if version else "?"
        )
        rows.append(
            [
                str(i),
                vid[:12],
                created,
                str(version.files if version else "?"),
                str(version.size if version else "?"),
                vid,
            ]
        )
    print(table(["#", "version", "submitted (UTC)", "files", "bytes", "id"], rows, {0, 3, 4}))
    return 0
