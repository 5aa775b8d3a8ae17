"""The entrants of ``arena play`` and the local ``arena sprt``: each bot named and found (a
built-in, a file or folder, or a ``cmd:`` command), and each author's bot loaded once in a child
process of its own before any match."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from arboretum_sdk.clitools import plural

from .playreport import Entrant

__all__ = ["PlayError", "check_entrants", "resolve_entrants"]


class PlayError(Exception):
    """Bad input to ``arena play``: reported as one line, exit status 2."""


def resolve_entrants(specs: Sequence[str]) -> list[Entrant]:
    """Check each bot exists and name it (a built-in is also built here, once). Raises
    :class:`PlayError`. An author's bot is not imported here (its import could block or exit this
    process): :func:`check_entrants` loads it in a child process."""
    if not 2 <= len(specs) <= 4:
        raise PlayError(
            f"Arboretum is played by 2, 3 or 4 players; got {plural(len(specs), 'bot')}"
        )
    try:
        from arboretum_sdk.errors import BotLoadError
        from arboretum_sdk.loader import builtin_bots, load_bot, not_found
        from arboretum_sdk.stdio.manifest import COMMAND_PREFIX, command_name, split_command
    except ImportError as exc:
        raise PlayError(f"the bot SDK cannot load bots here: {exc}") from None
    builtins = builtin_bots()
    names: list[str] = []
    resolved: list[str] = []
    for spec in specs:
        if spec.startswith(COMMAND_PREFIX):
            try:
                argv = split_command(spec[len(COMMAND_PREFIX) :], spec)
            except BotLoadError as exc:
                raise PlayError(f"cannot load bot {spec!r}: {exc}") from None
            resolved.append(spec)
            names.append(command_name(argv))
            continue
        if spec in builtins:
            try:
                load_bot(spec)  # the SDK's own code: built here once
            except Exception as exc:
                raise PlayError(f"cannot load bot {spec!r}: {exc}") from None
            resolved.append(spec)
            names.append(spec)
            continue
        path = Path(spec)
        if not path.exists():
            raise PlayError(f"cannot load bot {spec!r}: {not_found(spec)}")
        path = path.resolve()
        resolved.append(str(path))
        names.append(path.stem if path.is_file() else path.name)
    out = []
    for i, (spec, name) in enumerate(zip(resolved, names, strict=True)):
        if names.count(name) > 1:
            name = f"{name}#{names[:i].count(name) + 1}"
        out.append(Entrant(i, spec, name))
    return out


_LOAD_CHECK = """\
import sys
from arboretum_sdk.errors import BotLoadError
from arboretum_sdk.loader import load_bot
try:
    load_bot(sys.argv[1])
except BotLoadError as exc:
    sys.stderr.write(str(exc))
    sys.exit(2)
"""
"""Run as ``python -c _LOAD_CHECK SPEC``: exit 0 when the bot loads and builds, else 2 with the
loader's message on stderr."""


async def check_entrants(entrants: Sequence[Entrant], timeout_ms: int) -> None:
    """Load every author's bot in a child process of its own, all at once, each within
    ``timeout_ms`` (the match's start timeout): a bot that does not load, or whose import blocks
    or exits, is a :class:`PlayError` naming it before any match starts. Built-ins are checked by
    :func:`resolve_entrants`. Cancelled (Ctrl-C), it stops the children at once."""
    from arboretum_sdk.loader import builtin_bots

    builtins = builtin_bots()
    specs = sorted({e.spec for e in entrants if e.spec not in builtins})
    procs = {
        spec: subprocess.Popen(
            [sys.executable, "-c", _LOAD_CHECK, spec],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for spec in specs
    }
    try:
        outcomes = await asyncio.gather(
            *(asyncio.to_thread(_wait_loaded, proc, timeout_ms / 1000) for proc in procs.values())
        )
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(5)
    for spec, (status, output) in zip(procs, outcomes, strict=True):
        if status is None:
            raise PlayError(
                f"cannot load bot {spec!r}: it did not finish loading within {timeout_ms} ms "
                "(--start-timeout-ms); does its module block when imported?"
            )
        if status != 0:
            why = output.strip() or f"the loading process exited with status {status}"
            raise PlayError(f"cannot load bot {spec!r}: {why}")


def _wait_loaded(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[int | None, str]:
    """(exit status, what it wrote to stderr), or (None, "") when it ran past ``timeout_s``."""
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None, ""
    return proc.returncode, err.decode("utf-8", "replace")
