"""``arena play`` stops when it should: a bot whose import blocks is given up at the start timeout,
and one Ctrl-C stops the runner at any moment (loading, mid-match), leaving no process behind.

The test bots append ``E2E pid=...`` lines to ``E2E_TRACE_FILE``, so every process that ran a
bot's code is known and checked gone afterwards.

Each runner starts with SIGINT's default action, as under a terminal: a shell without job control
starts background commands with SIGINT ignored, and an ignored SIGINT is inherited (Python then
never raises KeyboardInterrupt), so a suite run that way would otherwise test nothing. Each runner
also gets a process group of its own (its bots are in it too), which the test kills whatever
happens, so that a failing test leaves no runner and no bot behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from .support import ARENA, BOTS, pids_in

pytestmark = pytest.mark.integration

Start = Callable[..., subprocess.Popen[str]]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """``start(*args)``: ``arena play ARGS`` in a process group of its own, with SIGINT's
    default action; at the end of the test the group (the runner and its bots) is killed."""
    started: list[subprocess.Popen[str]] = []

    def run(*args: str) -> subprocess.Popen[str]:
        env = dict(os.environ, E2E_TRACE_FILE=str(tmp_path / "trace.txt"))
        proc = subprocess.Popen(
            [*ARENA, "play", *args, "--replays", str(tmp_path / "replays"), "--seed", "5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
            preexec_fn=_default_sigint,
        )
        started.append(proc)
        return proc

    try:
        yield run
    finally:
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def traced(tmp_path: Path) -> str:
    path = tmp_path / "trace.txt"
    return path.read_text() if path.exists() else ""


def wait_for(tmp_path: Path, text: str, count: int = 1, timeout: float = 60) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        trace = traced(tmp_path)
        if trace.count(text) >= count:
            return trace
        time.sleep(0.1)
    raise AssertionError(f"{text!r} x{count} not traced within {timeout} s: {traced(tmp_path)!r}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead: its parent just has not reaped it yet.
    status = Path(f"/proc/{pid}/stat")
    return status.exists() and status.read_text().split(")")[-1].split()[0] != "Z"


def assert_all_gone(tmp_path: Path) -> None:
    pids = set(pids_in(traced(tmp_path)))
    assert pids, "the bots traced no process"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    assert not [p for p in pids if alive(p)], f"processes left behind: {pids}"


def test_a_blocking_import_is_stopped_by_the_start_timeout(tmp_path: Path, start: Start) -> None:
    started = time.monotonic()
    proc = start(str(BOTS / "blocking_import.py"), "random", "--start-timeout-ms", "3000")
    out, err = proc.communicate(timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 2, (out, err)
    assert "blocking_import.py" in err and "did not finish loading within 3000 ms" in err, err
    assert "--start-timeout-ms" in err, "the message names the option"
    assert "Traceback" not in err, err
    assert took < 20, f"gave up after {took:.1f} s"
    assert not (tmp_path / "replays").exists() or not list((tmp_path / "replays").iterdir())
    assert_all_gone(tmp_path)


def test_one_ctrl_c_while_a_bot_is_loading_stops_everything(tmp_path: Path, start: Start) -> None:
    proc = start(str(BOTS / "blocking_import.py"), "random")
    wait_for(tmp_path, "importing: blocking")
    proc.send_signal(signal.SIGINT)  # to the runner alone: it must stop its children itself
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err, err
    assert_all_gone(tmp_path)


@pytest.mark.parametrize("group", [False, True], ids=["runner-only", "terminal"])
def test_one_ctrl_c_mid_match_stops_everything(tmp_path: Path, start: Start, group: bool) -> None:
    """``terminal``: the signal goes to the whole process group, as a terminal's Ctrl-C does;
    ``runner-only``: to the runner alone (kill -INT)."""
    pidbot = str(BOTS / "pidbot.py")
    proc = start(pidbot, pidbot, "--games", "500")
    wait_for(tmp_path, "game=1 ", count=2)  # both seats are playing their second game
    started = time.monotonic()
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (out, err)
    assert time.monotonic() - started < 15
    assert "interrupted" in err, err
    assert_all_gone(tmp_path)
