"""The compose deployment's images, built from their Dockerfiles on a private ``dockerd`` and run.

Images cannot be pulled here, so the Dockerfiles' base (``PYTHON_IMAGE``, by default
``python:3.11-slim-bookworm``) is replaced by a stand-in built offline, as the docker sandbox
tests build theirs: a root holding this machine's CPython (its prefix without site-packages and
tests), the shared libraries it and its extension modules load, ``/bin/sh`` and the few
programs the Dockerfiles run, and CA certificates; ``ensurepip`` adds pip. Each Dockerfile is
then built on it as it is (``pip install`` fetches the dependencies from PyPI, so the builds use
the host's network), and each image is run for what compose runs it for. A Dockerfile that needs
what the stand-in cannot offer (Debian's ``apt-get``) is not built, and the test says so.

Skipped with the reason where dockerd cannot run, the interpreter cannot be copied into an
image (no ensurepip, as in Debian's own python), or PyPI is not reachable.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dockerd import DockerdUnavailable, start_dockerd, stop_dockerd

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
STANDIN = "arena-test-python:3.11"
DOCKERFILES = {
    "bot": "worker/docker/Dockerfile.bot",
    "referee": "server/Dockerfile",
    "worker": "worker/Dockerfile",
    "web": "web/Dockerfile",
}
PROGRAMS = ("sh", "mkdir", "chown", "chmod", "rm", "ln", "cp", "cat", "env", "true", "ls")


def _libraries(binaries: list[Path]) -> set[Path]:
    """The shared libraries these binaries load, by ``ldd`` (with the loader)."""
    found: set[Path] = set()
    for binary in binaries:
        done = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, check=False)
        for line in done.stdout.splitlines():
            match = re.search(r"(/\S+) \(0x", line)
            if match:
                found.add(Path(match.group(1)))
    return found


def _symlink(tar: tarfile.TarFile, name: str, target: str) -> None:
    info = tarfile.TarInfo(name.lstrip("/"))
    info.type, info.linkname = tarfile.SYMTYPE, target
    tar.addfile(info)


def _add(tar: tarfile.TarFile, path: Path, added: set[str]) -> None:
    """``path`` at its real place in the image; a symlinked file also under its own name."""
    real = path.resolve()
    if path.is_symlink():
        link = path.parent.resolve() / path.name
        if str(link) not in added and link != real:
            added.add(str(link))
            _symlink(tar, str(link), os.readlink(path))
    if str(real) not in added:
        added.add(str(real))
        tar.add(str(real), arcname=str(real).lstrip("/"), recursive=False)


# Debian's base C and C++ runtime, which python:3.11-slim has and compiled wheels (grpcio) load.
RUNTIME_PACKAGES = ("libc6", "libgcc-s1", "libstdc++6", "zlib1g")


def _package_libraries() -> list[Path]:
    """The shared libraries of RUNTIME_PACKAGES, from dpkg's lists (gconv modules left out)."""
    if shutil.which("dpkg") is None:
        pytest.skip("images not built: no dpkg to find Debian's C runtime for a stand-in base")
    done = subprocess.run(
        ["dpkg", "-L", *RUNTIME_PACKAGES], capture_output=True, text=True, check=False
    )
    paths = [Path(line) for line in done.stdout.splitlines()]
    return [
        p
        for p in paths
        if re.search(r"\.so(\.[0-9.]+)?$", p.name) and "gconv" not in p.parts and p.exists()
    ]


