"""The fork server: bot sandboxes forked from a Python that has already imported the SDK.

A plain bwrap start costs a whole interpreter that imports the SDK, asyncio, gRPC and protobuf
(about 0.19 CPU-s per bot on the development box), most of a series match's fixed cost. The fork
server pays that once per worker: ``arena worker`` starts it before it forks its first work horse
(:func:`start_fork_server`), in a bubblewrap sandbox of its own (new pid, network, ipc and uts
namespaces; a read-only root of the system folders, the Python runtime and the match folders;
only the capabilities that making sandboxes needs), and :class:`~.local.BwrapRunner` asks it for
each bot of a match (:meth:`ForkServer.spawn`). Its process (:mod:`.zygote`) forks, per bot, a
keeper that makes fresh namespaces, an init that builds the same minimal root as the unshare
runner from the same plan (``root.LAUNCHER_LIB``), and the bot, which drops to the sandbox's uid
and runs the same ``python -m arboretum_sdk.cli bot run ...`` in the already-initialised
interpreter.

Isolation, as ``docs/league.md`` states it, holds: the server never plays, connects to a
referee or reads a request (a fresh fork reads each), so what every bot starts from is the SDK's
import state and nothing of any bot or deal; each bot has its own namespaces, root, ``/tmp``,
uid and rlimits, as with bwrap; a fork shares no writable memory with the server or another bot
(copy-on-write: the pages of the imported modules are shared read-only, as the shared libraries
of every bot process already are through the page cache). What differs from a plain start is
listed in ``docs/bot-runtime.md`` ("The fork server"); ``tests/sandbox/test_forkserver.py``
checks that a bot sees the same as with bwrap.

Used only when the worker is root (each sandbox then has a uid of its own); ``ARENA_FORK_SERVER=0``
turns it off.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .base import SandboxError, bot_env, log, python_runtime_paths
from .root import LAUNCHER_LIB, PIVOT_ROOT_SYSCALL, root_plan

__all__ = [
    "FORK_SERVER_ENV",
    "ForkServer",
    "ForkedProcess",
    "current_fork_server",
    "start_fork_server",
    "stop_fork_server",
]

FORK_SERVER_ENV = "ARENA_FORK_SERVER"
_ROOT_INSIDE = "/.arena-root"
"""Where, inside the server's sandbox, each bot's new root is assembled before pivot_root."""
_CAPS = (
    "CAP_SYS_ADMIN",
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_SETPCAP",
    "CAP_NET_ADMIN",
    "CAP_DAC_OVERRIDE",
)
"""What making a sandbox needs: namespaces and mounts, the drop to the slot uid, emptying the
bounding set, the loopback of the new network namespace, and root's access to folders such as
``/proc/sys`` (the launcher covers what root may write there). The bots have none of them."""
_SOURCE = Path(__file__).with_name("zygote.py")


def _host_pid(pidfd: int) -> int:
    """The pid, in this process's pid namespace, of the process a pidfd refers to."""
    with open(f"/proc/self/fdinfo/{pidfd}") as fh:
        for line in fh:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise SandboxError("the fork server sent a pidfd without a pid")


class ForkedProcess:
    """A bot's keeper as the worker sees it: a ``subprocess.Popen``-like handle (``pid``,
    ``poll``, ``wait``, ``kill``, ``returncode``) over its connection to the keeper, which is
    the fork server's child, not the worker's."""

    def __init__(self, conn: socket.socket, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._conn: socket.socket | None = conn
        self._buffer = b""

    def _read(self, timeout: float | None) -> None:
        conn = self._conn
        if conn is None:
            if self.returncode is None:
                self.returncode = -signal.SIGKILL
            return
        ready, _, _ = select.select([conn], [], [], timeout)
        if not ready:
            return
        try:
            chunk = conn.recv(4096)
        except OSError:
            chunk = b""
        self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if isinstance(message, dict) and isinstance(message.get("exit"), int):
                    self.returncode = message["exit"]
        if not chunk:  # the keeper is gone (killed, with its sandbox)
            if self.returncode is None:
                self.returncode = -signal.SIGKILL
            self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired("fork server bot", timeout or 0.0)
            self._read(left)
        self._close()
        return self.returncode

    def kill(self) -> None:
        """SIGKILL to the keeper; its sandbox's init dies with it (its parent-death signal)."""
        if self.returncode is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)


