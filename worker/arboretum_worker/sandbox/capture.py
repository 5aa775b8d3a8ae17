"""A pipe reader that keeps at most N bytes of a bot's output and drops the rest with a marker.

After a short read the reader waits a few milliseconds (:data:`SETTLE_S`) before it reads again,
so that what a bot writes in quick succession (the SDK's two marker lines per decision,
:mod:`arboretum_sdk.output`) is read in one wake-up of the reader's thread rather than one each:
every wake-up takes the work horse's GIL from its referee and costs the bot's write a wake-up of
the reader too. A bot that writes more than the pipe holds (64 KiB) within that pause waits for
the rest of it once; :meth:`OutputCapture.join` cuts the pause short, so the end of a match is
not delayed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["MARKER_ROOM", "OutputCapture", "truncation_marker"]

_CHUNK = 64 * 1024
SETTLE_S = 0.01
"""The pause after a read shorter than :data:`_SETTLE_BELOW` bytes (see the module's doc)."""
_SETTLE_BELOW = 4096
MARKER_ROOM = 256
"""Bytes a kept output may exceed its cap by: the truncation marker."""


def truncation_marker(kept: int, dropped: int) -> bytes:
    return f"\n[arena: output truncated at {kept} bytes, {dropped} more bytes dropped]\n".encode()


def _read_fd(fd: int, hurry: threading.Event) -> Iterator[bytes]:
    """The pipe's chunks until EOF, pausing after a short one unless ``hurry`` is set."""
    try:
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except InterruptedError:
                continue
            except OSError:
                return
            if not chunk:
                return
            yield chunk
            if len(chunk) < _SETTLE_BELOW and not hurry.is_set():
                hurry.wait(SETTLE_S)
    finally:
        os.close(fd)


class OutputCapture:
    """Drain ``source`` in a thread until EOF; keep the first ``limit`` bytes, count the rest.

    ``source`` is a pipe's read end (owned and closed by the reader) or an iterable of chunks
    (the docker runner's log stream). The kept bytes also go to ``log_path`` as they arrive (so a
    running bot's log can be read), and the marker is appended to both at EOF. The reader keeps
    draining after the limit so that the bot never blocks on a full pipe.
    """

    def __init__(
        self,
        source: int | Iterable[bytes],
        limit: int,
        log_path: Path | None = None,
        name: str = "",
    ) -> None:
        self._hurry = threading.Event()
        self._chunks: Iterable[bytes] = (
            _read_fd(source, self._hurry) if isinstance(source, int) else source
        )
        self._limit = limit
        self._buf = bytearray()
        self._dropped = 0
        self._log: BinaryIO | None = None
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(log_path, "wb")  # noqa: SIM115 - closed by the reader thread
        self._thread = threading.Thread(
            target=self._run, name=f"sandbox-output-{name}", daemon=True
        )
        self._thread.start()

    @property
    def dropped(self) -> int:
        return self._dropped

    def _run(self) -> None:
        try:
            for chunk in self._chunks:
                room = self._limit - len(self._buf)
                keep = chunk[: max(room, 0)]
                self._dropped += len(chunk) - len(keep)
                if keep:
                    self._buf += keep
                    if self._log is not None:
                        self._log.write(keep)
                        self._log.flush()
        except Exception:  # a broken log stream (docker): keep what was read
            pass
        try:
            if self._dropped:
                marker = truncation_marker(len(self._buf), self._dropped)
                self._buf += marker
                if self._log is not None:
                    self._log.write(marker)
        finally:
            if self._log is not None:
                self._log.close()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for EOF; True once everything has been read and the log closed. The reader
        no longer pauses between reads from then on."""
        self._hurry.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def data(self) -> bytes:
        """What has been kept so far (with the marker once the pipe has closed)."""
        return bytes(self._buf)
