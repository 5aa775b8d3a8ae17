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

from arboretum_worker.sandbox import SandboxRunner, python_runtime_paths

from .conftest import BOTS, make

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
