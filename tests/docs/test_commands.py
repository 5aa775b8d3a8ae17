"""Every shell command shown in README.md and docs/ works as written: each is run here.

Every ```sh (or ```bash / ```shell) block of README.md and of every Markdown file under docs/ is
found automatically, so a new page is covered as soon as it exists. A page's blocks run in order,
each as one bash script (``set -euo pipefail``: ``export``, ``cd`` and ``&`` carry through the
block), in a folder of the page's own, against real parts: the project's .venv first on PATH, a
real ``redis-server`` of the test's own in ``REDIS_URL``, real workers and referees where a page
starts them. Processes a block leaves in the background (``arena worker &``) are stopped when the
page is done.

- **Not run, with the reason printed.** A line whose comment holds ``not run by the tests:
  REASON`` is left out; an HTML comment ``<!-- not run by the tests: REASON -->`` on the line
  before a block leaves out the whole block. Each such line or block is its own test, reported
  as skipped with its reason (``pytest -ra`` prints them). Nothing else is left out, and a reason
  must be given.
- **The page's folder** holds every ```python block of the docs whose first line is
  ``# NAME.py`` (docs/writing-a-bot.md's ``mybot.py``, ...), ``scripts`` (a link to the
  repository's), and copies of ``sdk/``, ``server/``, ``worker/``, ``web/`` for ``pip install
  ./sdk``-style lines, which run as ``pip install --dry-run --no-deps`` (the .venv holds the
  packages already; a real install would need the network and minutes).
- **Pages with a runner of their own** (:data:`OWN_RUNNER`) are run there, with the same marker.
- A fenced block without a language whose lines look like commands fails the test: label it
  ``sh`` (and mark what cannot run), or ``text`` for a synopsis.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from redis_server import find_redis_server, start_redis_server, stop_redis_server

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
MARKER = "not run by the tests:"
BLOCK_MARKER = re.compile(r"<!--\s*not run by the tests:\s*(.*?)\s*-->")
SHELL = ("sh", "bash", "shell")
COMMAND_LIKE = re.compile(
    r"^\s*(\$ )?(arena|pip|python3?|scripts/|docker|docker-compose|curl|export|git|cd|rq) "
)
PAGE_TIMEOUT_S = 900

OWN_RUNNER = {
    "docs/writing-a-bot.md": "tests/bots/test_guide.py runs it, checking what each command prints",
    "docs/stdio-protocol.md": "tests/stdio/test_protocol_doc.py runs it in a folder holding the "
    "page's three example bots, and checks every game it plays",
}
"""Pages whose commands another test runs (with this file's marker convention), and which."""

EXPECTED: dict[str, dict[str, list[str]]] = {
    "README.md": {
        "scripts/demo": ["win share", "replays in replays/demo/"],
        "arena replay verify": ["ok "],
        "arena replay show": ["scoring:"],
        "arena simulate": ["100 games, 4 players", "seed 7"],
    },
    "docs/league.md": {
        "arena bot submit mybot.py": ["bot mybot: new version"],
        "arena league create spring": ["registered built-in bot greedy", "league spring: 3 bots"],
        "arena league create summer": ["ladder summer: 3 bots"],
        "arena league status summer": ["versions (", "scheduled"],
        "arena bot submit mybot2.py": ["it enters ladder summer"],
        "arena league join summer": ["lookahead@"],
        "arena league open summer": ["ladder summer: open to authors"],
        "arena league leave summer": ["lookahead@", "left"],
        "arena league close summer": ["ladder summer: closed"],
        "arena league status spring --watch": ["(100%)"],
        "arena leaderboard --league spring": ["mybot", "greedy", "random"],
        "arena ratings --league spring": ["fit of", "head to head"],
        "arena match logs": ["[match "],
        "arena match replay": ["wrote game.json"],
        "arena match rerun": ["identical: every game re-ran decision for decision"],
        "arena league cancel spring": [
            "arena: league spring is finished already; there is nothing to cancel"
        ],
    },
}
"""What some commands must print (a command is matched by the start of its line)."""


# --------------------------------------------------------------------------- reading the docs


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def name_of(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


@dataclass
class Block:
    page: str
    line: int
    """The line of the opening fence (1-based)."""
    lang: str
    text: str
    skipped: str | None = None
    """The reason of a ``<!-- not run by the tests: ... -->`` before the block."""


FENCE = re.compile(r"^```(\S*)\s*$")


def blocks(page: Path) -> list[Block]:
    lines = page.read_text().splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, lang = i, match.group(1)
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        before = lines[start - 1] if start > 0 else ""
        marker = BLOCK_MARKER.search(before)
        found.append(
            Block(
                name_of(page), start + 1, lang, "\n".join(body), marker.group(1) if marker else None
            )
        )
        i += 1
    return found


@dataclass
class Command:
    line: int
    text: str
    """As written, continuation lines joined (the marker comment kept)."""
    skipped: str | None = None


def commands(block: Block) -> list[Command]:
    out: list[Command] = []
    pending, first = "", 0
    for offset, raw in enumerate(block.text.splitlines(), block.line + 1):
        if not pending:
            first = offset
        line = pending + raw
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        reason = None
        if MARKER in line:
            before, reason = line.split(MARKER, 1)
            reason = reason.strip()
            if before.rstrip().endswith("(") and reason.endswith(")"):
                reason = reason[:-1].rstrip()  # "... (not run by the tests: REASON)"
        out.append(Command(first, line.strip(), reason))
    return out


def python_files() -> dict[str, str]:
    """The ```python blocks of the docs whose first line is ``# NAME.py``."""
    files: dict[str, str] = {}
    for page in pages():
        for block in blocks(page):
            first = block.text.partition("\n")[0]
            name = re.fullmatch(r"# (\S+\.py)", first.strip())
            if block.lang == "python" and name:
                files[name.group(1)] = block.text + "\n"
    return files


def shell_blocks(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.lang in SHELL]


def all_skips() -> list[tuple[str, str]]:
    """(where, reason) of every line or block left out, on the pages this file runs."""
    found = []
    for page in pages():
        if name_of(page) in OWN_RUNNER:
            continue
        for block in shell_blocks(page):
            if block.skipped is not None:
                found.append((f"{block.page}:{block.line}", block.skipped))
                continue
            for command in commands(block):
                if command.skipped is not None:
                    found.append((f"{block.page}:{command.line}", command.skipped))
    return found


# --------------------------------------------------------------------------- checks of the docs


def test_every_page_is_found_and_the_known_ones_have_commands() -> None:
    names = [name_of(p) for p in pages()]
    assert "README.md" in names and "docs/league.md" in names and "docs/writing-a-bot.md" in names
    for name in ("README.md", "docs/league.md"):
        assert shell_blocks(ROOT / name), name


def test_every_left_out_command_says_why() -> None:
    for page in pages():
        for block in shell_blocks(page):
            if block.skipped is not None:
                assert block.skipped, f"{block.page}:{block.line}: a block left out needs a reason"
            for command in commands(block):
                if command.skipped is not None:
                    assert command.skipped, f"{block.page}:{command.line}: give the reason"
        # A marker anywhere else (prose, an unlabelled block) would leave nothing out: refuse it.
        shells = shell_blocks(page)
        placed = sum(b.text.count(MARKER) for b in shells) + sum(
            b.skipped is not None for b in shells
        )
        assert page.read_text().count(MARKER) == placed, (
            f"{name_of(page)}: a '{MARKER}' marker outside a shell block and its line before"
        )


def test_commands_are_in_labelled_blocks() -> None:
    """A block that shows commands says it is shell (``sh``), so that it is run."""
    for page in pages():
        for block in blocks(page):
            if block.lang:
                continue
            looks = [line for line in block.text.splitlines() if COMMAND_LIKE.match(line)]
            assert not looks, (
                f"{block.page}:{block.line}: a block of commands without a language "
                f"(label it sh, or text for a synopsis): {looks[0]!r}"
            )


def test_a_page_with_its_own_runner_names_it() -> None:
    for page, runner in OWN_RUNNER.items():
        assert (ROOT / page).is_file(), page
        path = runner.split()[0]
        assert (ROOT / path).is_file(), runner


@pytest.mark.parametrize(
    ("where", "reason"), all_skips() or [("-", "")], ids=lambda value: str(value)[:60]
)
def test_left_out(where: str, reason: str) -> None:
    """One skipped test per line or block left out, so that each reason is printed."""
    if where == "-":
        return
    pytest.skip(f"{where}: not run by the tests: {reason}")


# --------------------------------------------------------------------------- running them


@pytest.fixture
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of the page's own: each page starts from an empty league."""
    if find_redis_server() is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    url, process = start_redis_server(tmp_path_factory.mktemp("redis"), appendonly=False)
    try:
        yield url
    finally:
        stop_redis_server(process)


DRY_RUN = "pip install --dry-run --no-deps --no-build-isolation "


def as_run(command: Command) -> str:
    text = command.text
    if text.startswith("pip install "):
        return DRY_RUN + text.removeprefix("pip install ")
    return text


def script_of(page: str) -> tuple[str, list[Command]]:
    """The page's runnable commands as one bash script, each announced by a marker line."""
    lines = ["set -euo pipefail"]
    run: list[Command] = []
    for block in shell_blocks(ROOT / page):
        if block.skipped is not None:
            continue
        for command in commands(block):
            if command.skipped is not None:
                continue
            lines.append(f"printf '\\n@@command {len(run)}@@\\n'")
            lines.append(as_run(command))
            run.append(command)
    lines.append(f"printf '\\n@@command {len(run)}@@\\n'")
    return "\n".join(lines) + "\n", run


def prepare(work: Path) -> None:
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("*.egg-info", "__pycache__", "build", "dist", "*.pyc")
    for name in ("sdk", "server", "worker", "web"):
        shutil.copytree(ROOT / name, work / name, ignore=ignore, symlinks=True)
    (work / "scripts").symlink_to(ROOT / "scripts")
    for name, content in python_files().items():
        (work / name).write_text(content)


def stop_group(process: subprocess.Popen[str]) -> None:
    """Stop what the page left running (its process group): TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.killpg(process.pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)


RUN_PAGES = [name_of(p) for p in pages() if name_of(p) not in OWN_RUNNER and shell_blocks(p)]


@pytest.mark.integration
@pytest.mark.timeout(PAGE_TIMEOUT_S + 60)
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_commands_of_a_page_run(page: str, tmp_path: Path, redis_url: str) -> None:
    script, run = script_of(page)
    if not run:
        pytest.skip(f"{page}: every command is left out (their reasons are reported)")
    work = tmp_path / "work"
    prepare(work)
    env = dict(os.environ)
    env.update(
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(VENV_BIN.parent),
        REDIS_URL=redis_url,
        ARENA_MATCH_ROOT=str(Path(tmp_path.anchor, "tmp") / f"dm-{os.getpid()}"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INDEX="1",  # the dry runs must not need the network
        PYTHONUNBUFFERED="1",
    )
    env.pop("PYTHONHOME", None)
    log = tmp_path / "output.txt"
    # The output goes to a file: what a page leaves in the background keeps a pipe open.
    with log.open("w") as sink:
        process = subprocess.Popen(
            ["bash", "-c", script],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    try:
        process.wait(timeout=PAGE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        stop_group(process)
        process.wait()
        pytest.fail(
            f"{page}: the commands took more than {PAGE_TIMEOUT_S} s:\n{log.read_text()[-4000:]}"
        )
    finally:
        stop_group(process)
        shutil.rmtree(env["ARENA_MATCH_ROOT"], ignore_errors=True)
    output = log.read_text(errors="replace")
    parts = re.split(r"\n@@command (\d+)@@\n", "\n" + output)
    outputs = {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    reached = max(outputs, default=-1)
    if process.returncode != 0:
        failed = run[min(reached, len(run) - 1)]
        pytest.fail(
            f"{page}:{failed.line}: {failed.text!r} failed (exit {process.returncode}):\n"
            f"{outputs.get(reached, output)[-4000:]}"
        )
    assert reached == len(run), f"{page}: the script stopped early:\n{output[-4000:]}"
    for index, command in enumerate(run):
        text = outputs.get(index, "")
        assert "Traceback" not in text, f"{page}:{command.line}: {command.text!r}:\n{text[-4000:]}"
        for prefix, needles in EXPECTED.get(page, {}).items():
            if command.text.startswith(prefix):
                for needle in needles:
                    where = f"{page}:{command.line}: {command.text!r}"
                    assert needle in text, f"{where}: {needle!r} not in\n{text[-3000:]}"
