"""The bridge's process side: :class:`StdioBot` runs a command as a child and plays through it.

A :class:`StdioBot` is a :class:`~arboretum_sdk.Bot` like any other, so the SDK's client
(:func:`~arboretum_sdk.run_bot`) speaks gRPC to the referee for it, reconnection included; the
bot's side is the child process, spoken to in the line protocol (``docs/stdio-protocol.md``,
messages built by :mod:`arboretum_sdk.stdio.lines`).

- **Stdin.** Every message is written without blocking: what the pipe does not take at once
  waits in a buffer, flushed while a decision is pending (a child that stops reading its stdin
  holds up nothing but itself; past :data:`MAX_BACKLOG` it counts as crashed).
- **Stdout** is read only while a decision is pending, with the decision's deadline (the clock
  plus :data:`GRACE_S`). Lines found there before the request is written were written out of
  turn: that is a ``malformed`` fault on this request. A late answer (to a request whose time
  ran out, or that faulted) is dropped with a line in the log.
- **Stderr** is copied to this process's stderr by a thread of its own, up to ``stderr_cap``
  bytes, then read and dropped: the child never blocks on it. What the child wrote before it
  answered is copied before the answer goes back (:mod:`.stderr`), so the league ties it to that
  decision (:mod:`arboretum_sdk.output`).
- **A bad line** raises :class:`~arboretum_sdk.errors.RefusedAnswer` with the protocol's reason
  (the client sends it as ``malformed_reason``; the bot's text stays in this log); **no answer
  in time** raises :class:`~arboretum_sdk.errors.Unanswered` (the referee times it out); **the
  child exiting or closing its stdout** raises :class:`~arboretum_sdk.errors.BotCrashed`, and,
  between decisions, calls ``on_exit`` (``arena bot run`` then exits, so that the runner that
  started it reports a crash).
- The child gets this process's environment without the seat token (``ARENA_TOKEN``): it
  reaches the referee only through this bridge; under a memory limit, ``NODE_OPTIONS`` gives
  Node.js a heap limit under it (:func:`node_heap_option`).
- **This process's memory is closed to the child.** Before the child starts, the bridge makes
  itself non-dumpable (:func:`.guard.close_memory`), so that a child of the same user can
  neither read its memory (``/proc/<bridge>/mem``, ``/environ``, ``process_vm_readv``) nor
  ``ptrace`` it, and so cannot find the seat token there. The child's own ``execve`` makes the
  child dumpable again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, NoReturn

from arboretum import Decision, DecisionKind, GameResult, SeatView

from ..bot import Bot
from ..errors import BotCrashed, BotLoadError, RefusedAnswer, Unanswered
from ..info import FaultNotice, GameEnd, GameInfo, MatchEnd, MatchInfo
from ..output import OUTPUT_ENV
from . import lines
from .guard import close_memory
from .stderr import StderrCopier

__all__ = [
    "GRACE_S",
    "MAX_BACKLOG",
    "NODE_HEAP_SHARE",
    "STDERR_CAP",
    "StdioBot",
    "node_heap_option",
]

log = logging.getLogger("arboretum_sdk.stdio")

GRACE_S = 0.25
"""How long past a decision's deadline the bridge still waits for the answer (the referee is
the judge of time: a late answer it receives is a timeout there)."""
STDERR_CAP = 1024 * 1024
"""Bytes of the child's stderr copied per match; the rest is read and dropped."""
MAX_BACKLOG = 8 * 1024 * 1024
"""Bytes waiting for a child that does not read its stdin before it counts as crashed."""
EXIT_GRACE_S = 5.0
"""How long the child has to exit once its stdin is closed at the match's end."""
STDERR_DRAIN_S = 2.0
"""How long an exited child's stderr is read on before its exit is reported (a process it left
behind may hold the pipe open)."""
TOKEN_ENV = "ARENA_TOKEN"
NODE_HEAP_SHARE = 0.8
"""The share of the memory limit a Node.js child's heap may take (:func:`node_heap_option`)."""
_READ = 65536
_PENDING, _ANSWERED, _OVER = "pending", "answered", "over"
_KEEP_IDS = 64
_OUT_OF_TURN = "the bot wrote a line while no decision was asked (out of turn)"


class _Overlong:
    """Stands for a line over the size limit (its bytes are dropped)."""

    def __init__(self, size: int, start: bytes) -> None:
        self.size = size
        self.start = start


