"""Local runners: bubblewrap, ``unshare`` and the unsandboxed fallback for built-in bots."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from .base import (
    SOCKET_INSIDE,
    LaunchSpec,
    SandboxedBot,
    SandboxError,
    SandboxRunner,
    UidSlot,
    UidSlotPool,
    log,
    python_runtime_paths,
)
from .capture import OutputCapture
from .forkserver import ForkServer, bot_request, current_fork_server, runs_as_python
from .limits import DEFAULT_LIMITS, SandboxLimits
from .root import LAUNCHER, PIVOT_ROOT_SYSCALL, RootPlan, root_plan

__all__ = [
    "LAUNCHER",
    "BareRunner",
    "BwrapRunner",
    "UnshareRunner",
    "bwrap_usable",
    "native_launcher_argv",
    "unshare_problem",
    "unshare_usable",
]


def _is_root() -> bool:
    return os.geteuid() == 0


def _plan(spec: LaunchSpec, limits: SandboxLimits) -> RootPlan:
    bot = None
    if spec.bot_host is not None and spec.bot_inside is not None:
        bot = (spec.bot_host, spec.bot_inside)
    socket = (spec.socket_host, SOCKET_INSIDE) if spec.socket_host is not None else None
    return root_plan(spec.binds, bot=bot, socket=socket, tmp_size=limits.tmp_size_bytes)


def _launcher_argv(cfg: Mapping[str, object]) -> list[str]:
    python = str(Path(sys.executable).resolve())
    return [python, "-I", "-S", "-c", LAUNCHER, json.dumps(cfg)]


# The same steps as LAUNCHER without its mounts, with util-linux's prlimit and setpriv: two small
# C programs exec'd in turn cost about a millisecond, where the Python launcher costs a whole
# interpreter start (~25 ms of CPU per bot). The bwrap runner uses them when both are installed
# in a system folder that it binds into the sandbox.
_PRLIMIT_FLAGS = {
    "RLIMIT_CPU": "--cpu",
    "RLIMIT_DATA": "--data",
    "RLIMIT_AS": "--as",
    "RLIMIT_NPROC": "--nproc",
    "RLIMIT_NOFILE": "--nofile",
    "RLIMIT_FSIZE": "--fsize",
    "RLIMIT_CORE": "--core",
}


@functools.cache
def _system_tool(name: str) -> str | None:
    """The real path of ``name`` if it lies in a system folder bound into bwrap sandboxes."""
    found = shutil.which(name, path="/usr/bin:/bin:/usr/sbin:/sbin")
    if found is None:
        return None
    real = os.path.realpath(found)
    return real if real.startswith(("/usr/", "/bin/", "/sbin/")) else None


def native_launcher_argv(rlimits: Mapping[str, int], uid: int | None) -> list[str] | None:
    """``prlimit ... -- setpriv ... -- env -u PWD --``: rlimits (soft = hard), then, with
    ``uid``, the drop to it (groups cleared, every capability dropped from the bounding,
    inheritable and ambient sets), and no_new_privs; then the ``PWD`` that bwrap sets is taken
    out of the environment; the bot's argv follows. None if prlimit, setpriv or env is missing,
    or an rlimit has no prlimit flag (the Python launcher is used then)."""
    prlimit, setpriv, env = _system_tool("prlimit"), _system_tool("setpriv"), _system_tool("env")
    if None in (prlimit, setpriv, env) or not set(rlimits) <= set(_PRLIMIT_FLAGS):
        return None
    assert prlimit is not None and setpriv is not None and env is not None
    argv = [prlimit, *(f"{_PRLIMIT_FLAGS[k]}={v}:{v}" for k, v in rlimits.items()), "--", setpriv]
    if uid is not None:
        argv += [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    argv += ["--no-new-privs", "--", env, "-u", "PWD", "--"]
    return argv


def _spawn_process(
    argv: list[str], spec: LaunchSpec, limit: int, pass_fds: tuple[int, ...] = ()
) -> tuple[subprocess.Popen[bytes], OutputCapture]:
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            env=spec.env,
            close_fds=True,
            pass_fds=pass_fds,
            start_new_session=True,
            cwd="/",
            umask=0o022,  # bwrap creates the mount points' parent folders with it
        )
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    os.close(write_fd)
    return proc, OutputCapture(read_fd, limit, spec.log_path, spec.name)


def require_world_readable(path: Path) -> None:
    """Raise unless the sandbox's unprivileged uid can read every file of the bot."""
    entries = [path] if path.is_file() else [path, *path.rglob("*")]
    for entry in entries:
        if entry.is_symlink():
            continue
        mode = entry.stat().st_mode
        need = 0o005 if entry.is_dir() else 0o004
        if mode & need != need:
            raise SandboxError(
                f"{entry} is not readable by the sandbox's unprivileged user (mode "
                f"{oct(mode & 0o777)}): bot files must be world-readable (umask 022)"
            )


