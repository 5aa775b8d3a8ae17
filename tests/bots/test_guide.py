"""docs/writing-a-bot.md works as written: every shell command of the guide is run here.

The guide's fenced ``sh`` blocks are read line by line, in order, and run in an empty temporary
folder, with the project's ``.venv/bin`` first on PATH, against real parts: the referee that
``arena play`` starts, a real ``redis-server`` (``tests/redis_server.py``) for
``arena bot submit``, the real sandbox check. The guide's ``python`` blocks whose first line is
``# NAME.py`` are written to that folder first (the reader saves them as told).

- A line ending in a comment ``# not run by the tests: REASON`` is skipped; the reason must be
  given. Nothing else is skipped.
- ``pip install PATH...`` lines are not installed again (the project's .venv already holds the
  packages; a fresh venv would need the network and minutes): they run as
  ``pip install --dry-run --no-deps --no-build-isolation PATH...`` on copies of the clone's
  ``sdk/``, ``server/`` and ``worker/``, which checks that the paths are installable.
- ``REDIS_URL`` points at the test's own redis-server (the guide's ``export`` of a league
  address is one of the skipped lines).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arboretum import derive_game_seed
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.loader import load_bot
from arboretum_sdk.local import play_game
from redis_server import find_redis_server, start_redis_server, stop_redis_server

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "writing-a-bot.md"
NOT_RUN = "# not run by the tests:"
VENV_BIN = Path(sys.executable).parent
COMMAND_TIMEOUT_S = 300


def sh_lines(text: str) -> list[str]:
    """The lines of every ```sh block, in order (continuation lines joined)."""
    lines: list[str] = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        pending = ""
        for raw in block.splitlines():
            line = pending + raw
            if line.endswith("\\"):
                pending = line[:-1] + " "
                continue
            pending = ""
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append(line.strip())
    return lines


def python_files(text: str) -> dict[str, str]:
    """The ```python blocks whose first line is ``# NAME.py``: file name -> content."""
    files = {}
    for first, body in re.findall(r"^```python\n# (\S+\.py)\n(.*?)^```", text, re.S | re.M):
        files[first] = f"# {first}\n{body}"
    return files


def split_skip(line: str) -> tuple[str, str | None]:
    """(command, reason it is not run, or None)."""
    if NOT_RUN in line:
        command, reason = line.split(NOT_RUN, 1)
        return command.strip(), reason.strip()
    return line, None


def test_guide_marks_every_skipped_command_with_a_reason() -> None:
    lines = sh_lines(GUIDE.read_text())
    assert len(lines) >= 10
    run = []
    for line in lines:
        command, reason = split_skip(line)
        if reason is None:
            run.append(command)
            # Every command runs in its own shell: state would not carry over.
            assert not re.match(r"(cd|export|source|\.)\s", command), line
        else:
            assert reason, f"a skipped command needs a reason: {line}"
    assert any(c.startswith("arena play mybot.py greedy --games 5 --seed 1") for c in run)
    assert any(c.startswith("arena bot submit") for c in run)
    assert any(c.startswith("arena replay verify") for c in run)
    assert any(c.startswith("arena replay show") for c in run)


def test_guide_links_the_runtime_and_protocol_docs() -> None:
    text = GUIDE.read_text()
    for target in ("bot-runtime.md", "protocol.md", "replay-format.md", "RULES.md"):
        assert f"]({target})" in text, target
        assert (ROOT / "docs" / target).is_file(), target


def test_guide_bots_load_and_play(tmp_path: Path) -> None:
    """The example bots load like a submitted bot and play a legal in-process game."""
    files = python_files(GUIDE.read_text())
    assert {"mybot.py", "searchbot.py"} <= set(files)
    for name, content in files.items():
        path = tmp_path / name
        path.write_text(content)
        bot = load_bot(str(path))
        result = play_game([bot, GreedyBot()], derive_game_seed(11, 0))  # validates every answer
        assert len(result.totals) == 2


@pytest.fixture
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if find_redis_server() is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    url, process = start_redis_server(tmp_path_factory.mktemp("redis"), appendonly=False)
    try:
        yield url
    finally:
        stop_redis_server(process)


def _copy_sources(into: Path) -> None:
    """Copies of the distributions the guide installs, as ./sdk, ./server, ./worker."""
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist", "*.pyc")
    for name in ("sdk", "server", "worker"):
        shutil.copytree(ROOT / name, into / name, ignore=ignore, symlinks=True)


DRY_RUN = "pip install --dry-run --no-deps --no-build-isolation "


def _as_run(command: str) -> str:
    if command.startswith("pip install "):
        return DRY_RUN + command.removeprefix("pip install ")
    return command


EXPECTED = {
    "arena bot list": ["random", "greedy", "search", "lookahead", "expert"],
    "arena play mybot.py greedy": ["10 games (5 deals x 2 seat rotations), seed 1", "mybot"],
    "arena play searchbot.py": ["searchbot", "mybot"],
    "arena play mybot.py expert": ["expert", "mybot"],
    "ARENA_COMPUTE=fixed arena play mybot.py lookahead": ["lookahead", "mybot"],
    "arena replay verify": ["ok "],
    "arena replay show": ["seat 0"],
    "arena bot submit": ["bot mybot: new version"],
    "arena bot versions": ["submitted (UTC)"],
    "pip install": ["Would install"],
}


@pytest.mark.integration
def test_guide_commands_run(tmp_path: Path, redis_url: str) -> None:
    text = GUIDE.read_text()
    work = tmp_path / "work"
    work.mkdir()
    _copy_sources(work)
    for name, content in python_files(text).items():
        (work / name).write_text(content)
    env = dict(os.environ)
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(VENV_BIN.parent),
        REDIS_URL=redis_url,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INDEX="1",  # the dry runs must not need the network
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("PYTHONHOME", None)
    ran = 0
    for line in sh_lines(text):
        command, reason = split_skip(line)
        if reason is not None:
            continue
        proc = subprocess.run(
            ["bash", "-c", f"set -euo pipefail; {_as_run(command)}"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        output = proc.stdout + proc.stderr
        assert proc.returncode == 0, f"{command!r} failed ({proc.returncode}):\n{output[-4000:]}"
        for prefix, needles in EXPECTED.items():
            if command.startswith(prefix):
                for needle in needles:
                    assert needle in output, f"{command!r}: {needle!r} not in\n{output[-4000:]}"
        ran += 1
    assert ran >= 10
    # What the commands left behind: the replays of each `arena play`, all verified above.
    assert list((work / "replays" / "play").glob("*/game-*.json"))
    assert list((work / "replays" / "tip").glob("*/game-*.json"))
