"""What every runner shares: errors, the launch spec, the sandboxed process handle, the runtime."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, ClassVar, Protocol

from arboretum_sdk.bots import BUILTIN_BOTS as SDK_BUILTIN_BOTS

from .capture import OutputCapture
from .limits import DEFAULT_LIMITS, SandboxLimits

__all__ = [
    "BOT_DIR_INSIDE",
    "BUILTIN_BOTS",
    "DEFAULT_UID_LOCK_DIR",
    "SOCKET_INSIDE",
    "UID_LOCK_DIR_ENV",
    "LaunchSpec",
    "SandboxError",
    "SandboxRunner",
    "SandboxUnavailableError",
    "SandboxedBot",
    "UidSlot",
    "UidSlotPool",
    "bot_env",
    "python_runtime_paths",
    "uid_lock_dir",
]

log = logging.getLogger("arboretum_worker.sandbox")

BUILTIN_BOTS = frozenset(SDK_BUILTIN_BOTS)
"""The SDK's built-in bot names (``arena bot list``), runnable without a bot directory."""
SOCKET_INSIDE = "/run/arena/referee.sock"
BOT_DIR_INSIDE = "/bot"
_TOKEN_ENV = "ARENA_TOKEN"


class SandboxError(RuntimeError):
    """A sandbox could not be set up, or did not go away."""


class SandboxUnavailableError(SandboxError):
    """No isolating sandbox here: submitted bots are refused (built-in ones may run unsandboxed)."""


# ------------------------------------------------------------------------------ runtime
def _package_dir(module_name: str) -> Path | None:
    try:
        module = __import__(module_name, fromlist=["__file__"])
    except ImportError:
        return None
    file = getattr(module, "__file__", None)
    return Path(file).resolve().parent if file else None


_RUNTIME_MODULES = ("arboretum", "arboretum_sdk", "arboretum_proto", "grpc", "google.protobuf")


def python_runtime_paths() -> list[Path]:
    """Host paths the bot's interpreter needs, to be visible read-only at the same place.

    The interpreter prefix (``sys.base_prefix``), the venv (``sys.prefix``) and the directories of
    the SDK packages and their dependencies; paths inside another listed path are left out.
    """
    candidates = [Path(sys.base_prefix).resolve(), Path(sys.prefix).absolute()]
    candidates.append(Path(sys.executable).resolve().parent)
    for name in _RUNTIME_MODULES:
        pkg = _package_dir(name)
        if pkg is not None:
            candidates.append(pkg)
    out: list[Path] = []
    for path in sorted(set(candidates), key=lambda p: (len(p.parts), str(p))):
        if not any(path == kept or kept in path.parents for kept in out):
            out.append(path)
    return out


def _sdk_pythonpath() -> list[str]:
    """Parents of the SDK packages that are not on the venv's own site-packages."""
    roots: list[str] = []
    for name in ("arboretum", "arboretum_sdk", "arboretum_proto"):
        pkg = _package_dir(name)
        if pkg is None:
            continue
        parent = str(pkg.parent)
        if "site-packages" not in pkg.parts and parent not in roots:
            roots.append(parent)
    return roots


