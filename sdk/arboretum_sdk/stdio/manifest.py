"""``arena.toml``: the manifest that makes a folder a bot run by a command.

::

    command = "node bot.js"

The one key, ``command``, is the program and its arguments, split as a shell splits words (no
shell runs it). The program is a file of the folder (``./bot``, ``bin/mybot``: a path with a
``/``, relative to the folder) or a program of the runtime found on ``PATH`` (``node``,
``python3``). The folder is the command's working folder. :func:`read_manifest` checks all of
this and raises :class:`~arboretum_sdk.errors.BotLoadError` naming the problem.
"""

from __future__ import annotations

import os
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..errors import BotLoadError

__all__ = [
    "COMMAND_PREFIX",
    "KEYS",
    "MANIFEST",
    "Manifest",
    "check_command",
    "command_name",
    "program_file",
    "read_manifest",
    "split_command",
]

MANIFEST = "arena.toml"
COMMAND_PREFIX = "cmd:"
"""A bot spec ``cmd:COMMAND`` (``arena play "cmd:node bot.js" random``) runs COMMAND."""
KEYS = ("command",)
MAX_MANIFEST_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Manifest:
    """A bot folder's manifest: the command (as written) and its words."""

    folder: Path
    command: str
    argv: tuple[str, ...]


def split_command(command: str, where: str) -> tuple[str, ...]:
    """The words of ``command``; :class:`BotLoadError` for an empty or unbalanced one."""
    try:
        argv = tuple(shlex.split(command))
    except ValueError as exc:
        raise BotLoadError(f"{where}: the command cannot be split into words ({exc})") from None
    if not argv:
        raise BotLoadError(f"{where}: the command is empty")
    return argv


def program_file(argv: tuple[str, ...], folder: Path) -> str | None:
    """The folder-relative POSIX path of the program when it is a file of the folder, else None
    (a program of the runtime)."""
    program = argv[0]
    if "/" not in program or program.startswith("/"):
        return None
    return str(PurePosixPath(os.path.normpath(program)))


def read_manifest(folder: Path | str, *, path_env: str | None = None) -> Manifest:
    """Read and check ``folder/arena.toml``. ``path_env`` is the ``PATH`` a runtime program is
    looked up in (default: this process's)."""
    folder = Path(folder)
    where = f"{folder.name}/{MANIFEST}"
    file = folder / MANIFEST
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise BotLoadError(f"{where}: cannot be read ({exc.strerror})") from None
    if len(raw) > MAX_MANIFEST_BYTES:
        raise BotLoadError(f"{where}: is {len(raw)} bytes, more than {MAX_MANIFEST_BYTES}")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BotLoadError(f"{where}: is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BotLoadError(f"{where}: is not valid TOML ({exc})") from None
    unknown = sorted(k for k in data if k not in KEYS)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise BotLoadError(
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {names} "
            '(the one key is command, e.g. command = "node bot.js")'
        )
    if "command" not in data:
        raise BotLoadError(f'{where}: no command; write for example command = "node bot.js"')
    command = data["command"]
    if not isinstance(command, str):
        raise BotLoadError(
            f'{where}: command must be a string, like "node bot.js" (got a '
            f"{type(command).__name__})"
        )
    argv = split_command(command, where)
    check_program(argv, folder, where, path_env=path_env)
    return Manifest(folder, command, argv)


def check_program(
    argv: tuple[str, ...], folder: Path, where: str, *, path_env: str | None = None
) -> None:
    """:class:`BotLoadError` unless ``argv[0]`` is a file of ``folder`` or a runtime program."""
    program = argv[0]
    relative = program_file(argv, folder)
    if relative is not None:
        if relative.startswith("../") or relative == "..":
            raise BotLoadError(f"{where}: the program {program!r} is outside the bot's folder")
        target = folder / relative
        if not target.is_file():
            raise BotLoadError(f"{where}: the program {program!r} is not a file of the folder")
        return
    if program.startswith("/"):
        if not os.path.isfile(program):
            raise BotLoadError(f"{where}: the program {program!r} does not exist")
        return
    if shutil.which(program, path=path_env) is None:
        hint = (
            f" (the folder has a file {program!r}: write ./{program})"
            if (folder / program).is_file()
            else ""
        )
        raise BotLoadError(
            f"{where}: the program {program!r} is not a program of the runtime{hint}; the "
            "runtime offers python3 and node, and runs files of the folder (./bot)"
        )


def check_command(command: str, cwd: Path) -> tuple[str, ...]:
    """The words of a ``cmd:`` spec's command, run in ``cwd``; :class:`BotLoadError` when its
    program is neither a file (a path with a ``/``, from ``cwd``) nor on ``PATH``."""
    where = f"cmd:{command}"
    argv = split_command(command, where)
    program = argv[0]
    if "/" in program:
        if not (cwd / program).is_file():
            raise BotLoadError(f"{where}: the program {program!r} is not a file")
    elif shutil.which(program) is None:
        raise BotLoadError(f"{where}: the program {program!r} is not found on PATH")
    return argv


def command_name(argv: tuple[str, ...]) -> str:
    """A display name for a command: its last word's file name (``bot.js`` for ``node
    bot.js``, ``cbot`` for ``./cbot``)."""
    return PurePosixPath(argv[-1]).name or "stdio"
