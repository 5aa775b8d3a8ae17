"""Submitted bots: immutable versions named by the sha256 of their files.

A bot is a name (with an optional owner) and its history of versions, oldest first. A version
is a set of files (relative POSIX path -> bytes; a single-file bot is stored as ``bot.py``;
a bot run by a command has an ``arena.toml`` instead, and the file its command names is
materialised executable), kept in Redis (``Keys.version_files``), so a worker on any machine
can materialise it.

The version id is ``sha256`` over a canonical listing of the files (see :func:`version_id`):
the same content always gives the same id, so :func:`add_version` is idempotent. A version
belongs to the first bot name it was submitted under; submitting the same files under another
name is refused (the leaderboard names a version by its bot).

Whether a bot starts and answers is checked in the sandbox (``check.check_bot``, another module):
pass it as ``check`` and it runs on a materialised copy before anything is stored.

**Daily quota.** A bot gets at most ``quota`` new versions a UTC day (``ARENA_SUBMIT_QUOTA``,
default :data:`DEFAULT_SUBMIT_QUOTA`; 0 lifts it): a re-submitted copy of a trivially changed file
is a new version with fresh luck, so re-rolls are limited. Submitting files that are already a
version of the bot stores nothing and counts nothing. Over the quota, :func:`add_version` raises
:class:`QuotaExceededError`, which says when the next version is accepted (``retry_after``).
The count (``Keys.bot_submitted``) is checked before the sandbox check and counted in the same
atomic step that stores the version.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

import redis

from arboretum_sdk.clitools import plural
from arboretum_sdk.errors import BotLoadError
from arboretum_sdk.stdio import manifest
from arboretum_worker.store import (
    Keys,
    StoreError,
    as_text,
    bot_versions,
    get_version,
    get_version_files,
    validate_name,
)

__all__ = [
    "DEFAULT_SUBMIT_QUOTA",
    "ENTRY_POINT",
    "MANIFEST",
    "MAX_FILES",
    "MAX_PATH_LENGTH",
    "MAX_TOTAL_BYTES",
    "BotCheck",
    "DuplicateContentError",
    "OwnerMismatchError",
    "QuotaExceededError",
    "RegistryError",
    "TooLargeError",
    "UnknownVersionError",
    "add_version",
    "canonical_files",
    "executable_file",
    "latest",
    "materialise",
    "quota_from_env",
    "submissions_today",
    "version_id",
    "versions",
]

ENTRY_POINT = "bot.py"
"""The file the sandbox runs; every version has it at its root, unless it has a manifest."""
MANIFEST = manifest.MANIFEST
"""``arena.toml``: a bot run by a command (``docs/stdio-protocol.md``) has it instead."""
MAX_TOTAL_BYTES = 1024 * 1024
MAX_FILES = 200
MAX_PATH_LENGTH = 200
DEFAULT_SUBMIT_QUOTA = 5
"""New versions a bot may get a UTC day unless the operator sets ``ARENA_SUBMIT_QUOTA``."""
QUOTA_ENV = "ARENA_SUBMIT_QUOTA"

BotCheck = Callable[[Path], None]
"""A check run on a materialised version before it is stored; it raises to reject the bot."""


class RegistryError(StoreError):
    """A submission is refused (the message says why)."""


class TooLargeError(RegistryError):
    pass


class CheckFailedError(RegistryError):
    """The bot failed the check run before it is stored (``BotCheck``)."""

    def as_submitted(self, filename: str | None) -> CheckFailedError:
        """The same refusal, noting that the author's one file ``filename`` runs as
        :data:`ENTRY_POINT` (so that the check's messages, which name that, make sense)."""
        name = Path(filename or "").name
        if not name.endswith(".py") or name == ENTRY_POINT:
            return self
        return CheckFailedError(f"{self} (your {name} runs as {ENTRY_POINT} in the sandbox)")


class DuplicateContentError(RegistryError):
    pass


class OwnerMismatchError(RegistryError):
    pass


class UnknownVersionError(RegistryError):
    pass


class QuotaExceededError(RegistryError):
    """The bot had its quota of new versions today; ``retry_after`` seconds until UTC midnight."""

    def __init__(self, name: str, quota: int, retry_after: int) -> None:
        hours, minutes = divmod(max(1, retry_after // 60), 60)
        wait = f"{hours} h {minutes} min" if hours else f"{minutes} min"
        super().__init__(
            f"bot {name!r} has had its {plural(quota, 'new version')} today (at most {quota} a "
            f"UTC day): the next one is accepted in {wait}"
        )
        self.retry_after = retry_after


def quota_from_env(env: Mapping[str, str] | None = None) -> int:
    """The daily quota of new versions per bot: ``ARENA_SUBMIT_QUOTA`` (0: none), else
    :data:`DEFAULT_SUBMIT_QUOTA`; a value that is not a whole number >= 0 is a RegistryError."""
    raw = (os.environ if env is None else env).get(QUOTA_ENV, "").strip()
    if not raw:
        return DEFAULT_SUBMIT_QUOTA
    if not raw.isdigit():
        raise RegistryError(f"{QUOTA_ENV} must be a whole number >= 0 (0: no quota), not {raw!r}")
    return int(raw)


def _utc_day(now: float) -> tuple[str, int]:
    """The UTC day of ``now`` (``YYYY-MM-DD``) and the seconds left until it ends."""
    moment = dt.datetime.fromtimestamp(now, dt.UTC)
    end = dt.datetime.combine(moment.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    return moment.date().isoformat(), max(1, int((end - moment).total_seconds() + 0.999))


def submissions_today(r: redis.Redis, name: str, *, now: float | None = None) -> int:
    """New versions of bot ``name`` stored today (UTC)."""
    day, _left = _utc_day(time.time() if now is None else now)
    raw = r.get(Keys.bot_submitted(name, day))
    return 0 if raw is None else int(raw)


def _check_path(path: str) -> str:
    if not isinstance(path, str) or not path:
        raise RegistryError(f"invalid file path {path!r}")
    if len(path) > MAX_PATH_LENGTH:
        raise RegistryError(f"file path longer than {MAX_PATH_LENGTH} characters: {path[:40]!r}...")
    if "\\" in path or "\0" in path or any(ord(c) < 32 for c in path):
        raise RegistryError(f"file path {path!r} has a backslash or a control character")
    pure = PurePosixPath(path)
    if pure.is_absolute() or str(pure) != path or any(p in ("", ".", "..") for p in pure.parts):
        raise RegistryError(f"file path {path!r} must be relative, normalised, without '..'")
    return path


def canonical_files(files: Mapping[str, bytes] | bytes) -> dict[str, bytes]:
    """Validate a submission and return it as path -> bytes, sorted by path.

    ``bytes`` is a single-file bot, stored as ``bot.py``. Raises RegistryError (TooLargeError
    for the limits: MAX_TOTAL_BYTES in all, MAX_FILES files).
    """
    if isinstance(files, bytes | bytearray | memoryview):
        files = {ENTRY_POINT: bytes(files)}
    if not files:
        raise RegistryError("a bot has at least one file")
    if len(files) > MAX_FILES:
        raise TooLargeError(f"a bot has at most {MAX_FILES} files, this one has {len(files)}")
    out: dict[str, bytes] = {}
    total = 0
    for path in sorted(files):
        data = files[path]
        if not isinstance(data, bytes | bytearray | memoryview):
            raise RegistryError(f"file {path!r}: contents must be bytes")
        out[_check_path(path)] = bytes(data)
        total += len(data)
    if total > MAX_TOTAL_BYTES:
        raise TooLargeError(f"a bot is at most {MAX_TOTAL_BYTES} bytes in all, this one is {total}")
    paths = set(out)
    for path in out:
        for parent in PurePosixPath(path).parents:
            if str(parent) in paths:
                raise RegistryError(f"{str(parent)!r} is both a file and a directory")
    if ENTRY_POINT not in out and MANIFEST not in out:
        raise RegistryError(
            f"a bot needs {ENTRY_POINT!r} at its root, or an {MANIFEST!r} naming its command"
        )
    return out


def executable_file(files: Mapping[str, bytes]) -> str | None:
    """The file of the version that its manifest's command runs (``./bot`` in ``command =
    "./bot"``), when there is one: it is materialised executable (file modes are not part of a
    version, so that its id is its content alone)."""
    raw = files.get(MANIFEST)
    if raw is None:
        return None
    try:
        command = tomllib.loads(raw.decode("utf-8")).get("command")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None  # (the sandbox check names what is wrong)
    if not isinstance(command, str):
        return None
    try:
        argv = manifest.split_command(command, MANIFEST)
    except BotLoadError:
        return None
    program = manifest.program_file(argv, Path("."))
    return program if program in files else None


def version_id(files: Mapping[str, bytes]) -> str:
    """sha256 (hex) of the canonical listing of ``files`` (already canonical).

    The listing is ``b"arboretum-bot/1\\n"`` then, per file in path order (by code point),
    ``b"<len(path)>:<path>\\n<len(data)>:" + data + b"\\n"`` (lengths in decimal, path UTF-8),
    so no two different file sets give the same listing.
    """
    h = hashlib.sha256(b"arboretum-bot/1\n")
    for path in sorted(files):
        raw_path = path.encode()
        data = files[path]
        h.update(b"%d:%s\n%d:" % (len(raw_path), raw_path, len(data)))
        h.update(data)
        h.update(b"\n")
    return h.hexdigest()


# KEYS: version, version files, bot, bot versions, bots set, the bot's count of today
# ARGV: version id, name, owner, created, size, file count, quota (0: none), count's lifetime,
#       then path, bytes pairs
# Returns 1 if stored now, 0 if the version existed under this name, -1 if under another
# name (then ARGV... ignored), -2 if the bot has another owner, -3 if over the day's quota.
_ADD_VERSION = """
local owner = redis.call('HGET', KEYS[3], 'owner')
if owner and owner ~= '' and ARGV[3] ~= '' and owner ~= ARGV[3] then return {-2, owner} end
local existing = redis.call('HGET', KEYS[1], 'name')
if existing then
  if existing ~= ARGV[2] then return {-1, existing} end
  return {0, ''}
end
local quota = tonumber(ARGV[7])
if quota > 0 and tonumber(redis.call('GET', KEYS[6]) or '0') >= quota then return {-3, ''} end
redis.call('INCR', KEYS[6])
redis.call('EXPIRE', KEYS[6], ARGV[8])
if redis.call('EXISTS', KEYS[3]) == 0 then
  redis.call('HSET', KEYS[3], 'name', ARGV[2], 'owner', ARGV[3], 'created', ARGV[4])
  redis.call('SADD', KEYS[5], ARGV[2])
elseif (not owner or owner == '') and ARGV[3] ~= '' then
  redis.call('HSET', KEYS[3], 'owner', ARGV[3])
end
for i = 9, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'created', ARGV[4],
           'size', ARGV[5], 'files', ARGV[6])
redis.call('RPUSH', KEYS[4], ARGV[1])
return {1, ''}
"""


def add_version(
    r: redis.Redis,
    name: str,
    files: Mapping[str, bytes] | bytes,
    *,
    owner: str | None = None,
    check: BotCheck | None = None,
    quota: int = 0,
    now: float | None = None,
) -> str:
    """Store ``files`` as a version of bot ``name``; return its id. Idempotent.

    ``quota``: at most this many new versions of the bot a UTC day (0: no limit); over it,
    QuotaExceededError, before the check runs. ``now`` is the time (for tests).

    The same files under the same name give the same id and store nothing new. Raises
    RegistryError for an invalid submission, TooLargeError over the limits,
    DuplicateContentError when the files are already a version of another bot and
    OwnerMismatchError when the bot belongs to another owner. ``check`` (the sandbox's
    ``check_bot``) runs on a materialised copy of a new version and raises to reject it.
    """
    validate_name("bot", name)
    if quota < 0:
        raise RegistryError(f"a quota is 0 (none) or more, not {quota}")
    canon = canonical_files(files)
    vid = version_id(canon)
    now = time.time() if now is None else now
    day, left = _utc_day(now)
    known = get_version(r, vid)
    if quota and known is None and submissions_today(r, name, now=now) >= quota:
        raise QuotaExceededError(name, quota, left)
    if check is not None and known is None:
        with tempfile.TemporaryDirectory(prefix="arena-check-") as tmp:
            target = Path(tmp) / "bot"
            _write_files(canon, target, read_only=False)
            check(target)
    args: list[str | bytes | int] = [
        vid,
        name,
        owner or "",
        repr(now),
        sum(len(d) for d in canon.values()),
        len(canon),
        quota,
        2 * 86400,
    ]
    for path, data in canon.items():
        args += [path, data]
    keys = [
        Keys.version(vid),
        Keys.version_files(vid),
        Keys.bot(name),
        Keys.bot_versions(name),
        Keys.BOTS,
        Keys.bot_submitted(name, day),
    ]
    code, other = r.register_script(_ADD_VERSION)(keys=keys, args=args)
    code = int(code)
    if code == -1:
        raise DuplicateContentError(
            f"these files are already version {vid[:12]} of bot {as_text(other)!r}"
        )
    if code == -2:
        raise OwnerMismatchError(f"bot {name!r} belongs to another owner")
    if code == -3:
        raise QuotaExceededError(name, quota, left)
    return vid


def versions(r: redis.Redis, name: str) -> list[str]:
    """The bot's version ids, oldest first."""
    return bot_versions(r, name)


def latest(r: redis.Redis, name: str) -> str | None:
    """The bot's newest version id, or None if it has none."""
    raw = r.lindex(Keys.bot_versions(name), -1)
    return None if raw is None else as_text(raw)


def _write_files(files: Mapping[str, bytes], dest: Path, *, read_only: bool) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise RegistryError(f"{dest} is not empty")
    program = executable_file(files)
    for path, data in files.items():
        target = dest.joinpath(*PurePosixPath(path).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        executable = 0o111 if path == program else 0
        if read_only:
            target.chmod(0o444 | executable)
        elif executable:
            target.chmod(0o644 | executable)


def materialise(
    r: redis.Redis, version: str, dest: str | os.PathLike[str], *, read_only: bool = True
) -> Path:
    """Write the version's files under ``dest`` (created; must be empty) and return it.

    The files are checked against the version id first (a corrupted store is an error).
    With ``read_only`` the files are mode 0444 (directories stay writable, so the caller
    can delete the tree); the sandbox mounts the tree read-only in any case.
    """
    files = get_version_files(r, version)
    if not files:
        raise UnknownVersionError(f"no bot version {version!r}")
    if version_id(files) != version:
        raise RegistryError(f"stored files of version {version!r} do not match its hash")
    target = Path(dest)
    _write_files(files, target, read_only=read_only)
    return target