def bot_env(token: str | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The bot's whole environment, built from scratch (nothing of the worker's is inherited)."""
    bindir = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONNOUSERSITE": "1",
        "MALLOC_ARENA_MAX": "2",
    }
    pythonpath = _sdk_pythonpath()
    if pythonpath:
        env["PYTHONPATH"] = ":".join(pythonpath)
    if token is not None:
        env[_TOKEN_ENV] = token
    if extra:
        env.update(extra)
    return env


# ------------------------------------------------------------------------------ uid slots
@dataclass(slots=True)
class UidSlot:
    """A host uid lent to one sandbox; its lock file is held (flock) until released."""

    uid: int
    _lock: IO[bytes] | None = None

    def release(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None


def _uid_processes(uid: int) -> list[int]:
    pids: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            pids.append(int(entry))
                        break
        except (OSError, ValueError):
            continue
    return pids


def _host_processes(pidns: int | None, pgid: int | None) -> set[int]:
    """Processes of pid namespace ``pidns`` (its inode) or of process group ``pgid`` (the
    runner's own child leads one), zombies included: one pass over ``/proc`` with a system call
    or two a process (``stat`` of its namespace link, ``getpgid``), not a file read. A sandbox is
    looked for at least twice as it is killed, by every match, and a machine running fifty casual
    tables has hundreds of processes: reading each one's ``stat`` file cost a league match end
    tens of milliseconds (bench/sandbox_scan.py, docs/benchmarks.md)."""
    found: set[int] = set()
    if pidns is None and pgid is None:
        return found
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            in_group = pgid is not None and os.getpgid(pid) == pgid
            if in_group or (pidns is not None and os.stat(f"/proc/{entry}/ns/pid").st_ino == pidns):
                found.add(pid)
        except OSError:
            continue  # gone meanwhile, or not ours to look at
    return found


def _pin_namespace(init_pid: int | None, inode: int | None) -> int | None:
    """An open descriptor of the sandbox's pid namespace (the one of ``init_pid``, numbered
    ``inode``), or None if it is gone. While it is open the namespace's number stays its own: the
    kernel gives a freed namespace's number to the next new one, so without it the cleanup of a
    sandbox whose init has died could find, by that number, the processes of a sandbox another
    match has just started, and kill them."""
    if init_pid is None or inode is None:
        return None
    try:
        fd = os.open(f"/proc/{init_pid}/ns/pid", os.O_RDONLY)
    except OSError:
        return None
    if os.fstat(fd).st_ino != inode:  # not the same namespace any more
        os.close(fd)
        return None
    return fd


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


UID_LOCK_DIR_ENV = "ARENA_UID_LOCK_DIR"
"""The setting of the folder of the uid slots' lock files (:data:`DEFAULT_UID_LOCK_DIR`)."""
DEFAULT_UID_LOCK_DIR = "/run/arboretum"
"""One folder for the whole machine, whatever ``TMPDIR`` says: the uids are the machine's."""


def uid_lock_dir(env: Mapping[str, str] | None = None) -> Path:
    """The folder of the uid slots' lock files: ``ARENA_UID_LOCK_DIR``, else ``/run/arboretum``."""
    value = (os.environ if env is None else env).get(UID_LOCK_DIR_ENV, "").strip()
    path = Path(value or DEFAULT_UID_LOCK_DIR)
    if not path.is_absolute():
        raise SandboxError(f"{UID_LOCK_DIR_ENV} must be an absolute path, not {value!r}")
    return path


class UidSlotPool:
    """Dedicated unprivileged host uids, one per running sandbox (used when the worker is root).

    Each slot is a uid ``base + i``; a slot is taken by holding an ``flock`` on
    ``<lock_dir>/uid-<uid>.lock``. The uids are the machine's, so the lock folder is one for the
    machine (:func:`uid_lock_dir`: ``/run/arboretum`` unless ``ARENA_UID_LOCK_DIR`` says
    otherwise), never under a temporary folder that another installation may see differently:
    every worker of the machine, of any installation, then takes its slots from the same locks
    and never hands out a uid another holds. A slot still owning processes is skipped.
    ``RLIMIT_NPROC`` counts per real uid, so with one uid per sandbox it bounds exactly that
    sandbox's processes.
    """

    def __init__(self, base: int = 1_700_000_000, size: int = 1024, lock_dir: Path | None = None):
        if not 1000 <= base <= 2**31 - 1 - size:
            raise ValueError("uid slot base out of range")
        self.base = base
        self.size = size
        self.lock_dir = lock_dir or uid_lock_dir()

    def _open_lock_dir(self) -> None:
        try:
            self.lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.lock_dir.stat()
        except OSError as exc:
            raise SandboxError(
                f"cannot use the sandbox uid lock folder {self.lock_dir} ({UID_LOCK_DIR_ENV}): "
                f"{exc.strerror}"
            ) from None
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise SandboxError(
                f"the sandbox uid lock folder {self.lock_dir} ({UID_LOCK_DIR_ENV}) must belong "
                "to the worker's user and be writable by it alone"
            )

    def acquire(self) -> UidSlot:
        self._open_lock_dir()
        for uid in range(self.base, self.base + self.size):
            fh = open(self.lock_dir / f"uid-{uid}.lock", "ab")  # noqa: SIM115 - held by the slot
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            if any(_alive(pid) for pid in _uid_processes(uid)):
                fcntl.flock(fh, fcntl.LOCK_UN)
                fh.close()
                continue
            return UidSlot(uid, fh)
        raise SandboxError(f"all {self.size} sandbox uid slots are busy")


