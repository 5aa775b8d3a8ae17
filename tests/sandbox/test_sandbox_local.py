"""Each limit of the local sandboxes (bubblewrap, unshare) bites, on real processes."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest

from arboretum_worker.sandbox import (
    BareRunner,
    BwrapRunner,
    SandboxError,
    SandboxRunner,
    SandboxUnavailableError,
    bwrap_usable,
    make_runner,
)
from arboretum_worker.sandbox.capture import truncation_marker

from .conftest import (
    BOTS,
    TEST_LIMITS,
    make,
    processes_with_marker,
    run_script,
    start_script,
    wait_for_output,
)

pytestmark = pytest.mark.integration


def test_network_is_unreachable(runner: SandboxRunner) -> None:
    accepted: list[object] = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.2)
        port = server.getsockname()[1]
        rc, out = run_script(runner, "net_connect.py", str(port))
        with contextlib.suppress(TimeoutError):
            accepted.append(server.accept())
    assert "CONNECT-FAILED" in out, out
    assert "CONNECTED" not in out.replace("CONNECT-FAILED", "")
    assert accepted == [], "the listener on the host saw a connection from the sandbox"
    assert rc == 0


def test_memory_limit(runner: SandboxRunner) -> None:
    rc, out = run_script(runner, "memory_hog.py")
    assert "ALL-ALLOCATED" not in out
    assert "MEMORY-ERROR" in out or rc != 0, out
    allocated = [int(m) for m in re.findall(r"ALLOCATED (\d+) MiB", out)]
    assert max(allocated, default=0) <= TEST_LIMITS.memory_bytes // (1024 * 1024)


def test_fork_bomb_is_bounded(runner: SandboxRunner) -> None:
    with start_script(runner, "fork_bomb.py") as bot:
        out = wait_for_output(bot, "FORKED")
        born = int(re.search(r"FORKED (\d+)", out).group(1))  # type: ignore[union-attr]
        assert born < TEST_LIMITS.processes, out
        assert "ERROR None" not in out  # fork failed (EAGAIN) at the limit
        # the host can still start processes
        assert subprocess.run(["true"], check=False).returncode == 0
        bot.kill()
        assert bot.remaining_pids() == []


def test_process_limit_is_per_sandbox(kind: str) -> None:
    """Two fork bombs at once each get (about) the full limit: the count is not shared."""
    runner = make(kind)
    bots = [start_script(runner, "fork_bomb.py") for _ in range(2)]
    try:
        counts = []
        for bot in bots:
            out = wait_for_output(bot, "FORKED")
            counts.append(int(re.search(r"FORKED (\d+)", out).group(1)))  # type: ignore[union-attr]
    finally:
        for bot in bots:
            bot.kill()
    for count in counts:
        assert TEST_LIMITS.processes - 4 <= count < TEST_LIMITS.processes, counts


def test_filesystem_is_read_only_outside_tmp(runner: SandboxRunner, tmp_path: Path) -> None:
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    host_dir.chmod(0o777)
    target = host_dir / "escaped.txt"
    bot_copy = tmp_path / "bot" / "write_outside.py"
    bot_copy.parent.mkdir()
    bot_copy.write_bytes((BOTS / "write_outside.py").read_bytes())
    before = bot_copy.read_bytes()
    with runner.start(
        bot_copy, socket_path=None, token="t", name="w", python_args=["{bot}", str(target)]
    ) as bot:
        rc = bot.wait(30)
        out = bot.output().decode()
    assert rc == 0, out
    assert "WROTE" not in out, out
    assert out.count("DENIED") == 4, out
    assert "CODE-READONLY" in out and "TAMPERED" not in out
    assert "TMP-OK 2" in out
    assert not target.exists()
    assert bot_copy.read_bytes() == before
    assert list(bot_copy.parent.iterdir()) == [bot_copy]


def test_environment_holds_no_secrets(
    runner: SandboxRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://:hunter2@redis:6379/0")
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "admin-secret-xyz")
    rc, out = run_script(runner, "env_dump.py")
    assert rc == 0, out
    line = next(x for x in out.splitlines() if x.startswith("ENV "))
    data = json.loads(line[4:])
    env = data["environ"]
    assert "REDIS_URL" not in env and "ARENA_ADMIN_TOKEN" not in env
    assert "hunter2" not in data["initial"] and "admin-secret" not in data["initial"]
    assert "hunter2" not in out and "admin-secret" not in out
    assert env["ARENA_TOKEN"] == "seat-token-123"
    assert env["HOME"] == "/tmp"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_kill_leaves_no_process(runner: SandboxRunner) -> None:
    marker = f"arena-marker-{uuid.uuid4().hex}"
    bot = start_script(runner, "leave_child.py", marker)
    with bot:
        wait_for_output(bot, "CHILDREN-STARTED")
        # its two children (the forked one may still be on its way to exec)
        deadline = time.monotonic() + 10
        while len(processes_with_marker(marker)) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(processes_with_marker(marker)) >= 2
        bot.kill()
        assert processes_with_marker(marker) == []
        assert bot.remaining_pids() == []
        assert bot.returncode is not None
        bot.kill()  # idempotent
    assert processes_with_marker(marker) == []


def test_output_is_capped_and_logged(runner: SandboxRunner, tmp_path: Path) -> None:
    log_path = tmp_path / "logs" / "bot.log"
    with start_script(runner, "spam_output.py", log_path=log_path) as bot:
        rc = bot.wait(30)
        out = bot.output()
    assert rc == 0
    limit = TEST_LIMITS.output_bytes
    dropped = 2 * 4096 * 1024 + len(b"SPAM-DONE\n") - limit
    assert out == out[:limit] + truncation_marker(limit, dropped)
    assert out[:limit] == b"x" * 1023 + b"\n" + out[1024:limit]
    assert log_path.read_bytes() == out


def test_file_size_limit(runner: SandboxRunner) -> None:
    _, out = run_script(runner, "big_file.py")
    assert "WROTE-ALL" not in out, out
    assert re.search(r"FILE-LIMIT [34] MiB", out), out


def test_cpu_time_limit(kind: str) -> None:
    runner = make(kind, limits=TEST_LIMITS.for_match(0, startup_s=1))
    assert runner.limits.cpu_seconds == 1
    with start_script(runner, "cpu_burn.py") as bot:
        rc = bot.wait(20)
    assert rc is not None and rc != 0


def test_socket_reaches_the_referee(runner: SandboxRunner, tmp_path: Path) -> None:
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700)
    sock_path = match_dir / "referee.sock"
    got: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(sock_path))
        server.listen(1)
        server.settimeout(20)

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                got.append(conn.recv(100))
                conn.sendall(b"hello bot\n")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        rc, out = run_script(runner, "socket_client.py", socket_path=sock_path)
        thread.join(5)
    assert "REPLY hello bot" in out, out
    assert got == [b"hello referee\n"]
    assert rc == 0


def test_submitted_bot_needs_a_sandbox(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    runner = BareRunner(TEST_LIMITS)
    with pytest.raises(SandboxUnavailableError, match="refusing"):
        runner.start(BOTS / "env_dump.py", socket_path=None, token="t", name="x")
    with caplog.at_level(logging.WARNING, logger="arboretum_worker.sandbox"):
        bot = runner.start(
            "random",
            socket_path=None,
            token="t",
            name="b",
            builtin=True,
            python_args=["-c", "import os; print('HOME', os.environ['HOME'])"],
        )
        with bot:
            assert bot.wait(20) == 0
            assert b"HOME " in bot.output()
    assert "no sandbox" in caplog.text
    with pytest.raises(ValueError, match="built-in"):
        runner.start("nope", socket_path=None, token="t", builtin=True)


def test_make_runner_kinds() -> None:
    if bwrap_usable():
        assert isinstance(make_runner("auto"), BwrapRunner)
    assert isinstance(make_runner("none"), BareRunner)
    with pytest.raises(ValueError, match="unknown sandbox kind"):
        make_runner("chroot")


def test_sandbox_sees_only_what_it_needs(runner: SandboxRunner) -> None:
    """The host's files outside the runtime (this test file, home folders) are not there."""
    hidden = [__file__, str(Path(__file__).parents[2] / "pyproject.toml"), "/etc/hostname"]
    script = (
        "import os, sys; print('VISIBLE', [p for p in sys.argv[1:] if os.path.exists(p)]); "
        "print('HOMES', [os.listdir(p) for p in ('/home',) if os.path.isdir(p)])"
    )
    with runner.start(
        "random", socket_path=None, token="t", builtin=True, python_args=["-c", script, *hidden]
    ) as bot:
        assert bot.wait(20) == 0, bot.output()
        out = bot.output().decode()
    assert "VISIBLE []" in out, out  # every backend: the same minimal root
    assert "HOMES []" in out, out


