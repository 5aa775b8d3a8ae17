"""Loading a bot from a spec: a built-in name, a ``.py`` file, or a folder.

- A built-in name (``arena bot list``): ``random``, ``greedy``.
- A ``.py`` file: imported as a module of its own.
- A folder with an ``arena.toml`` (a command, ``docs/stdio-protocol.md``), or ``cmd:COMMAND``:
  a :class:`~arboretum_sdk.stdio.StdioBot` that runs the command and speaks the line protocol
  to it (:func:`load_bot` only; the child starts with the match).
- A folder: its ``bot.py`` (else its ``__init__.py``) is the entry point. The folder is imported as
  a package, so helper modules next to it import with ``from . import helpers`` (and, because the
  folder is also put on ``sys.path``, with ``import helpers``).

The bot class is the module's ``BOT`` attribute when it has one (``BOT = MyBot``); otherwise the
single :class:`~arboretum_sdk.Bot` subclass *defined* in that module (classes merely imported into
it do not count). It must say how to take every decision: it implements ``choose``, or both
``choose_draw`` and ``choose_play`` (a class that does not is refused here, naming the missing
method, rather than forfeiting its games later). It is built with no arguments.

A bot that does not load raises :class:`~arboretum_sdk.errors.BotLoadError` with one line. An
error in the author's code names the file and line in the bot where it happened, never with a
traceback: a syntax error as ``bot.py, line 4, column 27: SyntaxError: expected ':'; the line:
def choose(self, view)``; an exception raised while importing (or building) the bot as
``bot.py, line 5, in helper: importing the bot failed: ZeroDivisionError: division by zero
(called from bot.py, line 7)``. A file of a folder bot is named from the folder
(``mybot/helpers.py``); files outside the bot (the standard library's, the SDK's) are not named.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import sys
import traceback
import uuid
from pathlib import Path
from types import ModuleType

from .bot import Bot
from .errors import BotLoadError

__all__ = [
    "builtin_bots",
    "check_bot_class",
    "find_bot_class",
    "load_bot",
    "load_bot_class",
    "not_found",
]


def builtin_bots() -> dict[str, str]:
    """The built-in bots: name -> one-line description."""
    from .bots import BUILTIN_BOTS

    return {name: desc for name, (_, _, desc) in BUILTIN_BOTS.items()}


def not_found(spec: str) -> str:
    """Why ``spec`` names no bot, when it is neither a path that exists nor a built-in bot's
    name: the built-ins, and the ``.py`` file it may have meant."""
    from .bots import BUILTIN_BOTS

    path = Path(spec)
    near = path.with_name(path.name + ".py") if path.name else None
    hint = f"; did you mean {near}?" if near and path.suffix != ".py" and near.is_file() else ""
    return (
        "no such file or folder, and not a built-in bot "
        f"(built-ins: {', '.join(BUILTIN_BOTS)}){hint}"
    )


def load_bot(spec: str) -> Bot:
    """Load and build the bot named by ``spec`` (a built-in name, a .py file or a folder).

    Raises :class:`BotLoadError` with one line naming the problem (for an error in the author's
    code, where in the bot's files it happened: see the module's docstring).
    """
    stdio = _stdio_bot(spec)
    if stdio is not None:
        return stdio
    cls = load_bot_class(spec)
    try:
        bot = cls()
    except Exception as exc:
        path = Path(spec)
        files = _BotFiles(path) if path.exists() else None
        doing = f"building {cls.__name__}() failed"
        raise BotLoadError(
            f"{_failure(exc, files, spec, doing)} (a bot class is built with no arguments)"
        ) from exc
    return bot


def _stdio_bot(spec: str) -> Bot | None:
    """A :class:`~arboretum_sdk.stdio.StdioBot` for ``cmd:COMMAND`` or a folder with an
    ``arena.toml``, not started yet; None for any other spec."""
    from .stdio import manifest

    if spec.startswith(manifest.COMMAND_PREFIX):
        cwd = Path.cwd()
        argv = manifest.check_command(spec[len(manifest.COMMAND_PREFIX) :], cwd)
    else:
        path = Path(spec)
        if not (path.is_dir() and (path / manifest.MANIFEST).is_file()):
            return None
        cwd = path.resolve()
        argv = manifest.read_manifest(path).argv
    from .stdio.child import StdioBot

    return StdioBot(argv, cwd=cwd, name=manifest.command_name(argv))


def load_bot_class(spec: str) -> type[Bot]:
    """The bot class named by ``spec``, without building it."""
    from .bots import BUILTIN_BOTS

    if spec in BUILTIN_BOTS:
        module_name, class_name, _ = BUILTIN_BOTS[spec]
        module = importlib.import_module(f"arboretum_sdk.bots.{module_name}")
        cls = getattr(module, class_name)
        assert isinstance(cls, type) and issubclass(cls, Bot)
        return cls
    path = Path(spec)
    if not path.exists():
        raise BotLoadError(f"{spec}: {not_found(spec)}")
    if path.is_dir():
        module = _import_folder(path)
    elif path.suffix == ".py":
        module = _import_file(path, _BotFiles(path))
    else:
        raise BotLoadError(f"{spec}: a bot is a .py file or a folder, not {path.suffix or 'this'}")
    return find_bot_class(module, spec)


def find_bot_class(module: ModuleType, spec: str = "") -> type[Bot]:
    """The module's ``BOT``, or its single Bot subclass defined in it."""
    where = spec or module.__name__
    explicit = getattr(module, "BOT", None)
    if explicit is not None:
        if isinstance(explicit, type) and issubclass(explicit, Bot):
            return check_bot_class(explicit, where)
        raise BotLoadError(
            f"{where}: BOT must be a subclass of arboretum_sdk.Bot (the class itself, not an "
            f"instance), got {explicit!r}"
        )
    found = [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Bot)
        and obj is not Bot
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]
    if not found:
        raise BotLoadError(
            f"{where}: no Bot subclass found; define a class that subclasses arboretum_sdk.Bot "
            "(from arboretum_sdk import Bot)"
        )
    if len(found) > 1:
        names = ", ".join(sorted(c.__name__ for c in found))
        raise BotLoadError(
            f"{where}: several Bot subclasses found ({names}); name the one to run with "
            "BOT = ClassName at module level"
        )
    return check_bot_class(found[0], where)


