"""The ``arena`` command. One entry point serves every distribution.

The SDK's own subcommands live here. The referee (``arboretum-server``), the league
(``arboretum-league``) and the web app (``arboretum-web``) add theirs through a module with
``register(subparsers, groups, only=None, action=None)``; when such a distribution is not
installed, its subcommands still appear in ``--help`` and say what to install. A command builds
only what it needs: the plugin that owns it (:func:`plugins_for`), of that only its own top-level
command, given to ``register`` as ``only`` (:func:`command_of`), and of a group such as ``arena
league`` only the action named, given as ``action`` (:func:`action_of`; a plugin whose commands
have no actions ignores it).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import argtypes, clitools, grpc_setup
from .clitools import ArenaParser, UserError

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


# Subcommands that other distributions provide (and the SDK's author commands, which talk to a
# web server): module, distribution, {command path: help}.
PLUGINS: list[tuple[str, str, dict[str, str]]] = [
    (
        "arboretum_sdk.authorcli",
        "arboretum-sdk",
        {"challenge": "challenge other bots with one of yours (through the web server)"},
    ),
    (
        "arboretum_server.cli",
        "arboretum-server",
        {"serve": "run the referee (gRPC server)", "play": "play a local match between bots"},
    ),
    ("arboretum_web.cli", "arboretum-web", {"web": "serve the web viewer and HTTP API"}),
    (
        "arboretum_worker.cli",
        "arboretum-league",
        {
            "demo": "the main demo: a league of the built-in bots on this machine",
            "worker": "run a league worker (rq)",
            "league": "create, run and follow leagues",
            "leaderboard": "print the standings",
            "ratings": "fit ratings from all results",
            "match": "inspect a league match",
            "sprt": "sequential test: is NEW stronger than OLD?",
            "bot versions": "list a bot's submitted versions",
        },
    ),
]


def cmd_simulate(args: argparse.Namespace) -> int:
    import secrets

    from .simulate import simulate

    seed = args.seed if args.seed is not None else secrets.randbits(64)
    summary = simulate(args.players, args.games, seed, args.replays)
    print(summary.format())
    return 0


def cmd_replay_verify(args: argparse.Namespace) -> int:
    from arboretum import ReplayError, load_replay, verify_replay, verify_steps

    failures = 0
    for path in args.files:
        doc: dict[str, Any] = {}
        try:
            doc = load_replay(path)
            if args.partial:
                print(f"ok   {path}: {verify_steps(doc).describe()}")
                continue
            result = verify_replay(doc)
        except ReplayError as exc:
            failures += 1
            hint = ""
            if doc.get("complete") is False and not args.partial:
                hint = " (an unfinished game's replay: check its steps with --partial)"
            clitools.say_error(f"{path}: {exc}{hint}")
            continue
        totals = " ".join(str(t) for t in result.totals)
        print(f"ok   {path}: totals {totals}, winners {list(result.winners)}")
    if failures:
        raise UserError(
            f"{failures} of {clitools.plural(len(args.files), 'replay')} failed verification"
        )
    return 0


def cmd_replay_show(args: argparse.Namespace) -> int:
    from arboretum import ReplayError, load_replay

    from .replay_text import render_replay

    try:
        print(render_replay(load_replay(args.file)))
    except ReplayError as exc:
        raise UserError(f"{args.file}: {exc}") from None
    return 0


def cmd_replay_analyze(args: argparse.Namespace) -> int:
    import json

    from arboretum import ReplayError, load_replay

    from .analysis import AnalysisConfig, AnalysisError, analyse_replay
    from .analysis.report import analysis_json, render_text

    config = AnalysisConfig() if args.samples is None else AnalysisConfig(samples=args.samples)
    seats = None if args.seat is None else [args.seat]
    try:
        doc = load_replay(args.file)
        report = analysis_json(doc, analyse_replay(doc, seats, config), config, seats)
    except (ReplayError, AnalysisError) as exc:
        raise UserError(f"{args.file}: {exc}") from None
    print(json.dumps(report, indent=1) if args.json else render_text(report))
    return 0


def _version() -> str:
    from importlib import metadata

    from arboretum import ENGINE_VERSION, REPLAY_VERSION, RULES_VERSION

    try:
        sdk = metadata.version("arboretum-sdk")
    except metadata.PackageNotFoundError:  # run from a source tree without installing
        sdk = "unknown"
    return (
        f"arena {sdk} (engine {ENGINE_VERSION}, rules {RULES_VERSION}, "
        f"replay format {REPLAY_VERSION}, Python {sys.version.split()[0]})"
    )


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked for (every bot process parses a command line)."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(_version())
        parser.exit()


Plugin = tuple[str, str, dict[str, str]]


def build_parser(
    plugins: bool | Sequence[Plugin] = True, only: str | None = None, action: str | None = None
) -> argparse.ArgumentParser:
    """The whole command tree. With ``plugins=False`` only the SDK's own commands are there; with
    a list of :data:`PLUGINS` entries, the SDK's and those plugins' (:func:`plugins_for`). With
    ``only`` (a top-level command, :func:`command_of`) only that command's parser is built, and
    with ``action`` too (:func:`action_of`) a group that knows the action builds only its parser
    (a word the group does not know gets every action, so that the error lists them)."""
    parser = ArenaParser(
        prog="arena",
        description="Arboretum Arena: the rules engine, bots, referee and league.",
        epilog="Every command has its own --help. Errors are one line starting 'arena: '; the "
        "exit status is 2 for a usage error and 1 for a failure.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    parser.add_argument(
        "--version", action=_VersionAction, help="print the versions of arena and its engine"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    groups: dict[str, Any] = {}

    if only in (None, "simulate"):
        _add_simulate(sub)
    if only in (None, "replay"):
        _add_replay(sub)
    if only in (None, "bot"):
        bot = sub.add_parser("bot", help="run or submit bots")
        groups["bot"] = bot.add_subparsers(dest="bot_command", metavar="ACTION")
        groups["bot"].required = True
        _register_sdk_bot_commands(groups["bot"])

    chosen = PLUGINS if plugins is True else plugins or ()
    for module_name, distribution, commands in chosen:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            if exc.name and not module_name.startswith(exc.name.split(".")[0]):
                missing = exc.name
            else:
                missing = None
            for path, help_text in commands.items():
                if only in (None, path.split()[0]):
                    _register_missing(sub, groups, path, help_text, distribution, missing)
            continue
        module.register(sub, groups, only=only, action=action)
    return parser


def _add_simulate(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="play games in-process with the random policy",
        description="Play N games in-process with the built-in random policy, write their replays "
        "and print a summary. Game i uses the seed derived from --seed and i.",
    )
    clitools.add_players(p, required=True)
    p.add_argument(
        "--games", type=argtypes.positive, required=True, metavar="N", help="number of games"
    )
    clitools.add_seed(p)
    p.add_argument(
        "--replays", type=Path, metavar="DIR", help="directory for the replay files (optional)"
    )
    p.set_defaults(handler=cmd_simulate)


def _add_replay(sub: Any) -> None:
    replay = sub.add_parser("replay", help="verify, show or analyse replay files")
    replay_sub = replay.add_subparsers(dest="replay_command", metavar="ACTION")
    replay_sub.required = True
    p = replay_sub.add_parser(
        "verify",
        help="re-play replay files through the engine",
        description="Re-play each file through the rules engine. Fails, naming the first step "
        "that differs, on any illegal step, any recorded card, hand or score that differs, and "
        "any step whose digest differs (docs/replay-format.md): an edit is named at the step it "
        "changed.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="replay files (JSON)")
    p.add_argument(
        "--partial",
        action="store_true",
        help="check the steps of unfinished games too (a cancelled or drained match's "
        "game-<i>.partial.json): header and steps, no result",
    )
    p.set_defaults(handler=cmd_replay_verify)
    p = replay_sub.add_parser("show", help="print a replay turn by turn")
    p.add_argument("file", type=Path, metavar="FILE", help="a replay file (JSON)")
    p.set_defaults(handler=cmd_replay_show)
    _add_replay_analyze(replay_sub)


def _add_replay_analyze(replay_sub: Any) -> None:
    p = replay_sub.add_parser(
        "analyze",
        help="value every decision of a replay and mark the mistakes",
        description="Value each decision of the seat(s) that had a choice, and the best "
        "alternative found, in expected final-score margin, from the seat's view only (fixed "
        "compute, reproducible); mark inaccuracies, mistakes and blunders and sum up each seat "
        "(docs/analysis.md).",
    )
    p.add_argument("file", type=Path, metavar="FILE", help="a replay file (JSON)")
    p.add_argument(
        "--seat",
        type=argtypes.non_negative,
        metavar="S",
        help="analyse this seat only (default: every seat)",
    )
    p.add_argument(
        "--json", action="store_true", help="print the analysis as JSON (docs/analysis.md)"
    )
    p.add_argument(
        "--samples",
        type=argtypes.positive,
        metavar="N",
        help="determinizations a decision (default 8; fewer is faster and noisier: the marks' "
        "honesty is measured at the default)",
    )
    p.set_defaults(handler=cmd_replay_analyze)


def _register_sdk_bot_commands(bot_sub: Any) -> None:
    from . import botcli

    botcli.register(bot_sub)


def _register_missing(
    sub: Any, groups: dict[str, Any], path: str, help_text: str, dist: str, missing: str | None
) -> None:
    words = path.split()
    target = groups[words[0]] if len(words) > 1 else sub
    name = words[-1]
    why = f"the {missing!r} module is missing" if missing else "it is not installed"
    p = target.add_parser(
        name, help=f"{help_text} (needs {dist})", add_help=False, accept_extras=True
    )
    hint = MISSING_HINTS.get(path, "")

    def handler(_: argparse.Namespace) -> int:
        raise clitools.UsageError(
            f"arena {path} needs {dist}: {why}. Install it with: pip install {dist} (from a "
            f"clone of the repository: pip install -e ./{_dist_dir(dist)}){hint}"
        )

    p.set_defaults(handler=handler)


MISSING_HINTS = {"demo": ". With the SDK alone, arena simulate plays games in-process"}


def _dist_dir(dist: str) -> str:
    return {"arboretum-server": "server", "arboretum-league": "worker", "arboretum-web": "web"}.get(
        dist, dist
    )


# Commands that need no plugin: a bot process (`arena bot run`) then imports only the SDK.
SDK_ONLY = {("simulate",), ("replay",), ("bot", "run"), ("bot", "list")}


def needs_plugins(argv: Sequence[str]) -> bool:
    """Whether parsing ``argv`` needs the other distributions' commands loaded."""
    words = tuple(a for a in argv if not a.startswith("-"))
    return not any(words[: len(path)] == path for path in SDK_ONLY)


