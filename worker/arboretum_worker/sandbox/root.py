"""The bot's minimal root: one plan, carried out by bubblewrap or by the Python launcher.

:func:`root_plan` lists what a sandboxed bot sees (``docs/bot-runtime.md``, "The sandbox"): the
system folders ``/usr``, ``/lib*``, ``/bin``, ``/sbin`` and three ``/etc`` files, read-only; the
Python runtime (interpreter prefix, venv, SDK packages) read-only at its host paths; the bot at
``/bot/<name>`` and the referee socket at ``/run/arena/referee.sock``, read-only. Around it both
backends make the same fresh ``/proc`` (its ``sys``, ``sysrq-trigger``, ``irq`` and ``bus``
covered read-only), the same minimal ``/dev`` (``null zero full random urandom tty``, the
``fd``/``stdin``/``stdout``/``stderr``/``core`` links, a ``devpts`` at ``pts``, an empty
``shm``) and a private tmpfs ``/tmp``, then remount ``/`` read-only. The bwrap runner turns the
plan into bubblewrap options; the unshare runner hands it to :data:`LAUNCHER`, which builds the
root itself (tmpfs, bind mounts, ``pivot_root``) inside the sandbox's mount namespace.
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "BASE_SYSTEM_DIRS",
    "ETC_FILES",
    "LAUNCHER",
    "LAUNCHER_LIB",
    "PIVOT_ROOT_SYSCALL",
    "RootPlan",
    "root_plan",
]

BASE_SYSTEM_DIRS = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin")
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")

# pivot_root(2) has no libc wrapper; its number per machine (the unshare runner refuses to run
# where it is unknown).
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "i686": 217, "i386": 217}
PIVOT_ROOT_SYSCALL = _PIVOT_ROOT.get(platform.machine())


@dataclass(slots=True)
class RootPlan:
    """What goes into the empty root, in order: folders (mode 0755), symlinks, read-only binds."""

    dirs: list[str] = field(default_factory=list)
    symlinks: list[tuple[str, str]] = field(default_factory=list)
    """(target, path)."""
    system_binds: list[tuple[str, str]] = field(default_factory=list)
    """(host path, path inside), bound before the private /tmp."""
    binds: list[tuple[str, str]] = field(default_factory=list)
    """(host path, path inside), bound after it (a runtime path may lie under /tmp)."""
    tmp_size: int = 64 * 1024 * 1024

    def to_json(self) -> dict[str, object]:
        return {
            "dirs": self.dirs,
            "symlinks": self.symlinks,
            "system_binds": self.system_binds,
            "binds": self.binds,
            "tmp_size": self.tmp_size,
        }


def root_plan(
    runtime: list[Path],
    *,
    bot: tuple[Path, str] | None,
    socket: tuple[Path, str] | None,
    tmp_size: int,
) -> RootPlan:
    """The plan for one sandbox: ``runtime`` paths bound at their host paths, ``bot`` and
    ``socket`` as (host path, path inside)."""
    plan = RootPlan(tmp_size=tmp_size)
    for d in BASE_SYSTEM_DIRS:
        if os.path.islink(d):
            plan.symlinks.append((os.readlink(d), d))
        elif os.path.isdir(d):
            plan.system_binds.append((d, d))
    # /etc itself 0755 (bwrap would make it 0700: unreadable for the sandbox's uid)
    plan.dirs.append("/etc")
    plan.system_binds += [(f, f) for f in ETC_FILES if os.path.exists(f)]
    made = {"/etc", "/tmp"}
    for path in runtime:
        for parent in reversed(path.parents[:-1]):
            p = str(parent)
            if p not in made and not p.startswith("/usr"):
                made.add(p)
                plan.dirs.append(p)
        plan.binds.append((str(path), str(path)))
    plan.dirs += ["/run", "/run/arena", "/bot"]
    if socket is not None:
        plan.binds.append((str(socket[0]), socket[1]))
    if bot is not None:
        plan.binds.append((str(bot[0]), bot[1]))
    return plan


# What a sandbox's first process does, as source shared by the launcher and the fork server
# (``forkserver.py``): ``build_root`` builds the minimal root of a RootPlan and pivots into it;
# ``drop_privileges`` drops to the slot uid (root worker), sets no_new_privs, the rlimits and the
# working folder.
LAUNCHER_LIB = r"""
import ctypes, json, os, resource, sys
libc = ctypes.CDLL(None, use_errno=True)
def fail(msg):
    os.write(2, ("arena-sandbox: " + msg + "\n").encode())
    os._exit(125)
