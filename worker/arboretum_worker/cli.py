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
import sys
import time
from pathlib import Path
from typing import Any, get_args

from arboretum_sdk import argtypes, clitools
from arboretum_sdk.bot import Compute
from arboretum_sdk.clitools import UserError, fail, plural

from .report import (
    LEADERBOARD_HEADERS,
    LEADERBOARD_RIGHT,
    follow,
    leaderboard_rows,
    print_progress,
    table,
    version_label,
)
from .settings import (
    add_deals_per_series,
    add_games_per_pairing,
    deals_per_series_of,
    games_per_pairing_of,
)

__all__ = ["register"]

MATCH_STATUSES = ("queued", "running", "finished", "failed", "cancelled")


def _common() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    clitools.add_redis_url(parent)
    return parent


def register(subparsers: Any, groups: dict[str, Any]) -> None:
    """Add the league's subcommands to the ``arena`` parser (and ``versions`` to ``groups["bot"]``).

    ``arena bot submit`` belongs to the SDK (authors submit remotely with the SDK alone); without
    ``--server`` it calls :func:`cmd_bot_submit` here, which stores the bot in Redis directly."""
    common = _common()

    from .demo import add_arguments as demo_arguments
    from .demo import main as demo_main

    p = subparsers.add_parser(
        "demo",
        help="the main demo: a league of the built-in bots on this machine",
        description="A whole league on this machine: a private Redis (unless $REDIS_URL is set), "
        "a referee, league workers, the built-in bots submitted and checked in the sandbox, a "
        "round robin with a progress bar, the leaderboard and the fitted ratings; every game's "
        "replay is written to --replays. Everything it started is stopped at the end, on Ctrl-C "
        "too. This is what scripts/demo runs.",
    )
    demo_arguments(p)
    p.set_defaults(handler=demo_main)

    p = subparsers.add_parser(
        "worker",
        parents=[common],
        help="run a league worker (rq)",
        description="Run an rq worker on the league queue (ARENA_QUEUE, default 'arena'). "
        "Like `rq worker arena --url $REDIS_URL --maintenance-interval 10`, with a short "
        "heartbeat margin so a killed worker's match is re-queued within about 30 s. "
        "Redis unreachable, at start or later, for any length of time: the worker says so in "
        "one line, retries with backoff (at most 2 s apart), says when Redis answers again and "
        "carries on; it never exits for it, and its running match finishes and is recorded. "
        "SIGTERM (or Ctrl-C): no new match; the running one gets ARENA_STOP_DRAIN_S (180 s) to "
        "finish, then is handed back to the queue, as is at once on a second SIGTERM. "
        "Settings: docs/league.md.",
    )
    p.add_argument("--burst", action="store_true", help="stop when the queue is empty")
    p.add_argument(
        "--name",
        help="worker name, unique among the running workers "
        "(default: arena-<host>-<pid>-<random>, new at every start)",
    )
    p.set_defaults(handler=cmd_worker, log_level="info")

    league = subparsers.add_parser("league", help="create, run and follow leagues")
    lsub = league.add_subparsers(dest="league_command", metavar="ACTION")
    lsub.required = True
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

    p = lsub.add_parser("run", parents=[common], help="enqueue the league's matches")
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.add_argument("--wait", action="store_true", help="follow the progress until done")
    p.set_defaults(handler=cmd_league_run)
    p = lsub.add_parser("status", parents=[common], help="progress and failures")
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.add_argument("--watch", action="store_true", help="refresh until the league is done")
    p.set_defaults(handler=cmd_league_status)
    p = lsub.add_parser("cancel", parents=[common], help="cancel the league's matches")
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.set_defaults(handler=cmd_league_cancel)
    p = lsub.add_parser("retry", parents=[common], help="re-run failed matches")
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.set_defaults(handler=cmd_league_retry)
    p = lsub.add_parser("list", parents=[common], help="list leagues")
    p.set_defaults(handler=cmd_league_list)
    ladder_cli.register(lsub, common, (_redis, _settings))
    from .audit import cli as audit_cli

    audit_cli.register(lsub, common, (_redis, _settings))

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
    p.set_defaults(handler=cmd_leaderboard)

    p = subparsers.add_parser(
        "ratings",
        parents=[common],
        help="fit ratings from all results",
        description="Fit Plackett-Luce ratings (Bradley-Terry for 2 players) to every recorded "
        "result of the league (95% intervals) and print the head-to-head table.",
    )
    p.add_argument("--league", metavar="NAME", help="the league (default: the newest)")
    p.set_defaults(handler=cmd_ratings)

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
    p.set_defaults(handler=cmd_match_list)
    p = msub.add_parser("show", parents=[common], help="a match's status, seats and result")
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    p.set_defaults(handler=cmd_match_show)
    p = msub.add_parser("logs", parents=[common], help="what a bot printed in a match")
    p.add_argument("match_id", metavar="MATCH", help=match_help)
    p.add_argument("--bot", required=True, metavar="NAME", help="bot name, version id or seat")
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

    from .sprt import cli as sprt_cli

    sprt_cli.register(subparsers)

    bot = groups.get("bot")
    if bot is not None:
        p = bot.add_parser("versions", parents=[common], help="a bot's submitted versions")
        p.add_argument("name", metavar="NAME", help="the bot's name")
        p.set_defaults(handler=cmd_bot_versions)
        submit = bot.choices.get("submit")
        if submit is not None:  # without --server, `arena bot submit` stores the bot in Redis
            from arboretum_sdk.botcli import LOCAL_SUBMIT

            submit.set_defaults(**{LOCAL_SUBMIT: cmd_bot_submit})


