"""The ladder's commands: ``arena league create NAME --ladder``, ``arena league join|leave|
open|pause|resume|close NAME`` and the ladder's ``arena league status``. Registered by
:mod:`arboretum_worker.league_cli`, which passes its parser pieces in."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arboretum_sdk import argtypes
from arboretum_sdk.clitools import UsageError, add_server_options, fail, plural, remote, table

from ..cliargs import redis_of, settings_of
from ..report import print_progress, version_label
from .ops import DEPTH, NEW_GAMES

if TYPE_CHECKING:
    import redis

__all__ = ["add_create_arguments", "cmd_create", "print_status", "register", "setting_problem"]


def add_create_arguments(p: argparse.ArgumentParser) -> None:
    """``--ladder`` and its settings, on ``arena league create``."""
    g = p.add_argument_group("ladder (--ladder)")
    g.add_argument(
        "--ladder",
        action="store_true",
        help="a continuous ladder instead of a round robin: it runs until it is closed, bots "
        "join it and a bot's new version enters by itself, and its scheduler plays the "
        "pairings that teach the most (2 players; docs/league.md, Ladders)",
    )
    g.add_argument(
        "--depth",
        type=argtypes.int_range(1, 1000),
        default=None,
        metavar="N",
        help=f"matches the ladder keeps queued or running (default {DEPTH}; about twice the "
        "workers)",
    )
    g.add_argument(
        "--new-games",
        type=argtypes.int_range(0, 100_000),
        default=None,
        metavar="N",
        help=f"a version's pairings come first until it has N games (default {NEW_GAMES})",
    )


def setting_problem(args: argparse.Namespace) -> str | None:
    """A setting of the other kind of league: the ladder's without ``--ladder``, or a round
    robin's with it (before, it was silently dropped)."""
    if not args.ladder:
        flags = (("--depth", args.depth), ("--new-games", args.new_games))
        given = [flag for flag, value in flags if value is not None]
        if given:
            return f"{' and '.join(given)}: a ladder's setting; add --ladder, or leave it out"
    elif args.games_per_pairing is not None:
        return "--games-per-pairing: a round robin's setting; a ladder plays until it is closed"
    return None


def register(lsub: Any, common: argparse.ArgumentParser, only: str | None = None) -> None:
    """The ladder's actions of ``arena league`` (with ``only``, the one it names; their names are
    ``league_cli.LADDER_ACTIONS``)."""
    for name, build in (("join", _add_join), ("leave", _add_leave), ("open", _add_open)):
        if only in (None, name):
            build(lsub, common)
    for action, text in (
        ("pause", "stop scheduling new matches of a ladder (queued ones are played)"),
        ("resume", "schedule a paused ladder's matches again"),
        ("close", "end a ladder for good (queued matches are cancelled, results stay)"),
    ):
        if only in (None, action):
            p = lsub.add_parser(
                action, parents=[common], help=text, description=text[0].upper() + text[1:] + "."
            )
            p.add_argument("name", metavar="NAME", help="the ladder's name")
            p.set_defaults(handler=_action(action))


def _add_join(lsub: Any, common: argparse.ArgumentParser) -> None:
    p = lsub.add_parser(
        "join",
        parents=[common],
        help="let bots (or versions) into a ladder",
        description="Let these bots into a running or paused ladder. A bot already in it is "
        "replaced by the version named (its previous version is no longer scheduled; its "
        "results stay). A bot's newly submitted version enters by itself: no join needed.",
    )
    p.add_argument("name", metavar="NAME", help="the ladder's name")
    p.add_argument("bot", nargs="*", metavar="BOT", help="bot names or NAME@VERSION")
    p.add_argument("--bots", nargs="+", metavar="BOT", help="the same as BOT")
    add_server_options(p, "an author joins one of their own bots (a ladder open to authors)")
    p.set_defaults(handler=cmd_join)


def _add_leave(lsub: Any, common: argparse.ArgumentParser) -> None:
    p = lsub.add_parser(
        "leave",
        parents=[common],
        help="take a bot out of a ladder",
        description="Take a bot out of a ladder: its version is no longer scheduled (matches "
        "already queued or running are played), its results stay, and its new versions do not "
        "enter by themselves until it joins again.",
    )
    p.add_argument("name", metavar="NAME", help="the ladder's name")
    p.add_argument("bot", metavar="BOT", help="the bot's name")
    add_server_options(p, "an author takes out one of their own bots (a ladder open to authors)")
    p.set_defaults(handler=cmd_leave)


def _add_open(lsub: Any, common: argparse.ArgumentParser) -> None:
    p = lsub.add_parser(
        "open",
        parents=[common],
        help="open a ladder to authors: they join and leave it with their own bots",
        description="Open a ladder to authors: each may join it and take it out of it, with "
        "their own bots only, through the web API (arena league join NAME BOT --server URL). "
        "With --off it is shut to them again: only the operator changes its members.",
    )
    p.add_argument("name", metavar="NAME", help="the ladder's name")
    p.add_argument("--off", action="store_true", help="shut the ladder to authors again")
    p.set_defaults(handler=cmd_open)