class _Pipes:
    """The child's stdin and stdout, both non-blocking. What is sent waits in a backlog, written
    as the pipe takes it; what the child writes is read into a buffer and taken a line at a time
    (blank lines skipped; a line over the protocol's limit stands as an :class:`_Overlong`, its
    bytes dropped)."""

    def __init__(self) -> None:
        self._stdin_file: IO[bytes] | None = None
        self.stdin = -1
        self.stdout = -1
        self.buffer = bytearray()
        self.skipping = False
        self.backlog = bytearray()
        self.stdin_closed = False
        self.eof = False
        self.lines_read = 0

    def open(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self._stdin_file = stdin
        self.stdin = stdin.fileno()
        self.stdout = stdout.fileno()
        os.set_blocking(self.stdin, False)
        os.set_blocking(self.stdout, False)

    # ------------------------------------------------------------------ writing

    def send(self, data: bytes) -> int:
        """Queue ``data`` and write what the pipe takes now; the bytes still waiting."""
        self.backlog += data
        self.flush()
        return len(self.backlog)

    def flush(self) -> None:
        while self.backlog and not self.stdin_closed:
            try:
                written = os.write(self.stdin, self.backlog)
            except BlockingIOError:
                return
            except OSError:  # the child closed its stdin (or exited): nothing more goes there
                self.backlog.clear()
                self.close_stdin()
                return
            del self.backlog[:written]

    def flush_until(self, deadline: float) -> None:
        """Write what is waiting, until ``deadline`` (on ``time.monotonic``) at the latest."""
        while self.backlog and not self.stdin_closed and time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                select.select([], [self.stdin], [], max(0.0, deadline - time.monotonic()))
            self.flush()

    def close_stdin(self) -> None:
        if not self.stdin_closed and self._stdin_file is not None:
            self.stdin_closed = True
            with contextlib.suppress(OSError):
                self._stdin_file.close()

    # ------------------------------------------------------------------ reading

    def fill(self, timeout: float) -> None:
        """Wait up to ``timeout`` for stdout (flushing stdin meanwhile); read what is there."""
        if self.eof:
            return
        writers = [self.stdin] if self.backlog and not self.stdin_closed else []
        try:
            readable, writable, _ = select.select([self.stdout], writers, [], max(0.0, timeout))
        except (OSError, ValueError):
            self.eof = True
            return
        if writable:
            self.flush()
        if readable:
            self.read_available()

    def read_available(self) -> None:
        while not self.eof:
            try:
                chunk = os.read(self.stdout, _READ)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
                return
            self.buffer += chunk
            if len(chunk) < _READ:
                return

    def take_line(self) -> bytes | _Overlong | None:
        """The next complete line in the buffer (without its newline), an :class:`_Overlong`,
        or None. Blank lines are skipped."""
        limit = lines.MAX_LINE_BYTES
        while True:
            buffer = self.buffer
            end = buffer.find(b"\n")
            if self.skipping:
                if end < 0:
                    buffer.clear()
                    return None
                del buffer[: end + 1]
                self.skipping = False
                continue
            if end < 0:
                if len(buffer) >= limit:
                    overlong = _Overlong(len(buffer), bytes(buffer[:80]))
                    buffer.clear()
                    self.skipping = True
                    self.lines_read += 1
                    return overlong
                return None
            raw = bytes(buffer[:end])
            del buffer[: end + 1]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            if not raw.strip():
                continue
            self.lines_read += 1
            if len(raw) + 1 > limit:
                return _Overlong(len(raw) + 1, raw[:80])
            return raw


class StdioBot(Bot):
    """A bot that is a command speaking the line protocol; see the module's docstring."""

    name = "stdio"

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | str | None = None,
        name: str | None = None,
        env: Mapping[str, str] | None = None,
        stderr_cap: int = STDERR_CAP,
        on_exit: Callable[[str], None] | None = None,
    ) -> None:
        if not argv:
            raise ValueError("a command needs a program")
        self.argv = tuple(argv)
        self.cwd = Path(cwd) if cwd is not None else None
        if name:
            self.name = name
        base = dict(os.environ if env is None else env)
        base.pop(TOKEN_ENV, None)
        base.pop(OUTPUT_ENV, None)
        node_heap_option(base)
        self._env = base
        self.stderr_cap = stderr_cap
        self.on_exit = on_exit
        """Called (from a thread of its own) with the reason when the child exits while no
        decision is pending and the match has not ended."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._pipes = _Pipes()
        self._closing = False
        self._asking = False
        self._crash: str | None = None
        self._asked: dict[int, str] = {}
        self._threads: list[threading.Thread] = []
        self._stderr_copier: threading.Thread | None = None
        self._stderr: StderrCopier | None = None

    # ------------------------------------------------------------------ the child

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the child (once) and write ``hello``; :class:`BotLoadError` if it cannot."""
        if self._proc is not None:
            return
        close_memory()
        try:
            proc = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self._env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            raise BotLoadError(
                f"cannot start the bot's command {self.command!r}: {exc.strerror or exc}"
            ) from None
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._proc = proc
        self._pipes.open(proc.stdin, proc.stdout)
        self._stderr = StderrCopier(proc.stderr.fileno(), self.stderr_cap)
        for target, what in ((self._stderr.run, "stderr"), (self._wait_child, "wait")):
            thread = threading.Thread(target=target, name=f"arena-stdio-{what}", daemon=True)
            thread.start()
            self._threads.append(thread)
        self._stderr_copier = self._threads[0]
        log.info("started the bot's command %r (pid %d)", self.command, proc.pid)
        self._send(lines.encode(lines.hello_message()))

    def finish(self, grace: float = EXIT_GRACE_S) -> int | None:
        """End the child: flush what is waiting, close its stdin, give it ``grace`` seconds to
        exit, then kill it (and everything it started). Returns its exit status."""
        proc = self._proc
        if proc is None:
            return None
        self._closing = True
        deadline = time.monotonic() + grace
        self._pipes.flush_until(deadline)
        self._pipes.close_stdin()
        try:
            code = proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.warning("the bot's command did not exit within %g s of the match's end", grace)
            code = None
        self._kill()
        for thread in self._threads:
            thread.join(1.0)
        return proc.returncode if code is None else code

    def _kill(self) -> None:
        proc = self._proc
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(2.0)
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def _wait_child(self) -> None:
        proc = self._proc
        assert proc is not None
        code = proc.wait()
        if self._closing or self._asking:
            return  # the match is over, or the pending decision reads the end itself
        reason = _exit_reason(code)
        self._crash = reason
        # What the child wrote to stderr before it exited is copied before anything reports the
        # exit (``on_exit`` may end this process): its last words are often the reason.
        if self._stderr_copier is not None:
            self._stderr_copier.join(STDERR_DRAIN_S)
        log.error("%s", reason)
        if self.on_exit is not None:
            self.on_exit(reason)

    # ------------------------------------------------------------------ the pipes

    @property
    def lines_read(self) -> int:
        """Lines read from the child's stdout so far (blank ones aside)."""
        return self._pipes.lines_read

    def _send(self, data: bytes) -> None:
        if self._pipes.stdin_closed or self._proc is None:
            return
        waiting = self._pipes.send(data)
        if waiting > MAX_BACKLOG:
            self._crash = f"the bot's command does not read its stdin ({waiting} bytes waiting)"
            self._kill()

    def _crashed(self) -> BotCrashed:
        proc = self._proc
        assert proc is not None
        try:
            code: int | None = proc.wait(0.5)
        except subprocess.TimeoutExpired:
            code = None
        reason = self._crash or (
            _exit_reason(code) if code is not None else "the bot's command closed its stdout"
        )
        self._crash = reason
        self._closing = True
        self._kill()
        log.error("%s", reason)
        return BotCrashed(reason)

    # ------------------------------------------------------------------ decisions

    def choose(self, view: SeatView) -> Decision:
        self.start()
        number = self.decision_number
        clock = self.clock
        assert clock is not None
        self._asking = True
        try:
            if self._crash is not None:
                raise self._crashed()
            out_of_turn = self._drain()
            self._ask(number)
            game = self.game.game_index if self.game is not None else 0
            self._send(lines.encode(lines.request_message(number, game, view, clock)))
            if out_of_turn:
                self._asked[number] = _OVER
                raise RefusedAnswer(_OUT_OF_TURN)
            return self._answer(number, view, clock.deadline + GRACE_S, clock.limit_ms)
        finally:
            if self._stderr is not None:  # the child's lines so far belong to this decision
                self._stderr.sync()
            self._asking = False
            proc = self._proc
            if proc is not None and proc.poll() is not None and not self._closing:
                self._crash = self._crash or _exit_reason(proc.returncode)

    def _ask(self, number: int) -> None:
        self._asked[number] = _PENDING
        if len(self._asked) > _KEEP_IDS:
            for old in sorted(self._asked)[: len(self._asked) - _KEEP_IDS]:
                del self._asked[old]

    def _drain(self) -> int:
        """Read what the child wrote since the last decision: late answers are dropped, any
        other line was written out of turn. Returns how many were."""
        pipes = self._pipes
        pipes.read_available()
        out_of_turn = 0
        while (raw := pipes.take_line()) is not None:
            late = self._late(raw)
            if late is not None:
                log.info("line %d: dropped a late answer to decision %d", self.lines_read, late)
                continue
            out_of_turn += 1
            log.warning("line %d: %s: %s", self.lines_read, _OUT_OF_TURN, _describe(raw))
        if pipes.eof:
            raise self._crashed()
        return out_of_turn

    def _late(self, raw: bytes | _Overlong) -> int | None:
        """The id of a late answer (to a decision already over), or None."""
        if isinstance(raw, _Overlong):
            return None
        try:
            ident = lines.answer_id(lines.parse_line(raw))
        except lines.LineError:
            return None
        return ident if self._asked.get(ident) == _OVER else None

    def _answer(self, number: int, view: SeatView, deadline: float, limit_ms: int) -> Decision:
        kind = view.kind
        discard_required = kind is DecisionKind.PLAY and view.discard_required
        pipes = self._pipes
        while True:
            raw = pipes.take_line()
            if raw is None:
                if pipes.eof:
                    raise self._crashed()
                left = deadline - time.monotonic()
                if left <= 0:
                    self._asked[number] = _OVER
                    raise Unanswered(
                        f"the bot's command did not answer within {limit_ms} ms; the referee "
                        "times the decision out"
                    )
                pipes.fill(left)
                continue
            if isinstance(raw, _Overlong):
                self._refuse(
                    number,
                    lines.LineError(
                        f"the line is longer than the {lines.MAX_LINE_BYTES} bytes a line may have",
                        f"{raw.size}+ bytes, starting {raw.start!r}",
                    ),
                )
            try:
                obj = lines.parse_line(raw)
                ident = lines.answer_id(obj)
            except lines.LineError as exc:
                self._refuse(number, exc)
            if ident != number:
                state = self._asked.get(ident)
                if state == _OVER:
                    log.info(
                        "line %d: dropped a late answer to decision %d", self.lines_read, ident
                    )
                    continue
                if state == _ANSWERED:
                    self._refuse(
                        number,
                        lines.LineError(
                            f"a second answer to decision {ident} ({_OUT_OF_TURN})", _describe(raw)
                        ),
                    )
                self._refuse(
                    number,
                    lines.LineError(
                        f"the answer's id is {ident} but the request's id is {number}",
                        _describe(raw),
                    ),
                )
            try:
                decision = lines.decision_from_json(obj, kind, discard_required)
            except lines.LineError as exc:
                self._refuse(number, exc)
            self._asked[number] = _ANSWERED
            return decision

    def _refuse(self, number: int, error: lines.LineError) -> NoReturn:
        self._asked[number] = _OVER
        log.warning("line %d: %s (%s)", self.lines_read, error.reason, error.detail)
        raise RefusedAnswer(error.reason)

    # ------------------------------------------------------------------ the other messages

    def on_match_start(self, info: MatchInfo) -> None:
        self.start()
        self._send(lines.encode(lines.match_start_message(info)))

    def on_game_start(self, info: GameInfo) -> None:
        self.start()
        self._send(lines.encode(lines.game_start_message(info)))

    def on_fault(self, notice: FaultNotice) -> None:
        if self._asked.get(notice.decision_number) == _PENDING:
            self._asked[notice.decision_number] = _OVER
        self._send(lines.encode(lines.fault_message(notice)))

    def on_game_end(self, result: GameResult, info: GameEnd) -> None:
        self._send(lines.encode(lines.game_end_message(info)))

    def on_match_end(self, info: MatchEnd) -> None:
        self._closing = True
        self._send(lines.encode(lines.match_end_message(info)))

    def __repr__(self) -> str:
        return f"<StdioBot {self.command!r}>"


def node_heap_option(env: dict[str, str]) -> None:
    """Under a memory limit (``RLIMIT_DATA``, as in the league's sandbox), give a Node.js child
    a heap limit of :data:`NODE_HEAP_SHARE` of it (``NODE_OPTIONS=--max-old-space-size=MiB``),
    so that a bot that grows too big stops with Node's own "JavaScript heap out of memory"
    rather than a failed allocation deep inside it. Left alone when ``NODE_OPTIONS`` is set."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    if soft == resource.RLIM_INFINITY or soft <= 0 or "NODE_OPTIONS" in env:
        return
    env["NODE_OPTIONS"] = f"--max-old-space-size={max(16, int(soft * NODE_HEAP_SHARE) >> 20)}"


def _exit_reason(code: int | None) -> str:
    if code is None:
        return "the bot's command ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the bot's command was killed by {name}"
    return f"the bot's command exited with status {code}"


def _describe(raw: bytes | _Overlong) -> str:
    if isinstance(raw, _Overlong):
        return f"a line of {raw.size}+ bytes starting {raw.start!r}"
    text = raw[:200].decode("utf-8", "replace")
    return repr(text) + ("..." if len(raw) > 200 else "")
