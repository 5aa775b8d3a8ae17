"""``arena sprt``: is NEW stronger than OLD? A sequential probability ratio test on pairs of
games (docs/sprt.md).

Played here by default (real bot processes on a referee on loopback, as ``arena play`` plays);
with ``--league``, played by the league's workers (bots are then submitted versions), and
followed, listed or cancelled with ``--follow``, ``--list`` and ``--cancel``.
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk import argtypes, clitools
from arboretum_sdk.clitools import UsageError, UserError, plural

if TYPE_CHECKING:
    import redis

__all__ = ["register"]

DESCRIPTION = """\
Play pairs of games between NEW and OLD, each pair one deal played twice with the seats
swapped, and after every pair update the log-likelihood ratio (LLR) of H1 (NEW is ELO1 Elo
stronger) against H0 (NEW is ELO0 Elo stronger), in the pentanomial model of pairs (the GSPRT
fishtest uses, in logistic Elo). The test stops when the LLR reaches a bound (Wald's:
log(beta/(1-alpha)) and log((1-beta)/alpha), -2.94 and +2.94 by default) or at --max-pairs.

A progress line on stderr shows the LLR and its bounds, the pairs, W/D/L of NEW's games and
the Elo estimate with its 95% interval; the verdict is printed at the end (--json for a
machine-readable report). The pairs are played in batches of --batch deals: one match per
seating, fresh bot processes for each match, so no process sees a deal twice.

How long it takes depends on the bounds more than on the difference: under the default
[0, 5] even a bot 300 Elo stronger needs about 210 pairs, and 10 Elo about 3,500. To ask only
"is NEW clearly better?", screen with --elo0 0 --elo1 50: 100 Elo or more passes in about 40
pairs, no difference fails in about 90, and a difference under 50 may go either way.