class ForkServer:
    """One fork server process (in its bwrap sandbox) and the folders it can see."""

    def __init__(self, proc: subprocess.Popen[bytes], folder: Path, visible: list[Path]) -> None:
        self.proc = proc
        self.folder = folder
        self.socket_path = folder / "fork.sock"
        self.visible = visible

    @classmethod
    def start(cls, visible: list[Path], bwrap: str = "bwrap", timeout: float = 60) -> ForkServer:
        """Start a fork server that can hand bots files and sockets under ``visible``."""
        exe = shutil.which(bwrap)
        if exe is None:
            raise SandboxError("the fork server needs bubblewrap (bwrap)")
        if PIVOT_ROOT_SYSCALL is None:
            raise SandboxError("the pivot_root system call of this machine is not known")
        _prune_stale_folders()
        folder = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX))  # mode 0700: root only
        for path in visible:
            path.mkdir(parents=True, exist_ok=True)
        visible = [p.resolve() for p in visible]
        python = str(Path(sys.executable).absolute())
        argv = [*_server_bwrap_args(exe, visible, folder), "--", python, "-c"]
        argv += [_SOURCE.read_text(encoding="utf-8"), str(folder / "fork.sock"), LAUNCHER_LIB]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            env=bot_env(None),
            close_fds=True,
            cwd="/",
            start_new_session=True,
        )
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline() if ready else b""
        proc.stdout.close()
        if line != b"ready\n":
            with contextlib.suppress(OSError):
                proc.kill()
            proc.wait()
            shutil.rmtree(folder, ignore_errors=True)
            raise SandboxError(f"the fork server did not start (exit {proc.returncode})")
        log.info("bot fork server ready (pid %d, sees %s)", proc.pid, ", ".join(map(str, visible)))
        return cls(proc, folder, visible)

    def sees(self, path: Path) -> bool:
        real = path.resolve()
        return any(real == v or v in real.parents for v in self.visible)

    def spawn(self, cfg: dict[str, Any], output_fd: int) -> tuple[ForkedProcess, int, int]:
        """Ask for one sandbox (``cfg``: ``args``, ``env``, ``root``, ``uid``, ``rlimits``);
        its stdout and stderr go to ``output_fd``. Returns the keeper's handle, the init's host
        pid and the inode of the sandbox's pid namespace."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.settimeout(30)
            conn.connect(str(self.socket_path))
            body = json.dumps(cfg).encode()
            socket.send_fds(conn, [struct.pack("!I", len(body)) + body], [output_fd])
            data, fds, _, _ = socket.recv_fds(conn, 4096, 2)
            while data and b"\n" not in data:
                more = conn.recv(4096)
                if not more:
                    break
                data += more
        except OSError as exc:
            conn.close()
            raise SandboxError(f"the fork server did not answer: {exc}") from exc
        try:
            line, _, rest = data.partition(b"\n")
            message = json.loads(line) if line else {}
            if len(fds) != 2 or not message.get("started"):
                why = message.get("error") or "no answer"
                raise SandboxError(f"the fork server could not make the sandbox: {why}")
            keeper, init = (_host_pid(fd) for fd in fds)
            pidns = os.stat(f"/proc/{init}/ns/pid").st_ino
        except BaseException:
            conn.close()
            raise
        finally:
            for fd in fds:
                os.close(fd)
        conn.settimeout(None)
        handle = ForkedProcess(conn, keeper)
        handle._buffer = rest
        return handle, init, pidns

    def alive(self) -> bool:
        """Whether the server still runs (in the worker that started it; a work horse, its
        fork, finds out when ``spawn`` cannot connect)."""
        try:
            return self.proc.poll() is None
        except ChildProcessError:
            return self.socket_path.exists()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError, subprocess.TimeoutExpired):
            self.proc.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


_FOLDER_PREFIX = "arboretum-forkserver-"
_STALE_AFTER_S = 60.0


def _prune_stale_folders() -> None:
    """Remove the folders of fork servers that are gone (a worker killed with its server leaves
    its folder): nobody listens on their socket any more. Young ones may be starting: kept."""
    now = time.time()
    for folder in Path(tempfile.gettempdir()).glob(_FOLDER_PREFIX + "*"):
        try:
            if not folder.is_dir() or now - folder.stat().st_mtime < _STALE_AFTER_S:
                continue
        except OSError:
            continue
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(folder / "fork.sock"))
            except OSError:
                shutil.rmtree(folder, ignore_errors=True)


def _server_bwrap_args(bwrap: str, visible: list[Path], folder: Path) -> list[str]:
    """bwrap options of the server's own sandbox: the bots' system folders and runtime, the
    match folders (read-only) and its socket's folder."""
    plan = root_plan(python_runtime_paths(), bot=None, socket=None, tmp_size=16 * 1024 * 1024)
    a = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    a += ["--unshare-cgroup-try", "--hostname", "arena-forkserver", "--new-session"]
    a += ["--die-with-parent", "--cap-drop", "ALL"]
    for cap in _CAPS:
        a += ["--cap-add", cap]
    for d in plan.dirs:
        if not (d == "/tmp" or d.startswith("/tmp/")):
            a += ["--perms", "0755", "--dir", d]
    for target, path in plan.symlinks:
        a += ["--symlink", target, path]
    for src, dst in plan.system_binds:
        a += ["--ro-bind", src, dst]
    a += ["--size", str(plan.tmp_size), "--perms", "1777", "--tmpfs", "/tmp"]
    for d in plan.dirs:
        if d == "/tmp" or d.startswith("/tmp/"):
            a += ["--perms", "0755", "--dir", d]
    for src, dst in plan.binds:
        a += ["--ro-bind", src, dst]
    for seen in visible:
        a += ["--ro-bind", str(seen), str(seen)]
    a += ["--bind", str(folder), str(folder)]
    a += ["--perms", "0755", "--dir", _ROOT_INSIDE]
    a += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", "/"]
    return a


