"""The docker runner against a real engine: a private ``dockerd`` started for these tests.

Skipped (with the reason) where ``dockerd`` or the ``docker`` package is missing, or the daemon
cannot start here. The daemon gets no bridge and no iptables (the host's network is untouched),
and its own socket, data and exec folders under pytest's tmp dir. Images cannot be pulled, so
the test image is an empty root imported from a tar; the runner's ``host_runtime`` mode mounts
the host's interpreter, venv and SDK into it read-only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import socket
import tarfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arboretum_worker.sandbox import SandboxRunner, bot_env, make_runner
from arboretum_worker.sandbox.capture import truncation_marker
from dockerd import DockerdUnavailable, start_dockerd, stop_dockerd

from .conftest import BOTS, TEST_LIMITS, processes_with_marker, start_script, wait_for_output
from .test_sandbox_view import bot_environment, check_environment

pytestmark = pytest.mark.integration

IMAGE = "arboretum-sandbox-test:latest"


def _image_tar() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("tmp", "run", "run/arena", "bot", "proc", "dev", "sys", "etc", "root", "home"):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        for link in ("bin", "lib", "lib64", "sbin"):
            if os.path.islink(f"/{link}"):
                info = tarfile.TarInfo(link)
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(f"/{link}")
                tar.addfile(info)
    return buf.getvalue()


@pytest.fixture(scope="module")
def docker_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = Path(str(tmp_path_factory.mktemp("dockerd")))
    try:
        client, proc = start_dockerd(root)
    except DockerdUnavailable as exc:
        pytest.skip(f"docker runner not tested: {exc}")
    try:
        repository = IMAGE.split(":")[0]
        # an ENV line, as every real image has (python's sets PYTHON_VERSION, GPG_KEY, ...)
        client.api.import_image_from_data(
            _image_tar(), repository=repository, tag="latest", changes=["ENV IMAGE_ONLY=1"]
        )
        yield client
    finally:
        stop_dockerd(client, proc, root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def drunner(docker_client: Any) -> SandboxRunner:
    return make_runner("docker", TEST_LIMITS, client=docker_client, image=IMAGE, host_runtime=True)


def test_docker_limits_bite(
    drunner: SandboxRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://:hunter2@redis:6379/0")
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "admin-secret-xyz")
    host_target = tmp_path / "escaped.txt"
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(0.2)
        port = server.getsockname()[1]
        runs = {
            "net": ("net_connect.py", str(port)),
            "mem": ("memory_hog.py",),
            "write": ("write_outside.py", str(host_target)),
            "env": ("env_dump.py",),
            "spam": ("spam_output.py",),
            "fsize": ("big_file.py",),
        }
        bots = {k: start_script(drunner, v[0], *v[1:]) for k, v in runs.items()}
        try:
            codes = {k: b.wait(60) for k, b in bots.items()}
            out = {k: b.output() for k, b in bots.items()}
        finally:
            for b in bots.values():
                b.kill()
        with contextlib.suppress(TimeoutError):
            server.accept()
            pytest.fail("the host's listener saw a connection from a container")
    text = {k: v.decode(errors="replace") for k, v in out.items()}
    assert "CONNECT-FAILED" in text["net"], text["net"]
    assert "ALL-ALLOCATED" not in text["mem"] and codes["mem"] != 0
    assert "WROTE" not in text["write"] and "TMP-OK 2" in text["write"], text["write"]
    assert "CODE-READONLY" in text["write"] and not host_target.exists()
    env = json.loads(next(x for x in text["env"].splitlines() if x.startswith("ENV "))[4:])
    assert "REDIS_URL" not in env["environ"] and "ARENA_ADMIN_TOKEN" not in env["environ"]
    assert env["environ"]["ARENA_TOKEN"] == "seat-token-123"
    limit = TEST_LIMITS.output_bytes
    assert out["spam"][limit:].startswith(truncation_marker(limit, 0)[:30])
    assert len(out["spam"]) < limit + 200
    assert re.search(r"FILE-LIMIT [34] MiB", text["fsize"]), text["fsize"]
    for b in bots.values():
        assert b.remaining_pids() == []


def test_docker_fork_bomb_and_kill(drunner: SandboxRunner) -> None:
    marker = f"arena-marker-{uuid.uuid4().hex}"
    bomb = start_script(drunner, "fork_bomb.py")
    leaver = start_script(drunner, "leave_child.py", marker)
    with bomb, leaver:
        out = wait_for_output(bomb, "FORKED", timeout=60)
        born = int(re.search(r"FORKED (\d+)", out).group(1))  # type: ignore[union-attr]
        assert born < TEST_LIMITS.processes and "ERROR None" not in out, out
        wait_for_output(leaver, "CHILDREN-STARTED", timeout=60)
        assert len(processes_with_marker(marker)) >= 2
        leaver.kill()
        assert processes_with_marker(marker) == []
        assert leaver.remaining_pids() == []
        leaver.kill()


def test_docker_socket_reaches_the_referee(drunner: SandboxRunner, tmp_path: Path) -> None:
    match_dir = tmp_path / "match"
    match_dir.mkdir(mode=0o700)
    sock_path = match_dir / "referee.sock"
    got: list[bytes] = []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(sock_path))
        server.listen(1)
        server.settimeout(60)

        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                got.append(conn.recv(100))
                conn.sendall(b"hello bot\n")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        log_path = tmp_path / "bot.log"
        with start_script(
            drunner, "socket_client.py", socket_path=sock_path, log_path=log_path
        ) as bot:
            rc = bot.wait(60)
            output = bot.output()
        thread.join(5)
    assert b"REPLY hello bot" in output, output
    assert got == [b"hello referee\n"] and rc == 0
    assert log_path.read_bytes() == output
    assert BOTS.is_dir()


def test_docker_bot_gets_exactly_the_documented_environment(
    drunner: SandboxRunner, tmp_path: Path
) -> None:
    """Not the HOSTNAME the engine adds to every container, nor the image's ENV lines."""
    env = bot_environment(drunner, tmp_path)
    assert env["ARENA_TOKEN"] == "seat-token-env" and env["ARENA_COMPUTE"] == "fixed"
    check_environment(env, compute=True, pythonpath="PYTHONPATH" in bot_env(None))
