"""``arena web`` inside the SDK's ``arena`` command, registered through its PLUGINS list."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from arboretum_sdk import cli as sdk_cli
from arboretum_web import cli


def test_arena_web_is_registered_through_the_plugins_list() -> None:
    assert any(module == "arboretum_web.cli" for module, _, _ in sdk_cli.PLUGINS)
    parser = sdk_cli.build_parser()
    args = parser.parse_args(["web", "--host", "0.0.0.0", "--port", "8080"])
    assert args.handler is cli.cmd_serve
    assert (args.host, args.port, args.redis_url) == ("0.0.0.0", 8080, None)
    args = parser.parse_args(["web", "--redis-url", "redis://x:1/0", "author", "add", "ann"])
    assert args.handler is cli.cmd_author_add
    assert (args.name, args.redis_url) == ("ann", "redis://x:1/0")


def test_a_bot_process_does_not_load_the_other_distributions() -> None:
    """`arena bot run` must start fast: it parses without importing the referee or the league."""
    assert not sdk_cli.needs_plugins(["bot", "run", "greedy", "--server", "unix:/x"])
    assert not sdk_cli.needs_plugins(["-v", "replay", "verify", "a.json"])
    assert sdk_cli.needs_plugins(["bot", "submit", "x.py", "--name", "x"])
    assert sdk_cli.needs_plugins(["web"])
    assert sdk_cli.needs_plugins([])
    parser = sdk_cli.build_parser(plugins=False)
    args = parser.parse_args(["bot", "run", "greedy", "--server", "unix:/x", "--token", "t"])
    assert args.bot == "greedy"
    # ... and in a fresh interpreter, no module of the other distributions gets imported
    code = (
        "import sys\n"
        "from arboretum_sdk import cli\n"
        "cli.build_parser(plugins=cli.needs_plugins(['bot', 'run', 'greedy']))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('arboretum_worker', 'arboretum_server', 'arboretum_web')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_command_registers_only_the_plugin_that_owns_it() -> None:
    """`arena league run` builds the league's commands only (not the referee's nor the web's);
    help, the `bot` group several plugins fill, and an unknown word get them all."""
    owners = {
        ("league", "run", "x"): ["arboretum_worker.cli"],
        ("leaderboard", "--league", "x"): ["arboretum_worker.cli"],
        ("web", "--port", "1"): ["arboretum_web.cli"],
        ("serve",): ["arboretum_server.cli"],
        ("bot", "run", "greedy"): [],
    }
    for argv, modules in owners.items():
        assert [p[0] for p in sdk_cli.plugins_for(argv)] == modules, argv
    everyone = [p[0] for p in sdk_cli.PLUGINS]
    for argv in ([], ["-v", "league", "run"], ["bot", "versions", "x"], ["leagu"]):
        assert [p[0] for p in sdk_cli.plugins_for(argv)] == everyone, argv
    code = (
        "import sys\n"
        "from arboretum_sdk import cli\n"
        "cli.build_parser(plugins=cli.plugins_for(['league', 'run', 'x']))"
        ".parse_args(['league', 'run', 'x'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('arboretum_server', 'arboretum_web') and m.endswith('cli')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_command_builds_only_the_group_it_names() -> None:
    """`arena league run` builds the `league` group with its `run` action only, and no other
    command (neither `match`, `sprt`, `demo` nor the SDK's `bot`, nor the ladder's and the
    audit's actions: their modules are not even imported); `arena --help` still lists every
    command."""
    everything = sdk_cli.build_parser()
    commands = _choices(everything)
    code = (
        "import contextlib, io, json, sys\n"
        "from arboretum_sdk import cli\n"
        "argv = ['league', 'run', 'x']\n"
        "parser = cli.build_parser(plugins=cli.plugins_for(argv), only=cli.command_of(argv), "
        "action=cli.action_of(argv))\n"
        "parser.parse_args(argv)\n"
        "modules = sorted(sys.modules)\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'])\n"
        "group = parser._subparsers._group_actions[0].choices['league']\n"
        "print(json.dumps([list(parser._subparsers._group_actions[0].choices), "
        "list(group._subparsers._group_actions[0].choices), modules, out.getvalue()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    built, actions, modules, help_text = json.loads(out.stdout)
    assert built == ["league"]
    assert actions == ["run"]
    for parser_only in (
        "match_cli",
        "output_cli",
        "sprt.cli",
        "demo",
        "bot_cli",
        "ladder.cli",
        "audit.cli",
    ):
        assert f"arboretum_worker.{parser_only}" not in modules
    assert "arboretum_sdk.botcli" not in modules
    league = sdk_cli.build_parser(only="league")
    assert list(_choices(_choices(league)["league"])) == list(_choices(commands["league"]))
    for word in ("bogus", "--help"):  # an unknown action, or none: every action, for the error
        league = sdk_cli.build_parser(only="league", action=word)
        assert list(_choices(_choices(league)["league"])) == list(_choices(commands["league"]))
    assert all(f"\n    {name} " in help_text for name in commands), help_text
    assert {"simulate", "bot", "challenge", "serve", "web", "match", "sprt"} < set(commands)


def test_each_league_action_alone_parses_as_in_the_whole_tree() -> None:
    """The league group's table of actions (`league_cli`) names every action of the whole tree,
    in its order; each action built alone is that action only, and reads a command line as the
    whole tree does."""
    from arboretum_worker import league_cli

    whole = _choices(_choices(sdk_cli.build_parser())["league"])
    table = (*league_cli.OWN_ACTIONS, *league_cli.LADDER_ACTIONS, *league_cli.AUDIT_ACTIONS)
    assert list(whole) == list(table)
    samples = {
        "create": ["x", "--bots", "a", "b", "--ladder", "--depth", "4"],
        "join": ["x", "a", "--server", "http://127.0.0.1:1"],
        "leave": ["x", "a"],
        "open": ["x", "--off"],
        "audit": ["x", "--level", "0.1"],
    }
    for action in table:
        argv = ["league", action, *samples.get(action, ["x"] if action != "list" else [])]
        assert sdk_cli.action_of(argv) == action
        alone = sdk_cli.build_parser(only="league", action=action)
        assert list(_choices(_choices(alone)["league"])) == [action]
        whole_args = vars(sdk_cli.build_parser().parse_args(argv))
        alone_args = vars(alone.parse_args(argv))
        for args in (whole_args, alone_args):  # a ladder action's handler is made per parser
            args["handler"] = args["handler"].__qualname__
        assert alone_args == whole_args, action
    assert sdk_cli.action_of(["league", "--help"]) is None
    assert sdk_cli.action_of(["league"]) is None
    assert sdk_cli.action_of(["bot", "run", "greedy"]) is None  # `bot`: no command_of


def _choices(parser: Any) -> dict[str, Any]:
    """A parser's subcommands by name."""
    return dict(parser._subparsers._group_actions[0].choices)


def _web(*args: str, temp: Path, **kwargs: Any) -> Any:
    """``arena web`` as a process, with the environment's ARENA_ settings removed and its
    temporary folder ``temp``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["TMPDIR"] = str(temp)
    command = [sys.executable, "-m", "arboretum_sdk.cli", "web", *args]
    return subprocess.Popen(command, env=env, text=True, **kwargs)


def test_a_port_in_use_is_one_line_before_any_banner(redis_server_url: str, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as held:
        port = held.getsockname()[1]
        proc = _web(
            "--port",
            str(port),
            "--redis-url",
            redis_server_url,
            temp=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert err == f"arena: cannot listen on 127.0.0.1:{port}: the address is in use\n"
    assert out == ""
    assert list(tmp_path.iterdir()) == []


def test_the_banner_comes_once_the_port_is_bound(redis_server_url: str, tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    proc = _web(
        "--port",
        str(port),
        "--redis-url",
        redis_server_url,
        temp=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        if banner.startswith("arena web: indexed "):  # matches stored before their indexes
            banner = proc.stdout.readline()
        assert (
            banner == f"arena web: serving on http://127.0.0.1:{port}/ (Redis {redis_server_url})\n"
        )
        # bound when the banner is out: a connection is accepted (queued) at once, and served
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            conn.sendall(b"GET /api/v1/bots HTTP/1.0\r\nHost: x\r\n\r\n")
            conn.settimeout(30)
            assert conn.recv(64).startswith(b"HTTP/1.1 200")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
