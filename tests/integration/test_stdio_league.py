"""Bots in other languages in a real league: the three examples of docs/stdio-protocol.md
(Python without the SDK, JavaScript on Node.js, C compiled to a static binary), each a folder
with an ``arena.toml``, submitted with ``arena bot submit`` (the sandbox check plays one real
decision of each), then played in a league by ``arena worker`` processes, every bot in its
sandbox (bubblewrap where it works), against each other and the built-in ``random``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from arboretum import verify_replay
from arboretum_worker import registry, replays, store

from .conftest import Arena
from .test_league import CLOCK, submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def stdio_folders(into: Path) -> dict[str, Path]:
    """Copies of the example folders, the C bot built as its first line says."""
    if shutil.which("gcc") is None or shutil.which("node") is None:
        pytest.fail("the examples need gcc and node (Debian: apt-get install gcc libc6-dev nodejs)")
    folders = {}
    for name, folder in (("py", "python-stdio"), ("js", "javascript"), ("c", "c")):
        target = into / folder
        shutil.copytree(EXAMPLES / folder, target, ignore=shutil.ignore_patterns(".gitignore"))
        folders[name] = target
    build = ["gcc", "-O2", "-static", "-s", "-o", "cbot", "cbot.c"]
    assert (
        build == (folders["c"] / "cbot.c").read_text().split("Build: ")[1].split(" */")[0].split()
    )
    subprocess.run(build, cwd=folders["c"], check=True, timeout=120)
    (folders["c"] / "cbot.c").unlink()  # the binary alone is submitted
    return folders


def test_the_example_bots_are_submitted_and_play_a_league_in_the_sandbox(
    arena: Arena, tmp_path: Path
) -> None:
    r = arena.r
    folders = stdio_folders(tmp_path / "bots")
    for name, folder in folders.items():
        out = arena.run("bot", "submit", str(folder), "--name", f"stdio-{name}").stdout
        assert f"bot stdio-{name}: new version" in out
    submit_builtin(arena, "random")
    # The C bot's version holds its binary and manifest; materialised, the binary is executable.
    files = store.get_version_files(r, registry.latest(r, "stdio-c") or "")
    assert sorted(files) == ["arena.toml", "cbot"]
    assert registry.executable_file(files) == "cbot"
    copy = registry.materialise(r, registry.latest(r, "stdio-c") or "", tmp_path / "copy")
    assert (copy / "cbot").stat().st_mode & 0o777 == 0o555
    assert (copy / "arena.toml").stat().st_mode & 0o777 == 0o444

    arena.start_worker()
    arena.start_worker()
    arena.wait_workers(2)
    arena.run(
        "league", "create", "polyglot", "--bots", "stdio-py", "stdio-js", "stdio-c", "random",
        "--players", "2", "--games-per-pairing", "1", "--deals-per-series", "2", "--seed", "3",
        *CLOCK,
    )  # fmt: skip
    arena.run("league", "run", "polyglot")
    counts = arena.wait_league("polyglot", timeout=240)
    assert counts == {"finished": 12}, arena.worker_logs()

    names = {registry.latest(r, n): n for n in ("stdio-py", "stdio-js", "stdio-c", "random")}
    games = 0
    for match_id in store.league_matches(r, "polyglot"):
        record = store.get_match(r, match_id)
        assert record is not None
        for game in replays.replay_games(r, match_id):
            doc = json.loads(replays.get_replay(r, match_id, game) or b"{}")
            assert not [s for s in doc["steps"] if "fault" in s], (match_id, game)
            verify_replay(doc)
            games += 1
        for vid in record.seats:
            if names[vid] != "random":
                logs = arena.run("match", "logs", match_id, "--bot", names[vid]).stdout
                assert "started the bot's command" in logs, logs
    assert games == 12
    board = arena.run("leaderboard", "--league", "polyglot").stdout
    for name in ("stdio-py", "stdio-js", "stdio-c", "random"):
        assert name in board
