"""The conventions every ``arena`` command follows (``arboretum_sdk.clitools``), checked over the
whole command tree, so that a command added later is held to them too.

- every option and argument has help text; no help shows ``%%`` or reStructuredText markup;
- an option spelled the same in several commands has the same type, choices and default there
  (the exceptions are listed below, each with its reason);
- errors name the subcommand (its own usage) and are one ``arena:`` line; ``arena --version``;
- the README's command table lists every command;
- with the SDK alone (``pip install ./sdk``) the other distributions' commands, ``--help``
  included, say what to install.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from arboretum_sdk.cli import build_parser
from arboretum_sdk.clitools import plural

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk"

# (option, command) pairs whose default may differ from the other commands', and why.
OWN_DEFAULTS = {
    # The referee's flags override its environment (ARENA_PER_DECISION_MS, ...): no default of
    # their own, the settings have it (docs/referee.md).
    ("--per-decision-ms", "serve"): "arena serve reads its default from ARENA_PER_DECISION_MS",
    ("--bank-ms", "serve"): "arena serve reads its default from ARENA_BANK_MS",
    ("--faults-to-forfeit", "serve"): "arena serve reads its default from ARENA_FAULTS_TO_FORFEIT",
    ("--start-timeout-ms", "serve"): "arena serve reads its default from ARENA_START_TIMEOUT_MS",
    # `arena demo --port` is an option of --serve: given without it, it is refused.
    ("--port", "demo"): "arena demo takes --port only with --serve (unset: arena web's 8080)",
    # Each command writes its replays to a folder of its own.
    ("--replays", "demo"): "the demo's replays go to replays/demo",
    ("--replays", "play"): "arena play's replays go to replays/play",
    ("--replays", "simulate"): "arena simulate writes replays only when asked",
    ("--replays", "sprt"): "arena sprt keeps replays only when asked (a test plays thousands)",
    # `arena web author ... --redis-url` must not hide a value given before the action.
    ("--redis-url", "web author add"): "a value given to `arena web` is kept",
    ("--redis-url", "web author rotate"): "a value given to `arena web` is kept",
    ("--redis-url", "web author remove"): "a value given to `arena web` is kept",
    ("--redis-url", "web author list"): "a value given to `arena web` is kept",
    ("--redis-url", "web main-board"): "a value given to `arena web` is kept",
    ("--redis-url", "web audit-log"): "a value given to `arena web` is kept",
    # Required where the command cannot guess.
    ("--games", "simulate"): "arena simulate needs the number of games (required)",
    ("--players", "simulate"): "arena simulate needs the player count (required)",
}

# Options whose meaning differs by command, so their types may too, and why.
OWN_TYPES = {
    "--name": "a bot's name (submit), a worker's name (worker) or a display name (bot run)",
    "--server": "a referee address (play, bot run) or a web server URL (bot submit, the "
    "author's commands)",
    "--token": "a seat token (bot run) or an author token (bot submit, the author's commands)",
    "--token-file": "a seat token file (bot run) or an author token file (the author's commands)",
    "--bot": "a bot in a match (match logs)",
    "--league": "a league's name (leaderboard, ratings) or a flag: play on league workers (sprt)",
    "--games": "games (simulate) or deals in every seat rotation (play); both positive integers",
    "--follow": "a flag: wait for the end (challenge), or the id of a test to follow (sprt)",
}


def commands(
    parser: argparse.ArgumentParser | None = None, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command's parser, groups included, with its path (``("league", "create")``)."""
    parser = parser or build_parser()
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


def leaves() -> list[str]:
    out = []
    for path, parser in commands():
        if path and not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            out.append(" ".join(path))
    return out


def test_the_tree_has_the_commands_of_every_distribution() -> None:
    names = set(leaves())
    assert {"simulate", "replay verify", "play", "serve", "demo", "league create"} <= names
    assert {"web author add", "bot versions", "match logs", "bot run"} <= names