def _child_of(pid: int, timeout: float = 5.0) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as fh:
                kids = fh.read().split()
        except OSError:
            return None
        if kids:
            return int(kids[0])
        time.sleep(0.005)
    return None


# ------------------------------------------------------------------------------ bubblewrap
@functools.cache
def bwrap_usable(bwrap: str = "bwrap") -> bool:
    """Whether bubblewrap runs here with a new pid and network namespace."""
    exe = shutil.which(bwrap)
    if exe is None:
        return False
    args = [exe, "--ro-bind", "/", "/", "--unshare-pid", "--unshare-net", "--die-with-parent"]
    if not _is_root():
        args.append("--unshare-user")
    try:
        res = subprocess.run([*args, "true"], capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return res.returncode == 0


class BwrapRunner(SandboxRunner):
    """Each bot in a bubblewrap sandbox: new pid, net, ipc, uts, (cgroup) and mount namespaces.

    The root is an empty read-only tmpfs holding only: /usr, /lib*, /bin, /sbin and a few /etc
    files (read-only); the Python runtime paths (read-only, at their host paths); the bot at
    /bot/<name> (read-only); the socket file at /run/arena/referee.sock; a fresh /proc and /dev;
    a private tmpfs at /tmp (``tmp_size_bytes``). As root, the launcher drops to a dedicated uid
    from :class:`UidSlotPool`; otherwise bwrap adds a user namespace (``--disable-userns``).
    """

    kind = "bwrap"

    def __init__(
        self,
        limits: SandboxLimits = DEFAULT_LIMITS,
        *,
        bwrap: str = "bwrap",
        uid_pool: UidSlotPool | None = None,
        native_launcher: bool = True,
        fork_server: ForkServer | bool = True,
    ) -> None:
        """``fork_server``: a :class:`~.forkserver.ForkServer` to start the bots it can
        (as root), True for the worker's own if it started one, False for none."""
        super().__init__(limits)
        exe = shutil.which(bwrap)
        if exe is None:
            raise SandboxError("bubblewrap (bwrap) not found")
        self.bwrap = exe
        self.privileged = _is_root()
        self.uid_pool = uid_pool or UidSlotPool()
        # prlimit + setpriv rather than the Python launcher, where both are installed
        self.native_launcher = native_launcher and native_launcher_argv({}, None) is not None
        server = current_fork_server() if fork_server is True else fork_server or None
        self.fork_server: ForkServer | None = server if self.privileged else None

    def describe(self) -> str:
        mode = "root: dedicated uid per sandbox" if self.privileged else "user namespace"
        launcher = "prlimit + setpriv" if self.native_launcher else "python launcher"
        if self.fork_server is not None:
            launcher += ", fork server"
        return f"bwrap ({self.bwrap}, {mode}, {launcher})"

    def bwrap_args(self, spec: LaunchSpec, uid: int | None) -> list[str]:
        a = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
        a += ["--unshare-cgroup-try", "--hostname", "arena-bot", "--new-session"]
        a += ["--die-with-parent", "--cap-drop", "ALL"]
        if uid is not None:
            # the launcher needs these to drop to the slot uid (and then has none at all)
            a += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
        else:
            a += ["--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns"]
        plan = _plan(spec, self.limits)
        in_tmp = [d for d in plan.dirs if d == "/tmp" or d.startswith("/tmp/")]
        # bwrap would make folders 0700 (unreadable for the slot uid): make them 0755 first
        for d in plan.dirs:
            if d not in in_tmp:
                a += ["--perms", "0755", "--dir", d]
        for target, path in plan.symlinks:
            a += ["--symlink", target, path]
        for src, dst in plan.system_binds:
            a += ["--ro-bind", src, dst]
        # The private /tmp before the runtime paths: one under /tmp (a clone or a venv there)
        # is then bound on top of it rather than hidden by it.
        a += ["--size", str(plan.tmp_size), "--perms", "1777", "--tmpfs", "/tmp"]
        for d in in_tmp:
            a += ["--perms", "0755", "--dir", d]
        for src, dst in plan.binds:
            a += ["--ro-bind", src, dst]
        a += ["--proc", "/proc", "--dev", "/dev"]
        a += ["--remount-ro", "/", "--chdir", "/tmp"]
        return a

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        if self.privileged and spec.bot_host is not None:
            require_world_readable(spec.bot_host)
        slot: UidSlot | None = self.uid_pool.acquire() if self.privileged else None
        uid = slot.uid if slot else None
        if slot is not None and spec.socket_host is not None:
            # the slot uid must be allowed to connect(); the match dir itself stays private
            os.chmod(spec.socket_host, 0o666)
        # One read of the server: the bots of a match start in threads, and one that finds the
        # server gone drops it for all while another may be between its checks.
        server = self.fork_server
        if server is not None and self._forkable(spec, server):
            try:
                return self._spawn_forked(server, spec, slot)
            except SandboxError as exc:  # the server is gone: a plain start still works
                log.warning("bot fork server: %s; starting %s as a plain sandbox", exc, spec.name)
                self.fork_server = None
        rlimits = self.limits.rlimits()
        info_r, info_w = os.pipe()
        argv = [*self.bwrap_args(spec, uid), "--info-fd", str(info_w), "--"]
        native = native_launcher_argv(rlimits, uid) if self.native_launcher else None
        if native is not None:
            argv += [*native, *spec.argv]
        else:
            argv += _launcher_argv({"argv": spec.argv, "rlimits": rlimits, "uid": uid})
        try:
            proc, capture = _spawn_process(argv, spec, self.limits.output_bytes, (info_w,))
        except BaseException:
            os.close(info_r)
            if slot:
                slot.release()
            raise
        finally:
            os.close(info_w)
        info = _read_info(info_r)
        bot = SandboxedBot(
            name=spec.name,
            kind=self.kind,
            proc=proc,
            capture=capture,
            sandbox_pidns=info.get("pid-namespace"),
            sandbox_init_pid=info.get("child-pid"),
            uid_slot=slot,
            log_path=spec.log_path,
        )
        if not info:
            rc = bot.wait(10)
            bot.kill()
            raise SandboxError(
                f"bwrap failed to set up the sandbox of {spec.name} (exit {rc}): "
                + bot.output().decode(errors="replace")[-2000:]
            )
        return bot

    def _forkable(self, spec: LaunchSpec, server: ForkServer) -> bool:
        """Whether ``server`` can start this bot: it runs Python's own arguments, and the
        server sees the bot's files and the socket."""
        return (
            runs_as_python(spec.argv[1:])
            and (spec.bot_host is None or server.sees(spec.bot_host))
            and (spec.socket_host is None or server.sees(spec.socket_host))
        )

    def _spawn_forked(
        self, server: ForkServer, spec: LaunchSpec, slot: UidSlot | None
    ) -> SandboxedBot:
        """The bot in a sandbox forked by the fork server (:mod:`.forkserver`): the same root
        plan, uid, rlimits and environment as bwrap's, in an interpreter already started."""
        plan = _plan(spec, self.limits)
        uid = slot.uid if slot else None
        request = bot_request(spec.argv[1:], spec.env, plan.to_json(), uid, self.limits.rlimits())
        read_fd, write_fd = os.pipe()
        try:
            proc, init, pidns = server.spawn(request, write_fd)
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)
        return SandboxedBot(
            name=spec.name,
            kind=self.kind,
            proc=proc,
            capture=OutputCapture(read_fd, self.limits.output_bytes, spec.log_path, spec.name),
            sandbox_pidns=pidns,
            sandbox_init_pid=init,
            uid_slot=slot,
            log_path=spec.log_path,
        )


