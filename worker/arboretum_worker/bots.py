"""Submitted bots on the league's side: reading a submission's files, the sandbox runner and the
check a new version passes before it is stored, the built-in bots as submissions, and what the
sandbox is handed for a stored version."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import registry
from .settings import WorkerSettings

if TYPE_CHECKING:
    import redis

__all__ = [
    "bot_entry",
    "builtin_bot_files",
    "read_bot_files",
    "register_builtins",
    "sandbox_check",
    "sandbox_runner",
    "submit_bot",
]

_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}


def read_bot_files(path: Path) -> dict[str, bytes] | bytes:
    """A submission's files: a ``.py`` file's bytes, or a folder's files by relative path.

    Caches and VCS folders are skipped. Reading stops as soon as the registry's size limit is
    passed (so a huge folder is refused without reading it all).
    """
    if not path.exists():
        raise registry.RegistryError(f"no such file or folder: {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise registry.RegistryError(f"{path.name}: a bot file is a .py file")
        size = path.stat().st_size
        if size > registry.MAX_TOTAL_BYTES:
            raise registry.TooLargeError(
                f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all, this one is {size}"
            )
        return path.read_bytes()
    files: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            full = Path(root, name)
            if name.endswith((".pyc", ".pyo")) or full.is_symlink() or not full.is_file():
                continue
            total += full.stat().st_size
            if total > registry.MAX_TOTAL_BYTES:
                raise registry.TooLargeError(
                    f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all; {path.name} is more"
                )
            files[full.relative_to(path).as_posix()] = full.read_bytes()
            if len(files) > registry.MAX_FILES:
                raise registry.TooLargeError(f"a bot has at most {registry.MAX_FILES} files")
    return files


def bot_entry(path: Path) -> Path:
    """What to hand the sandbox for a materialised version: its ``bot.py`` when that is its only
    file (a plain module), else the folder (imported as a package)."""
    if path.is_dir() and [p.name for p in path.iterdir()] == [registry.ENTRY_POINT]:
        return path / registry.ENTRY_POINT
    return path


def sandbox_runner(settings: WorkerSettings, limits: Any = None) -> Any:
    """The bot sandbox runner the settings ask for (``ARENA_SANDBOX``, ``ARENA_BOT_IMAGE``),
    with ``limits`` (a ``SandboxLimits``; the defaults when None)."""
    from .sandbox import DEFAULT_LIMITS, make_runner

    options: dict[str, Any] = {}
    if settings.sandbox == "docker" and settings.bot_image:
        options["image"] = settings.bot_image
    return make_runner(settings.sandbox, limits or DEFAULT_LIMITS, **options)


def sandbox_check(settings: WorkerSettings | str) -> registry.BotCheck:
    """The registry's pre-store check: ``check.check_bot`` (one real decision in the sandbox);
    raises if the bot fails it."""
    if isinstance(settings, str):
        settings = WorkerSettings(sandbox=settings)
    chosen = settings

    def check(path: Path) -> None:
        from .check import check_bot

        verdict = check_bot(bot_entry(path), runner=sandbox_runner(chosen))
        if not verdict.ok:
            raise registry.CheckFailedError(
                f"the bot failed its check in the sandbox: {verdict.error}"
            )

    return check


def submit_bot(
    r: redis.Redis,
    path: Path,
    name: str,
    settings: WorkerSettings,
    *,
    owner: str | None = None,
    quota: int = 0,
) -> str:
    """Validate ``path`` (file or folder) in the sandbox and store it as a version of ``name``.
    A ``path`` that does not exist but is a built-in bot's name submits that built-in bot.
    ``quota``: new versions a bot may get a UTC day (0: no limit; ``registry.add_version``)."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    if not path.exists() and str(path) in BUILTIN_BOTS:
        files: dict[str, bytes] | bytes = builtin_bot_files(str(path))
    else:
        files = read_bot_files(path)
    try:
        return registry.add_version(
            r, name, files, owner=owner, check=sandbox_check(settings), quota=quota
        )
    except registry.CheckFailedError as exc:
        raise exc.as_submitted(path.name if path.is_file() else None) from None


def register_builtins(
    r: redis.Redis, specs: Iterable[str], check: registry.BotCheck | None
) -> list[tuple[str, str]]:
    """Register, as its first version, each built-in bot named in ``specs`` (a plain name, no
    ``@``) that no submitted bot has taken, so that a league can name the built-in bots like
    submitted ones. ``check`` is the sandbox's check. Returns (name, version id) of each bot
    registered now; a name already submitted stays the submitted bot."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    done = []
    for spec in specs:
        if spec in BUILTIN_BOTS and not registry.versions(r, spec):
            done.append((spec, registry.add_version(r, spec, builtin_bot_files(spec), check=check)))
    return done


def builtin_bot_files(name: str) -> bytes:
    """A one-file bot that is the SDK's built-in bot ``name`` (so it enters a league like any)."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    if name not in BUILTIN_BOTS:
        raise registry.RegistryError(
            f"no built-in bot {name!r} (have {', '.join(sorted(BUILTIN_BOTS))})"
        )
    module, cls, description = BUILTIN_BOTS[name]
    class_name = "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "League"
    return (
        f'"""The built-in {name} bot ({description}), submitted to the league."""\n\n'
        f"import arboretum_sdk.bots.{module} as builtin\n\n\n"
        f"class {class_name}(builtin.{cls}):\n"
        f"    pass\n"
    ).encode()
