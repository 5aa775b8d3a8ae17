"""The child's stderr, copied to the bridge's own stderr: capped, and in step with decisions.

The copy runs in a thread of its own, so the child never blocks on a full pipe. :meth:`sync`
copies, in the caller's thread, whatever the child has written so far; the bridge calls it
before a decision's answer goes back, so every line the child wrote before it answered is on the
bridge's stderr before the SDK closes the decision's frame (:mod:`arboretum_sdk.output`): the
bridge, not the child, ties the child's lines to the decision in flight. The child never sees
the frame's nonce, so a line it writes that looks like a marker stays a line of its output.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading

__all__ = ["StderrCopier"]

_READ = 65536


def _write_all(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]


class StderrCopier:
    """Copy ``fd`` (the child's stderr) to ``out_fd`` until EOF, at most ``cap`` bytes."""

    def __init__(self, fd: int, cap: int, out_fd: int = 2) -> None:
        self.fd = fd
        self.cap = cap
        self.out_fd = out_fd
        self.copied = 0
        self.dropped = 0
        self._eof = False
        self._lock = threading.Lock()
        os.set_blocking(fd, False)

    def run(self) -> None:
        """The copying thread's body: returns at EOF."""
        while not self._eof:
            try:
                select.select([self.fd], [], [])
            except (OSError, ValueError):
                break
            with self._lock:
                self._pump()
        if self.dropped:
            _write_all(
                self.out_fd, f"[arena: {self.dropped} bytes of the bot's stderr dropped]\n".encode()
            )

    def sync(self) -> None:
        """Copy what the child has written so far, now."""
        with self._lock:
            if not self._eof:
                self._pump()

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self.fd, _READ)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                return
            self._forward(chunk)

    def _forward(self, chunk: bytes) -> None:
        if self.copied >= self.cap:
            self.dropped += len(chunk)
            return
        part = chunk[: self.cap - self.copied]
        _write_all(self.out_fd, part)
        self.copied += len(part)
        self.dropped += len(chunk) - len(part)
        if self.copied >= self.cap:
            _write_all(
                self.out_fd,
                f"\n[arena: the bot's stderr is cut at {self.cap} bytes; "
                "the rest is dropped]\n".encode(),
            )
