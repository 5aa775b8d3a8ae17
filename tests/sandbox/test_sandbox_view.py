"""What a sandboxed bot can see, listed from inside each local backend, against the list in
docs/bot-runtime.md ("The sandbox"), and the backends against each other."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from arboretum_worker.sandbox import SandboxRunner, bot_env, python_runtime_paths

from .conftest import BOTS, make, wait_for_output

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "bot-runtime.md"
KINDS = ("bwrap", "bwrap-python", "fork", "unshare")


def documented() -> dict[str, list[str] | None]:
    """The doc's list: each path of the root -> its documented entries (None: not listed)."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- sandbox-view -->\s*```text\n(.*?)```", text, re.S)
    assert block, "docs/bot-runtime.md lost its <!-- sandbox-view --> list"
    view: dict[str, list[str] | None] = {}
    for line in block.group(1).splitlines():
        columns = re.split(r"\s{2,}", line.strip())
        paths = columns[0].split()
        assert all(p.startswith("/") for p in paths), line
        entries = columns[1].split() if len(columns) == 3 else None
        for path in paths:
            view[path] = entries
    return view


def _probe(runner: SandboxRunner, tmp_path: Path, hidden: list[str]) -> dict[str, Any]:
    bot = tmp_path / "bot" / "fs_probe.py"
    bot.parent.mkdir(exist_ok=True)
    shutil.copy(BOTS / "fs_probe.py", bot)
    bot.chmod(0o644)
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700, exist_ok=True)
    (match_dir / "secret.txt").write_text("the worker's own file\n")
    sock_path = match_dir / "referee.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        if not sock_path.exists():
            server.bind(str(sock_path))
        with runner.start(
            bot, socket_path=sock_path, token="t", name="probe", python_args=["{bot}", *hidden]
        ) as proc:
            assert proc.wait(60) == 0, proc.output()
            out = proc.output().decode(errors="replace")
    line = next((x for x in out.splitlines() if x.startswith("FSPROBE ")), None)
    assert line is not None, out
    view: dict[str, Any] = json.loads(line[len("FSPROBE ") :])
    return view


def _hidden(tmp_path: Path) -> list[str]:
    """Host paths no bot may see: the project's files outside the runtime, other bots, the
    worker's match folder, the host's /etc and data."""
    other = tmp_path / "other-bot"
    other.mkdir(exist_ok=True)
    (other / "bot.py").write_text("SECRET = 1\n")
    return [
        str(ROOT / "pyproject.toml"),
        str(ROOT / "worker"),
        str(ROOT / "tests"),
        str(other / "bot.py"),
        str(tmp_path / "match" / "secret.txt"),
        "/etc/passwd",
        "/etc/hostname",
        "/etc/shadow",
        "/var/lib",
        "/var/log",
        "/home",
        "/srv",
        "/opt",
        "/mnt",
        "/media",
    ]


def _check_against_the_doc(view: dict[str, Any]) -> None:
    doc = documented()
    runtime = python_runtime_paths()
    runtime_tops = {p.parts[1] for p in runtime if len(p.parts) > 1}
    expected_root = {
        p.lstrip("/")
        for p in doc
        if p not in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin") or Path(p).exists()
    }
    assert set(view["root"]) == expected_root | runtime_tops, view["root"]
    for name in ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if Path(name).is_symlink():
            assert view["root"][name[1:]] == f"link -> {Path(name).readlink()}"
        elif Path(name).exists():
            assert view["root"][name[1:]].startswith("dir "), view["root"][name[1:]]
    etc = [f for f in doc["/etc"] or [] if Path("/etc", f).exists()]
    assert sorted(view["etc"]) == sorted(etc)
    assert view["root"]["etc"] == "dir 0o755"
    assert view["etc_read"] == {f: "yes" for f in etc}, "the documented /etc files are readable"
    assert sorted(view["dev"]) == sorted(doc["/dev"] or [])
    assert sorted(view["run"]) == doc["/run"] and sorted(view["run_arena"]) == ["referee.sock"]
    assert sorted(view["bot"]) == ["fs_probe.py"]
    # A private, empty /tmp, but for the way to runtime paths that live under the host's /tmp (a
    # checkout or virtual environment there stays visible, read-only).
    under_tmp = {p.relative_to("/tmp").parts[0] for p in runtime if Path("/tmp") in p.parents}
    assert set(view["tmp"]) == under_tmp and view["root"]["tmp"] == "dir 0o1777", view["tmp"]
    # The folders above the runtime paths hold nothing but the way to them.
    for path in runtime:
        for parent in path.parents[:-1]:
            if str(parent).startswith("/usr") or parent == Path("/"):
                continue
            below = {
                p.relative_to(parent).parts[0]
                for p in runtime
                if parent in p.parents and p != parent
            }
            assert set(view["inner"].get(str(parent), {})) == below, (parent, view["inner"])
    hidden = {path: seen for path, seen in view["host"].items() if seen == "yes"}
    assert hidden == {}, f"host paths visible in the sandbox: {hidden}"