def test_unreadable_bot_is_refused_clearly(runner: SandboxRunner, tmp_path: Path) -> None:
    if not getattr(runner, "privileged", False):
        pytest.skip("only a root worker drops the bot to another uid")
    bot = tmp_path / "secret_bot.py"
    bot.write_text("print('hi')\n")
    bot.chmod(0o600)
    with pytest.raises(SandboxError, match="world-readable"):
        runner.start(bot, socket_path=None, token="t", python_args=["{bot}"])


def test_bot_runs_unprivileged_with_its_limits(runner: SandboxRunner) -> None:
    """Whichever launcher set it up: no capability left, no_new_privs, the limits (soft = hard),
    and as root a uid of the slot pool rather than root."""
    script = (
        "import os, resource\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "for key in ('Uid', 'Gid', 'Groups', 'CapEff', 'CapPrm', 'CapInh', 'CapAmb', 'CapBnd',\n"
        "            'NoNewPrivs'):\n"
        "    print(key, status[key].split())\n"
        "for name in ('CPU', 'DATA', 'AS', 'NPROC', 'NOFILE', 'FSIZE', 'CORE'):\n"
        "    print(name, resource.getrlimit(getattr(resource, 'RLIMIT_' + name)))\n"
    )
    with runner.start(
        "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
    ) as bot:
        assert bot.wait(20) == 0, bot.output()
        lines = dict(line.split(" ", 1) for line in bot.output().decode().splitlines())
    for cap in ("CapEff", "CapPrm", "CapInh", "CapAmb"):
        assert lines[cap] == "['0000000000000000']", lines
    assert lines["NoNewPrivs"] == "['1']", lines
    limits = TEST_LIMITS.rlimits()
    for key, value in limits.items():
        assert lines[key.removeprefix("RLIMIT_")] == repr((value, value)), (key, lines)
    if getattr(runner, "privileged", False):
        uid = lines["Uid"].strip("[]").replace("'", "").split(", ")
        assert len(set(uid)) == 1 and int(uid[0]) != 0, lines
        assert lines["Groups"] == "[]", lines
        assert lines["CapBnd"] == "['0000000000000000']", lines


def test_bwrap_prefers_util_linux_launcher() -> None:
    """With prlimit and setpriv installed (util-linux), bwrap sandboxes start without the Python
    launcher; the bot's parent chain is then bwrap -> python, nothing in between."""
    from arboretum_worker.sandbox.local import native_launcher_argv

    argv = native_launcher_argv({"RLIMIT_NPROC": 8}, 12345)
    if argv is None:
        pytest.fail("prlimit/setpriv (util-linux) are missing: install util-linux")
    assert os.path.basename(argv[0]) == "prlimit" and "--nproc=8:8" in argv
    assert "--reuid=12345" in argv and argv[-1] == "--"
    runner = make("bwrap")
    assert "prlimit + setpriv" in runner.describe()
    script = "import os; print('PARENT', open(f'/proc/{os.getppid()}/comm').read().strip())"
    with runner.start(
        "random", socket_path=None, token="t", builtin=True, python_args=["-c", script]
    ) as bot:
        assert bot.wait(20) == 0, bot.output()
        assert b"PARENT bwrap" in bot.output(), bot.output()
