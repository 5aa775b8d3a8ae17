"""The output reader (sandbox/capture.py) on a real pipe: what it pauses for, it never loses."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arboretum_worker.sandbox import capture
from arboretum_worker.sandbox.capture import OutputCapture, truncation_marker


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def test_quick_small_writes_are_kept_in_order_and_read_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_fd, write_fd = os.pipe()
    reads: list[int] = []
    original = os.read

    def counting_read(fd: int, n: int) -> bytes:
        chunk = original(fd, n)
        if fd == read_fd:
            reads.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting_read)
    log_path = tmp_path / "bot.log"
    reader = OutputCapture(read_fd, 1 << 20, log_path, "quick")
    # A bot's markers: a write every millisecond, from another process, as a bot's would be.
    script = (
        "import os, sys, time\n"
        "for i in range(200):\n"
        "    os.write(1, f'\\x1fnonce {i}\\nline {i}\\n'.encode())\n"
        "    time.sleep(0.001)\n"
    )
    subprocess.run([sys.executable, "-c", script], stdout=write_fd, check=True, timeout=30)
    os.close(write_fd)
    assert reader.join(5)
    expected = b"".join(f"\x1fnonce {i}\nline {i}\n".encode() for i in range(200))
    assert reader.data() == expected
    assert log_path.read_bytes() == expected
    # 200 writes at least 1 ms apart: read in pauses of 10 ms, about one read in ten, not each.
    assert 1 <= len(reads) - 1 <= 100, len(reads)


def test_a_big_write_after_a_pause_is_read_whole_and_capped(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    limit = 64 * 1024
    reader = OutputCapture(read_fd, limit, None, "big")
    big = b"y" * (1 << 20)  # far more than a pipe holds: the writer waits out one pause at most

    def write() -> None:
        _write_all(write_fd, b"small\n")
        started = time.monotonic()
        _write_all(write_fd, big)
        waited.append(time.monotonic() - started)
        os.close(write_fd)

    waited: list[float] = []
    writer = threading.Thread(target=write)
    writer.start()
    writer.join(10)
    assert reader.join(5)
    data = b"small\n" + big
    assert reader.data() == data[:limit] + truncation_marker(limit, len(data) - limit)
    assert reader.dropped == len(data) - limit
    assert waited and waited[0] < 2.0


def test_join_cuts_the_pause_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(capture, "SETTLE_S", 30.0)
    read_fd, write_fd = os.pipe()
    reader = OutputCapture(read_fd, 1024, None, "join")
    _write_all(write_fd, b"last words\n")
    time.sleep(0.2)  # the reader has read it and pauses (for 30 s here)
    os.close(write_fd)
    started = time.monotonic()
    assert reader.join(10)
    assert reader.data() == b"last words\n"
    assert time.monotonic() - started < 5  # not the 30 s pause