def test_every_option_and_argument_has_help_text() -> None:
    missing = []
    for path, parser in commands():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            if not action.help:
                missing.append(f"arena {' '.join(path)}: {action.option_strings or action.dest}")
    assert not missing, "options without help text:\n" + "\n".join(missing)


def test_help_renders_without_escapes_or_markup() -> None:
    for path, parser in commands():
        text = parser.format_help()
        where = f"arena {' '.join(path)} --help"
        assert "%%" not in text, where
        assert "``" not in text and not re.search(r"\*\*[A-Za-z][^*]*\*\*", text), where
        assert ":class:" not in text and ":func:" not in text, where


def test_options_spelled_alike_agree_everywhere() -> None:
    seen: dict[str, tuple[str, argparse.Action]] = {}
    problems = []
    for path, parser in commands():
        command = " ".join(path)
        for action in parser._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            option = max(action.option_strings, key=len)
            if option not in seen:
                seen[option] = (command, action)
                continue
            first_command, first = seen[option]
            if option not in OWN_TYPES:
                if action.type != first.type:
                    problems.append(f"{option}: type differs in {first_command!r} and {command!r}")
                if action.choices != first.choices:
                    problems.append(f"{option}: choices differ: {first_command!r}, {command!r}")
            own = (option, command) in OWN_DEFAULTS or (option, first_command) in OWN_DEFAULTS
            if not own and option not in OWN_TYPES and action.default != first.default:
                problems.append(
                    f"{option}: default {first.default!r} in {first_command!r} but "
                    f"{action.default!r} in {command!r}"
                )
    assert not problems, "\n".join(problems)


def test_seed_and_players_are_the_same_option_everywhere() -> None:
    """The two the issue found apart: random seeds by default, and 2, 3 or 4 players."""
    for path, parser in commands():
        for action in parser._actions:
            if "--seed" in action.option_strings:
                assert action.default is None, path  # a random seed, which the command prints
                assert "random" in (action.help or ""), path
            if "--players" in action.option_strings:
                assert action.choices is None, path
                assert action.type is not None and action.type("4") == 4, path
                with pytest.raises(argparse.ArgumentTypeError):
                    action.type("5")


def test_readme_table_lists_every_command() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The `arena` command", 1)[1].split("\n## ", 1)[0]
    listed: set[str] = set()
    for row in section.splitlines():
        if not row.startswith("| `arena"):
            continue
        cell = row.split("|")[1]
        for span in re.findall(r"`arena ([^`]*)`", cell):
            words = []
            for word in span.split():
                if word.startswith("-") or word.isupper() or word.startswith("["):
                    break
                words.append(word)
            *head, last = words
            for choice in last.split("/"):
                listed.add(" ".join([*head, choice]))
    missing = [leaf for leaf in leaves() if leaf not in listed and leaf.split()[0] not in listed]
    assert not missing, f"README's command table misses: {missing}"


def test_plural() -> None:
    assert plural(1, "deal") == "1 deal"
    assert plural(0, "deal") == "0 deals"
    assert plural(2, "match", "matches") == "2 matches"
    assert plural(1, "match", "matches") == "1 match"


def arena(
    *args: str, python: str = sys.executable, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [python, "-m", "arboretum_sdk.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=None if env is None else {**os.environ, **env},
    )


def test_version() -> None:
    done = arena("--version")
    assert done.returncode == 0, done.stderr
    assert re.match(r"arena \d+\.\d+\.\d+ \(engine \d", done.stdout), done.stdout


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["simulate", "--players", "2", "--games", "1", "--nosuch"], "usage: arena simulate"),
        (["league", "create", "x", "--bots", "a", "--nosuch"], "usage: arena league create"),
        (["match", "show"], "usage: arena match show"),
        (["league"], "usage: arena league"),
        (["replay", "verify", "--nosuch", "f.json"], "usage: arena replay verify"),
        (["play", "random", "greedy", "--games", "0"], "usage: arena play"),
    ],
)
def test_a_usage_error_shows_the_subcommands_usage_and_one_arena_line(
    args: list[str], usage: str
) -> None:
    done = arena(*args)
    assert done.returncode == 2
    assert done.stderr.startswith(usage), done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("arena: ")]
    assert len(errors) == 1, done.stderr
    assert "Traceback" not in done.stderr


