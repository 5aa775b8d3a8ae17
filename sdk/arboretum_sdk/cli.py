"""The ``arena`` command. One entry point serves every distribution.

The SDK's own subcommands live here. The referee (``arboretum-server``), the league
(``arboretum-league``) and the web app (``arboretum-web``) add theirs through a module with
``register(subparsers, groups)``; when such a distribution is not installed, its subcommands
still appear in ``--help`` and say what to install.
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

from . import argtypes, grpc_setup

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


# Subcommands that other distributions provide: module, distribution, {command path: help}.
PLUGINS: list[tuple[str, str, dict[str, str]]] = [
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
            "worker": "run a league worker (rq)",
            "league": "create, run and follow leagues",
            "leaderboard": "print the standings",
            "ratings": "fit ratings from all results",
            "match": "inspect a league match",
            "bot versions": "list a bot's submitted versions",
        },
    ),
]


def cmd_simulate(args: argparse.Namespace) -> int:
    from .simulate import simulate

    summary = simulate(args.players, args.games, args.seed, args.replays)
    print(summary.format())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("arboretum_worker") is not None:
        # With the league installed, the demo is a whole league: Redis, referee, workers.
        from arboretum_worker.demo import main as league_demo

        return int(league_demo(args))
    from .simulate import simulate

    print("Arboretum Arena demo: random-policy games played in-process by the rules engine.\n")
    summary = simulate(args.players, args.games, args.seed, args.replays, match_id="demo")
    print(summary.format())
    if summary.replays:
        print(f"\nCheck them with: arena replay verify {args.replays}/*.json")
    return 0


def cmd_replay_verify(args: argparse.Namespace) -> int:
    from arboretum import ReplayError, load_replay, verify_replay

    failures = 0
    for path in args.files:
        try:
            result = verify_replay(load_replay(path))
        except ReplayError as exc:
            failures += 1
            print(f"FAIL {path}: {exc}")
            continue
        totals = " ".join(str(t) for t in result.totals)
        print(f"ok   {path}: totals {totals}, winners {list(result.winners)}")
    if failures:
        print(f"{failures} of {len(args.files)} replays failed verification", file=sys.stderr)
        return 1
    return 0


def cmd_replay_show(args: argparse.Namespace) -> int:
    from arboretum import ReplayError, load_replay

    from .replay_text import render_replay

    try:
        print(render_replay(load_replay(args.file)))
    except ReplayError as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 1
    return 0


def build_parser(plugins: bool = True) -> argparse.ArgumentParser:
    """The whole command tree. With ``plugins=False`` only the SDK's own commands are there."""
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Arboretum Arena: the rules engine, bots, referee and league.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    groups: dict[str, Any] = {}

    if plugins and importlib.util.find_spec("arboretum_worker") is not None:
        from arboretum_worker.demo import add_arguments as league_demo_arguments

        p = sub.add_parser("demo", help="the main demo: a league of the built-in bots")
        league_demo_arguments(p)
    else:
        p = sub.add_parser("demo", help="the main demo (without the league: a simulation)")
        p.add_argument("--players", type=argtypes.players, default=2)
        p.add_argument("--games", type=argtypes.positive, default=200)
        p.add_argument("--seed", type=argtypes.seed, default=2026)
        p.add_argument(
            "--replays", type=Path, default=Path("replays/demo"), help="where replays go"
        )
    p.set_defaults(handler=cmd_demo)

    p = sub.add_parser(
        "simulate",
        help="play games in-process with the random policy",
        description="Play N games in-process with the built-in random policy, write their replays "
        "and print a summary. Game i uses the seed derived from --seed and i.",
    )
    p.add_argument("--players", type=argtypes.players, required=True, help="2, 3 or 4")
    p.add_argument("--games", type=argtypes.positive, required=True, help="number of games")
    p.add_argument("--seed", type=argtypes.seed, default=0, help="match seed (default 0)")
    p.add_argument("--replays", type=Path, help="directory for the replay files (optional)")
    p.set_defaults(handler=cmd_simulate)

    replay = sub.add_parser("replay", help="verify or show replay files")
    replay_sub = replay.add_subparsers(dest="replay_command", metavar="ACTION")
    replay_sub.required = True
    p = replay_sub.add_parser(
        "verify",
        help="re-play replay files through the engine",
        description="Re-play each file through the rules engine. Fails, naming the step, on any "
        "illegal step or any recorded card, hand or score that differs.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.set_defaults(handler=cmd_replay_verify)
    p = replay_sub.add_parser("show", help="print a replay turn by turn")
    p.add_argument("file", type=Path, metavar="FILE")
    p.set_defaults(handler=cmd_replay_show)

    bot = sub.add_parser("bot", help="run or submit bots")
    bot_sub = bot.add_subparsers(dest="bot_command", metavar="ACTION")
    bot_sub.required = True
    groups["bot"] = bot_sub
    _register_sdk_bot_commands(bot_sub)

    for module_name, distribution, commands in PLUGINS if plugins else ():
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            if exc.name and not module_name.startswith(exc.name.split(".")[0]):
                missing = exc.name
            else:
                missing = None
            for path, help_text in commands.items():
                _register_missing(sub, groups, path, help_text, distribution, missing)
            continue
        module.register(sub, groups)
    return parser


def _register_sdk_bot_commands(bot_sub: Any) -> None:
    try:
        from . import botcli
    except ImportError:
        return
    botcli.register(bot_sub)


def _register_missing(
    sub: Any, groups: dict[str, Any], path: str, help_text: str, dist: str, missing: str | None
) -> None:
    words = path.split()
    target = groups[words[0]] if len(words) > 1 else sub
    name = words[-1]
    why = f"the {missing!r} module is missing" if missing else f"{dist} is not installed"
    p = target.add_parser(name, help=f"{help_text} (needs {dist})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    def handler(_: argparse.Namespace) -> int:
        print(
            f"arena {path}: {why}. Install it with: pip install {dist}\n"
            f"(from a clone of the repository: pip install -e {_dist_dir(dist)})",
            file=sys.stderr,
        )
        return 2

    p.set_defaults(handler=handler)


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


def main(argv: Sequence[str] | None = None) -> int:
    # Before anything imports gRPC: the transport settings of the arena's processes.
    grpc_setup.apply()
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(plugins=needs_plugins(argv))
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
