"""A bot whose code fails, as real processes through ``arena play``: the SDK client tells the
referee at once, the decision gets its fallback without waiting for the clock, and the fault names
what the bot raised or returned (``tests/e2e/bots/raiser.py``, ``misreturner.py``).

The clock is the default one (1 s a decision and a 10 s bank): a fault that waited for it would
take 11 s, and a step's ``ms`` in the replay says how long the referee waited.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .support import BOTS, Played, arena, faults_in, play, seat_of, verify

pytestmark = pytest.mark.integration

PREFIX = "the bot's code failed: "


def check_finished_and_verified(played: Played) -> None:
    assert played.returncode == 0, played.stdout + played.stderr
    assert played.report["ok"], played.report
    checked = verify(played.replays())
    assert checked.returncode == 0, checked.stdout + checked.stderr


def fault_steps(doc: dict, seat: int) -> list[dict]:
    return [s for s in doc["steps"] if s.get("seat") == seat and "fault" in s]


def test_an_exception_is_a_fault_at_once_that_names_it(tmp_path: Path) -> None:
    played = play(tmp_path, str(BOTS / "raiser.py"), "random", games=2)
    check_finished_and_verified(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "raiser")
        for game in range(2):
            doc = played.replay(rotation, game)
            steps = fault_steps(doc, seat)
            assert [s["fault"]["kind"] for s in steps] == ["bot_error"], steps
            reason = steps[0]["fault"]["reason"]
            # The bot's own words, on one line and cut to 300 characters: nothing else.
            assert re.fullmatch(rf"{PREFIX}ValueError: no plan for turn \d+ x+\.\.\.", reason)
            assert len(reason) == len(PREFIX + "ValueError: ") + 300, reason
            assert steps[0]["ms"] < 1000, "the fallback came without waiting for the clock"
            assert faults_in(doc, 1 - seat) == []
    assert played.bot("raiser")["faults"] == 4 and played.bot("raiser")["forfeits"] == 0
    first = played.bot("raiser")["first_fault"]
    assert first["kind"] == "bot_error" and first["reason"].startswith(PREFIX + "ValueError")


def test_the_summary_shows_the_first_error_and_the_log_with_the_bots_traceback(
    tmp_path: Path,
) -> None:
    done = arena(
        "play", str(BOTS / "raiser.py"), "random", "--games", "1", "--seed", "3",
        "--replays", str(tmp_path), "--quiet",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(
        r"^first fault of raiser: match \S+ game 0 seat (\d): bot_error: "
        rf"{PREFIX}ValueError: no plan for turn \d+ x+\.\.\.; its log: (\S+)$",
        done.stdout,
        re.MULTILINE,
    )
    assert found, done.stdout
    log = Path(found.group(2)).read_text()
    assert Path(found.group(2)).name == f"bot-{found.group(1)}.log"
    # The traceback in the log is the bot's own error, with nothing of the SDK chained before it.
    traceback = log[log.index("Traceback (most recent call last):") :]
    assert "in explode" in traceback and "ValueError: no plan for turn" in traceback, log
    assert "During handling" not in log and "no running event loop" not in log, log


def test_what_a_bot_returns_that_is_not_a_decision_is_named(tmp_path: Path) -> None:
    played = play(
        tmp_path, str(BOTS / "misreturner.py"), "random", extra=("--faults-to-forfeit", "6")
    )
    check_finished_and_verified(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "misreturner")
        steps = fault_steps(played.replay(rotation, 0), seat)
        assert [s["fault"]["kind"] for s in steps] == ["bot_error"] * 5, steps
        assert all(s["kind"] == "play" and s["ms"] < 1000 for s in steps), steps
        said = [s["fault"]["reason"].removeprefix(PREFIX) for s in steps]
        returned = "TypeError: MisreturnBot.choose returned "
        assert said == [
            f"{returned}'play OA5 0,1 discard JA3' (a str) for a play decision; expected a Play",
            f"{returned}Draw(source=-1) (a Draw) for a play decision; expected a Play",
            f"{returned}None (a NoneType) for a play decision; expected a Play",
            f"{returned}Play(card='OA5', cell=Cell(x=0, y=0), discard=None) (a Play) for a play "
            "decision; expected a Play of engine values (decision is not a Play of a Card at a "
            "Cell: Play(card='OA5', cell=Cell(x=0, y=0), discard=None))",
            "Unprintable: <its message raised RuntimeError>",
        ], said
        assert faults_in(played.replay(rotation, 0), 1 - seat) == []
    assert played.bot("misreturner")["faults"] == 10
    assert played.bot("random")["faults"] == 0


def test_a_bot_that_does_not_load_is_named_by_file_and_line_in_one_line(tmp_path: Path) -> None:
    """``arena bot run`` and ``arena play`` say where a bot's code fails to load (a syntax error
    with its column and text; an exception at import with its caller), in one line, no
    traceback, exit status 2."""
    typo = tmp_path / "typo.py"
    typo.write_text(
        "from arboretum_sdk import Bot\n\n\nclass Typo(Bot):\n    def choose(self, view)\n"
        "        return view.legal_decisions()[0]\n"
    )
    folder = tmp_path / "folder_bot"
    folder.mkdir()
    (folder / "bot.py").write_text("from arboretum_sdk import Bot\n\nfrom . import tables\n")
    (folder / "tables.py").write_text("def build():\n    return {}['missing']\n\nTABLE = build()\n")
    expected = {
        typo: "typo.py, line 5, column 27: SyntaxError: expected ':'; the line: "
        "def choose(self, view)",
        folder: "folder_bot/tables.py, line 2, in build: importing the bot failed: KeyError: "
        "'missing' (called from folder_bot/bot.py, line 3)",
    }
    for spec, message in expected.items():
        ran = arena("bot", "run", str(spec), "--server", "127.0.0.1:1", "--token", "t")
        played = arena("play", str(spec), "random", "--replays", str(tmp_path / "replays"))
        assert (ran.returncode, played.returncode) == (2, 2), (ran.stderr, played.stderr)
        assert ran.stderr == f"arena: {message}\n"
        assert played.stderr == f"arena: cannot load bot {str(spec)!r}: {message}\n"
    assert not list((tmp_path / "replays").iterdir()), "nothing may be played"