# --------------------------------------------------------------------------- helpers


def _settings(args: argparse.Namespace) -> Any:
    from .settings import SettingsError, WorkerSettings

    try:
        return WorkerSettings.from_env(redis_url=getattr(args, "redis_url", None))
    except SettingsError as exc:
        raise UserError(exc.line()) from None


def _redis(args: argparse.Namespace) -> Any:
    from .settings import RedisUnavailable, connect_redis

    try:
        client = connect_redis(_settings(args).redis_url)
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None
    from .progress import prepare_store

    prepare_store(client)  # one GET, unless matches stored before the indexes are there
    return client


def _league_name(r: Any, name: str | None) -> str | None:
    """``name`` if that league exists (else :class:`UserError`), or the newest league."""
    from . import store

    if name:
        if store.get_league(r, name) is None:
            raise UserError(f"no league named {name!r} (arena league list shows them)")
        return name
    leagues = [store.get_league(r, n) for n in store.list_leagues(r)]
    found = [lg for lg in leagues if lg is not None]
    if not found:
        return None
    return max(found, key=lambda lg: lg.created).name


# --------------------------------------------------------------------------- commands


def cmd_worker(args: argparse.Namespace) -> int:
    from .settings import RedisUnavailable
    from .worker import run_worker

    settings = _settings(args)  # a bad URL or setting is an error; an unreachable Redis is not
    try:
        run_worker(settings, burst=args.burst, name=args.name)
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None
    return 0


def cmd_league_create(args: argparse.Namespace) -> int:
    from . import registry, store
    from .bots import register_builtins, sandbox_check
    from .league import LeagueError, create_league
    from .schedule import balance_problem

    games_per_pairing = None if args.ladder else games_per_pairing_of(args)
    r = _redis(args)
    try:
        for name, vid in register_builtins(r, args.bots, sandbox_check(_settings(args))):
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

    settings = _settings(args)
    r = _redis(args)
    try:
        count = run_league(r, args.name, settings)
    except LeagueError as exc:
        return fail(str(exc))
    total = league_progress(r, args.name).total
    print(
        f"league {args.name}: {plural(count, 'match job')} enqueued on queue {settings.queue!r} "
        f"({plural(total, 'match', 'matches')} in all)"
    )
    if args.wait:
        return follow(r, args.name)
    print(f"follow it with: arena league status {args.name} --watch")
    return 0