def _read_info(fd: int, timeout: float = 20.0) -> dict[str, int]:
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
            with contextlib.suppress(ValueError):
                parsed = json.loads(data)
                return {k: int(v) for k, v in parsed.items() if isinstance(v, int)}
    finally:
        os.close(fd)
    return {}


# ------------------------------------------------------------------------------ unshare
_ROOT_MOUNTPOINT = Path(tempfile.gettempdir()) / "arboretum-sandbox-root"


def _unshare_argv(exe: str, privileged: bool, cfg: Mapping[str, object]) -> list[str]:
    argv = [exe]
    if not privileged:
        argv.append("--map-root-user")
    argv += ["--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--ipc", "--uts"]
    argv += ["--propagation", "private", "--"]
    return argv + _launcher_argv(cfg)


def _root_cfg(plan: RootPlan) -> dict[str, object]:
    _ROOT_MOUNTPOINT.mkdir(mode=0o700, exist_ok=True)
    return {**plan.to_json(), "mountpoint": str(_ROOT_MOUNTPOINT), "pivot_root": PIVOT_ROOT_SYSCALL}


@functools.cache
def unshare_problem(unshare: str = "unshare") -> str | None:
    """Why the unshare runner cannot give a bot bwrap's minimal root here, or None if it can.

    It tries for real: namespaces, the root built from the same plan as bwrap's, a Python start
    in it."""
    exe = shutil.which(unshare)
    if exe is None:
        return "unshare (util-linux) is not installed"
    if PIVOT_ROOT_SYSCALL is None:
        return f"the pivot_root system call of this machine ({os.uname().machine}) is not known"
    plan = root_plan(python_runtime_paths(), bot=None, socket=None, tmp_size=1024 * 1024)
    python = str(Path(sys.executable).resolve())
    cfg = {"argv": [python, "-I", "-S", "-c", "pass"], "rlimits": {}, "root": _root_cfg(plan)}
    try:
        res = subprocess.run(
            _unshare_argv(exe, _is_root(), cfg), capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare did not run: {exc}"
    if res.returncode != 0:
        why = res.stderr.decode(errors="replace").strip().splitlines()
        return f"unshare cannot build the sandbox here (exit {res.returncode}): " + (
            why[-1] if why else "no message"
        )
    return None


def unshare_usable(unshare: str = "unshare") -> bool:
    """Whether the unshare runner works here (:func:`unshare_problem` says why not)."""
    return unshare_problem(unshare) is None


class UnshareRunner(SandboxRunner):
    """Where bubblewrap is missing: ``unshare`` namespaces, and the launcher builds the root.

    New net, pid, ipc, uts and mount namespaces (a user namespace too when the worker is not
    root). The launcher builds the same minimal root as bwrap from the same plan
    (:func:`.root.root_plan`: system folders, three /etc files, the runtime, the bot at
    /bot/<name>, the socket, a fresh /proc and /dev, a private /tmp), pivots into it, detaches
    the host's root and remounts / read-only, then drops privileges. Refused, with the reason,
    where that cannot be done (:func:`unshare_problem`).
    """

    kind = "unshare"

    def __init__(
        self,
        limits: SandboxLimits = DEFAULT_LIMITS,
        *,
        unshare: str = "unshare",
        uid_pool: UidSlotPool | None = None,
    ) -> None:
        super().__init__(limits)
        problem = unshare_problem(unshare)
        if problem is not None:
            raise SandboxError(f"the unshare sandbox is not available: {problem}")
        self.unshare = shutil.which(unshare) or unshare
        self.privileged = _is_root()
        self.uid_pool = uid_pool or UidSlotPool()

    def describe(self) -> str:
        mode = "root: dedicated uid per sandbox" if self.privileged else "user namespace"
        return f"unshare ({self.unshare}, {mode}, minimal root)"

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        if self.privileged and spec.bot_host is not None:
            require_world_readable(spec.bot_host)
        slot: UidSlot | None = self.uid_pool.acquire() if self.privileged else None
        if slot is not None and spec.socket_host is not None:
            os.chmod(spec.socket_host, 0o666)
        cfg = {
            "argv": spec.argv,
            "rlimits": self.limits.rlimits(),
            "uid": slot.uid if slot else None,
            "root": _root_cfg(_plan(spec, self.limits)),
        }
        argv = _unshare_argv(self.unshare, self.privileged, cfg)
        try:
            proc, capture = _spawn_process(argv, spec, self.limits.output_bytes)
        except BaseException:
            if slot:
                slot.release()
            raise
        child = _child_of(proc.pid)
        pidns = None
        if child is not None:
            with contextlib.suppress(OSError):
                pidns = os.stat(f"/proc/{child}/ns/pid").st_ino
        return SandboxedBot(
            name=spec.name,
            kind=self.kind,
            proc=proc,
            capture=capture,
            sandbox_pidns=pidns,
            sandbox_init_pid=child,
            uid_slot=slot,
            log_path=spec.log_path,
        )


# ------------------------------------------------------------------------------ none
class BareRunner(SandboxRunner):
    """No sandbox: rlimits only (no process limit: it would count the worker's own uid).

    Runs built-in bots only; submitted bots raise :class:`SandboxUnavailableError`. The bot gets
    a scratch folder of its own as HOME/TMPDIR and a fresh environment; the socket is used at its
    host path.
    """

    kind = "none"
    isolating = False

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        log.warning(
            "no sandbox: running built-in bot %s with rlimits only (no network/filesystem "
            "isolation)",
            spec.name,
        )
        scratch = tempfile.mkdtemp(prefix="arena-bot-")
        spec.env.update(HOME=scratch, TMPDIR=scratch)
        if spec.socket_host is not None:
            spec.argv = [a.replace(SOCKET_INSIDE, str(spec.socket_host)) for a in spec.argv]
        rlimits = {k: v for k, v in self.limits.rlimits().items() if k != "RLIMIT_NPROC"}
        cfg = {"argv": spec.argv, "rlimits": rlimits, "uid": None, "cwd": scratch}
        proc, capture = _spawn_process(_launcher_argv(cfg), spec, self.limits.output_bytes)
        bot = _ScratchBot(
            name=spec.name, kind=self.kind, proc=proc, capture=capture, log_path=spec.log_path
        )
        bot.scratch = scratch
        return bot


class _ScratchBot(SandboxedBot):
    scratch: str = ""

    def _cleanup(self) -> None:
        try:
            super()._cleanup()
        finally:
            if self.scratch:
                shutil.rmtree(self.scratch, ignore_errors=True)
