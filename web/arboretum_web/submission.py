"""An uploaded bot: one ``.py`` file, or a ``.tar`` (plain, gzip, bzip2 or xz) or ``.zip`` of its
folder.

:func:`unpack_upload` turns the upload into the registry's ``path -> bytes`` form in memory (an
archive is never unpacked to disk) and refuses, while reading, anything over the limits. Every
byte an archive unpacks to counts, the entries that are skipped included:

- the upload itself is at most :data:`MAX_UPLOAD_BYTES`;
- a compressed tar is inflated in bounded chunks to at most :data:`MAX_UNPACKED_BYTES` in all
  (headers, folders and skipped files such as ``__pycache__/`` included), from at most
  :data:`MAX_STREAMS` concatenated compressed streams; a zip's entries, skipped ones included,
  declare at most that many bytes together, and the kept ones are read only up to what they
  declare;
- an archive has at most :data:`MAX_ENTRIES` entries of any kind;
- the files kept are within the registry's limits (1 MiB in all, 200 files).

Links, devices and absolute or ``..`` paths are refused; caches and VCS folders are skipped, as
``arena bot submit`` does for a local folder. A single top-level folder in the archive is stripped
(``mybot/bot.py`` becomes ``bot.py``). The work checks ``should_stop`` between chunks, so an upload
whose client has gone stops early (:class:`UploadCancelled`).
"""

from __future__ import annotations

import bz2
import io
import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Literal, Protocol

from arboretum_worker import registry

__all__ = [
    "MAX_ENTRIES",
    "MAX_STREAMS",
    "MAX_UNPACKED_BYTES",
    "MAX_UPLOAD_BYTES",
    "SubmissionError",
    "UploadCancelled",
    "UploadKind",
    "unpack_upload",
    "upload_kind",
]

MAX_UPLOAD_BYTES = 2 * registry.MAX_TOTAL_BYTES
"""An upload (compressed or not) larger than this is refused before it is unpacked."""
MAX_UNPACKED_BYTES = 4 * registry.MAX_TOTAL_BYTES
"""What an archive may unpack to in all, every entry (skipped or not) and header included."""
MAX_ENTRIES = 4 * registry.MAX_FILES
"""Entries of an archive (folders and skipped files included) read before giving up."""
MAX_STREAMS = 16
"""Concatenated compressed streams in one compressed tar (``cat a.gz b.gz`` is still a gzip)."""
_CHUNK = 256 * 1024

_SKIP_PARTS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}
_TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_GZIP, _BZIP2, _XZ = b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00"

UploadKind = Literal["py", "tar", "zip"]
StopCheck = Callable[[], bool]


class SubmissionError(registry.RegistryError):
    """The upload is not a bot file or archive the league accepts."""


class UploadCancelled(Exception):
    """``should_stop`` said so (the client went away): nothing was stored."""


def _never() -> bool:
    return False


def _skip(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p in _SKIP_PARTS for p in parts) or path.endswith((".pyc", ".pyo"))


def _too_large_unpacked() -> registry.TooLargeError:
    return registry.TooLargeError(
        f"an archive unpacks to at most {MAX_UNPACKED_BYTES} bytes in all, skipped files "
        "(__pycache__, .git, ...) included; this one is more"
    )


def _too_many_entries() -> registry.TooLargeError:
    return registry.TooLargeError(
        f"an archive has at most {MAX_ENTRIES} entries (folders and skipped files included)"
    )


class _Budget:
    """The files kept, against the registry's limits."""

    def __init__(self) -> None:
        self.total = 0
        self.files = 0

    def add(self, size: int) -> None:
        self.total += size
        self.files += 1
        if self.total > registry.MAX_TOTAL_BYTES:
            raise registry.TooLargeError(
                f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all; this upload is more"
            )
        if self.files > registry.MAX_FILES:
            raise registry.TooLargeError(f"a bot has at most {registry.MAX_FILES} files")


def _strip_common_root(files: dict[str, bytes]) -> dict[str, bytes]:
    roots = {PurePosixPath(p).parts[0] for p in files}
    if len(roots) == 1 and all(len(PurePosixPath(p).parts) > 1 for p in files):
        root = next(iter(roots))
        return {p[len(root) + 1 :]: d for p, d in files.items()}
    return files


# --------------------------------------------------------------------------- inflating