def test_a_count_of_one_takes_the_singular() -> None:
    done = arena("play", "random", "--games", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.endswith("arena: Arboretum is played by 2, 3 or 4 players; got 1 bot\n")


BAD_PORT_URL = "redis://:secret@localhost:notaport/0"


@pytest.mark.parametrize(
    ("args", "env_url", "setting"),
    [
        (["league", "list"], "http://localhost:6379/0", "REDIS_URL"),
        (["league", "list", "--redis-url", BAD_PORT_URL], None, "--redis-url"),
        (["web", "author", "list"], BAD_PORT_URL, "REDIS_URL"),
        (["web", "author", "list", "--redis-url", "http://x"], None, "--redis-url"),
        (["worker", "--redis-url", "http://x"], None, "--redis-url"),
        (["web", "--redis-url", "http://x"], None, "--redis-url"),  # serving: before the app
        (["web"], "garbage", "REDIS_URL"),
    ],
)
def test_a_malformed_redis_url_is_called_malformed_naming_its_setting(
    args: list[str], env_url: str | None, setting: str
) -> None:
    done = arena(*args, env={"REDIS_URL": env_url} if env_url else {})
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"arena: {setting} is a malformed Redis URL ("), line
    assert "invalid league settings" not in line and "secret" not in line
    if "notaport" in line:
        assert line.endswith("): 'redis://:***@localhost:notaport/0'"), line


@pytest.fixture(scope="module")
def sdk_alone(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python environment with the SDK and its third-party packages, but none of the project's
    other distributions: as after ``pip install ./sdk``."""
    venv = tmp_path_factory.mktemp("sdk-alone") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The project's own site-packages holds grpcio and protobuf (and the dist-info of the SDK);
    # a path listed in a .pth file is added as it is, without running the .pth files inside it,
    # so the editable installs of the server, the league and the web app are not seen.
    packages = sysconfig.get_paths()["purelib"]
    Path(site, "sdk-alone.pth").write_text(f"{SDK}\n{packages}\n")
    probe = subprocess.run(
        [str(python), "-c", "import arboretum_sdk, grpc; import arboretum_server"],
        capture_output=True,
        text=True,
    )
    assert "No module named 'arboretum_server'" in probe.stderr, probe.stderr
    return str(python)


@pytest.mark.parametrize(
    ("args", "dist"),
    [
        (["play", "--help"], "arboretum-server"),
        (["play", "random", "greedy"], "arboretum-server"),
        (["serve", "--help"], "arboretum-server"),
        (["web", "--help"], "arboretum-web"),
        (["league", "--help"], "arboretum-league"),
        (["league", "create", "x", "--bots", "a"], "arboretum-league"),
        (["demo"], "arboretum-league"),
        (["bot", "versions", "x"], "arboretum-league"),
    ],
)
def test_with_the_sdk_alone_other_commands_say_what_to_install(
    sdk_alone: str, args: list[str], dist: str
) -> None:
    done = arena(*args, python=sdk_alone)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("arena: "), done.stderr
    assert f"pip install {dist}" in lines[0]
    if args[0] == "demo":
        assert "arena simulate" in lines[0]


def test_with_the_sdk_alone_its_own_commands_work(sdk_alone: str, tmp_path: Path) -> None:
    done = arena("simulate", "--players", "2", "--games", "2", "--seed", "3", python=sdk_alone)
    assert done.returncode == 0, done.stderr
    assert "2 games, 2 players" in done.stdout and "seed 3" in done.stdout
    assert arena("bot", "list", python=sdk_alone).returncode == 0
    top = arena("--help", python=sdk_alone)
    assert top.returncode == 0 and "needs arboretum-server" in top.stdout
    assert os.path.exists(sdk_alone)