def plugins_for(argv: Sequence[str]) -> list[Plugin]:
    """The plugins whose commands parsing ``argv`` needs: none for the SDK's own commands; only
    the one that owns the command when ``argv`` starts with a command of one plugin only
    (``arena league run`` registers the league's commands, not the referee's or the web's); all
    of them otherwise (help, the ``bot`` group that several fill, a word no table names)."""
    if not needs_plugins(argv):
        return []
    first = argv[0] if argv and not argv[0].startswith("-") else None
    owners = [p for p in PLUGINS if any(path.split()[0] == first for path in p[2])]
    if first is None or first == "bot" or len(owners) != 1:
        return list(PLUGINS)
    return owners


# The SDK's own top-level commands.
SDK_COMMANDS = {"simulate", "replay", "bot"}


def command_of(argv: Sequence[str]) -> str | None:
    """The top-level command ``argv`` starts with, when its parser alone will do (``arena league
    run`` builds neither ``match`` nor ``sprt``); ``None`` when every command is needed: help, an
    option first, a word no table names, and ``bot`` (a group that several plugins fill)."""
    first = argv[0] if argv else None
    plugins = {path.split()[0] for _, _, commands in PLUGINS for path in commands}
    return first if first in SDK_COMMANDS | plugins and first != "bot" else None


