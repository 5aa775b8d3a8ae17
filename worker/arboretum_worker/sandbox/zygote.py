"""The fork server's process: a Python that has imported the bot's runtime, forking sandboxes.

Run by :mod:`.forkserver` as ``python -c <this file's source> SOCKET LAUNCHER_LIB`` (inside a
bubblewrap sandbox of its own), never imported by the worker. It imports only the standard
library and the SDK, exactly what ``arena bot run`` imports before it loads a bot, and then
listens on ``SOCKET``. It never reads a request itself: each connection is handed at once to a
fresh fork (the *keeper*), which reads it, so the server's memory, which every later bot starts
from, never holds another bot's token, files or deal.

Per request (one connection) three processes:

- the **keeper** (a fork of the server) receives the request and the bot's output pipe, makes
  new mount, pid, network, ipc, uts and cgroup namespaces (``unshare(2)``), forks the init,
  tells the worker both processes (as pidfds), then waits: when the init exits it sends the exit
  status; when the worker hangs up it kills the init (the sandbox dies with its match);
- the **init** (pid 1 of the new pid namespace) brings the isolated loopback up, sets the host
  name, builds the minimal root of the request's plan and pivots into it (``build_root`` of
  ``root.LAUNCHER_LIB``, as the unshare runner does), forks the bot and reaps until it exits;
- the **bot** drops privileges (``drop_privileges``: the slot uid, no capabilities,
  no_new_privs, the rlimits), takes the request's environment and arguments and runs them as
  ``python ARGS`` would, in this interpreter, whose SDK is already imported.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys

PRELOAD = (
    "arboretum_sdk.argtypes",
    "arboretum_sdk.clitools",
    "arboretum_sdk.authorcli",  # the parser of ``arena bot list --server``, built by every run
    "arboretum_sdk.botcli",
    "arboretum_sdk.client",
    "arboretum_sdk.errors",
    "arboretum_sdk.eventloop",
    "arboretum_sdk.loader",
    "arboretum_sdk.stdio.child",  # imported by ``arena bot run`` before it loads any bot
    "arboretum_sdk.stdio.guard",
    "arboretum_sdk.wire",
    "arboretum_proto.v1.bot_pb2_grpc",
    "grpc",
    "grpc.aio",
    "uvloop",
)
"""What ``arena bot run`` imports on its way to the bot's first decision, but for the module it
runs, ``arboretum_sdk.cli``: ``python -m`` runs that one as ``__main__`` from its source, and a copy
already imported would make ``runpy`` warn (a ``RuntimeWarning`` as the first line of every bot's
log) and be a second, unused copy of it."""

_NEW_NAMESPACES = (
    0x00020000  # CLONE_NEWNS
    | 0x02000000  # CLONE_NEWCGROUP
    | 0x04000000  # CLONE_NEWUTS
    | 0x08000000  # CLONE_NEWIPC
    | 0x20000000  # CLONE_NEWPID
    | 0x40000000  # CLONE_NEWNET
)
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_SIOCSIFFLAGS = 0x8914
_IFF_UP_LOOPBACK_RUNNING = 0x1 | 0x8 | 0x40
_MAX_REQUEST = 1 << 20

libc = ctypes.CDLL(None, use_errno=True)


def main(argv: list[str]) -> int:
    socket_path, launcher_lib = argv[1], argv[2]
    from arboretum_sdk import grpc_setup

    grpc_setup.apply()  # as ``arena bot run`` does before gRPC loads
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    # The runtime lives as long as each bot: out of the collector's way, a bot's collections do
    # not walk it (nor copy the pages it shares with this process).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    os.chmod(socket_path, 0o600)
    listener.listen(64)
    # The kernel reaps the keepers as they end (nobody here wants their status), so the server
    # sleeps in ``accept`` until a request comes: an idle server is never woken (fifty casual
    # tables' servers, each looking for ended keepers every second, woke a CPU fifty times a
    # second for nothing). Each keeper takes the default back: it waits for its init.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    os.write(1, b"ready\n")
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            listener.close()
            return _keeper(conn, launcher_lib)
        conn.close()


def _send(conn: socket.socket, message: dict[str, object], fds: list[int] | None = None) -> None:
    data = json.dumps(message).encode() + b"\n"
    if fds:
        socket.send_fds(conn, [data], fds)
    else:
        conn.sendall(data)


def _receive(conn: socket.socket) -> tuple[dict[str, object], int]:
    """The request (length-prefixed JSON) and the one file descriptor sent with it."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 1)
    if not data and not fds:
        raise EOFError  # a probe: connected and hung up (another worker's look for stale servers)
    if len(fds) != 1 or len(data) < 4:
        raise ValueError("a request is its length, its JSON and the output pipe")
    (size,) = struct.unpack("!I", data[:4])
    if size > _MAX_REQUEST:
        raise ValueError("request too large")
    body = data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ValueError("request cut short")
        body += chunk
    return json.loads(body), fds[0]