def _standin_tar() -> bytes:
    prefix = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    stdlib = Path(sysconfig.get_path("stdlib"))
    if not (stdlib / "ensurepip").is_dir():
        pytest.skip(f"this interpreter ({prefix}) has no ensurepip to put pip in a stand-in base")
    interpreter = prefix / "bin" / version
    programs = [Path(shutil.which(p) or f"/bin/{p}") for p in PROGRAMS]
    extensions = sorted((stdlib / "lib-dynload").glob("*.so"))
    node = Path(shutil.which("node") or "/usr/bin/node").resolve()
    if not node.is_file():
        pytest.skip("images not built: no node here to stand in for the Node.js image's")
    libs = _libraries([interpreter, *extensions, *programs, node]) | set(_package_libraries())
    libpython = prefix / "lib" / f"lib{version}.so.1.0"
    buf = io.BytesIO()
    added: set[str] = set()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for top in ("bin", "lib", "lib32", "lib64", "sbin"):
            if os.path.islink(f"/{top}"):  # merged /usr, as the host has it
                _symlink(tar, top, os.readlink(f"/{top}"))
        # every folder on the way to the interpreter readable: the bots run as another user
        dirs = [("tmp", 0o1777), ("etc", 0o755), ("usr/local/bin", 0o755)]
        dirs += [(str(p).lstrip("/"), 0o755) for p in reversed(prefix.parents[:-1])]
        for d, mode in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, mode
            tar.addfile(info)
        for f in (interpreter, *programs, *sorted(libs)):
            _add(tar, f, added)
        if libpython.exists():
            _add(tar, libpython, added)
        # Node.js where the official image has it (the bot image copies it from there)
        tar.add(str(node), arcname="usr/local/bin/node")

        def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            rel = Path(info.name).relative_to(str(stdlib).lstrip("/"))
            top = rel.parts[0] if rel.parts else ""
            if top in ("test", "idlelib", "tkinter", "turtledemo"):
                return None
            if top == "site-packages" and len(rel.parts) > 1:
                return None
            return info

        tar.add(str(stdlib), arcname=str(stdlib).lstrip("/"), filter=keep)
        certs = Path("/etc/ssl/certs/ca-certificates.crt")
        if certs.exists():
            tar.add(str(certs.resolve()), arcname=str(certs).lstrip("/"))
        for name, text in (
            ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n"),
            ("etc/group", "root:x:0:\nnogroup:x:65534:\n"),
        ):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for link in ("python", "python3", version):
            info = tarfile.TarInfo(f"usr/local/bin/{link}")
            info.type, info.linkname = tarfile.SYMTYPE, str(interpreter)
            tar.addfile(info)
    return buf.getvalue()


