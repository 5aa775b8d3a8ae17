"""The bridge's memory is closed to its child: a command bot cannot take its seat token from it.

``tests/stdio/bots/memory_probe.py`` is a stdio bot that, at its start, tries
``ptrace(PTRACE_ATTACH)`` on its parent (the bridge, ``arena bot run``) and reads its
``/proc/<pid>/cmdline``, ``/proc/<pid>/environ`` and every mapping of ``/proc/<pid>/mem``,
searching them for the seat token, then plays. Run directly (``arena bot run --cmd``, the token
in ``ARENA_TOKEN``, a token file or ``--token``) against a real referee, and as the league runs
it (a folder with an ``arena.toml`` through the sandbox check), every attempt is refused and the
token is not found.

As root the bridge and its child run with no capabilities at all (``setpriv``): a process with
``CAP_SYS_PTRACE`` may read any memory, which is not what a child of the bridge has in a league
(the sandbox drops to an unprivileged uid) nor on an author's machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arboretum_sdk import run_bot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_worker.check import check_bot
from sandbox.conftest import _stop_fork_server, make  # noqa: F401 (the fork server's cleanup)
from sdk.test_client import RUN, create_match, get_match, referee  # noqa: F401 (a fixture)

pytestmark = pytest.mark.integration

PROBE = Path(__file__).parent / "bots" / "memory_probe.py"
CLOSED = (
    "PROBE attach: refused (Operation not permitted)",
    "PROBE environ: refused (PermissionError: Permission denied)",
    "PROBE mem: refused (PermissionError: Permission denied)",
    "PROBE token: not found",
)


def without_capabilities() -> list[str]:
    """The prefix that runs a command with no capabilities when this process is root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is missing: as root the probe needs no capabilities")
    return [setpriv, "--bounding-set=-all", "--inh-caps=-all", "--"]


@pytest.mark.parametrize("given", ["env", "file", "argv"])
def test_a_child_cannot_read_its_bridge_to_find_the_token(
    referee: Any,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
    given: str,
) -> None:
    address = referee.addresses[0]
    created = create_match(address)
    token, other = (t.token for t in created.seat_tokens)
    env = {**os.environ, "PROBE_TOKEN_REVERSED": token[::-1]}
    env.pop("ARENA_TOKEN", None)
    args = [*RUN, "--cmd", f"{sys.executable} {PROBE}", "--server", address]
    if given == "env":
        env["ARENA_TOKEN"] = token
    elif given == "file":
        (tmp_path / "token").write_text(token + "\n")
        args += ["--token-file", str(tmp_path / "token")]
    else:  # on the bridge's command line, which /proc/<pid>/cmdline shows to every process
        args += ["--token", token]
    opponent = threading.Thread(target=run_bot, args=(RandomBot(1), address, other), daemon=True)
    opponent.start()
    bridge = subprocess.run(
        [*without_capabilities(), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    opponent.join(60)
    assert bridge.returncode == 0, bridge.stderr
    for line in CLOSED:
        assert line in bridge.stderr, bridge.stderr
    assert token not in bridge.stderr
    match = get_match(address, created.match_id)
    assert len(match.results) == 1 and all(s.faults == 0 for s in match.summary.seats)


@pytest.mark.parametrize("kind", ["bwrap", "fork"])
def test_in_the_sandbox_the_child_cannot_read_its_bridge_either(tmp_path: Path, kind: str) -> None:
    """The league's way: ``arena bot run /bot/<name>`` in the sandbox, the token in
    ``ARENA_TOKEN``, the child under the sandbox's uid; the probe looks for ``ARENA_TOKEN=``."""
    runner = make(kind)
    folder = tmp_path / "probe"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    shutil.copy(PROBE, folder / "memory_probe.py")
    (folder / "arena.toml").write_text('command = "python3 memory_probe.py"\n')
    for path in folder.iterdir():
        path.chmod(0o644)
    result = check_bot(folder, runner=runner)
    assert result.ok, (result.error, result.output)
    output = result.output.decode(errors="replace")
    for line in CLOSED:
        assert line in output, output
