"""``arena web`` inside the SDK's ``arena`` command, registered through its PLUGINS list."""

from __future__ import annotations

import subprocess
import sys

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
