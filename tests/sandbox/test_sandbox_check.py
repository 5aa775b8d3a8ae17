"""check_bot: a submitted bot plays one real decision in the sandbox against a private referee,
and the verdict comes from the referee, never from what the bot prints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arboretum_worker import check
from arboretum_worker.check import check_bot
from arboretum_worker.sandbox import MiB, SandboxRunner

from .conftest import BOTS, TEST_LIMITS, make

pytestmark = pytest.mark.integration


def test_good_file_and_folder(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "good_bot.py", runner=runner)
    assert result.ok, (result.error, result.output)
    assert result.decision is not None and result.decision.startswith("draw ")
    assert result.size_bytes == (BOTS / "good_bot.py").stat().st_size
    folder = check_bot(BOTS / "folder_bot", runner=runner)
    assert folder.ok, (folder.error, folder.output)
    assert folder.decision is not None and folder.decision.startswith("draw ")


def test_a_printed_verdict_does_not_pass(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "fake_verdict.py", runner=runner)
    assert not result.ok, result
    assert result.error is not None and "exited with status 0 before connecting" in result.error
    assert b"@@ARENA-CHECK@@" in result.output  # it did print its forgery


def test_evil_import_is_contained(runner: SandboxRunner) -> None:
    before = set(sys.modules)
    result = check_bot(BOTS / "evil_import_bot.py", runner=runner)
    assert not result.ok
    assert result.error is not None and "no bot here" in result.error
    assert b"EVIL net-denied write-denied write-denied []" in result.output
    assert not Path("/escape.txt").exists()
    assert not (BOTS / "escape.txt").exists()
    assert not any("evil_import_bot" in name for name in set(sys.modules) - before)


def test_no_bot_class(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "no_bot.py", runner=runner)
    assert not result.ok and result.decision is None
    assert result.error is not None and "no Bot subclass" in result.error


def test_a_bot_class_missing_a_method_is_refused_naming_it(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "no_play_bot.py", runner=runner)
    assert not result.ok and result.decision is None
    assert result.error is not None
    assert "NoPlayBot implements choose_draw but not choose_play" in result.error, result.error


def test_a_syntax_error_is_refused_naming_its_file_and_line(
    runner: SandboxRunner, tmp_path: Path
) -> None:
    typo = tmp_path / "typo.py"
    typo.write_text(
        "from arboretum_sdk import Bot\n\n\nclass Typo(Bot):\n    def choose(self, view)\n"
    )
    typo.chmod(0o644)
    result = check_bot(typo, runner=runner)
    assert not result.ok and result.decision is None
    assert result.error == (
        "the bot exited with status 2 before connecting (its last line: arena: typo.py, line 5, "
        "column 27: SyntaxError: expected ':'; the line: def choose(self, view))"
    )


def test_illegal_first_decision_fails(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "illegal_bot.py", runner=runner)
    assert not result.ok
    assert result.error is not None and "not accepted (illegal)" in result.error


def test_a_bot_that_never_answers_fails(
    runner: SandboxRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check, "CHECK_CLOCK_MS", (300, 200))
    result = check_bot(BOTS / "stalling_bot.py", runner=runner)
    assert not result.ok
    assert result.error is not None and "not accepted (timeout)" in result.error


def test_output_past_the_cap_is_reported_as_such() -> None:
    runner = make("bwrap")
    result = check_bot(BOTS / "spam_bot.py", runner=runner)
    assert not result.ok
    cap = TEST_LIMITS.output_bytes
    assert result.error is not None and f"more than the {cap} bytes of output" in result.error
    assert "printed" in result.error and "check died" not in result.error


def test_too_big_or_malformed_is_refused_without_running(tmp_path: Path) -> None:
    runner = make("bwrap", limits=TEST_LIMITS.__class__(code_size_bytes=1 * MiB))
    big = tmp_path / "big.py"
    big.write_text("# " + "x" * (MiB + 10) + "\n")
    result = check_bot(big, runner=runner)
    assert not result.ok and result.output == b"" and result.returncode is None
    assert result.error is not None and "more than" in result.error
    text = tmp_path / "bot.txt"
    text.write_text("x")
    assert "must end in .py" in (check_bot(text, runner=runner).error or "")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "bot.py or __init__.py" in (check_bot(empty, runner=runner).error or "")


def test_import_that_hangs_times_out(runner: SandboxRunner, tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(60)\n")
    slow.chmod(0o644)
    result = check_bot(slow, runner=runner, timeout=1.0)
    assert not result.ok and result.error is not None
    assert "did not connect to the referee within 1 s" in result.error
