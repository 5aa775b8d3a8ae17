"""The fork server (``sandbox/forkserver.py``) keeps what a plain bwrap start guarantees.

The sandbox tests of every limit, of the root a bot sees and of a whole match run with the
``fork`` kind too (``conftest.make``: every bot through the fork server); these are what only a
fork could get wrong: memory inherited from the server, namespaces shared between forks, a
sandbox outliving the work horse that asked for it, and a server that went away."""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arboretum_worker.sandbox import BwrapRunner
from arboretum_worker.sandbox.forkserver import ForkedProcess, ForkServer

from .conftest import (
    BOTS,
    TEST_LIMITS,
    fork_server,
    make,
    processes_with_marker,
    start_script,
    wait_for_output,
)

pytestmark = pytest.mark.integration

NAMESPACES = ("mnt", "pid", "net", "ipc", "uts", "cgroup")


def _token() -> str:
    return "zygote-secret-" + secrets.token_hex(16)


def _scan(runner: BwrapRunner, token: str, *extra: str) -> tuple[list[str], object]:
    bot = runner.start(
        BOTS / "mem_scan.py",
        socket_path=None,
        token=token,
        name="scan",
        python_args=["{bot}", *extra],
        env={"BOT_SECRET": token},
    )
    out = wait_for_output(bot, "MEMSCAN ", timeout=60)
    line = next(x for x in out.splitlines() if x.startswith("MEMSCAN "))
    return json.loads(line[len("MEMSCAN ") :]), bot


def test_a_bot_never_finds_an_earlier_bots_secrets_in_its_memory() -> None:
    """Each request is read by a fresh fork, never by the server: a bot forked after another
    holds nothing of the other's request (its token, environment, files) anywhere in memory,
    while it does find its own token (the scan works)."""
    runner = make("fork")
    assert isinstance(runner, BwrapRunner)
    first, second = _token(), _token()
    seen_first, running = _scan(runner, first, "--stay")  # still running: its memory is live
    try:
        assert first in seen_first, seen_first
        seen_second, done = _scan(runner, second)
        done.kill()  # type: ignore[attr-defined]
    finally:
        running.kill()  # type: ignore[attr-defined]
    assert second in seen_second, seen_second
    assert first not in seen_second, "a bot found another bot's token in its memory"
    third = _token()
    seen_third, bot = _scan(runner, third)
    bot.kill()  # type: ignore[attr-defined]
    assert seen_third == [third], seen_third


def _namespaces(pid: int) -> dict[str, int]:
    return {ns: os.stat(f"/proc/{pid}/ns/{ns}").st_ino for ns in NAMESPACES}


def test_each_fork_has_namespaces_of_its_own() -> None:
    runner = make("fork")
    marker = f"arena-marker-{secrets.token_hex(8)}"
    bots = [start_script(runner, "leave_child.py", marker) for _ in range(2)]
    try:
        for bot in bots:
            wait_for_output(bot, "CHILDREN-STARTED")
        inits = [bot._init_pid for bot in bots]
        assert all(pid is not None for pid in inits)
        first, second = (_namespaces(pid) for pid in inits)  # type: ignore[arg-type]
        ours = _namespaces(os.getpid())
        for ns in NAMESPACES:
            assert first[ns] != second[ns], f"two bots share a {ns} namespace"
            assert ours[ns] not in (first[ns], second[ns]), f"a bot shares the host's {ns}"
        uids = {bot.uid for bot in bots}
        assert len(uids) == 2 and None not in uids, uids
    finally:
        for bot in bots:
            bot.kill()
    assert processes_with_marker(marker) == []


