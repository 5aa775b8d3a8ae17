"""The docker runner: each bot in a container of its own, through the docker SDK (``docker``).

Used by the compose deployment, where the worker drives the host's engine through its socket.
Every container: ``network_mode=none``, read-only root, ``cap_drop=ALL``, ``no-new-privileges``,
a non-root user, memory (no swap) and pids limits, rlimits for CPU, open files, file size and
core dumps, a tmpfs at /tmp, the bot bind-mounted read-only at /bot/<name>, the referee socket
file bind-mounted at /run/arena/referee.sock, and a json-file log capped in size (the runner
streams the output into the same capped capture as the local runners). The bot's environment is
the runner's alone: the engine adds ``HOSTNAME`` and the image's ``ENV`` lines to every
container's, so the command starts with ``env -u NAME ...`` for each of those the runner does not
set itself.

Paths are given to the engine, which resolves them on *its* host: ``path_map`` translates the
worker's paths to the engine host's (identity by default, e.g. when the match folders are
mounted at the same path in the worker container; see ``docs/bot-runtime.md``).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .base import (
    SOCKET_INSIDE,
    LaunchSpec,
    SandboxedBot,
    SandboxError,
    SandboxRunner,
    python_runtime_paths,
)
from .capture import OutputCapture
from .limits import DEFAULT_LIMITS, SandboxLimits

__all__ = ["DEFAULT_IMAGE", "DockerRunner", "DockerSandboxedBot"]

DEFAULT_IMAGE = "arboretum-bot:dev"
"""The image docker-compose.yml builds from worker/docker/Dockerfile.bot."""
LABEL = "org.arboretum.sandbox"
_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/bin", "/sbin")


def _docker() -> Any:
    try:
        import docker  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise SandboxError(
            "the docker runner needs the python package 'docker' (pip install docker)"
        ) from exc
    return docker


class DockerSandboxedBot(SandboxedBot):
    """A bot in a container; ``kill()`` removes the container (and so every process in it)."""

    def __init__(
        self,
        *,
        name: str,
        client: Any,
        container: Any,
        capture: OutputCapture,
        log_path: Path | None,
    ) -> None:
        super().__init__(name=name, kind="docker", proc=None, capture=capture, log_path=log_path)
        self._client = client
        self.container = container
        self._rc: int | None = None

    @property
    def pid(self) -> int:
        with contextlib.suppress(Exception):
            self.container.reload()
        return int(self.container.attrs.get("State", {}).get("Pid") or 0)

    @property
    def returncode(self) -> int | None:
        if self._rc is None and not self._closed:
            try:
                self.container.reload()
            except Exception:
                return None
            state = self.container.attrs.get("State", {})
            if state.get("Status") in ("exited", "dead"):
                self._rc = int(state.get("ExitCode", -1))
        return self._rc

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            rc = self.returncode
            if rc is not None:
                return rc
            if self._closed:
                return self._rc
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.05)

    def remaining_pids(self) -> list[int]:
        """Empty once the container is gone; else the container's main pid (if running)."""
        try:
            self.container.reload()
        except Exception:
            return []
        pid = int(self.container.attrs.get("State", {}).get("Pid") or 0)
        return [pid] if pid else [-1]  # -1: the container still exists

    def kill(self) -> None:
        if self._closed:
            return
        self.returncode  # noqa: B018 - record the exit status before removing
        with contextlib.suppress(Exception):
            self.container.kill()
        if self._rc is None:
            self._rc = -9
        with contextlib.suppress(Exception):
            self.container.remove(force=True)
        deadline = time.monotonic() + 10
        while self.remaining_pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = self.remaining_pids()
        if self._capture is not None:
            self._capture.join(5.0)
        self._closed = True
        if left:
            raise SandboxError(f"container of {self.name} still there after kill")

    def output(self) -> bytes:
        if self._capture is None:
            return b""
        if self._closed or self.returncode is not None:
            self._capture.join(5.0)
        return self._capture.data()