def _pypi_reachable() -> bool:
    try:
        with urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=10):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def docker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = Path(str(tmp_path_factory.mktemp("dockerd")))
    try:
        client, proc = start_dockerd(root)
    except DockerdUnavailable as exc:
        pytest.skip(f"images not built: {exc}")
    try:
        yield client
    finally:
        stop_dockerd(client, proc, root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def standin(docker: Any) -> str:
    if not _pypi_reachable():
        pytest.skip("images not built: PyPI (pip's index) is not reachable from here")
    docker.api.import_image_from_data(_standin_tar(), repository="arena-standin-root", tag="1")
    scripts = Path(sys.base_prefix) / "bin"
    pip = (
        f"FROM arena-standin-root:1\n"
        f"ENV PATH={scripts}:/usr/local/bin:/usr/bin:/bin\n"
        # pip trusts the certificates this machine trusts (as the host's pip is told to)
        f"ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt"
        f" SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt\n"
        f"RUN python -m ensurepip --default-pip"
        f" && ln -s {scripts / 'pip3'} /usr/local/bin/pip"
        f" && python -c 'import ssl, sqlite3, zlib, ctypes'\n"
    )
    docker.images.build(fileobj=io.BytesIO(pip.encode()), tag=STANDIN, rm=True)
    return STANDIN


def _build(docker: Any, standin: str, name: str) -> str:
    dockerfile = DOCKERFILES[name]
    text = (ROOT / dockerfile).read_text()
    assert "ARG PYTHON_IMAGE=" in text and "FROM ${PYTHON_IMAGE}" in text, dockerfile
    if "apt-get" in text:
        pytest.skip(f"{dockerfile} installs Debian packages (apt-get): its real base is needed")
    tag = f"arena-test-{name}:dev"
    try:
        docker.images.build(
            path=str(ROOT),
            dockerfile=dockerfile,
            buildargs={"PYTHON_IMAGE": standin, "NODE_IMAGE": standin},
            network_mode="host",
            tag=tag,
            rm=True,
            forcerm=True,
        )
    except Exception as exc:  # BuildError carries the build log
        log = "".join(str(chunk.get("stream", "")) for chunk in getattr(exc, "build_log", []))
        pytest.fail(f"{dockerfile} does not build: {exc}\n{log[-3000:]}")
    return tag


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for(probe: Any, container: Any, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        container.reload()
        if container.status == "exited" or time.monotonic() > deadline:
            logs = container.logs().decode(errors="replace")[-2000:]
            pytest.fail(f"{what} did not come up ({container.status}):\n{logs}")
        time.sleep(0.5)


def test_bot_image_runs_a_submitted_bot_in_the_docker_sandbox(
    docker: Any, standin: str, tmp_path: Path
) -> None:
    from arboretum_worker.check import check_bot
    from arboretum_worker.sandbox import make_runner

    tag = _build(docker, standin, "bot")
    out = docker.containers.run(tag, remove=True, network_mode="none").decode()
    assert "random" in out and "greedy" in out  # its CMD lists the built-in bots
    bot = tmp_path / "good_bot.py"
    bot.write_text(
        "from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass GoodBot(RandomBot):\n"
        "    pass\n"
    )
    bot.chmod(0o644)
    runner = make_runner("docker", client=docker, image=tag)
    verdict = check_bot(bot, runner=runner)
    assert verdict.ok, (verdict.error, verdict.output)
    assert verdict.decision is not None and verdict.decision.startswith("draw")
    # A bot in JavaScript (docs/stdio-protocol.md's example) runs on the image's Node.js.
    js = tmp_path / "jsbot"
    shutil.copytree(ROOT / "examples" / "javascript", js)
    for path in (js, *js.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    verdict = check_bot(js, runner=runner)
    assert verdict.ok, (verdict.error, verdict.output)
    assert b"started the bot's command 'node bot.js'" in verdict.output


def test_referee_image_serves_and_is_healthy(docker: Any, standin: str) -> None:
    tag = _build(docker, standin, "referee")
    port = _free_port()
    container = docker.containers.run(
        tag,
        ["arena", "serve", "--listen", f"127.0.0.1:{port}"],
        network_mode="host",
        detach=True,
    )
    try:
        probe = ["python", "-m", "arboretum_server.healthcheck", f"127.0.0.1:{port}"]
        _wait_for(lambda: container.exec_run(probe).exit_code == 0, container, "the referee")
        uid = container.exec_run(["python", "-c", "import os; print(os.getuid())"]).output
        assert uid.strip() == b"10001"
    finally:
        container.remove(force=True)


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    from redis_server import start_redis_server, stop_redis_server

    url, proc = start_redis_server(tmp_path / "redis", appendonly=False)
    try:
        yield url
    finally:
        stop_redis_server(proc)


def test_worker_image_registers_and_is_healthy(docker: Any, standin: str, redis_url: str) -> None:
    tag = _build(docker, standin, "worker")
    env = {"REDIS_URL": redis_url, "ARENA_SANDBOX": "none"}
    worker = docker.containers.run(
        tag, ["arena", "worker"], environment=env, network_mode="host", detach=True
    )
    try:
        probe = ["python", "-m", "arboretum_worker.healthcheck"]
        _wait_for(lambda: worker.exec_run(probe).exit_code == 0, worker, "the worker")
    finally:
        worker.remove(force=True)


def test_web_image_serves_and_is_healthy(docker: Any, standin: str, redis_url: str) -> None:
    tag = _build(docker, standin, "web")
    port = _free_port()
    web = docker.containers.run(
        tag,
        ["arena", "web", "--host", "127.0.0.1", "--port", str(port)],
        environment={"REDIS_URL": redis_url},
        network_mode="host",
        detach=True,
    )

    def healthy() -> bool:
        health = f"http://127.0.0.1:{port}/api/v1/health"
        with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=3):
            return True
        return False

    try:
        _wait_for(healthy, web, "the web app")
    finally:
        web.remove(force=True)