def test_the_sandbox_dies_with_the_work_horse_that_asked_for_it() -> None:
    """A work horse killed mid-match (here a forked child that exits without killing its bot):
    the keeper sees the hang-up and kills the sandbox, as bwrap's --die-with-parent does."""
    runner = make("fork")
    marker = f"arena-marker-{secrets.token_hex(8)}"
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # the "work horse"
        try:
            bot = start_script(runner, "leave_child.py", marker)
            wait_for_output(bot, "CHILDREN-STARTED")
            os.write(write, b"started\n")
        finally:
            os._exit(0)
    os.close(write)
    assert os.read(read, 64) == b"started\n"
    os.close(read)
    os.waitpid(child, 0)
    deadline = time.monotonic() + 10
    while processes_with_marker(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with_marker(marker) == [], "the sandbox outlived its work horse"


def test_a_bot_exit_status_comes_through() -> None:
    runner = make("fork")
    script = "raise SystemExit(7)"
    with runner.start(
        "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
    ) as bot:
        assert isinstance(bot._proc, ForkedProcess)
        assert bot.wait(20) == 7


def _descendants(pid: int) -> list[int]:
    """The processes under ``pid``, depth first, zombies included (one that ends while it is
    read is left out)."""
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for child in (task / "children").read_text().split():
                found += [int(child), *_descendants(int(child))]
    except FileNotFoundError:
        pass
    return found


def _comm(pid: int) -> str:
    """The process's name; empty once it has ended."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


def _state_and_switches(pid: int) -> tuple[str, int]:
    """The process's state letter and its main thread's context switches so far."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    switches = int(fields["voluntary_ctxt_switches"]) + int(fields["nonvoluntary_ctxt_switches"])
    return fields["State"].split()[0], switches


def test_an_idle_server_sleeps_and_keeps_no_ended_keeper() -> None:
    """The kernel reaps the keepers of ended sandboxes, and a server with nothing to do sleeps
    until a request comes: it is not woken at all (it once looked for ended keepers every
    second), and each bot's exit status still comes through its keeper."""
    runner = make("fork")
    for code in (0, 3, 5):
        script = f"raise SystemExit({code})"
        with runner.start(
            "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
        ) as bot:
            assert bot.wait(20) == code
    server = fork_server().proc.pid
    deadline = time.monotonic() + 10
    while True:  # (a keeper ends a moment after it sent its bot's exit status)
        pythons = [p for p in _descendants(server) if _comm(p).startswith("python")]
        settled = len(pythons) == 1 and _state_and_switches(pythons[0])[0] == "S"
        if settled or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(pythons) == 1, "the server's Python, and no keeper left behind"
    state, before = _state_and_switches(pythons[0])
    assert state == "S"
    time.sleep(3)
    assert _state_and_switches(pythons[0]) == ("S", before), "the idle server was woken"


def test_a_forked_bot_finds_the_runtime_frozen_out_of_the_collector() -> None:
    # The fork server froze what it imported: a bot's collections never walk it.
    runner = make("fork")
    script = "import gc; print('FROZEN', gc.get_freeze_count(), flush=True)"
    with runner.start(
        "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
    ) as bot:
        assert isinstance(bot._proc, ForkedProcess)
        assert bot.wait(20) == 0
        out = bot.output().decode()
    assert int(out.split("FROZEN ")[1].split()[0]) > 10_000, out


def test_arena_bot_run_imports_nothing_of_the_sdk_the_server_has_not() -> None:
    # What ``arena bot run`` imports on its way to loading the bot, the fork server imported
    # already (each bot would import it again: about 14 ms of CPU per start), but the command's
    # own module, which ``python -m`` runs from its source.
    script = (
        "import importlib, sys\n"
        "from arboretum_sdk import grpc_setup\n"
        "grpc_setup.apply()\n"
        "from arboretum_worker.sandbox.zygote import PRELOAD\n"
        "for name in PRELOAD:\n"
        "    importlib.import_module(name)\n"
        "before = set(sys.modules)\n"
        "from arboretum_sdk import cli\n"
        "argv = ['bot', 'run', '/nonexistent/bot.py', '--server', 'unix:/x.sock', '--token', 't']\n"
        "status = cli.main(argv)\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith('arboretum'))\n"
        "print(status, *new)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["2", "arboretum_sdk.cli"], done.stdout + done.stderr


def test_without_its_server_the_runner_starts_plain_sandboxes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if os.geteuid() != 0:
        pytest.skip("the fork server is used by root workers only")
    server = ForkServer.start([BOTS])
    runner = BwrapRunner(TEST_LIMITS, fork_server=server)
    assert "fork server" in runner.describe()
    server.stop()
    script = "print('PLAIN', flush=True)"
    with caplog.at_level(logging.WARNING, logger="arboretum_worker.sandbox"):
        bot = runner.start(
            "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
        )
    with bot:
        assert bot.wait(20) == 0 and b"PLAIN" in bot.output()
        assert not isinstance(bot._proc, ForkedProcess)
    assert "starting" in caplog.text and "as a plain sandbox" in caplog.text
    assert runner.fork_server is None


def test_a_gone_servers_folder_is_removed_and_a_live_ones_kept() -> None:
    """A worker killed with its fork server leaves the server's folder (its socket) behind;
    the next server to start removes such folders, never one whose server still listens."""
    if os.geteuid() != 0:
        pytest.skip("the fork server is used by root workers only")
    live = ForkServer.start([BOTS])
    stale = Path(tempfile.mkdtemp(prefix="arboretum-forkserver-"))
    (stale / "fork.sock").touch()
    old = time.time() - 3600
    for folder in (stale, live.folder):
        os.utime(folder, (old, old))
    try:
        ForkServer.start([BOTS]).stop()
        assert not stale.exists()
        assert live.folder.exists() and live.sees(BOTS)
    finally:
        live.stop()
    assert not live.folder.exists()


def test_a_probe_of_a_live_server_is_answered_in_silence(capfd: pytest.CaptureFixture[str]) -> None:
    """Every fork server that starts probes the others' sockets (the look for stale folders
    above): a connection that sends nothing is no bad request, and writes nothing to the
    worker's log."""
    import socket

    if os.geteuid() != 0:
        pytest.skip("the fork server is used by root workers only")
    live = ForkServer.start([BOTS])
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(str(live.folder / "fork.sock"))
        time.sleep(1.0)  # the keeper forked for the probe has read its end and exited
        assert live.alive()
    finally:
        live.stop()
    assert "bad fork request" not in capfd.readouterr().err


CAPABILITY_LINES = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
STATUS_SCRIPT = (
    "import sys\n"
    "for line in open('/proc/self/status'):\n"
    "    if line.startswith(tuple(sys.argv[1:])):\n"
    "        print('STATUS', line.strip(), flush=True)\n"
)


def _status_lines(kind: str) -> list[str]:
    runner = make(kind)
    keys = [f"{key}:" for key in (*CAPABILITY_LINES, "NoNewPrivs", "Seccomp")]
    with runner.start(
        "random",
        socket_path=None,
        token="t",
        builtin=True,
        python_args=["-c", STATUS_SCRIPT, *keys],
    ) as bot:
        assert bot.wait(30) == 0, bot.output()
        out = bot.output().decode()
    return [line.removeprefix("STATUS ") for line in out.splitlines() if line.startswith("STATUS")]


def test_a_forked_bot_has_every_capability_set_empty_as_a_plain_one() -> None:
    """/proc/self/status of a bot under plain bwrap and under the fork server, line by line:
    every capability set empty (the inheritable one too, which a change of uid keeps and the
    fork server's own sandbox fills), no_new_privs, the same seccomp state."""
    plain, forked = _status_lines("bwrap"), _status_lines("fork")
    for key in CAPABILITY_LINES:
        assert f"{key}:\t0000000000000000" in plain, plain
    assert "NoNewPrivs:\t1" in plain, plain
    assert [line.split(":")[0] for line in plain][:5] == list(CAPABILITY_LINES), plain
    assert forked == plain
