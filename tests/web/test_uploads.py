"""Hostile uploads: compression bombs hidden in skipped entries, every archive kind over the
limits (413), too many entries or streams, and an upload whose client goes away; bounded
concurrency (the extra uploads wait, past the queue they get 503)."""

from __future__ import annotations

import bz2
import gzip
import io
import logging
import lzma
import socket
import struct
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from arboretum_web import authors
from arboretum_web.app import WebSettings, create_app
from arboretum_web.screenshots import serve_in_thread
from arboretum_web.submission import (
    MAX_ENTRIES,
    MAX_STREAMS,
    MAX_UNPACKED_BYTES,
    MAX_UPLOAD_BYTES,
    SubmissionError,
    UploadCancelled,
    unpack_upload,
)
from arboretum_worker import registry, store

BOT = b"from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    pass\n"
MIB = 1 << 20
SKIPPED = "__pycache__/huge.cpython-311.pyc"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def _raw_tar(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _concatenated_bomb(compress: Callable[[bytes], bytes], unpacked_mib: int) -> bytes:
    """A compressed tar whose first entry is bot.py and whose second, a skipped ``.pyc``, holds
    ``unpacked_mib`` MiB of zeros, written as one compressed stream per MiB (``cat``-ed streams
    are one valid file): a few KB that unpack to a GiB."""
    head = _raw_tar([("bot.py", BOT)])[:-1024]  # without the end-of-archive blocks
    head += _tar_header(SKIPPED, unpacked_mib * MIB)
    one = compress(bytes(MIB))
    return compress(head) + one * unpacked_mib


def _single_bomb(mode: str, unpacked_mib: int) -> bytes:
    """One compressed stream: bot.py, then a skipped .pyc of zeros."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        info = tarfile.TarInfo("bot.py")
        info.size = len(BOT)
        tar.addfile(info, io.BytesIO(BOT))
        info = tarfile.TarInfo(SKIPPED)
        info.size = unpacked_mib * MIB
        tar.addfile(info, io.BytesIO(bytes(unpacked_mib * MIB)))
    return buf.getvalue()


def _zip(entries: list[tuple[str, bytes]], level: int = 9) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        for name, data in entries:
            z.writestr(name, data)
    return buf.getvalue()


def _lying_zip(unpacked_mib: int) -> bytes:
    """bot.py, and a skipped .pyc that inflates to ``unpacked_mib`` MiB while its headers say 10
    bytes (so only inflating it would find out)."""
    data = bytearray(_zip([("bot.py", BOT), (SKIPPED, bytes(unpacked_mib * MIB))]))
    name = SKIPPED.encode()
    for signature, size_at in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = 0
        while (at := data.find(signature, at)) >= 0:
            name_at = at + (30 if signature == b"PK\x03\x04" else 46)
            if data[name_at : name_at + len(name)] == name:
                data[at + size_at : at + size_at + 4] = struct.pack("<I", 10)
            at += 4
    return bytes(data)


@pytest.fixture(scope="module")
def bombs() -> dict[str, bytes]:
    """Each hides gigabytes (or many megabytes) of zeros in a skipped entry."""
    return {
        "concatenated.tar.bz2": _concatenated_bomb(bz2.compress, 1024),
        "concatenated.tar.gz": _concatenated_bomb(gzip.compress, 1024),
        "concatenated.tar.xz": _concatenated_bomb(lzma.compress, 1024),
        "single.tar.bz2": _single_bomb("w:bz2", 8),
        "single.tar.gz": _single_bomb("w:gz", 8),
        "single.tar.xz": _single_bomb("w:xz", 8),
        "skipped.zip": _zip([("bot.py", BOT), (SKIPPED, bytes(8 * MIB))]),
    }


# --------------------------------------------------------------------------- unpacking


def test_the_bombs_are_small_and_hide_a_lot(bombs: dict[str, bytes]) -> None:
    for name, data in bombs.items():
        assert len(data) < MAX_UPLOAD_BYTES, name
    assert len(bombs["concatenated.tar.bz2"]) < 64 * 1024  # a GiB in under 64 KB
    # the concatenated streams are a real compressed tar: the standard library reads it whole
    with bz2.open(io.BytesIO(bombs["concatenated.tar.bz2"])) as f:
        f.read(2 * MIB)


@pytest.mark.parametrize(
    "name",
    [
        "concatenated.tar.bz2",
        "concatenated.tar.gz",
        "concatenated.tar.xz",
        "single.tar.bz2",
        "single.tar.gz",
        "single.tar.xz",
        "skipped.zip",
    ],
)
def test_a_bomb_in_a_skipped_entry_is_refused_unpacking_little(
    bombs: dict[str, bytes], name: str
) -> None:
    """The skipped bytes count: unpacking stops at the limit, with the limit as the reason."""
    asked = 0

    def counting() -> bool:
        nonlocal asked
        asked += 1
        return False

    with pytest.raises(registry.TooLargeError, match=f"at most {MAX_UNPACKED_BYTES} bytes"):
        unpack_upload(name, bombs[name], counting)
    # (the work is bounded by the limit: a chunk is at most 256 KiB)
    assert asked <= MAX_UNPACKED_BYTES // (256 * 1024) + 2


def test_a_skipped_zip_entry_that_lies_about_its_size_is_never_inflated() -> None:
    data = _lying_zip(64)
    with zipfile.ZipFile(io.BytesIO(data)) as z, pytest.raises(zipfile.BadZipFile):
        z.read(SKIPPED)  # it really is not 10 bytes
    assert unpack_upload("bot.zip", data) == {"bot.py": BOT}


def test_more_streams_than_allowed_are_refused() -> None:
    head = _raw_tar([("bot.py", BOT)])
    data = b"".join(gzip.compress(head[i : i + 512]) for i in range(0, len(head), 512))
    assert len(head) // 512 > MAX_STREAMS
    with pytest.raises(SubmissionError, match="concatenated compressed streams"):
        unpack_upload("b.tar.gz", data)
    few = gzip.compress(head[:1024]) + gzip.compress(head[1024:])
    assert unpack_upload("b.tar.gz", few) == {"bot.py": BOT}


def test_an_empty_upload_is_refused() -> None:
    for name in ("bot.py", "b.tar.gz", "b.zip", None):
        with pytest.raises(SubmissionError, match="empty"):
            unpack_upload(name, b"")


def test_unreadable_compressed_data() -> None:
    good = gzip.compress(_raw_tar([("bot.py", BOT)]))
    for bad in (good[:-20], good + b"garbage", b"BZh9" + b"\x00" * 50, b"\xfd7zXZ\x00" + b"?" * 9):
        with pytest.raises(SubmissionError):
            unpack_upload("b.tar.gz", bad)
    assert unpack_upload("b.tar.gz", good + bytes(100)) == {"bot.py": BOT}  # zero padding


def test_entries_are_capped_in_every_archive_kind() -> None:
    many = [(f"d{i}/x.pyc", b"") for i in range(MAX_ENTRIES + 1)] + [("bot.py", BOT)]
    tar = _raw_tar(many)
    for name, data in (
        ("m.tar", tar),
        ("m.tar.gz", gzip.compress(tar)),
        ("m.tar.bz2", bz2.compress(tar)),
        ("m.zip", _zip(many, level=1)),
    ):
        with pytest.raises(registry.TooLargeError, match=f"at most {MAX_ENTRIES} entries"):
            unpack_upload(name, data)


def test_unpacking_stops_when_asked(bombs: dict[str, bytes]) -> None:
    calls = 0

    def gone_after_two() -> bool:
        nonlocal calls
        calls += 1
        return calls > 2

    with pytest.raises(UploadCancelled):
        unpack_upload("x.tar.bz2", bombs["concatenated.tar.bz2"], gone_after_two)
    assert calls == 3


# --------------------------------------------------------------------------- the API


OVERSIZED = bytes(registry.MAX_TOTAL_BYTES + 1)  # a bot.py of zeros, one byte too many


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("big.py", OVERSIZED),
        ("big.tar", _raw_tar([("bot.py", OVERSIZED)])),
        ("big.tar.gz", gzip.compress(_raw_tar([("bot.py", OVERSIZED)]))),
        ("big.tar.bz2", bz2.compress(_raw_tar([("bot.py", OVERSIZED)]))),
        ("big.tar.xz", lzma.compress(_raw_tar([("bot.py", OVERSIZED)]))),
        ("big.zip", _zip([("bot.py", OVERSIZED)])),
        ("huge.zip", bytes(MAX_UPLOAD_BYTES + 1)),
    ],
)
def test_every_oversized_archive_kind_is_413(
    client: Any, r: redis.Redis, name: str, data: bytes
) -> None:
    token = authors.add_author(r, "alice")
    url = "/api/v1/bots/big/versions"
    form = client.post(url, files={"file": (name, data)}, headers=_auth(token))
    raw = client.post(f"{url}?filename={name}", content=data, headers=_auth(token))
    for resp in (form, raw):
        assert resp.status_code == 413, (name, resp.text[:200])
        assert "at most" in resp.json()["error"]["message"]
    assert store.get_bot(r, "big") is None


def test_bombs_through_the_api(client: Any, r: redis.Redis, bombs: dict[str, bytes]) -> None:
    token = authors.add_author(r, "alice")
    for name, data in bombs.items():
        resp = client.post(
            "/api/v1/bots/bomb/versions", files={"file": (name, data)}, headers=_auth(token)
        )
        assert resp.status_code == 413, (name, resp.text[:200])
        assert "skipped files" in resp.json()["error"]["message"]
    assert store.get_bot(r, "bomb") is None


# --------------------------------------------------------------------------- concurrency


class BlockingCheck:
    """A submission check that holds the first upload until released."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.paths: list[Path] = []

    def __call__(self, path: Path) -> None:
        self.paths.append(path)
        self.entered.set()
        assert self.release.wait(30), "never released"


def _raw_upload(base: str, token: str, name: str, body: bytes) -> socket.socket:
    """Send a whole upload on a raw socket (its answer not read yet)."""
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    head = (
        f"POST /api/v1/bots/{name}/versions?filename=bot.py HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def _status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    sock.close()
    return int(data.split(b" ", 2)[1])


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_uploads_wait_their_turn_and_stop_when_the_client_goes(
    r: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="arboretum_web.uploads")
    check = BlockingCheck()
    token = authors.add_author(r, "alice")
    app = create_app(WebSettings(check=check, upload_concurrency=1, upload_queue=1), client=r)
    with serve_in_thread(app) as base:
        first = _raw_upload(base, token, "first", BOT)
        assert check.entered.wait(20)
        # the second waits for the first; its client then goes away
        second = _raw_upload(base, token, "second", BOT + b"# 2\n")
        gate = app.state.uploads
        _wait_for(lambda: gate.limiter.statistics().tasks_waiting == 1, "the second to wait")
        # a third finds the queue full
        third = _raw_upload(base, token, "third", BOT + b"# 3\n")
        assert _status(third) == 503
        second.close()
        time.sleep(0.3)  # the server notices the disconnect while the upload waits
        check.release.set()
        assert _status(first) == 201
        _wait_for(lambda: "the client went away" in caplog.text, "the second to stop")
    assert registry.versions(r, "first") != []
    assert store.get_bot(r, "second") is None and store.get_bot(r, "third") is None
    assert len(check.paths) == 1  # the second was never unpacked nor checked