def cmd_league_status(args: argparse.Namespace) -> int:
    from .league import LeagueError, league_progress

    r = _redis(args)
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

    r = _redis(args)
    try:
        count = cancel_league(r, args.name, _settings(args))
    except LeagueError as exc:
        return fail(str(exc))
    print(
        f"league {args.name}: cancelled, {plural(count, 'unfinished match', 'unfinished matches')}"
        " stopped"
    )
    return 0


def cmd_league_retry(args: argparse.Namespace) -> int:
    from .league import LeagueError, retry_league

    r = _redis(args)
    try:
        again = retry_league(r, args.name, _settings(args))
    except LeagueError as exc:
        return fail(str(exc))
    print(
        f"league {args.name}: {plural(len(again), 'failed match', 'failed matches')} enqueued again"
    )
    return 0


def cmd_league_list(args: argparse.Namespace) -> int:
    from . import store
    from .progress import league_progress

    r = _redis(args)
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
    r = _redis(args)
    name = _league_name(r, args.league)
    if name is None:
        return fail("no leagues yet (arena league create)")
    rows = leaderboard_rows(r, name, all_versions=args.all_versions)
    shown = (
        "every version, * = the bot's row"
        if args.all_versions
        else "each bot by its best established version"
    )
    print(
        f"leaderboard of league {name} (fitted rating, ranked by the lower end of its 95% "
        f"interval; ? = provisional; {shown})"
    )
    if not rows:
        print("no results yet")
        return 0
    print(table(LEADERBOARD_HEADERS, rows, LEADERBOARD_RIGHT))
    from .audit import exclusions

    for line in exclusions.note(exclusions.excluded(r, name), lambda vid: version_label(r, vid)):
        print(f"note: {line} (arena league audit {name})")
    return 0


def cmd_ratings(args: argparse.Namespace) -> int:
    from .ratings import results_in_order

    r = _redis(args)
    name = _league_name(r, args.league)
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


def _match_record(r: Any, match_id: str) -> Any:
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

    r = _redis(args)
    name = _league_name(r, args.league)
    if name is None:
        return fail("no leagues yet (arena league create)")
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

    r = _redis(args)
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

    r = _redis(args)
    record = _match_record(r, args.match_id)
    if record is None:
        return fail(f"no match {args.match_id!r}")
    seats = []
    for seat, vid in enumerate(record.seats):
        version = store.get_version(r, vid)
        label = version.name if version else ""
        if args.bot in (str(seat), vid, label) or (len(args.bot) >= 4 and vid.startswith(args.bot)):
            seats.append(seat)
    if not seats:
        names = ", ".join(version_label(r, v) for v in record.seats)
        return fail(f"no bot {args.bot!r} in match {record.id} (seats: {names})")
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

    settings = _settings(args)
    r = _redis(args)
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

    r = _redis(args)
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


def cmd_bot_submit(args: argparse.Namespace) -> int:
    from . import registry, store
    from .bots import submit_bot
    from .sandbox import SandboxUnavailableError

    try:
        quota = registry.quota_from_env()
    except registry.RegistryError as exc:
        return fail(str(exc))
    settings = _settings(args)
    r = _redis(args)
    try:
        vid = submit_bot(r, args.path, args.name, settings, owner=args.owner, quota=quota)
    except (store.StoreError, OSError, SandboxUnavailableError) as exc:
        return fail(f"bot refused: {exc}")
    count = len(registry.versions(r, args.name))
    print(f"bot {args.name}: version {vid[:12]} ({vid}); {plural(count, 'version')} in all")
    from .ladder.ops import notice_submission

    for ladder in notice_submission(r, args.name, settings):
        print(f"it enters ladder {ladder} at its next tick (the previous version stops there)")
    return 0


def cmd_bot_versions(args: argparse.Namespace) -> int:
    from . import registry, store

    r = _redis(args)
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
