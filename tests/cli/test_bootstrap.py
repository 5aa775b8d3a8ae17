"""scripts/bootstrap.sh: the main job (scripts/demo) installs the product only; the tools that
only the tests need come with scripts/test; each part is installed again only when its pins change.

The script runs for real, in a copy of the repository's scripts and pins, against a .venv whose
``python`` is a stand-in: it runs the real interpreter for everything but ``-m pip install``
(recorded instead: installing for real needs the network and minutes) and ``-m compileall``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SHIM = """#!/usr/bin/env bash
if [[ "$1" == -m && "$2" == pip && "$3" == install ]]; then
    shift 3
    printf '%s\\n' "$*" >>"{log}"
    exit 0
fi
if [[ "$1" == -m && "$2" == compileall ]]; then exit 0; fi
exec "{python}" "$@"
"""


def make_tree(tmp_path: Path) -> tuple[Path, Path]:
    tree = tmp_path / "repo"
    (tree / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "bootstrap.sh", tree / "scripts" / "bootstrap.sh")
    shutil.copy(ROOT / "requirements-dev.txt", tree / "requirements-dev.txt")
    for dist in ("sdk", "server", "worker", "web"):
        (tree / dist).mkdir()
        shutil.copy(ROOT / dist / "pyproject.toml", tree / dist / "pyproject.toml")
    log = tmp_path / "pip.log"
    bin_dir = tree / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    shim = bin_dir / "python"
    shim.write_text(SHIM.format(log=log, python=sys.executable))
    shim.chmod(0o755)
    return tree, log


def source(tree: Path, *, dev: bool) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARBORETUM_")}
    if dev:
        env["ARBORETUM_DEV_TOOLS"] = "1"
    done = subprocess.run(
        ["bash", "-c", f"source {tree}/scripts/bootstrap.sh && echo ready"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ready"
    return [line for line in done.stderr.splitlines() if line.startswith("bootstrap: installing")]


def test_the_demo_installs_the_product_and_the_tests_add_their_tools(tmp_path: Path) -> None:
    tree, log = make_tree(tmp_path)

    # scripts/demo sources the script as it is: the four distributions, no dev tools.
    assert source(tree, dev=False) == [
        "bootstrap: installing sdk, server, worker, web (editable) into .venv"
    ]
    assert log.read_text().splitlines() == [
        "-q --disable-pip-version-check -e ./sdk -e ./server -e ./worker -e ./web"
    ]
    # Again: nothing to do.
    assert source(tree, dev=False) == []

    # scripts/test sets ARBORETUM_DEV_TOOLS=1: only the tools are new.
    assert source(tree, dev=True) == [
        "bootstrap: installing the development and test tools (requirements-dev.txt) into .venv"
    ]
    assert log.read_text().splitlines()[-1].endswith("-r requirements-dev.txt")
    assert source(tree, dev=True) == [] and source(tree, dev=False) == []

    # A changed pin reinstalls its part only.
    with (tree / "requirements-dev.txt").open("a") as fh:
        fh.write("# a changed pin\n")
    assert source(tree, dev=False) == []
    assert len(source(tree, dev=True)) == 1
    with (tree / "worker" / "pyproject.toml").open("a") as fh:
        fh.write("# a changed pin\n")
    assert source(tree, dev=True) == [
        "bootstrap: installing sdk, server, worker, web (editable) into .venv"
    ]


def test_the_scripts_ask_for_what_they_need() -> None:
    demo = (ROOT / "scripts" / "demo").read_text()
    test = (ROOT / "scripts" / "test").read_text()
    assert "ARBORETUM_DEV_TOOLS" not in demo
    assert test.index("export ARBORETUM_DEV_TOOLS=1") < test.index("source ")