class DockerRunner(SandboxRunner):
    """Bots in docker containers (see the module docstring for what each container gets).

    ``image`` must hold Python 3.11 with the SDK installed (``worker/docker/Dockerfile.bot``);
    ``python`` is its interpreter. With ``host_runtime=True`` the image need only be an empty
    root: the host's interpreter, venv and SDK (and /usr, /lib*) are bind-mounted read-only, as
    the local runners do (used by the tests, and where the worker runs on the engine's host).
    """

    kind = "docker"

    def __init__(
        self,
        limits: SandboxLimits = DEFAULT_LIMITS,
        *,
        image: str = DEFAULT_IMAGE,
        client: Any = None,
        base_url: str | None = None,
        user: str = "65534:65534",
        python: str = "python",
        path_map: Mapping[str, str] | None = None,
        host_runtime: bool = False,
    ) -> None:
        super().__init__(limits)
        docker = _docker()
        self._docker = docker
        self.client = client or (
            docker.DockerClient(base_url=base_url) if base_url else docker.from_env()
        )
        self.image = image
        self.user = user
        self.python = python
        self.path_map = dict(path_map or {})
        self.host_runtime = host_runtime
        self._image_env: frozenset[str] | None = None

    def describe(self) -> str:
        return f"docker (image {self.image}, user {self.user})"

    def host_path(self, path: Path) -> str:
        """``path`` as the engine's host sees it (``path_map``: longest matching prefix)."""
        text = str(path)
        for src in sorted(self.path_map, key=len, reverse=True):
            if text == src or text.startswith(src.rstrip("/") + "/"):
                return self.path_map[src] + text[len(src.rstrip("/")) :]
        return text

    def engine_env_names(self) -> frozenset[str]:
        """The variables the engine puts in a container's environment of its own accord:
        ``HOSTNAME``, and those of the image's ``ENV`` lines (asked once per runner)."""
        if self._image_env is None:
            try:
                config = self.client.images.get(self.image).attrs.get("Config") or {}
            except self._docker.errors.DockerException:
                config = {}  # no such image: creating the container will say so
            names = {item.split("=", 1)[0] for item in config.get("Env") or ()}
            self._image_env = frozenset(names | {"HOSTNAME"})
        return self._image_env

    def container_config(self, spec: LaunchSpec) -> dict[str, Any]:
        """The keyword arguments of ``containers.create`` for ``spec``."""
        types = self._docker.types
        lim = self.limits
        mounts = []
        argv = list(spec.argv)
        env = dict(spec.env)
        if self.host_runtime:
            for d in _SYSTEM_DIRS:
                if Path(d).is_dir() and not Path(d).is_symlink():
                    mounts.append(
                        types.Mount(d, self.host_path(Path(d)), type="bind", read_only=True)
                    )
            for path in python_runtime_paths():
                mounts.append(
                    types.Mount(str(path), self.host_path(path), type="bind", read_only=True)
                )
        else:
            argv[0] = self.python
            env.pop("PYTHONPATH", None)
            env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        if spec.bot_host is not None and spec.bot_inside is not None:
            mounts.append(
                types.Mount(
                    spec.bot_inside, self.host_path(spec.bot_host), type="bind", read_only=True
                )
            )
        if spec.socket_host is not None:
            mounts.append(
                types.Mount(
                    SOCKET_INSIDE, self.host_path(spec.socket_host), type="bind", read_only=True
                )
            )
        ulimits = [
            types.Ulimit(name="cpu", soft=lim.cpu_seconds, hard=lim.cpu_seconds),
            types.Ulimit(name="nofile", soft=lim.open_files, hard=lim.open_files),
            types.Ulimit(name="fsize", soft=lim.file_size_bytes, hard=lim.file_size_bytes),
            types.Ulimit(name="core", soft=0, hard=0),
        ]
        log_size = max(lim.output_bytes * 2, 64 * 1024)
        unset = sorted(self.engine_env_names() - set(env))
        command = ["/usr/bin/env", *(f"--unset={name}" for name in unset), "--", *argv]
        return {
            "image": self.image,
            "command": command,
            "environment": env,
            "user": self.user,
            "working_dir": "/tmp",
            "network_mode": "none",
            "read_only": True,
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
            "mem_limit": lim.memory_bytes,
            "memswap_limit": lim.memory_bytes,
            "pids_limit": lim.processes,
            "ulimits": ulimits,
            "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={lim.tmp_size_bytes},mode=1777"},
            "mounts": mounts,
            "ipc_mode": "private",
            "hostname": "arena-bot",
            "labels": {LABEL: spec.name},
            "log_config": types.LogConfig(
                type="json-file", config={"max-size": str(log_size), "max-file": "1"}
            ),
            "stdin_open": False,
            "tty": False,
            "detach": True,
            "name": f"arena-bot-{uuid.uuid4().hex[:12]}",
        }

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        if spec.socket_host is not None:
            spec.socket_host.chmod(0o666)  # the container's user must be able to connect()
        container = self.client.containers.create(**self.container_config(spec))
        try:
            # Attach before starting, so nothing the bot writes early can be lost: the engine's
            # json-file log is capped and rotates, and a fast bot may be done before logs() runs.
            stream: Iterator[bytes] = container.attach(
                stdout=True, stderr=True, stream=True, logs=True
            )
            container.start()
        except BaseException:
            with contextlib.suppress(Exception):
                container.remove(force=True)
            raise
        capture = OutputCapture(stream, self.limits.output_bytes, spec.log_path, spec.name)
        return DockerSandboxedBot(
            name=spec.name,
            client=self.client,
            container=container,
            capture=capture,
            log_path=spec.log_path,
        )
