"""``arena.toml``: every mistake in a manifest is refused with a message naming it, wherever a
bot is loaded (``arena bot run``, ``arena play``) or submitted (the league's check); a version
with a manifest needs no ``bot.py`` and materialises its program executable."""

from __future__ import annotations

from pathlib import Path

import pytest

from arboretum_sdk.errors import BotLoadError
from arboretum_sdk.loader import load_bot
from arboretum_sdk.stdio import StdioBot, read_manifest
from arboretum_sdk.stdio.manifest import check_command, command_name
from arboretum_worker import registry
from arboretum_worker.check import check_bot


def folder(tmp_path: Path, manifest: str | bytes, *files: str) -> Path:
    bot = tmp_path / "mybot"
    bot.mkdir()
    raw = manifest if isinstance(manifest, bytes) else manifest.encode()
    (bot / "arena.toml").write_bytes(raw)
    for name in files:
        (bot / name).parent.mkdir(parents=True, exist_ok=True)
        (bot / name).write_text("x")
    return bot


BAD = [
    (
        'command = "node bot.js"\nlanguage = "js"\n',
        (),
        "unknown key 'language' (the one key is command",
    ),
    ('cmd = "node bot.js"\nrun = 1\n', (), "unknown keys 'cmd', 'run'"),
    ("", (), 'no command; write for example command = "node bot.js"'),
    ("command = ['node', 'bot.js']\n", (), "command must be a string"),
    ('command = ""\n', (), "the command is empty"),
    ("command = 'node \"bot.js'\n", (), "the command cannot be split into words"),
    ('command = "node bot.js\n', (), "is not valid TOML"),
    (b'command = "\xff"\n', (), "is not UTF-8 text"),
    ('command = "./bot"\n', (), "the program './bot' is not a file of the folder"),
    ('command = "../other/bot"\n', (), "the program '../other/bot' is outside the bot's folder"),
    (
        'command = "bot"\n',
        ("bot",),
        "is not a program of the runtime (the folder has a file 'bot': write ./bot)",
    ),
    (
        'command = "nodejs-nowhere x.js"\n',
        (),
        "the program 'nodejs-nowhere' is not a program of the runtime",
    ),
    ('command = "/nowhere/node"\n', (), "the program '/nowhere/node' does not exist"),
]


@pytest.mark.parametrize(("text", "files", "message"), BAD)
def test_a_bad_manifest_is_refused_naming_the_problem(
    tmp_path: Path, text: str, files: tuple[str, ...], message: str
) -> None:
    bot = folder(tmp_path, text, *files)
    with pytest.raises(BotLoadError) as caught:
        read_manifest(bot)
    assert str(caught.value).startswith("mybot/arena.toml: ")
    assert message in str(caught.value)
    with pytest.raises(BotLoadError, match=r"arena\.toml"):
        load_bot(str(bot))
    verdict = check_bot(bot)  # refused before any sandbox starts
    assert not verdict.ok and verdict.error is not None and message in verdict.error


def test_good_manifests(tmp_path: Path) -> None:
    bot = folder(tmp_path, "command = \"'./bin/my bot' --fast\"\n", "bin/my bot")
    manifest = read_manifest(bot)
    assert manifest.argv == ("./bin/my bot", "--fast")
    loaded = load_bot(str(bot))
    assert isinstance(loaded, StdioBot) and loaded.cwd == bot.resolve()
    assert loaded.argv == ("./bin/my bot", "--fast") and loaded.pid is None, "not started yet"
    assert command_name(("node", "bot.js")) == "bot.js" and command_name(("./cbot",)) == "cbot"
    assert check_command("python3 x.py", tmp_path) == ("python3", "x.py")
    with pytest.raises(BotLoadError, match="is not a file"):
        check_command("./missing", tmp_path)
    with pytest.raises(BotLoadError, match="not found on PATH"):
        load_bot("cmd:no-such-program-anywhere")


def test_a_version_with_a_manifest_needs_no_bot_py_and_its_program_is_executable(
    tmp_path: Path,
) -> None:
    files = {"arena.toml": b'command = "./bin/cbot"\n', "bin/cbot": b"\x7fELF..."}
    assert registry.canonical_files(files) == files
    assert registry.executable_file(files) == "bin/cbot"
    with pytest.raises(registry.RegistryError, match=r"or an 'arena\.toml' naming its command"):
        registry.canonical_files({"helpers.py": b""})
    assert registry.executable_file({"arena.toml": b'command = "node bot.js"\n'}) is None
    assert registry.executable_file({"arena.toml": b"command = [1]"}) is None
    assert registry.executable_file({"arena.toml": b"not toml ="}) is None
    target = tmp_path / "v"
    registry._write_files(files, target, read_only=True)
    assert (target / "bin" / "cbot").stat().st_mode & 0o777 == 0o555
    assert (target / "arena.toml").stat().st_mode & 0o777 == 0o444
    writable = tmp_path / "w"
    registry._write_files(files, writable, read_only=False)
    assert (writable / "bin" / "cbot").stat().st_mode & 0o777 == 0o755


def test_arena_bot_run_takes_a_bot_or_a_command_and_names_a_bad_one(tmp_path: Path) -> None:
    import subprocess
    import sys

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "arboretum_sdk.cli", "bot", "run", *args],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "ARENA_TOKEN": "t"},
        )

    neither = run("--server", "127.0.0.1:1")
    assert neither.returncode == 2 and "give either BOT or --cmd COMMAND" in neither.stderr
    both = run("random", "--cmd", "node bot.js", "--server", "127.0.0.1:1")
    assert both.returncode == 2 and "give either BOT or --cmd COMMAND" in both.stderr
    missing = run("--cmd", "./nothing here", "--server", "127.0.0.1:1")
    assert missing.returncode == 2
    assert "arena: cmd:./nothing here: the program './nothing' is not a file" in missing.stderr
    bad = folder(tmp_path, 'command = "node bot.js"\nextra = 1\n')
    refused = run(str(bad), "--server", "127.0.0.1:1")
    assert refused.returncode == 2 and "unknown key 'extra'" in refused.stderr


def test_a_node_child_gets_a_heap_limit_under_the_memory_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import resource

    from arboretum_sdk.stdio import child

    env: dict[str, str] = {}
    monkeypatch.setattr(resource, "getrlimit", lambda _: (512 << 20, 512 << 20))
    child.node_heap_option(env)
    assert env == {"NODE_OPTIONS": "--max-old-space-size=409"}
    mine = {"NODE_OPTIONS": "--max-old-space-size=100"}
    child.node_heap_option(mine)
    assert mine == {"NODE_OPTIONS": "--max-old-space-size=100"}, "the author's own is kept"
    bot = StdioBot(["node", "bot.js"], env={"ARENA_TOKEN": "secret", "PATH": "/usr/bin"})
    assert bot._env == {"PATH": "/usr/bin", "NODE_OPTIONS": "--max-old-space-size=409"}
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY,) * 2)
    unlimited: dict[str, str] = {}
    child.node_heap_option(unlimited)
    assert unlimited == {}