def action_of(argv: Sequence[str]) -> str | None:
    """The second word of ``argv`` when the first is a command whose parser alone will do
    (:func:`command_of`): ``run`` in ``arena league run NAME``. ``None`` for an option there
    (``arena league --help``) and for a command line without one."""
    if command_of(argv) is None or len(argv) < 2 or argv[1].startswith("-"):
        return None
    return argv[1]


def main(argv: Sequence[str] | None = None) -> int:
    # Before anything imports gRPC: the transport settings of the arena's processes.
    grpc_setup.apply()
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(plugins=plugins_for(argv), only=command_of(argv), action=action_of(argv))
    args = parser.parse_args(argv)
    _configure_logging(args)
    try:
        return int(args.handler(args))
    except UserError as exc:
        return clitools.fail(str(exc), exc.status)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _configure_logging(args: argparse.Namespace) -> None:
    """Warnings and errors only, unless the command is a long-running server (``log_level``
    ``"info"``: ``serve``, ``worker``, ``web``, ``bot run``) or ``--verbose`` is given."""
    if args.verbose:
        level = logging.DEBUG
    else:
        level = logging.INFO if getattr(args, "log_level", None) == "info" else logging.WARNING
    stamped = level < logging.WARNING
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        if stamped
        else "arena: %(levelname)s: %(name)s: %(message)s",
    )


if __name__ == "__main__":
    raise SystemExit(main())
