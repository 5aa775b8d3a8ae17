"""``check_bot``: the pre-flight check of a submitted bot, run inside a sandbox."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .base import SandboxRunner

__all__ = ["CHECK_MARKER", "CHECK_SCRIPT", "BotCheck", "bot_size", "check_bot"]

CHECK_MARKER = "@@ARENA-CHECK@@"

# Runs in the sandbox as ``python -c CHECK_SCRIPT <bot path inside>``. It uses the SDK's loader
# (``arboretum_sdk.loader.load_bot``) and only falls back to its own search for the Bot subclass
# (module-level ``BOT``, else the single subclass of ``arboretum_sdk.Bot`` defined in the module)
# when the SDK has no loader.
CHECK_SCRIPT = r"""
import importlib, importlib.util, json, os, sys
MARK = "@@ARENA-CHECK@@"
spec = sys.argv[1]
verdict = {"ok": False, "bot_class": None, "error": None}

def fallback_load(path):
    try:
        from arboretum_sdk import Bot
    except ImportError:
        from arboretum_sdk.bot import Bot
    if os.path.isdir(path):
        sys.path.insert(0, path)
        name = "bot" if os.path.exists(os.path.join(path, "bot.py")) else None
        if name is None:
            sys.path[0] = os.path.dirname(path)
            name = os.path.basename(path)
        module = importlib.import_module(name)
    else:
        sys.path.insert(0, os.path.dirname(path))
        name = os.path.splitext(os.path.basename(path))[0]
        module = importlib.import_module(name)
    found = getattr(module, "BOT", None)
    if found is None:
        subs = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot)
                and v is not Bot and v.__module__ == module.__name__]
        if len(subs) != 1:
            raise LookupError("expected one Bot subclass in %s, found %d" % (name, len(subs)))
        found = subs[0]
    return found

try:
    try:
        from arboretum_sdk.loader import load_bot
    except ModuleNotFoundError as exc:
        if exc.name != "arboretum_sdk.loader":
            raise
        load_bot = fallback_load
    bot = load_bot(spec)
    cls = bot if isinstance(bot, type) else type(bot)
    verdict["ok"] = True
    verdict["bot_class"] = "%s.%s" % (cls.__module__, cls.__qualname__)
except BaseException as exc:
    verdict["error"] = "%s: %s" % (type(exc).__name__, exc)
sys.stdout.flush()
sys.stdout.write("\n" + MARK + json.dumps(verdict) + "\n")
sys.stdout.flush()
os._exit(0 if verdict["ok"] else 1)
"""


@dataclass(frozen=True, slots=True)
class BotCheck:
    """The verdict on a submitted bot.

    ``ok``: it imports in the sandbox and a Bot subclass was found (``bot_class``, as
    ``module.QualName``); else ``error`` says why. ``output`` is what the import printed (capped).
    The check is advisory: code that runs at import can print anything.
    """

    ok: bool
    bot_class: str | None
    error: str | None
    size_bytes: int
    output: bytes = b""
    returncode: int | None = None


def bot_size(path: Path) -> int:
    """Bytes of a bot file, or of every regular file under a bot folder (symlinks not followed)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.lstat(p).st_size
    return total


def check_bot(
    bot_path: Path | str, *, runner: SandboxRunner | None = None, timeout: float = 30.0
) -> BotCheck:
    """Check a submitted bot inside a sandbox (never in this process): size, import, Bot class."""
    if runner is None:
        from . import make_runner

        runner = make_runner()
    path = Path(bot_path)
    if not path.exists():
        return BotCheck(False, None, f"not found: {path.name}", 0)
    if path.is_file() and path.suffix != ".py":
        return BotCheck(False, None, "a bot file must end in .py", path.stat().st_size)
    if path.is_dir() and not ((path / "bot.py").is_file() or (path / "__init__.py").is_file()):
        return BotCheck(False, None, "a bot folder must hold bot.py or __init__.py", bot_size(path))
    size = bot_size(path)
    limit = runner.limits.code_size_bytes
    if size > limit:
        return BotCheck(False, None, f"bot is {size} bytes, more than the {limit} allowed", size)
    with runner.start(
        path,
        socket_path=None,
        token=None,
        name=f"check-{path.name}",
        python_args=["-c", CHECK_SCRIPT, "{bot}"],
    ) as proc:
        rc = proc.wait(timeout)
        timed_out = rc is None
        proc.kill()
        out = proc.output()
    verdict = None
    for line in reversed(out.decode(errors="replace").splitlines()):
        if line.startswith(CHECK_MARKER):
            try:
                verdict = json.loads(line[len(CHECK_MARKER) :])
            except ValueError:
                verdict = None
            break
    if timed_out:
        return BotCheck(False, None, f"import took longer than {timeout:g} s", size, out, None)
    if not isinstance(verdict, dict):
        why = f"the check died (exit {proc.returncode}) before giving a verdict"
        return BotCheck(False, None, why, size, out, proc.returncode)
    ok = bool(verdict.get("ok")) and proc.returncode == 0
    return BotCheck(
        ok,
        verdict.get("bot_class") if ok else None,
        None if ok else str(verdict.get("error") or f"exit {proc.returncode}"),
        size,
        out,
        proc.returncode,
    )