def _keeper(conn: socket.socket, launcher_lib: str) -> int:
    """The sandbox's keeper (see the module docstring); never returns in this process."""
    try:
        cfg, out = _receive(conn)
    except EOFError:
        os._exit(0)
    except (OSError, ValueError) as exc:
        os.write(2, f"arena-sandbox: bad fork request: {exc}\n".encode())
        os._exit(1)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.setsid()
    if libc.unshare(_NEW_NAMESPACES) != 0:
        _send(conn, {"error": "unshare: " + os.strerror(ctypes.get_errno())})
        os._exit(1)
    lib: dict[str, object] = {}
    exec(launcher_lib, lib)  # the worker's own launcher source
    init = os.fork()
    if init == 0:
        conn.close()
        return _init(cfg, lib)
    fds = [os.pidfd_open(os.getpid()), os.pidfd_open(init)]
    _send(conn, {"started": True}, fds)
    for fd in fds:
        os.close(fd)
    watch = os.pidfd_open(init)
    while True:
        ready, _, _ = select.select([conn.fileno(), watch], [], [])
        if watch in ready:
            _, status = os.waitpid(init, 0)
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
            os._exit(0)
        if not conn.recv(64):  # the worker hung up: the sandbox goes with its match
            os.kill(init, signal.SIGKILL)
            os.waitpid(init, 0)
            os._exit(0)


def _init(cfg: dict[str, object], lib: dict[str, object]) -> int:
    """pid 1 of the sandbox: the root, then the bot, then reaping until the bot exits."""
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    socket.sethostname(str(cfg.get("hostname", "arena-bot")))
    _loopback_up()
    os.umask(0o022)
    lib["build_root"](cfg["root"])  # type: ignore[operator]
    bot = os.fork()
    if bot == 0:
        return _bot(cfg, lib)
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if pid == bot:
            code = os.waitstatus_to_exitcode(status)
            os._exit(code if code >= 0 else 128 - code)


def _loopback_up() -> None:
    import fcntl

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", _IFF_UP_LOOPBACK_RUNNING)
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, request)


def _bot(cfg: dict[str, object], lib: dict[str, object]) -> int:
    """The bot: privileges dropped, then ``python ARGS`` in this interpreter. Returns only to
    let the interpreter end as ``python`` itself would (atexit, threads, flushing)."""
    os.setsid()
    os.closerange(3, 1 << 16)
    lib["drop_privileges"](cfg)  # type: ignore[operator]
    lib.clear()
    # Changing uid made the process undumpable (its /proc files root's), where an exec would
    # have made it dumpable again: as after the plain start's exec, it owns its /proc files.
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    env = cfg["env"]
    assert isinstance(env, dict)
    os.environ.clear()
    # The request's environment, exactly: gRPC read its GRPC_EXPERIMENTS when the server
    # imported it, and ``arena bot run`` takes that out of the bot's environment anyway.
    os.environ.update({str(k): str(v) for k, v in env.items()})
    args = [str(a) for a in cfg["args"]]  # type: ignore[attr-defined]
    import runpy

    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif args[0] == "-c":
        sys.argv = ["-c", *args[2:]]
        sys.path[0] = ""
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