class _Stream(Protocol):
    """One compressed stream being inflated (zlib's, bz2's and lzma's decompressors)."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bytes]:
        """Inflate at most ``max_length`` bytes; returns them and the input to pass next."""
        ...


class _Zlib:
    def __init__(self) -> None:
        self._d = zlib.decompressobj(wbits=31)  # gzip members

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bytes]:
        out = self._d.decompress(data, max_length)
        return out, self._d.unconsumed_tail


class _Buffered:
    """bz2's and lzma's decompressors keep the input they have not used yet themselves."""

    def __init__(self, d: bz2.BZ2Decompressor | lzma.LZMADecompressor) -> None:
        self._d = d

    @property
    def eof(self) -> bool:
        return self._d.eof

    @property
    def unused_data(self) -> bytes:
        return self._d.unused_data

    def step(self, data: bytes, max_length: int) -> tuple[bytes, bytes]:
        out = self._d.decompress(data, max_length)
        return out, b""

    @property
    def needs_input(self) -> bool:
        return self._d.needs_input


def _new_stream(magic: bytes) -> _Stream:
    if magic == _GZIP:
        return _Zlib()
    if magic == _BZIP2:
        return _Buffered(bz2.BZ2Decompressor())
    return _Buffered(lzma.LZMADecompressor(format=lzma.FORMAT_XZ))


def _compression(data: bytes) -> bytes | None:
    for magic in (_GZIP, _BZIP2, _XZ):
        if data.startswith(magic):
            return magic
    return None


def _inflate(data: bytes, magic: bytes, should_stop: StopCheck) -> bytes:
    """The whole decompressed content, in chunks, refused past ``MAX_UNPACKED_BYTES``."""
    out = bytearray()
    rest = data
    streams = 0
    while rest:
        streams += 1
        if streams > MAX_STREAMS:
            raise SubmissionError(
                f"a compressed tar holds at most {MAX_STREAMS} concatenated compressed streams"
            )
        if not rest.startswith(magic):
            if streams > 1 and not rest.strip(b"\x00"):
                break  # zero padding after the last stream
            raise SubmissionError("not a readable compressed tar: trailing garbage")
        stream = _new_stream(magic)
        pending = rest
        while not stream.eof:
            if should_stop():
                raise UploadCancelled
            room = MAX_UNPACKED_BYTES + 1 - len(out)
            chunk, pending = stream.step(pending, min(room, _CHUNK))
            out += chunk
            if len(out) > MAX_UNPACKED_BYTES:
                raise _too_large_unpacked()
            if not chunk and not pending and not stream.eof:
                if isinstance(stream, _Buffered) and not stream.needs_input:
                    continue  # output is waiting in the decompressor
                raise SubmissionError("not a readable compressed tar: the data ends too early")
        rest = stream.unused_data
    return bytes(out)


# --------------------------------------------------------------------------- archives


def _read_tar(data: bytes, should_stop: StopCheck) -> dict[str, bytes]:
    magic = _compression(data)
    try:
        raw = _inflate(data, magic, should_stop) if magic else data
    except (zlib.error, OSError, EOFError, lzma.LZMAError) as exc:
        raise SubmissionError(f"not a readable compressed tar: {exc}") from None
    files: dict[str, bytes] = {}
    budget = _Budget()
    try:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
            for count, member in enumerate(tar):
                if count >= MAX_ENTRIES:
                    raise _too_many_entries()
                if should_stop():
                    raise UploadCancelled
                name = member.name.removeprefix("./")
                if member.isdir() or not name or _skip(name):
                    continue
                if not member.isfile():
                    raise SubmissionError(f"{name!r}: only regular files (no links or devices)")
                budget.add(member.size)
                extracted = tar.extractfile(member)
                if extracted is None:
                    raise SubmissionError(f"{name!r}: cannot be read")
                content = extracted.read(member.size + 1)
                if len(content) != member.size:
                    raise SubmissionError(f"{name!r}: the archive ends inside this file")
                files[name] = content
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SubmissionError(f"not a readable tar archive: {exc}") from None
    return files


def _read_zip(data: bytes, should_stop: StopCheck) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    budget = _Budget()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ENTRIES:
                raise _too_many_entries()
            # What every entry says it unpacks to, the skipped ones included (they are never
            # inflated; a kept one is read only up to what it declares).
            if sum(info.file_size for info in infos) > MAX_UNPACKED_BYTES:
                raise _too_large_unpacked()
            for info in infos:
                if should_stop():
                    raise UploadCancelled
                name = info.filename
                if info.is_dir() or _skip(name):
                    continue
                mode = (info.external_attr >> 16) & 0o170000
                if mode and mode != 0o100000:
                    raise SubmissionError(f"{name!r}: only regular files (no links or devices)")
                budget.add(info.file_size)
                with archive.open(info) as f:
                    content = f.read(info.file_size + 1)
                if len(content) != info.file_size:
                    raise SubmissionError(f"{name!r}: its size does not match the archive's")
                files[name] = content
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, zlib.error) as exc:
        raise SubmissionError(f"not a readable zip archive: {exc}") from None
    except (NotImplementedError, RuntimeError) as exc:  # unsupported method, encrypted entry
        raise SubmissionError(f"not a zip archive the league can read: {exc}") from None
    return files


def upload_kind(filename: str | None, data: bytes) -> UploadKind:
    """What the upload is: by its name when it has a known suffix, else by its content (a zip,
    a tar or a compressed tar); a nameless upload that is neither is a ``.py`` file."""
    lower = (filename or "").lower()
    if lower.endswith(".zip"):
        return "zip"
    if lower.endswith(_TAR_SUFFIXES):
        return "tar"
    if lower.endswith(".py"):
        return "py"
    if data.startswith(_ZIP_MAGIC):
        return "zip"
    if _compression(data) is not None or data[257:262] == b"ustar":
        return "tar"
    if not lower:
        return "py"
    raise SubmissionError(
        f"{filename!r}: upload a .py file, or a .tar, .tar.gz or .zip of the bot's folder"
    )


def unpack_upload(
    filename: str | None, data: bytes, should_stop: StopCheck = _never
) -> dict[str, bytes] | bytes:
    """The files of an uploaded bot (``bytes`` for a single ``.py`` file, stored as bot.py)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise registry.TooLargeError(f"an upload is at most {MAX_UPLOAD_BYTES} bytes")
    if not data:
        raise SubmissionError("the upload is empty: send the bot's file or archive")
    kind = upload_kind(filename, data)
    if kind == "py":
        if len(data) > registry.MAX_TOTAL_BYTES:
            raise registry.TooLargeError(
                f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all, this one is {len(data)}"
            )
        return data
    files = _read_zip(data, should_stop) if kind == "zip" else _read_tar(data, should_stop)
    if not files:
        raise SubmissionError("the archive holds no files")
    return _strip_common_root(files)
