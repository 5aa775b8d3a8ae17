"""check_bot: the import check runs inside the sandbox, never in the test process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arboretum_worker.sandbox import MiB, SandboxRunner, check_bot

from .conftest import BOTS, TEST_LIMITS, make

pytestmark = pytest.mark.integration


def test_good_file_and_folder(runner: SandboxRunner) -> None:
    result = check_bot(BOTS / "good_bot.py", runner=runner)
    assert result.ok, (result.error, result.output)
    assert result.bot_class is not None and result.bot_class.endswith("GoodBot")
    assert result.size_bytes == (BOTS / "good_bot.py").stat().st_size
    folder = check_bot(BOTS / "folder_bot", runner=runner)
    assert folder.ok, (folder.error, folder.output)
    assert folder.bot_class is not None and folder.bot_class.endswith("FolderBot")


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
    assert not result.ok and result.bot_class is None
    assert result.error is not None and "Bot subclass" in result.error


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
    result = check_bot(slow, runner=runner, timeout=1.0)
    assert not result.ok and result.error is not None and "longer than" in result.error