_ONE_METHOD = (
    "a bot implements choose(self, view) -> Decision, or both choose_draw(self, view) -> Draw "
    "and choose_play(self, view) -> Play"
)


def check_bot_class(cls: type[Bot], where: str = "") -> type[Bot]:
    """``cls`` if it says how to take every decision; else :class:`BotLoadError` naming what is
    missing (a class that implements neither ``choose`` nor both ``choose_draw`` and
    ``choose_play``, or whose method is not a method taking the view)."""
    prefix = f"{where}: " if where else ""
    name = cls.__name__
    if cls.choose is not Bot.choose:
        methods = ["choose"]
    else:
        missing = [m for m in ("choose_draw", "choose_play") if getattr(cls, m) is getattr(Bot, m)]
        if missing:
            has = [m for m in ("choose_draw", "choose_play") if m not in missing]
            what = (
                f"implements {has[0]} but not {missing[0]}"
                if has
                else "implements none of choose, choose_draw and choose_play"
            )
            raise BotLoadError(f"{prefix}{name} {what}; {_ONE_METHOD}")
        methods = ["choose_draw", "choose_play"]
    for method in methods:
        found = inspect.getattr_static(cls, method)
        if isinstance(found, staticmethod | classmethod) or not callable(found):
            raise BotLoadError(
                f"{prefix}{name}.{method} is not a method (its type is {type(found).__name__}); "
                f"{_ONE_METHOD}"
            )
        try:
            signature = inspect.signature(found)
        except (TypeError, ValueError):  # no signature to read (a compiled callable): trust it
            continue
        try:
            signature.bind(None, None)
        except TypeError:
            raise BotLoadError(
                f"{prefix}{name}.{method}{signature} cannot be called with the view: {_ONE_METHOD}"
            ) from None
    return cls


def _import_file(path: Path, files: _BotFiles) -> ModuleType:
    name = f"arena_bot_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise BotLoadError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _exec(spec.loader, module, path, files)
    return module