def _action(action: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from ..progress import LeagueError
        from . import ops

        r = redis_of(args)
        try:
            if action == "pause":
                ops.pause_ladder(r, args.name)
                print(f"ladder {args.name}: paused (queued and running matches are played)")
            elif action == "resume":
                ops.resume_ladder(r, args.name, settings_of(args))
                print(f"ladder {args.name}: running")
            else:
                count = ops.close_ladder(r, args.name)
                print(
                    f"ladder {args.name}: closed, "
                    f"{plural(count, 'queued match', 'queued matches')} cancelled"
                )
        except LeagueError as exc:
            return fail(str(exc))
        return 0

    return run


def cmd_create(args: argparse.Namespace) -> int:
    from .. import store
    from ..league import resolve_version
    from ..progress import LeagueError
    from . import ops

    r = redis_of(args)
    try:
        versions = [resolve_version(r, spec) for spec in args.bots]
        league = ops.create_ladder(
            r,
            args.name,
            versions,
            settings_of(args),
            depth=DEPTH if args.depth is None else args.depth,
            new_games=NEW_GAMES if args.new_games is None else args.new_games,
            per_decision_ms=args.per_decision_ms,
            bank_ms=args.bank_ms,
            faults_to_forfeit=args.faults_to_forfeit,
            seed=args.seed,
            deals_per_series=args.deals_per_series,
            compute=args.compute,
            players=args.players,
        )
    except (LeagueError, store.StoreError) as exc:
        return fail(str(exc))
    ls = league.settings
    assert ls.ladder is not None
    print(
        f"ladder {league.name}: {plural(len(ls.bots), 'bot')}, units of "
        f"{plural(ls.deals_per_series, 'deal')} in both seat orders, "
        f"{plural(ls.ladder.depth, 'match', 'matches')} in flight, new for "
        f"{plural(ls.ladder.new_games, 'game')}, "
        f"L={ls.time_control.per_decision_ms} ms B={ls.time_control.bank_ms} ms, "
        f"{ls.compute} compute, seed {ls.seed}"
    )
    for vid in ls.bots:
        print(f"  {version_label(r, vid)}")
    print(
        "it is running: workers play it (arena worker); follow it: "
        f"arena league status {league.name}"
    )
    return 0


def cmd_join(args: argparse.Namespace) -> int:
    from .. import store
    from ..league import resolve_version
    from ..progress import LeagueError
    from . import ops

    bots = [*args.bot, *(args.bots or [])]
    if not bots:
        raise UsageError("name the bots that join: arena league join NAME BOT...")
    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.league_join(args, bots)
    r = redis_of(args)
    try:
        versions = [resolve_version(r, spec) for spec in bots]
        done = ops.join_ladder(r, args.name, versions, settings_of(args))
    except (LeagueError, store.StoreError) as exc:
        return fail(str(exc))
    for bot, vid, old in done:
        note = f" (replaces {old[:8]}, no longer scheduled)" if old else ""
        print(f"ladder {args.name}: {bot}@{vid[:8]} joined{note}")
    return 0


def cmd_leave(args: argparse.Namespace) -> int:
    from ..progress import LeagueError
    from . import ops

    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.league_leave(args)
    r = redis_of(args)
    try:
        left = ops.leave_ladder(r, args.name, args.bot)
    except LeagueError as exc:
        return fail(str(exc))
    print(f"ladder {args.name}: {args.bot}@{left[:8]} left (its results stay)")
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    from ..progress import LeagueError
    from . import ops

    r = redis_of(args)
    try:
        ops.open_ladder(r, args.name, not args.off)
    except LeagueError as exc:
        return fail(str(exc))
    if args.off:
        print(f"ladder {args.name}: shut to authors (only the operator changes its members)")
    else:
        print(f"ladder {args.name}: open to authors (they join and leave it with their own bots)")
    return 0


def print_status(r: redis.Redis, name: str) -> None:
    """A ladder's ``arena league status``: progress, members, standings, what is playing."""
    from .. import ratings
    from . import ops

    status = ops.ladder_status(r, name)
    print_progress(status.progress)
    if status.open:
        print("  open to authors: they join and leave it with their own bots")
    live = {row.version: row for row in ratings.standings(r, name)}
    rows = []
    for vid, entry in sorted(
        status.entries.items(), key=lambda kv: -(live[kv[0]].live.mu if kv[0] in live else 0)
    ):
        row = live.get(vid)
        rows.append(
            [
                entry.bot,
                vid[:12],
                "scheduled" if entry.active else "retired",
                f"{row.live.mu:.0f}" if row else "-",
                f"± {row.live.half_width:.0f}" if row else "-",
                str(row.stats.games) if row else "0",
            ]
        )
    print(f"  versions ({len(status.members)} scheduled, {len(status.entries)} in all):")
    headers = ["bot", "version", "state", "rating", "± 95%", "games"]
    for line in table(headers, rows, right={3, 4, 5}).splitlines():
        print(f"    {line}")
    if status.playing:
        print(f"  playing ({len(status.playing)}):")
        for match in status.playing:
            seats = " vs ".join(version_label(r, v) for v in match.seats)
            print(
                f"    {match.id}  {match.status.value:8}  {seats}  ({plural(match.games, 'game')})"
            )
    tick = status.last_tick
    if tick:
        print(
            f"  last tick: {tick['status']}, {plural(tick['matches'], 'match', 'matches')} "
            f"scheduled, {tick['in_flight']} in flight before"
        )