def test_each_backend_shows_the_documented_root_and_the_same_one(tmp_path: Path) -> None:
    views: dict[str, dict[str, Any]] = {}
    skipped: dict[str, str] = {}
    hidden = _hidden(tmp_path)
    parents = sorted(
        {str(q) for p in python_runtime_paths() for q in p.parents[:-1] if q != Path("/")}
    )
    for kind in KINDS:
        try:
            runner = make(kind)
        except pytest.skip.Exception as exc:
            skipped[kind] = str(exc)
            continue
        views[kind] = _probe(runner, tmp_path, [*hidden, "--list", *parents])
        _check_against_the_doc(views[kind])
    if len(views) < 2:
        pytest.fail(f"fewer than two local backends run here, nothing to compare: {skipped}")
    # Each sandbox runs as a uid of its own, taken from the slots free at its start (other
    # sandboxes may hold some), so the uids differ; everything else must be the same.
    uids = {kind: view.pop("uid") for kind, view in views.items()}
    if os.getuid() == 0:  # as root, each sandbox drops to a dedicated unprivileged uid
        assert all(uid >= 1_700_000_000 for uid in uids.values()), uids
    first, *others = views
    for kind in others:
        assert views[kind] == views[first], f"{kind} shows another root than {first}"


def documented_environment() -> dict[str, str]:
    """The doc's table of the bot's environment: each variable -> its documented value."""
    text = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- bot-environment -->\n(.*?)<!-- /bot-environment -->", text, re.S)
    assert block, "docs/bot-runtime.md lost its <!-- bot-environment --> table"
    rows = [line.strip() for line in block.group(1).splitlines() if line.strip()]
    assert rows[:2] == ["| variable | value |", "| --- | --- |"], rows[:2]
    table: dict[str, str] = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 2 and re.fullmatch(r"`[A-Z_]+`", cells[0]), row
        table[cells[0].strip("`")] = cells[1]
    return table


def check_environment(env: dict[str, str], *, compute: bool, pythonpath: bool) -> None:
    """A bot's ``os.environ`` against the doc: exactly the documented variables (those the doc
    makes conditional, ``only ...``, as the conditions say), with the documented values."""
    doc = documented_environment()
    expected = {
        name
        for name, value in doc.items()
        if not value.startswith("only ")
        or (name == "ARENA_COMPUTE" and compute)
        or (name == "PYTHONPATH" and pythonpath)
    }
    assert {"PYTHONPATH", "ARENA_COMPUTE"} <= set(doc), doc
    assert set(env) == expected, (
        f"not documented: {sorted(set(env) - expected)}; missing: {sorted(expected - set(env))}"
    )
    for name, value in doc.items():
        literal = re.fullmatch(r"`([^`]*)`", value)
        if literal and name in env:
            assert env[name] == literal.group(1), (name, env[name], value)


def bot_environment(runner: SandboxRunner, tmp_path: Path) -> dict[str, str]:
    """What a submitted bot finds in ``os.environ`` when ``arena bot run`` has loaded it (as in a
    league match: a referee socket, ``ARENA_COMPUTE``)."""
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700, exist_ok=True)
    sock_path = match_dir / "referee.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(sock_path))
        server.listen(1)  # nobody answers: the bot is ended once it has printed
        with runner.start(
            BOTS / "env_bot.py",
            socket_path=sock_path,
            token="seat-token-env",
            name="env",
            env={"ARENA_COMPUTE": "fixed"},
        ) as bot:
            out = wait_for_output(bot, "\nENV ", timeout=60)
    line = next(x for x in out.splitlines() if x.startswith("ENV "))
    env: dict[str, str] = json.loads(line[len("ENV ") :])
    return env


def test_a_bot_gets_exactly_the_documented_environment(kind: str, tmp_path: Path) -> None:
    """No PWD (bwrap sets it), no GRPC_EXPERIMENTS (``arena bot run`` sets it for gRPC's load),
    nothing of the worker's: the documented table, on each local runner."""
    env = bot_environment(make(kind), tmp_path)
    assert env["ARENA_TOKEN"] == "seat-token-env" and env["ARENA_COMPUTE"] == "fixed"
    check_environment(env, compute=True, pythonpath="PYTHONPATH" in bot_env(None))
