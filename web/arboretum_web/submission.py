"""An uploaded bot: one ``.py`` file, or a ``.tar``/``.tar.gz``/``.zip`` of its folder.

:func:`unpack_upload` turns the upload into the registry's ``path -> bytes`` form, refusing
anything over the registry's limits *while* reading (an archive is never unpacked to disk, and
a compressed bomb stops at ``MAX_TOTAL_BYTES``). Links, devices and absolute or ``..`` paths are
refused; caches and VCS folders are skipped, as ``arena bot submit`` does for a local folder.
A single top-level folder in the archive is stripped (``mybot/bot.py`` becomes ``bot.py``).
"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import PurePosixPath

from arboretum_worker import registry

__all__ = ["MAX_UPLOAD_BYTES", "SubmissionError", "unpack_upload"]

MAX_UPLOAD_BYTES = 2 * registry.MAX_TOTAL_BYTES
"""An upload (compressed or not) larger than this is refused before it is read."""

_SKIP_PARTS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}


class SubmissionError(registry.RegistryError):
    """The upload is not a bot file or archive the league accepts."""


def _skip(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return any(p in _SKIP_PARTS for p in parts) or path.endswith((".pyc", ".pyo"))


class _Budget:
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


MAX_ENTRIES = 4 * registry.MAX_FILES
"""Entries of an archive (folders and skipped files included) read before giving up."""


def _read_tar(data: bytes) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    budget = _Budget()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for count, member in enumerate(tar):
                if count >= MAX_ENTRIES:
                    raise registry.TooLargeError(f"an archive has at most {MAX_ENTRIES} entries")
                name = member.name.removeprefix("./")
                if member.isdir() or not name or _skip(name):
                    continue
                if not member.isfile():
                    raise SubmissionError(f"{name!r}: only regular files (no links or devices)")
                budget.add(member.size)
                extracted = tar.extractfile(member)
                if extracted is None:
                    raise SubmissionError(f"{name!r}: cannot be read")
                files[name] = extracted.read(member.size + 1)[: member.size]
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise SubmissionError(f"not a readable tar archive: {exc}") from None
    return files


def _read_zip(data: bytes) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    budget = _Budget()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if len(archive.infolist()) > MAX_ENTRIES:
                raise registry.TooLargeError(f"an archive has at most {MAX_ENTRIES} entries")
            for info in archive.infolist():
                name = info.filename
                if info.is_dir() or _skip(name):
                    continue
                mode = (info.external_attr >> 16) & 0o170000
                if mode and mode != 0o100000:
                    raise SubmissionError(f"{name!r}: only regular files (no links or devices)")
                budget.add(info.file_size)
                with archive.open(info) as f:
                    content = f.read(registry.MAX_TOTAL_BYTES + 1)
                if len(content) != info.file_size:
                    raise SubmissionError(f"{name!r}: its size does not match the archive's")
                files[name] = content
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise SubmissionError(f"not a readable zip archive: {exc}") from None
    return files


def unpack_upload(filename: str, data: bytes) -> dict[str, bytes] | bytes:
    """The files of an uploaded bot (``bytes`` for a single ``.py`` file, stored as bot.py)."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise registry.TooLargeError(f"an upload is at most {MAX_UPLOAD_BYTES} bytes")
    lower = filename.lower()
    if lower.endswith(".py"):
        if len(data) > registry.MAX_TOTAL_BYTES:
            raise registry.TooLargeError(
                f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all, this one is {len(data)}"
            )
        return data
    if lower.endswith(".zip") or data[:4] == b"PK\x03\x04":
        files = _read_zip(data)
    elif lower.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")) or _is_tar(data):
        files = _read_tar(data)
    else:
        raise SubmissionError(
            f"{filename!r}: upload a .py file, or a .tar, .tar.gz or .zip of the bot's folder"
        )
    if not files:
        raise SubmissionError("the archive holds no files")
    return _strip_common_root(files)


def _is_tar(data: bytes) -> bool:
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*"):
            return True
    except (tarfile.TarError, EOFError, OSError):
        return False
