"""A private ``dockerd`` for tests: no bridge, no iptables (the host's network is untouched), its
own socket, data and exec folders. Images cannot be pulled here, so tests build or import their
own. Used by the docker sandbox tests and the image builds (no pytest dependency here).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["DockerdUnavailable", "start_dockerd", "stop_dockerd"]


class DockerdUnavailable(RuntimeError):
    """dockerd (or the ``docker`` package, or root) is missing, or it did not start: why."""


def start_dockerd(root: Path, timeout: float = 30.0) -> tuple[Any, subprocess.Popen[bytes]]:
    """Start dockerd with everything under ``root``; (a docker client, the process)."""
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise DockerdUnavailable("dockerd is not installed (apt package docker.io)")
    if os.geteuid() != 0:
        raise DockerdUnavailable("starting dockerd needs root")
    try:
        import docker
    except ImportError:
        raise DockerdUnavailable("the 'docker' package is not installed") from None
    root.mkdir(parents=True, exist_ok=True)
    sock = root / "docker.sock"
    with open(root / "dockerd.log", "wb") as log:
        proc = subprocess.Popen(
            [
                dockerd,
                "--bridge=none",
                "--iptables=false",
                "--ip6tables=false",
                "--ip-forward=false",
                "--ip-masq=false",
                "-H",
                f"unix://{sock}",
                "--data-root",
                str(root / "data"),
                "--exec-root",
                str(root / "exec"),
                "--pidfile",
                str(root / "docker.pid"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if sock.exists():
            with contextlib.suppress(Exception):
                client = docker.DockerClient(base_url=f"unix://{sock}", timeout=600)
                client.ping()
                return client, proc
        time.sleep(0.2)
    stop_dockerd(None, proc, root)
    tail = (root / "dockerd.log").read_bytes()[-1500:].decode(errors="replace")
    raise DockerdUnavailable(f"dockerd did not start here:\n{tail}")


def stop_dockerd(client: Any, proc: subprocess.Popen[bytes], root: Path) -> None:
    """Remove every container, close the client, stop the daemon, unmount what it left."""
    if client is not None:
        for container in client.containers.list(all=True):
            with contextlib.suppress(Exception):
                container.remove(force=True)
        client.close()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    _unmount_below(root)


def _unmount_below(root: Path) -> None:
    """Detach what dockerd left mounted under ``root`` (its network namespace files), so that
    the folder can be removed."""
    with open("/proc/self/mountinfo") as fh:
        points = [line.split()[4] for line in fh]
    prefix = str(root.resolve()) + "/"
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)
