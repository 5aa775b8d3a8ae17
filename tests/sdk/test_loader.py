"""load_bot: built-ins, a file, a folder with helper modules, and every error it names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from arboretum_sdk import Bot, BotLoadError, builtin_bots, load_bot
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot

SIMPLE = """
from arboretum import SeatView, Decision
from arboretum_sdk import Bot

class {name}(Bot):
    def choose(self, view: SeatView) -> Decision:
        return view.legal_decisions()[0]
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_builtins() -> None:
    assert set(builtin_bots()) == {"random", "greedy", "lookahead", "search", "expert"}
    assert isinstance(load_bot("random"), RandomBot)
    assert isinstance(load_bot("greedy"), GreedyBot)
    assert load_bot("greedy").name == "greedy"


def test_file(tmp_path: Path) -> None:
    path = write(tmp_path / "mine.py", SIMPLE.format(name="Mine"))
    bot = load_bot(str(path))
    assert isinstance(bot, Bot) and type(bot).__name__ == "Mine" and bot.name == "Mine"
    # loading twice gives independent modules
    assert type(load_bot(str(path))) is not type(bot)


def test_imported_bot_classes_do_not_count(tmp_path: Path) -> None:
    path = write(
        tmp_path / "sub.py",
        """
        from arboretum_sdk import Bot
        from arboretum_sdk.bots.greedy import GreedyBot

        class Better(GreedyBot):
            name = "better"
        """,
    )
    assert load_bot(str(path)).name == "better"


def test_folder_with_helpers(tmp_path: Path) -> None:
    folder = tmp_path / "folder_bot"
    write(folder / "helpers.py", "FIRST = 0\n")
    write(folder / "tables.py", "OFFSET = 0\n")
    write(
        folder / "bot.py",
        """
        from arboretum import SeatView, Decision
        from arboretum_sdk import Bot
        from . import helpers
        import tables

        class FolderBot(Bot):
            def choose(self, view: SeatView) -> Decision:
                return view.legal_decisions()[helpers.FIRST + tables.OFFSET]
        """,
    )
    bot = load_bot(str(folder))
    assert type(bot).__name__ == "FolderBot"


def test_folder_with_init_only(tmp_path: Path) -> None:
    folder = tmp_path / "pkg_bot"
    write(folder / "__init__.py", SIMPLE.format(name="PkgBot"))
    assert type(load_bot(str(folder))).__name__ == "PkgBot"


def test_bot_attribute_picks_among_several(tmp_path: Path) -> None:
    path = write(
        tmp_path / "two.py",
        SIMPLE.format(name="A") + SIMPLE.format(name="B") + "\nBOT = B\n",
    )
    assert type(load_bot(str(path))).__name__ == "B"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = 1\n", "no Bot subclass found"),
        (
            SIMPLE.format(name="A") + SIMPLE.format(name="B"),
            r"several Bot subclasses found \(A, B\)",
        ),
        (SIMPLE.format(name="A") + "\nBOT = A()\n", "BOT must be a subclass of arboretum_sdk.Bot"),
    ],
)
def test_class_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "bad.py", text)
    with pytest.raises(BotLoadError, match=message):
        load_bot(str(path))


def load_error(spec: Path | str) -> str:
    """The message of the BotLoadError that loading ``spec`` raises: one line, no traceback."""
    with pytest.raises(BotLoadError) as info:
        load_bot(str(spec))
    text = str(info.value)
    assert "\n" not in text and "Traceback" not in text, text
    assert "loader.py" not in text and "<frozen" not in text and "importlib" not in text, text
    return text


def test_an_exception_at_import_names_the_file_line_and_caller(tmp_path: Path) -> None:
    path = write(
        tmp_path / "broken.py",
        """
        from arboretum_sdk import Bot

        def helper():
            return 1 / 0

        VALUE = helper()
        """,
    )
    assert load_error(path) == (
        "broken.py, line 5, in helper: importing the bot failed: ZeroDivisionError: division by "
        "zero (called from broken.py, line 7)"
    )


def test_an_exception_raised_in_the_standard_library_names_the_bots_line(tmp_path: Path) -> None:
    path = write(tmp_path / "reads.py", 'import json\n\nTABLE = json.loads("not json")\n')
    assert load_error(path) == (
        "reads.py, line 3: importing the bot failed: JSONDecodeError: Expecting value: line 1 "
        "column 1 (char 0)"
    )


def test_missing_module_in_author_code(tmp_path: Path) -> None:
    path = write(tmp_path / "needs.py", "import no_such_module_xyz\n")
    assert load_error(path) == (
        "needs.py, line 1: importing the bot failed: ModuleNotFoundError: No module named "
        "'no_such_module_xyz'"
    )


def test_a_syntax_error_is_its_file_line_column_and_text(tmp_path: Path) -> None:
    path = write(
        tmp_path / "typo.py",
        """
        from arboretum_sdk import Bot

        class Typo(Bot):
            def choose(self, view)
                return view.legal_decisions()[0]
        """,
    )
    assert load_error(path) == (
        "typo.py, line 5, column 27: SyntaxError: expected ':'; the line: def choose(self, view)"
    )