def mount(src, tgt, fstype, flags, data=None, strict=True):
    enc = lambda s: None if s is None else s.encode()
    if libc.mount(enc(src), enc(tgt), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        if strict:
            fail("mount %s: %s" % (tgt, os.strerror(ctypes.get_errno())))
        return False
    return True
RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, MOVE, REC, PRIVATE = (
    1, 2, 4, 8, 32, 4096, 8192, 16384, 1 << 18)
KEEP = {8: 8, 1024: 1024, 2048: 2048, 4096: 1 << 21}  # statvfs ST_* -> MS_* kept on remount
def bind_ro(fd, dst, is_dir):
    if is_dir:
        os.makedirs(dst, exist_ok=True)
    elif not os.path.exists(dst):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    mount("/proc/self/fd/%d" % fd, dst, None, BIND | REC)
    keep = sum(ms for st, ms in KEEP.items() if os.statvfs(dst).f_flag & st)
    mount(None, dst, None, REMOUNT | BIND | RDONLY | NOSUID | NODEV | keep)
def build_root(root):
    new = root["mountpoint"]
    sources = [(s, d) for s, d in root["system_binds"]] + [(s, d) for s, d in root["binds"]]
    fds = []
    for src, dst in sources:
        try:
            fds.append(os.open(src, os.O_PATH | os.O_CLOEXEC))
        except OSError as exc:
            fail("open %s: %s" % (src, exc.strerror))
    devs = {}
    for name in ("null", "zero", "full", "random", "urandom", "tty"):
        try:
            devs[name] = os.open("/dev/" + name, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            pass
    mount(None, "/", None, REC | PRIVATE)
    mount("tmpfs", new, "tmpfs", NOSUID | NODEV, "mode=0755")
    os.chdir(new)
    here = lambda p: "." + p
    for target, path in root["symlinks"]:
        os.symlink(target, here(path))
    in_tmp = [d for d in root["dirs"] if d == "/tmp" or d.startswith("/tmp/")]
    for d in root["dirs"]:
        if d not in in_tmp:
            os.makedirs(here(d), exist_ok=True)
            os.chmod(here(d), 0o755)
    n_sys = len(root["system_binds"])
    for (src, dst), fd in zip(sources[:n_sys], fds):
        bind_ro(fd, here(dst), os.path.isdir("/proc/self/fd/%d" % fd))
    os.makedirs(here("/proc"), exist_ok=True)
    mount("proc", here("/proc"), "proc", NOSUID | NODEV | NOEXEC)
    for sub in ("sys", "sysrq-trigger", "irq", "bus"):
        p = here("/proc/" + sub)
        if os.access(p, os.W_OK):
            mount(p, p, None, BIND | REC)
            mount(None, p, None, REMOUNT | BIND | RDONLY | NOSUID | NODEV | NOEXEC)
    os.makedirs(here("/dev"), exist_ok=True)
    mount("tmpfs", here("/dev"), "tmpfs", NOSUID, "mode=0755")
    for name, fd in devs.items():
        open(here("/dev/" + name), "a").close()
        mount("/proc/self/fd/%d" % fd, here("/dev/" + name), None, BIND)
    for i, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink("/proc/self/fd/%d" % i, here("/dev/" + name))
    os.symlink("/proc/self/fd", here("/dev/fd"))
    os.symlink("/proc/kcore", here("/dev/core"))
    os.mkdir(here("/dev/shm"), 0o755)
    os.mkdir(here("/dev/pts"), 0o755)
    pts = "newinstance,ptmxmode=0666,mode=620"
    mount("devpts", here("/dev/pts"), "devpts", NOSUID | NOEXEC, pts)
    os.symlink("pts/ptmx", here("/dev/ptmx"))
    os.makedirs(here("/tmp"), exist_ok=True)
    mount("tmpfs", here("/tmp"), "tmpfs", NOSUID | NODEV, "mode=1777,size=%d" % root["tmp_size"])
    for d in in_tmp:
        os.makedirs(here(d), exist_ok=True)
        os.chmod(here(d), 0o755)
    for (src, dst), fd in zip(sources[n_sys:], fds[n_sys:]):
        bind_ro(fd, here(dst), os.path.isdir("/proc/self/fd/%d" % fd))
    for fd in fds + list(devs.values()):
        os.close(fd)
    if libc.syscall(root["pivot_root"], b".", b".") != 0:
        fail("pivot_root: %s" % os.strerror(ctypes.get_errno()))
    if libc.umount2(b".", 2) != 0:  # MNT_DETACH: the host's root is gone from the namespace
        fail("umount the host root: %s" % os.strerror(ctypes.get_errno()))
    os.chdir("/")
    mount(None, "/", None, REMOUNT | BIND | RDONLY | NOSUID | NODEV)
class CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class CapData(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable")]
def clear_capabilities():
    # every set emptied: effective, permitted and inheritable (capset, _LINUX_CAPABILITY_VERSION_3
    # takes two 32-bit halves), ambient (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL); lowering
    # needs no privilege. A change of uid clears the first two but keeps the inheritable set.
    libc.prctl(47, 4, 0, 0, 0)
    if libc.capset(ctypes.byref(CapHeader(0x20080522, 0)), (CapData * 2)()) != 0:
        fail("capset: %s" % os.strerror(ctypes.get_errno()))
def drop_privileges(cfg):
    uid = cfg.get("uid")
    if uid is not None:
        for cap in range(64):
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP; EINVAL past the last cap
                break
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    clear_capabilities()
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    for name, value in cfg["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    os.chdir(cfg.get("cwd", "/tmp"))
"""

# Runs inside the sandbox as its first process (``python -I -S -c LAUNCHER <json>``): with
# "root" (the unshare runner), builds the minimal root and pivots into it; then drops
# privileges and execs the bot.
LAUNCHER = (
    LAUNCHER_LIB
    + r"""
cfg = json.loads(sys.argv[1])
os.umask(0o022)
if cfg.get("root"):
    build_root(cfg["root"])
drop_privileges(cfg)
os.environ.pop("PWD", None)  # bwrap sets it; the bot's environment is the runner's alone
try:
    os.execv(cfg["argv"][0], cfg["argv"])
except OSError as exc:
    fail("exec %s: %s" % (cfg["argv"][0], exc))
"""
)