# ------------------------------------------------------------------------------ launch spec
@dataclass(slots=True)
class LaunchSpec:
    """What to run: resolved by :meth:`SandboxRunner.start`, carried out by a runner's spawn."""

    name: str
    argv: list[str]  # inside the sandbox, argv[0] is the interpreter
    env: dict[str, str]
    bot_host: Path | None  # None for a built-in bot
    bot_inside: str | None
    socket_host: Path | None
    log_path: Path | None
    builtin: bool
    binds: list[Path] = field(default_factory=list)  # read-only runtime paths


# ------------------------------------------------------------------------------ the handle
class SandboxProcess(Protocol):
    """What the handle needs of the process the worker started: ``subprocess.Popen``, or the
    fork server's :class:`~.forkserver.ForkedProcess`."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def kill(self) -> None: ...


class SandboxedBot:
    """One running bot in its sandbox.

    ``pid`` is the process the worker started (``bwrap``/``unshare``/python; for docker, the
    container's main pid as the engine reports it). ``kill()`` ends the sandbox with everything
    in it and checks that nothing is left; it is idempotent and also run on leaving a ``with``.
    """

    def __init__(
        self,
        *,
        name: str,
        kind: str,
        proc: SandboxProcess | None,
        capture: OutputCapture | None,
        sandbox_pidns: int | None = None,
        sandbox_init_pid: int | None = None,
        uid_slot: UidSlot | None = None,
        log_path: Path | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.log_path = log_path
        self._proc = proc
        self._capture = capture
        self._pidns = sandbox_pidns
        self._init_pid = sandbox_init_pid
        self._pidns_fd = _pin_namespace(sandbox_init_pid, sandbox_pidns)
        if self._pidns_fd is None:
            # gone already (with every process in it): its number may be another sandbox's now
            self._pidns = None
        self._slot = uid_slot
        self._uid = uid_slot.uid if uid_slot else None
        self._closed = False

    # -- process ---------------------------------------------------------------------------
    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once ended (negative: killed by that signal), else None."""
        return None if self._proc is None else self._proc.poll()

    @property
    def uid(self) -> int | None:
        """The dedicated host uid of this sandbox, if it has one."""
        return self._uid

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the bot to end; its exit status, or None if still running after ``timeout``."""
        assert self._proc is not None
        try:
            rc = self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._cleanup()
        return rc

    def _signal_all(self) -> None:
        if (
            self._init_pid is not None
            and self._pidns is not None
            and self._in_sandbox(self._init_pid)
        ):
            # the sandbox's pid 1: when it dies the kernel kills every process of its pid namespace
            with contextlib.suppress(OSError):
                os.kill(self._init_pid, signal.SIGKILL)
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self._proc.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self._proc.kill()

    def _in_sandbox(self, pid: int) -> bool:
        if self._pidns is not None:
            try:
                if os.stat(f"/proc/{pid}/ns/pid").st_ino == self._pidns:
                    return True
            except OSError:
                pass
        return False

    def remaining_pids(self) -> list[int]:
        """Host pids of live processes of this sandbox (empty once it is gone; zombies, already
        dead and waiting to be reaped by the host's init, are not counted)."""
        # Found by what is the sandbox's own (its pid namespace, the runner's process group),
        # never by its uid: a process of the same uid outside the sandbox is not this one's.
        pgid = self._proc.pid if self._proc is not None else None
        found = _host_processes(self._pidns, pgid)
        if self._proc is not None and self._proc.poll() is None:
            found.add(self._proc.pid)
        found.discard(os.getpid())
        return sorted(pid for pid in found if _alive(pid))

    def kill(self) -> None:
        """Kill the bot and all its children; verify that nothing of the sandbox is left."""
        if self._closed:
            return
        self._signal_all()
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(10)
        self._cleanup()

    def _cleanup(self) -> None:
        if self._closed:
            return
        deadline = time.monotonic() + 5.0
        left = self.remaining_pids()
        while left and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if self._proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(0.05)
            time.sleep(0.02)
            left = self.remaining_pids()
        if self._capture is not None:
            self._capture.join(5.0)
        self._closed = True
        if self._pidns_fd is not None:
            os.close(self._pidns_fd)
            self._pidns_fd = None
        if self._slot is not None:
            self._slot.release()
        if left:
            raise SandboxError(f"sandbox of {self.name}: processes left after kill: {left}")

    # -- output ----------------------------------------------------------------------------
    def output(self) -> bytes:
        """The bot's stdout and stderr, interleaved, capped (with a marker if cut)."""
        if self._capture is None:
            return b""
        if self.returncode is not None:
            self._capture.join(5.0)
        return self._capture.data()

    @property
    def output_dropped(self) -> int:
        """Bytes of output dropped past the cap so far."""
        return 0 if self._capture is None else self._capture.dropped

    def __enter__(self) -> SandboxedBot:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.kill()

    def __repr__(self) -> str:
        return f"<SandboxedBot {self.name} kind={self.kind} rc={self.returncode}>"


# ------------------------------------------------------------------------------ runner base
class SandboxRunner:
    """Starts bots in sandboxes of one kind. Subclasses implement :meth:`_spawn`."""

    kind: ClassVar[str] = "?"
    isolating: ClassVar[bool] = True  # False: rlimits only, built-in bots only

    def __init__(self, limits: SandboxLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def describe(self) -> str:
        return self.kind

    def start(
        self,
        bot: Path | str,
        *,
        socket_path: Path | None,
        token: str | None,
        log_path: Path | None = None,
        name: str = "bot",
        builtin: bool = False,
        python_args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> SandboxedBot:
        """Start ``bot`` for a match in a fresh sandbox.

        ``bot`` is a built-in name (``builtin=True``) or the host path of a ``.py`` file or a
        folder. The bot reaches the referee only through ``socket_path`` (mounted at
        ``SOCKET_INSIDE``) with ``token`` in ``ARENA_TOKEN``. ``python_args`` replaces the SDK
        command (``-m arboretum_sdk.cli bot run <bot> --server unix:<socket>``); in it ``{bot}``
        stands for the bot's path inside the sandbox. ``env`` adds variables to the bot's
        environment (which is otherwise built from scratch, :func:`bot_env`), such as the
        league's ``ARENA_COMPUTE``.
        """
        if builtin:
            spec_str = str(bot)
            if spec_str not in BUILTIN_BOTS:
                raise ValueError(f"unknown built-in bot {spec_str!r} (have {sorted(BUILTIN_BOTS)})")
            bot_host: Path | None = None
            bot_inside = spec_str
        else:
            if not self.isolating:
                raise SandboxUnavailableError(
                    f"no sandbox available ({self.describe()}): refusing to run submitted bot "
                    f"{name!r}; install bubblewrap or enable user namespaces"
                )
            bot_host = Path(bot).resolve()
            if not bot_host.exists():
                raise FileNotFoundError(f"bot not found: {bot_host}")
            bot_inside = f"{BOT_DIR_INSIDE}/{bot_host.name}"
        if socket_path is not None and not Path(socket_path).exists():
            raise FileNotFoundError(f"referee socket not found: {socket_path}")
        if python_args is None:
            args = ["-m", "arboretum_sdk.cli", "bot", "run", bot_inside]
            if socket_path is not None:
                args += ["--server", f"unix:{SOCKET_INSIDE}"]
        else:
            args = [a.replace("{bot}", bot_inside) for a in python_args]
        spec = LaunchSpec(
            name=name,
            argv=[sys.executable, *args],
            env=bot_env(token, dict(env) if env else None),
            bot_host=bot_host,
            bot_inside=bot_inside if bot_host is not None else None,
            socket_host=Path(socket_path).absolute() if socket_path is not None else None,
            log_path=Path(log_path) if log_path is not None else None,
            builtin=builtin,
            binds=python_runtime_paths(),
        )
        return self._spawn(spec)

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        raise NotImplementedError