def test_an_indentation_error_is_named_too(tmp_path: Path) -> None:
    path = tmp_path / "indent.py"
    path.write_text("def f():\n    x = 1\n      y = 2\n")
    text = load_error(path)
    assert text.startswith("indent.py, line 3, column "), text
    assert text.endswith(": IndentationError: unexpected indent; the line: y = 2"), text


def test_a_syntax_error_in_a_folders_helper_names_it_from_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "folder_bot"
    write(folder / "bot.py", SIMPLE.format(name="FolderBot") + "\nfrom .lib import helpers\n")
    write(folder / "lib" / "helpers.py", "x = = 1\n")
    assert load_error(folder) == (
        "folder_bot/lib/helpers.py, line 1, column 5: SyntaxError: invalid syntax; the line: "
        "x = = 1 (imported from folder_bot/bot.py, line 9)"
    )


def test_an_exception_text_is_folded_and_cut(tmp_path: Path) -> None:
    path = write(tmp_path / "loud.py", "raise RuntimeError('first\\nsecond ' + 'x' * 400)\n")
    text = load_error(path)
    assert text.startswith("loud.py, line 1: importing the bot failed: RuntimeError: first second")
    assert text.endswith("x...") and len(text) < 400


def test_constructor_error(tmp_path: Path) -> None:
    path = write(
        tmp_path / "ctor.py",
        """
        from arboretum_sdk import Bot

        class NeedsArgs(Bot):
            def __init__(self, depth):
                self.depth = depth

            def choose(self, view):
                return view.legal_decisions()[0]

        class Raises(NeedsArgs):
            def __init__(self):
                raise RuntimeError("no config")

        BOT = NEEDS_BOT = NeedsArgs
        """,
    )
    assert load_error(path) == (
        f"{path}: building NeedsArgs() failed: TypeError: NeedsArgs.__init__() missing 1 required "
        "positional argument: 'depth' (a bot class is built with no arguments)"
    )
    path.write_text(path.read_text().replace("BOT = NEEDS_BOT = NeedsArgs", "BOT = Raises"))
    assert load_error(path) == (
        "ctor.py, line 13, in __init__: building Raises() failed: RuntimeError: no config (a bot "
        "class is built with no arguments)"
    )


def test_path_errors(tmp_path: Path) -> None:
    with pytest.raises(BotLoadError, match="no such file or folder, and not a built-in bot"):
        load_bot(str(tmp_path / "nope.py"))
    with pytest.raises(BotLoadError, match="built-ins: random, greedy"):
        load_bot("gredy")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BotLoadError, match=r"holds neither bot.py nor __init__.py"):
        load_bot(str(tmp_path / "empty"))
    write(tmp_path / "bot.txt", "x")
    with pytest.raises(BotLoadError, match=r"a bot is a \.py file or a folder"):
        load_bot(str(tmp_path / "bot.txt"))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "def choose_draw(self, view):\n        return view.legal_decisions()[0]",
            "NoPlay implements choose_draw but not choose_play",
        ),
        (
            "def choose_play(self, view):\n        return view.legal_decisions()[0]",
            "NoPlay implements choose_play but not choose_draw",
        ),
        ("name = 'idle'", "NoPlay implements none of choose, choose_draw and choose_play"),
        ("choose = 42", "NoPlay.choose is not a method (its type is int)"),
        (
            "def choose(self):\n        return None",
            "NoPlay.choose(self) cannot be called with the view",
        ),
        (
            "@staticmethod\n    def choose(view):\n        return None",
            "NoPlay.choose is not a method (its type is staticmethod)",
        ),
    ],
)
def test_a_class_that_cannot_take_every_decision_is_refused(
    tmp_path: Path, body: str, message: str
) -> None:
    path = tmp_path / "noplay.py"
    path.write_text(f"from arboretum_sdk import Bot\n\n\nclass NoPlay(Bot):\n    {body}\n")
    with pytest.raises(BotLoadError) as err:
        load_bot(str(path))
    text = str(err.value)
    assert text.startswith(f"{path}: {message}"), text
    assert "choose(self, view)" in text  # it says what a bot must implement


def test_a_refused_class_named_by_bot_is_refused_too(tmp_path: Path) -> None:
    path = write(
        tmp_path / "named.py",
        """
        from arboretum_sdk import Bot

        class Half(Bot):
            def choose_draw(self, view):
                return view.legal_decisions()[0]

        BOT = Half
        """,
    )
    with pytest.raises(BotLoadError, match="Half implements choose_draw but not choose_play"):
        load_bot(str(path))


def test_inherited_methods_count(tmp_path: Path) -> None:
    path = write(
        tmp_path / "child.py",
        """
        from arboretum_sdk.bots.greedy import GreedyBot

        class Child(GreedyBot):
            pass

        BOT = Child
        """,
    )
    assert type(load_bot(str(path))).__name__ == "Child"
