"""``arena match list|show|logs|replay|rerun``: a league match, found by its id or a unique
prefix of it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk import argtypes, clitools
from arboretum_sdk.clitools import EXIT_USAGE, add_server_options, fail, plural, remote, table

from .cliargs import league_name, redis_of, settings_of
from .output_cli import add_step_options, print_step
from .report import version_label

if TYPE_CHECKING:
    import redis

__all__ = ["MATCH_STATUSES", "register"]

MATCH_STATUSES = ("queued", "running", "finished", "failed", "cancelled")


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """Add ``arena match ...``."""
    match = subparsers.add_parser("match", help="inspect a league match")
    msub = match.add_subparsers(dest="match_command", metavar="ACTION")
    msub.required = True
    match_help = "the match id (a unique prefix will do)"
    p = msub.add_parser(
        "list",
        parents=[common],
        help="a league's matches, with their status and seats",
        description="List a league's matches in schedule order, filtered by bot and status. "
        "With --ids only the match ids are printed, one a line, for scripts: "
        "MATCH=$(arena match list --league spring --bot mybot --limit 1 --ids).",
    )
    p.add_argument("--league", metavar="NAME", help="the league (default: the newest)")
    p.add_argument("--bot", metavar="NAME", help="only matches in which this bot sits")
    p.add_argument(
        "--status",
        choices=MATCH_STATUSES,
        help="only matches of this status",
    )
    p.add_argument(
        "--limit",
        type=argtypes.positive,
        default=50,
        metavar="N",
        help="at most N matches (default 50)",
    )
    p.add_argument("--ids", action="store_true", help="print the match ids only, one a line")
    add_server_options(p, "every league's matches (--league narrows them), no Redis")
    p.set_defaults(handler=cmd_match_list)
    p = msub.add_parser("show", parents=[common], help="a match's status, seats and result")
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    add_server_options(p, "the match's full id")
    p.set_defaults(handler=cmd_match_show)
    p = msub.add_parser(
        "logs",
        parents=[common],
        help="what a bot printed in a match",
        description="Print what a bot printed in a match (its log: each decision's lines headed "
        "by the replay's game and step), or with --step only what it printed during that "
        "step's decision.",
    )
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    p.add_argument(
        "--bot", metavar="NAME", help="bot name, version id or seat (needed without --step)"
    )
    add_step_options(p)
    add_server_options(p, "your own bots' seats only")
    p.set_defaults(handler=cmd_match_logs)
    p = msub.add_parser("replay", parents=[common], help="fetch a game's replay (JSON)")
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    p.add_argument(
        "--game",
        type=argtypes.non_negative,
        default=0,
        metavar="I",
        help="the game's index in the match, from 0 (default 0)",
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here (default stdout)")
    add_server_options(p, "what a spectator may see; a game not over, your own seats' view")
    p.set_defaults(handler=cmd_match_replay)
    p = msub.add_parser(
        "rerun",
        parents=[common],
        help="play a finished match again and report the first decision that differs",
        description="Play a finished league match again, here, exactly as its job did: the stored "
        "bot versions, each in its sandbox, the same seeds, clocks, fault policy and compute "
        "mode, on a private referee. Then compare each game's decisions with its stored replay "
        "and report the first that differs. Exit status 0 when every game re-ran identically, "
        "1 otherwise.",
    )
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    p.set_defaults(handler=cmd_match_rerun)
    p = msub.add_parser(
        "analyze",
        parents=[common],
        help="queue a stored game's analysis on the workers, or print it once done",
        description="The analysis of a stored game (docs/analysis.md): queued on the workers' "
        "lowest-priority queue (arena-analysis) unless queued, running or done already; once "
        "done, printed as arena replay analyze prints it.",
    )
    p.add_argument("match_id", metavar="MATCH", help="the match id")
    p.add_argument("--game", type=argtypes.non_negative, default=0, metavar="G", help="from 0")
    p.add_argument("--json", action="store_true", help="print the done analysis as JSON")
    p.set_defaults(handler=cmd_match_analyze)


def cmd_match_analyze(args: argparse.Namespace) -> int:
    from .analysis_cli import analyze

    return analyze(args)


def _match_record(r: redis.Redis, match_id: str) -> Any:
    from . import store

    record = store.get_match(r, match_id)
    if record is None:
        candidates = [
            m
            for lg in store.list_leagues(r)
            for m in store.league_matches(r, lg)
            if m.startswith(match_id)
        ]
        if len(candidates) == 1:
            record = store.get_match(r, candidates[0])
    return record


def _deals_text(deals: tuple[int, ...]) -> str:
    """``deal 3``, ``deals 0-9`` (consecutive) or ``deals 0, 2, 4``."""
    if len(deals) == 1:
        return f"deal {deals[0]}"
    if list(deals) == list(range(deals[0], deals[0] + len(deals))):
        return f"deals {deals[0]}-{deals[-1]}"
    return "deals " + ", ".join(map(str, deals))


def cmd_match_list(args: argparse.Namespace) -> int:
    from . import matchindex, store

    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.match_list(args)
    r = redis_of(args)
    name = league_name(r, args.league)
    if name is None:
        return fail("no leagues yet (arena league create)")
    if args.bot and store.get_bot(r, args.bot) is None:
        return fail(f"no bot named {args.bot!r} (arena bot list shows them)")
    status = store.MatchStatus(args.status) if args.status else None
    total, ids = matchindex.page(r, [name], bot=args.bot, status=status, limit=args.limit)
    if args.ids:
        for match_id in ids:
            print(match_id)
        return 0
    filters = [f"status {args.status}"] if args.status else []
    filters += [f"bot {args.bot}"] if args.bot else []
    heading = f"league {name}: {plural(total, 'match', 'matches')}"
    if filters:
        heading += f" ({', '.join(filters)})"
    if total > len(ids):
        heading += f", the first {len(ids)} shown (--limit)"
    print(heading)
    if not ids:
        return 0
    rows = []
    for match_id in ids:
        record = store.get_match(r, match_id)
        if record is None:
            continue
        rows.append(
            [
                record.id,
                record.status.value,
                _deals_text(record.deals),
                " vs ".join(version_label(r, vid) for vid in record.seats),
            ]
        )
    print(table(["match", "status", "deals", "seats (seat 0 first)"], rows))
    return 0


def cmd_match_show(args: argparse.Namespace) -> int:
    from . import replays, store

    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.match_show(args)
    r = redis_of(args)
    record = _match_record(r, args.match_id)
    if record is None:
        return fail(f"no match {args.match_id!r}")
    print(
        f"match {record.id} of league {record.league}: {record.status.value}"
        f" ({_deals_text(record.deals)}, rotation {record.rotation}, "
        f"{plural(record.attempts, 'attempt')})"
    )
    if record.failure:
        print(f"  last failure: {record.failure}")
    result = store.get_result(r, record.id)
    for seat, vid in enumerate(record.seats):
        line = f"  seat {seat}: {version_label(r, vid)}"
        if result is not None:
            ranks = ", ".join(str(g.ranks[seat]) for g in result.games)
            totals = ", ".join(str(g.totals[seat]) for g in result.games)
            line += f"  rank {ranks}  points {totals}"
        print(line)
    games = replays.replay_games(r, record.id)
    if games:
        print(f"  replays: games {', '.join(map(str, games))} (arena match replay {record.id})")
    return 0


def cmd_match_logs(args: argparse.Namespace) -> int:
    from . import replays, store

    if args.bot is None and args.step is None:
        return fail("give --bot NAME (or --step N)", EXIT_USAGE)
    if args.step is not None and remote(args):
        from arboretum_sdk.steplines import remote_step

        return remote_step(args)
    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.match_logs(args)
    r = redis_of(args)
    record = _match_record(r, args.match_id)
    if record is None:
        return fail(f"no match {args.match_id!r}")
    if args.bot is None:
        return print_step(r, record, args.step, args.game, None, "")
    seats = []
    for seat, vid in enumerate(record.seats):
        version = store.get_version(r, vid)
        label = version.name if version else ""
        if args.bot in (str(seat), vid, label) or (len(args.bot) >= 4 and vid.startswith(args.bot)):
            seats.append(seat)
    if not seats:
        names = ", ".join(version_label(r, v) for v in record.seats)
        return fail(f"no bot {args.bot!r} in match {record.id} (seats: {names})")
    if args.step is not None:
        return print_step(r, record, args.step, args.game, seats, args.bot)
    for seat in seats:
        data = replays.get_bot_log(r, record.id, seat)
        if len(seats) > 1:
            print(f"--- seat {seat}: {version_label(r, record.seats[seat])}")
        sys.stdout.write(data.decode("utf-8", "replace"))
        if data and not data.endswith(b"\n"):
            sys.stdout.write("\n")
        if not data:
            print(
                f"(no output recorded for seat {seat}; match status {record.status.value})",
                file=sys.stderr,
            )
    return 0


def cmd_match_rerun(args: argparse.Namespace) -> int:
    from .rerun import RerunError, format_report, rerun_match

    settings = settings_of(args)
    r = redis_of(args)
    record = _match_record(r, args.match_id)
    if record is None:
        return fail(f"no match {args.match_id!r}")
    print(
        f"re-running match {record.id} ({plural(record.games, 'game')}) in the sandbox",
        flush=True,
    )
    try:
        report = rerun_match(r, record.id, settings)
    except RerunError as exc:
        return fail(str(exc))
    print(format_report(report, [version_label(r, vid) for vid in record.seats]))
    if report.identical:
        print(f"identical: every game re-ran decision for decision ({report.seconds:.1f} s)")
        return 0
    first = report.first_difference
    assert first is not None
    return fail(f"match {record.id} did not re-run identically: game {first.game} differs")


def cmd_match_replay(args: argparse.Namespace) -> int:
    from . import replays

    if remote(args):
        from arboretum_sdk import authorcli

        return authorcli.match_replay(args)
    r = redis_of(args)
    record = _match_record(r, args.match_id)
    match_id = record.id if record is not None else args.match_id
    data = replays.get_replay(r, match_id, args.game)
    if data is None:
        games = replays.replay_games(r, match_id)
        have = f" (games with a replay: {', '.join(map(str, games))})" if games else ""
        return fail(f"no replay of game {args.game} of match {match_id!r}{have}")
    if args.output is not None:
        clitools.output_file(args.output, "the replay")
        args.output.write_bytes(data)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(data.decode("utf-8", "replace"))
        if not data.endswith(b"\n"):
            sys.stdout.write("\n")
    return 0