def _import_folder(folder: Path) -> ModuleType:
    folder = folder.resolve()
    files = _BotFiles(folder)
    init = folder / "__init__.py"
    entry = folder / "bot.py"
    if not entry.is_file() and not init.is_file():
        raise BotLoadError(f"{folder.name}: the folder holds neither bot.py nor __init__.py")
    package = f"arena_bot_{_identifier(folder.name)}_{uuid.uuid4().hex[:8]}"
    if init.is_file():
        pkg_spec = importlib.util.spec_from_file_location(
            package, init, submodule_search_locations=[str(folder)]
        )
    else:
        pkg_spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        pkg_spec.submodule_search_locations = [str(folder)]
    if pkg_spec is None:
        raise BotLoadError(f"{folder.name}: cannot be imported as a package")
    pkg = importlib.util.module_from_spec(pkg_spec)
    sys.modules[package] = pkg
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))  # `import helpers` from the bot's folder works too
    if init.is_file() and pkg_spec.loader is not None:
        _exec(pkg_spec.loader, pkg, init, files)
    if not entry.is_file():
        return pkg
    name = f"{package}.bot"
    spec = importlib.util.spec_from_file_location(name, entry)
    if spec is None or spec.loader is None:
        raise BotLoadError(f"{entry}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _exec(spec.loader, module, entry, files)
    return module


def _exec(loader: object, module: ModuleType, path: Path, files: _BotFiles) -> None:
    try:
        loader.exec_module(module)  # type: ignore[attr-defined]
    except Exception as exc:
        sys.modules.pop(module.__name__, None)
        where = files.name(str(path)) or path.name
        raise BotLoadError(_failure(exc, files, where, "importing the bot failed")) from exc


_QUOTE = 300
"""Characters of an exception's text a message keeps."""
_QUOTE_LINE = 120
"""Characters of a line of code a syntax error's message keeps."""


class _BotFiles:
    """The files of one bot (a file, or every file under a folder), named as its author knows
    them: a file bot's file by its name, a folder bot's files from the folder (``mybot/x.py``)."""

    def __init__(self, path: Path) -> None:
        self.root = path.resolve()
        self.folder = self.root.is_dir()

    def name(self, filename: str | None) -> str | None:
        """``filename``'s name if it is one of the bot's files, else None."""
        if not filename or filename.startswith("<"):
            return None
        try:
            found = Path(filename).resolve()
        except (OSError, RuntimeError):
            return None
        if not self.folder:
            return found.name if found == self.root else None
        if not found.is_relative_to(self.root):
            return None
        return (Path(self.root.name) / found.relative_to(self.root)).as_posix()


def _failure(exc: BaseException, files: _BotFiles | None, where: str, doing: str) -> str:
    """One line for ``exc`` raised by the bot's code: where in the bot's files (else ``where``),
    ``doing``, and the exception; a syntax error in one of the bot's files by its own place (line,
    column and the line's text). No traceback: the innermost of the bot's frames, and the
    outermost when it is another."""
    frames = []
    if files is not None:
        for frame in traceback.extract_tb(exc.__traceback__):
            name = files.name(frame.filename)
            if name is not None:
                function = "" if frame.name == "<module>" else f", in {frame.name}"
                frames.append((f"{name}, line {frame.lineno}", function))
    syntax = files.name(exc.filename) if isinstance(exc, SyntaxError) and files else None
    if isinstance(exc, SyntaxError) and syntax is not None:
        place = f"{syntax}, line {exc.lineno}" if exc.lineno else syntax
        if exc.offset:
            place += f", column {exc.offset}"
        text = f"{place}: {type(exc).__name__}: {_fold(str(exc.msg), _QUOTE)}"
        code = (exc.text or "").strip()
        if code:
            text += f"; the line: {_fold(code, _QUOTE_LINE)}"
        if frames:
            text += f" (imported from {frames[-1][0]})"
        return text
    said = _fold(str(exc), _QUOTE)
    what = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    if not frames:
        return f"{where}: {doing}: {what}"
    (inner, function), (outer, _) = frames[-1], frames[0]
    called = f" (called from {outer})" if len(frames) > 1 and outer != inner else ""
    return f"{inner}{function}: {doing}: {what}{called}"


def _fold(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "..."


def _identifier(text: str) -> str:
    out = "".join(ch if ch.isalnum() else "_" for ch in text)
    return out or "bot"
