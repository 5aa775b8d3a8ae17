"""``arena league create|run|status|cancel|retry|list`` (and the ladder's and the audit's
actions, :mod:`.ladder.cli` and :mod:`.audit.cli`), ``arena leaderboard`` and ``arena ratings``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, get_args

from arboretum_sdk import authorcli, clitools
from arboretum_sdk.bot import Compute
from arboretum_sdk.clitools import fail, leaderboard_text, plural, table

from .cliargs import known_league, league_name, redis_of, settings_of
from .report import follow, leaderboard_rows, print_progress, version_label
from .settings import (
    add_deals_per_series,
    add_games_per_pairing,
    deals_per_series_of,
    games_per_pairing_of,
)

if TYPE_CHECKING:
    import redis

__all__ = ["register"]


# The `league` group's actions, by the module that builds their parsers. `arena league ACTION`
# builds that action's parser only (`arena league run` neither the ladder's nor the audit's);
# help and a word none of them is build them all. A test checks the table against the parsers.
OWN_ACTIONS = ("create", "run", "status", "cancel", "retry", "list")
LADDER_ACTIONS = ("join", "leave", "open", "pause", "resume", "close")
AUDIT_ACTIONS = ("audit",)


def register(
    subparsers: Any,
    common: argparse.ArgumentParser,
    only: str | None = None,
    action: str | None = None,
) -> None:
    """Add ``arena league ...``, ``arena leaderboard`` and ``arena ratings`` (with ``only``, the
    one of them it names, or none; with ``action`` too, that action of ``arena league``)."""
    if only in (None, "league"):
        _add_league(subparsers, common, action)
    if only in (None, "leaderboard"):
        _add_leaderboard(subparsers, common)
    if only in (None, "ratings"):
        _add_ratings(subparsers, common)


def _add_league(subparsers: Any, common: argparse.ArgumentParser, action: str | None) -> None:
    """The ``league`` group: every action, or with ``action`` (one of the table's) that one only."""
    if action not in (*OWN_ACTIONS, *LADDER_ACTIONS, *AUDIT_ACTIONS):
        action = None  # help, or a word the group does not know: every action, for the error
    league = subparsers.add_parser("league", help="create, run and follow leagues")
    lsub = league.add_subparsers(dest="league_command", metavar="ACTION")
    lsub.required = True
    if action in (None, "create"):
        _add_create(lsub, common)
    _add_own_actions(lsub, common, action)
    if action is None or action in LADDER_ACTIONS:
        from .ladder import cli as ladder_cli

        ladder_cli.register(lsub, common, action)
    if action in (None, *AUDIT_ACTIONS):
        from .audit import cli as audit_cli

        audit_cli.register(lsub, common)


def _add_create(lsub: Any, common: argparse.ArgumentParser) -> None:
    p = lsub.add_parser(
        "create",
        parents=[common],
        help="create a league",
        description="Create a round-robin league. Every combination of PLAYERS bots plays "
        "GAMES-PER-PAIRING deals, each deal in every rotation of one cyclic seat order. Deal d "
        "takes cyclic order d mod (PLAYERS-1)!, so over every 2 deals (3 players) or 6 deals (4 "
        "players) each bot sits directly before each other bot equally often (docs/league.md): "
        "GAMES-PER-PAIRING is 1, 2 or 6 for 2, 3 or 4 players unless given, and a number that "
        "is not a multiple of it is refused unless --allow-unbalanced. "
        "A match is a series: up to DEALS-PER-SERIES deals in one seat order, played by the "
        "same bot processes. With --ladder it is a continuous ladder instead (2 players): it "
        "runs until it is closed, and its scheduler plays the pairings that teach the most.",
    )
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.add_argument(
        "--bots",
        nargs="+",
        required=True,
        metavar="BOT",
        help="bot names (latest version), NAME@VERSION-PREFIX, or version ids; a built-in "
        "bot's name (arena bot list) that no submitted bot has taken registers that built-in",
    )
    clitools.add_players(p)
    add_games_per_pairing(p)
    clitools.add_time_control(p)
    clitools.add_seed(p, "league seed")
    add_deals_per_series(p)
    p.add_argument(
        "--compute",
        choices=get_args(Compute),
        default="fixed",
        help="the bots' compute mode (ARENA_COMPUTE in their sandbox): fixed (default: searching "
        "built-in bots spend a fixed number of simulations, so every game re-runs bit for bit, "
        "see arena match rerun) or time (a wall-clock budget)",
    )
    from .ladder import cli as ladder_cli

    ladder_cli.add_create_arguments(p)
    p.set_defaults(handler=cmd_league_create)


def _add_own_actions(lsub: Any, common: argparse.ArgumentParser, action: str | None) -> None:
    """``run``, ``status``, ``cancel``, ``retry`` and ``list`` (with ``action``, that one, if it is
    one of them)."""
    if action in (None, "run"):
        p = lsub.add_parser("run", parents=[common], help="enqueue the league's matches")
        p.add_argument("name", metavar="NAME", help="the league's name")
        p.add_argument("--wait", action="store_true", help="follow the progress until done")
        p.set_defaults(handler=cmd_league_run)
    if action in (None, "status"):
        p = lsub.add_parser("status", parents=[common], help="progress and failures")
        p.add_argument("name", metavar="NAME", help="the league's name")
        p.add_argument("--watch", action="store_true", help="refresh until the league is done")
        p.set_defaults(handler=cmd_league_status)
    if action in (None, "cancel"):
        p = lsub.add_parser("cancel", parents=[common], help="cancel the league's matches")
        p.add_argument("name", metavar="NAME", help="the league's name")
        p.set_defaults(handler=cmd_league_cancel)
    if action in (None, "retry"):
        p = lsub.add_parser("retry", parents=[common], help="re-run failed matches")
        p.add_argument("name", metavar="NAME", help="the league's name")
        p.set_defaults(handler=cmd_league_retry)
    if action in (None, "list"):
        p = lsub.add_parser("list", parents=[common], help="list leagues")
        p.set_defaults(handler=cmd_league_list)


def _add_leaderboard(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "leaderboard",
        parents=[common],
        help="print the standings (fitted rating with its interval, live rating, Elo)",
        description="The league's standings: the Plackett-Luce fit of every result (made again "
        "when newer results exist) with its 95% interval, ranked by the interval's lower end; "
        "a rating wider than ± 100 is provisional (?). Each bot shows its best established "
        "version. Beside it the live rating (updated after every game), the live Elo (K = 32), "
        "games, wins, win share and mean rank (docs/league.md).",
    )
    p.add_argument("--league", metavar="NAME", help="the league (default: the newest)")
    p.add_argument(
        "--all-versions",
        action="store_true",
        help="every version that played (default: each bot's row)",
    )
    clitools.add_server_options(p, "the same board; without --league, the site's main board")
    p.set_defaults(handler=cmd_leaderboard)


def _add_ratings(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "ratings",
        parents=[common],
        help="fit ratings from all results",
        description="Fit Plackett-Luce ratings (Bradley-Terry for 2 players) to every recorded "
        "result of the league (95% intervals) and print the head-to-head table.",
    )
    p.add_argument("--league", metavar="NAME", help="the league (default: the newest)")
    p.set_defaults(handler=cmd_ratings)


def cmd_league_create(args: argparse.Namespace) -> int:
    from . import registry, store
    from .bots import register_builtins, sandbox_check
    from .ladder.cli import setting_problem
    from .league import LeagueError, create_league
    from .schedule import balance_problem

    problem = setting_problem(args)
    if problem:
        return fail(problem, clitools.EXIT_USAGE)
    games_per_pairing = None if args.ladder else games_per_pairing_of(args)
    r = redis_of(args)
    try:
        for name, vid in register_builtins(r, args.bots, sandbox_check(settings_of(args))):
            print(f"registered built-in bot {name}: version {vid[:12]} (checked in the sandbox)")
    except (registry.RegistryError, store.StoreError) as exc:
        return fail(f"cannot register a built-in bot: {exc}")
    if args.ladder:
        from .ladder.cli import cmd_create

        args.deals_per_series = deals_per_series_of(args, ladder=True)
        return cmd_create(args)
    args.deals_per_series = deals_per_series_of(args)
    try:
        league = create_league(
            r,
            args.name,
            args.bots,
            players=args.players,
            games_per_pairing=games_per_pairing,
            per_decision_ms=args.per_decision_ms,
            bank_ms=args.bank_ms,
            faults_to_forfeit=args.faults_to_forfeit,
            seed=args.seed,
            deals_per_series=args.deals_per_series,
            compute=args.compute,
            allow_unbalanced=args.allow_unbalanced,
        )
    except (LeagueError, store.StoreError) as exc:
        return fail(str(exc))
    ls = league.settings
    print(
        f"league {league.name}: {plural(len(ls.bots), 'bot')}, {ls.players} players, "
        f"{plural(ls.games_per_pairing, 'deal')} per combination, "
        f"up to {ls.deals_per_series} per match (series), "
        f"L={ls.time_control.per_decision_ms} ms B={ls.time_control.bank_ms} ms, "
        f"forfeit at {plural(ls.fault_policy.faults_to_forfeit, 'fault')}, "
        f"{ls.compute} compute, seed {ls.seed}"
    )
    for vid in ls.bots:
        print(f"  {version_label(r, vid)}")
    problem = balance_problem(ls.players, ls.games_per_pairing)
    if problem is not None:  # allowed with --allow-unbalanced
        print(f"note: {problem}")
    print(f"run it with: arena league run {league.name}")
    return 0


def cmd_league_run(args: argparse.Namespace) -> int:
    from .league import LeagueError, league_progress, run_league

    settings = settings_of(args)
    r = redis_of(args)
    known_league(r, args.name)  # an unknown name: one line naming the Redis read
    try:
        count = run_league(r, args.name, settings)
    except LeagueError as exc:
        return fail(str(exc))
    total = league_progress(r, args.name).total
    print(
        f"league {args.name}: {plural(count, 'match job')} enqueued on queue {settings.queue!r} "
        f"({plural(total, 'match', 'matches')} in all)"
    )
    if count and not _listened(r, settings.queue):
        print(
            f"note: no worker listens on queue {settings.queue!r} yet: start one with: arena worker"
        )
    if args.wait:
        return follow(r, args.name)
    print(f"follow it with: arena league status {args.name} --watch")
    return 0


def _listened(r: redis.Redis, queue: str) -> bool:
    """Whether a worker is registered on ``queue`` (rq's own registry of workers)."""
    from rq import Queue, Worker

    return bool(Worker.all(queue=Queue(queue, connection=r)))


def cmd_league_status(args: argparse.Namespace) -> int:
    from .league import LeagueError, league_progress

    r = redis_of(args)
    known_league(r, args.name)  # an unknown name: one line naming the Redis read
    try:
        progress = league_progress(r, args.name)
        if progress.league.settings.ladder is not None:
            from .ladder.cli import print_status

            if args.watch:
                return fail("a ladder runs until it is closed: --watch is for round robins")
            print_status(r, args.name)
            return 0
        if args.watch:
            return follow(r, args.name)
        print_progress(progress)
    except LeagueError as exc:
        return fail(str(exc))
    return 0


def cmd_league_cancel(args: argparse.Namespace) -> int:
    from .league import LeagueError, cancel_league

    r = redis_of(args)
    known_league(r, args.name)  # an unknown name: one line naming the Redis read
    try:
        count = cancel_league(r, args.name, settings_of(args))
    except LeagueError as exc:
        return fail(str(exc))
    print(
        f"league {args.name}: cancelled, {plural(count, 'unfinished match', 'unfinished matches')}"
        " stopped"
    )
    return 0


def cmd_league_retry(args: argparse.Namespace) -> int:
    from .league import LeagueError, retry_league

    r = redis_of(args)
    known_league(r, args.name)  # an unknown name: one line naming the Redis read
    try:
        again = retry_league(r, args.name, settings_of(args))
    except LeagueError as exc:
        return fail(str(exc))
    print(
        f"league {args.name}: {plural(len(again), 'failed match', 'failed matches')} enqueued again"
    )
    return 0


def cmd_league_list(args: argparse.Namespace) -> int:
    from . import store
    from .progress import league_progress

    r = redis_of(args)
    rows = []
    for name in store.list_leagues(r):
        progress = league_progress(r, name)
        ls = progress.league.settings
        rows.append(
            [
                name,
                progress.league.status.value,
                str(len(ls.bots)),
                str(ls.players),
                f"{progress.done}/{progress.total}",
            ]
        )
    if not rows:
        print("no leagues yet (arena league create)")
        return 0
    print(table(["league", "status", "bots", "players", "done"], rows, {2, 3, 4}))
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    if clitools.remote(args):
        return authorcli.leaderboard(args)
    r = redis_of(args)
    name = league_name(r, args.league)
    if name is None:
        return fail("no leagues yet (arena league create)")
    rows = leaderboard_rows(r, name, all_versions=args.all_versions)
    print(leaderboard_text(name, rows, args.all_versions))
    if not rows:
        return 0
    from .audit import exclusions

    for line in exclusions.note(exclusions.excluded(r, name), lambda vid: version_label(r, vid)):
        print(f"note: {line} (arena league audit {name})")
    return 0


def cmd_ratings(args: argparse.Namespace) -> int:
    from .ratings import results_in_order

    r = redis_of(args)
    name = league_name(r, args.league)
    if name is None:
        return fail("no leagues yet (arena league create)")
    results = results_in_order(r, name)
    if not results:
        print(f"league {name}: no results yet")
        return 0
    from .audit import exclusions

    excluded = exclusions.excluded(r, name)
    results = exclusions.without(results, excluded)
    from .rating_report import format_fit

    print(format_fit(name, results, label=lambda vid: version_label(r, vid)))
    for line in exclusions.note(excluded, lambda vid: version_label(r, vid)):
        print(f"note: {line} (arena league audit {name})")
    return 0