def bot_request(
    args: list[str],
    env: dict[str, str],
    root: dict[str, object],
    uid: int | None,
    rlimits: dict[str, int],
) -> dict[str, Any]:
    """A request for one sandbox (what :meth:`ForkServer.spawn` sends)."""
    return {
        "args": args,
        "env": env,
        "root": {**root, "mountpoint": _ROOT_INSIDE, "pivot_root": PIVOT_ROOT_SYSCALL},
        "uid": uid,
        "rlimits": rlimits,
        "hostname": "arena-bot",
        "cwd": "/tmp",
    }


def runs_as_python(args: list[str]) -> bool:
    """Whether the fork server can run ``python ARGS`` (``-m MODULE``, ``-c CODE`` or a script,
    with their arguments; no interpreter options)."""
    if not args:
        return False
    if args[0] in ("-m", "-c"):
        return len(args) >= 2
    return not args[0].startswith("-")


# ---------------------------------------------------------------------------- the worker's one
_CURRENT: ForkServer | None = None


def enabled(env: dict[str, str] | None = None) -> bool:
    value = (env if env is not None else os.environ).get(FORK_SERVER_ENV, "1").strip().lower()
    return value not in ("0", "no", "off", "false")


def start_fork_server(visible: list[Path]) -> ForkServer | None:
    """Start this process's fork server (``arena worker``, before it forks work horses), unless
    turned off, not root, or bwrap does not work here; its forks (the horses) use it."""
    global _CURRENT
    if _CURRENT is not None:
        return _CURRENT
    if not enabled() or os.geteuid() != 0:
        return None
    try:
        _CURRENT = ForkServer.start(visible)
    except SandboxError as exc:
        log.warning("no bot fork server (bots start as plain bwrap sandboxes): %s", exc)
        return None
    owner = os.getpid()
    # At the worker's exit (not a work horse's: rq ends those with os._exit).
    atexit.register(lambda: stop_fork_server() if os.getpid() == owner else None)
    return _CURRENT


def current_fork_server() -> ForkServer | None:
    """The fork server this process (or the worker it was forked from) started, if any."""
    return _CURRENT


def stop_fork_server() -> None:
    global _CURRENT
    if _CURRENT is not None:
        _CURRENT.stop()
        _CURRENT = None