With --league the pairs are played by the league's workers (`arena worker`, any number of
them, on the same Redis): NEW and OLD are submitted bots (NAME, NAME@VERSION or a version
id), --window batches are in play at once, and the test lives in Redis: it goes on if this
command stops (--detach returns at once) and survives a worker's death.

  arena sprt ./mybot_v2.py ./mybot_v1.py
  arena sprt ./mybot_v2.py greedy --elo0 0 --elo1 50
  arena sprt ./mybot_v2.py greedy --elo0 0 --elo1 10 --max-pairs 4000 --concurrency 2
  arena sprt mybot@3f2a mybot@9c01 --league --window 8
  arena sprt --follow TEST          (--list, --cancel TEST)
  arena sprt mybot@3f2a mybot@9c01 --server https://arena.example --token-file token
            (an author's test through the web server: their own versions, no Redis)

More in docs/sprt.md (what the numbers mean, how many pairs to expect)."""


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def register(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "sprt",
        help="sequential test: is NEW stronger than OLD?",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "new", nargs="?", metavar="NEW", help="the new bot: a built-in name or a .py file/folder"
    )
    p.add_argument("old", nargs="?", metavar="OLD", help="the bot to beat, the same way")
    p.add_argument(
        "--elo0", type=_number, default=0.0, metavar="E", help="Elo under H0 (default 0)"
    )
    p.add_argument(
        "--elo1", type=_number, default=5.0, metavar="E", help="Elo under H1 (default 5)"
    )
    p.add_argument(
        "--alpha",
        type=_number,
        default=0.05,
        metavar="A",
        help="chance of accepting H1 when H0 holds, in (0, 0.5) (default 0.05)",
    )
    p.add_argument(
        "--beta",
        type=_number,
        default=0.05,
        metavar="B",
        help="chance of accepting H0 when H1 holds, in (0, 0.5) (default 0.05)",
    )
    p.add_argument(
        "--max-pairs",
        type=argtypes.positive,
        metavar="N",
        help="stop without a verdict after N pairs (default: no cap)",
    )
    p.add_argument(
        "--batch",
        type=argtypes.positive,
        default=8,
        metavar="K",
        help="pairs per batch: games per match, per bot process (default 8)",
    )
    clitools.add_seed(p, "test seed")
    clitools.add_time_control(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    here = p.add_argument_group("played here (the default)")
    here.add_argument(
        "--concurrency",
        type=argtypes.positive,
        default=1,
        metavar="C",
        help="batches played at once, two matches each (default 1)",
    )
    here.add_argument(
        "--replays",
        type=Path,
        metavar="DIR",
        help="keep every game's replay and the bot logs here (default: none kept)",
    )
    here.add_argument(
        "--start-timeout-ms",
        type=argtypes.positive,
        default=30000,
        metavar="MS",
        help="how long a match waits for its bot processes to connect (default 30000)",
    )
    league = p.add_argument_group("played by league workers")
    league.add_argument(
        "--league", action="store_true", help="play the pairs on the league's workers"
    )
    league.add_argument(
        "--window",
        type=argtypes.positive,
        default=4,
        metavar="W",
        help="batches in play at once: at most W workers busy with the test (default 4)",
    )
    league.add_argument(
        "--detach", action="store_true", help="start the test and return (do not follow it)"
    )
    league.add_argument("--follow", metavar="TEST", help="follow a league test to its end")
    league.add_argument("--cancel", metavar="TEST", help="stop a league test")
    league.add_argument("--list", action="store_true", help="list the league's tests")
    clitools.add_redis_url(league)
    from arboretum_sdk.clitools import add_server_options

    add_server_options(
        p,
        "an author's test of two of their own versions, played by the league's workers within "
        "the operator's limits; --follow, --cancel and --list as with --league",
    )
    p.set_defaults(handler=cmd_sprt)
    return p  # type: ignore[no-any-return]


def _settings(args: argparse.Namespace) -> Any:
    from .stats import SprtSettings

    return SprtSettings(
        elo0=args.elo0,
        elo1=args.elo1,
        alpha=args.alpha,
        beta=args.beta,
        max_pairs=args.max_pairs,
    )


def cmd_sprt(args: argparse.Namespace) -> int:
    from arboretum_sdk import authorcli

    from .stats import SprtError

    actions = [name for name in ("follow", "cancel", "list") if getattr(args, name)]
    if len(actions) > 1:
        raise UsageError(f"--{actions[0]} and --{actions[1]} do not go together")
    if actions:
        if args.new is not None:
            raise UsageError(f"--{actions[0]} takes no bots")
        if clitools.remote(args):
            return authorcli.sprt(args, {})
        return _league_action(args, actions[0])
    if args.new is None or args.old is None:
        raise UsageError("give two bots, NEW and OLD (see: arena sprt --help)")
    if clitools.remote(args):
        return authorcli.sprt(args, _remote_settings(args))
    try:
        settings = _settings(args)
    except SprtError as exc:
        raise UsageError(str(exc)) from None
    if not getattr(args, "verbose", False):
        logging.getLogger("arboretum_server").setLevel(logging.WARNING)
    if args.league:
        return _start_league_test(args, settings)
    return _run_here(args, settings)


def _remote_settings(args: argparse.Namespace) -> dict[str, Any]:
    """What a test started through the web server asks for (the server checks it against the
    operator's limits)."""
    body: dict[str, Any] = {
        "elo0": args.elo0,
        "elo1": args.elo1,
        "alpha": args.alpha,
        "beta": args.beta,
        "batch": args.batch,
    }
    if args.max_pairs is not None:
        body["max_pairs"] = args.max_pairs
    return body


def _run_here(args: argparse.Namespace, settings: Any) -> int:
    from arboretum_sdk import eventloop
    from arboretum_server.local import PlayError

    from .local import LocalTest, MatchFailed, ProgressLine, run_local_test

    seed = args.seed if args.seed is not None else secrets.randbits(64)
    test = LocalTest(
        new=args.new,
        old=args.old,
        settings=settings,
        seed=seed,
        batch=args.batch,
        concurrency=args.concurrency,
        replays=args.replays,
        per_decision_ms=args.per_decision_ms,
        bank_ms=args.bank_ms,
        faults_to_forfeit=args.faults_to_forfeit,
        start_timeout_ms=args.start_timeout_ms,
    )
    if args.replays is not None:
        clitools.output_dir(args.replays)
    show = ProgressLine(enabled=not args.quiet)

    def started(new: Any, old: Any) -> None:
        show.label = f"{new.name} vs {old.name}"
        if not args.quiet:
            print(_heading(new.name, old.name, settings, seed), file=sys.stderr)

    try:
        report = eventloop.run(run_local_test(test, on_pair=show, on_start=started))
    except PlayError as exc:
        raise UsageError(str(exc)) from None
    except MatchFailed as exc:
        raise UserError(f"the test stopped: {exc}") from None
    finally:
        show.clear()
    state = report.state
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
        return 0
    print(state.conclusion(report.new.name, report.old.name))
    _print_state(state)
    print(f"seed {report.seed}, {plural(state.games, 'game')} counted, {report.seconds:.1f} s")
    for problem in report.problems:
        print(problem)
    if report.logs is not None:
        print(f"replays and bot logs: {report.logs}/")
    return 0


def _heading(new: str, old: str, settings: Any, seed: int) -> str:
    lower, upper = settings.bounds
    return (
        f"sprt {new} vs {old}: H0 elo = {settings.elo0:g}, H1 elo = {settings.elo1:g}, "
        f"bounds ({lower:+.2f}, {upper:+.2f}), seed {seed}"
    )


def _print_state(state: Any) -> None:
    print(state.line())
    counts = " ".join(str(c) for c in state.counts)
    print(f"pentanomial (LL, LD, LW+DD, DW, WW): {counts}")


# --------------------------------------------------------------------------- league tests


def _redis(args: argparse.Namespace) -> tuple[Any, Any]:
    from ..settings import RedisUnavailable, SettingsError, WorkerSettings, connect_redis

    try:
        settings = WorkerSettings.from_env(redis_url=args.redis_url)
        return connect_redis(settings.redis_url), settings
    except SettingsError as exc:
        raise UserError(exc.line()) from None
    except RedisUnavailable as exc:
        raise UserError(str(exc)) from None


def _label(r: redis.Redis, vid: str) -> str:
    from .. import store

    version = store.get_version(r, vid)
    return f"{version.name}@{vid[:8]}" if version else vid[:12]


def _start_league_test(args: argparse.Namespace, settings: Any) -> int:
    from .. import store
    from ..league import LeagueError
    from .league import create_test

    for name in ("concurrency", "replays"):
        if getattr(args, name) not in (None, 1):
            raise UsageError(f"--{name} is for tests played here; with --league use --window")
    r, worker_settings = _redis(args)
    try:
        test = create_test(
            r,
            args.new,
            args.old,
            settings,
            worker_settings,
            seed=args.seed,
            batch=args.batch,
            window=args.window,
            per_decision_ms=args.per_decision_ms,
            bank_ms=args.bank_ms,
            faults_to_forfeit=args.faults_to_forfeit,
        )
    except (LeagueError, store.StoreError) as exc:
        raise UsageError(str(exc)) from None
    new, old = _label(r, test.new), _label(r, test.old)
    if not args.quiet or args.detach:
        print(f"test {test.id}: {_heading(new, old, settings, test.seed)}", file=sys.stderr)
    if args.detach:
        print(test.id)
        print(f"follow it with: arena sprt --follow {test.id}", file=sys.stderr)
        return 0
    return _follow(r, test.id, args)


def _follow(r: redis.Redis, test_id: str, args: argparse.Namespace) -> int:
    from .league import TestStatus, get_test, llr_history, test_state

    test = get_test(r, test_id)
    if test is None:
        raise UserError(f"no test {test_id!r} (arena sprt --list shows them)")
    new, old = _label(r, test.new), _label(r, test.old)
    tty = sys.stderr.isatty() and not args.quiet
    last_line = ""
    last_print = 0.0
    try:
        while True:
            test = get_test(r, test_id)
            assert test is not None
            state = test_state(r, test)
            line = f"{new} vs {old}: {state.line()}"
            if not args.quiet and line != last_line:
                if tty:
                    sys.stderr.write(f"\r{line}\x1b[K")
                    sys.stderr.flush()
                elif time.monotonic() - last_print >= 5.0 or test.status is not TestStatus.RUNNING:
                    print(line, file=sys.stderr, flush=True)
                    last_print = time.monotonic()
                last_line = line
            if test.status is not TestStatus.RUNNING:
                break
            time.sleep(0.5)
    except KeyboardInterrupt:
        if tty:
            sys.stderr.write("\n")
        print(
            f"the test goes on on the workers: arena sprt --follow {test_id} "
            f"(or --cancel {test_id})",
            file=sys.stderr,
        )
        return 130
    if tty:
        sys.stderr.write("\r\x1b[K")
    if args.json:
        data = {
            "test": test.id,
            "status": test.status.value,
            "reason": test.reason,
            "new": {"version": test.new, "bot": new},
            "old": {"version": test.old, "bot": old},
            "seed": test.seed,
            **state.to_json(),
            "llr_history": llr_history(r, test.id),
        }
        print(json.dumps(data, indent=1))
    else:
        if test.status is TestStatus.FINISHED:
            print(state.conclusion(new, old))
        else:
            print(f"test {test.id} {test.status.value}: {test.reason or '-'}")
        _print_state(state)
        print(f"test {test.id}, seed {test.seed}, {plural(state.games, 'game')} counted")
    return 0 if test.status is TestStatus.FINISHED else 1


def _league_action(args: argparse.Namespace, action: str) -> int:
    from .league import cancel_test, get_test, list_tests, test_state

    r, _ = _redis(args)
    if action == "follow":
        return _follow(r, args.follow, args)
    if action == "cancel":
        test = get_test(r, args.cancel)
        if test is None:
            raise UserError(f"no test {args.cancel!r} (arena sprt --list shows them)")
        if not cancel_test(r, test.id):
            raise UserError(f"test {test.id} is {test.status.value} already")
        print(f"test {test.id}: cancelled")
        return 0
    rows = []
    for test_id in list_tests(r):
        test = get_test(r, test_id)
        if test is None:
            continue
        state = test_state(r, test)
        verdict = state.verdict.value if state.verdict else "-"
        rows.append(
            f"{test.id}  {test.status.value:<9}  {verdict:<12}  {state.pairs:>6}  "
            f"{state.llr:+6.2f}  {_label(r, test.new)} vs {_label(r, test.old)}"
        )
    if not rows:
        print("no tests yet (arena sprt NEW OLD --league)")
        return 0
    print(f"{'test':<12}  {'status':<9}  {'verdict':<12}  {'pairs':>6}  {'LLR':>6}  bots")
    print("\n".join(rows))
    return 0
