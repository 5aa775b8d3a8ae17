"""Fixtures of the sandbox tests: real bubblewrap / unshare sandboxes, small limits."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arboretum_worker.sandbox import (
    BwrapRunner,
    MiB,
    SandboxedBot,
    SandboxLimits,
    SandboxRunner,
    UnshareRunner,
    bwrap_usable,
    unshare_usable,
)
from arboretum_worker.sandbox.base import LaunchSpec
from arboretum_worker.sandbox.forkserver import ForkedProcess, ForkServer

BOTS = Path(__file__).parent / "bots"

# small, so that the limits bite fast
TEST_LIMITS = SandboxLimits(
    memory_bytes=256 * MiB,
    cpu_seconds=20,
    processes=16,
    output_bytes=64 * 1024,
    file_size_bytes=4 * MiB,
    tmp_size_bytes=16 * MiB,
)


_FORK_SERVER: list[ForkServer] = []


def fork_server() -> ForkServer:
    """The session's fork server, seeing the temporary folders and the test bots."""
    if not _FORK_SERVER:
        _FORK_SERVER.append(ForkServer.start([Path(tempfile.gettempdir()), BOTS]))
    return _FORK_SERVER[0]


@pytest.fixture(scope="session", autouse=True)
def _stop_fork_server() -> Iterator[None]:
    yield
    while _FORK_SERVER:
        _FORK_SERVER.pop().stop()


class ForkOnlyRunner(BwrapRunner):
    """The bwrap runner that starts every bot through the fork server, never the plain way."""

    def _spawn(self, spec: LaunchSpec) -> SandboxedBot:
        server = self.fork_server
        assert server is not None and self._forkable(spec, server), (
            f"the fork server cannot start {spec.argv}"
        )
        bot = super()._spawn(spec)
        assert isinstance(bot._proc, ForkedProcess), "started as a plain sandbox"
        return bot


def make(kind: str, limits: SandboxLimits = TEST_LIMITS) -> SandboxRunner:
    """``bwrap`` (with prlimit + setpriv where installed), ``bwrap-python`` (bwrap with the
    Python launcher, the fallback without them), ``fork`` (bwrap's fork server, as ``arena
    worker`` uses it as root) or ``unshare``."""
    if kind in ("bwrap", "bwrap-python", "fork"):
        if not bwrap_usable():
            pytest.skip("bubblewrap is missing or cannot create namespaces here")
        if kind == "fork":
            if os.geteuid() != 0:
                pytest.skip("the fork server is used by root workers only")
            return ForkOnlyRunner(limits, fork_server=fork_server())
        return BwrapRunner(limits, native_launcher=kind == "bwrap", fork_server=False)
    if not unshare_usable():
        pytest.skip("unshare cannot create namespaces here")
    return UnshareRunner(limits)


@pytest.fixture(params=["bwrap", "bwrap-python", "fork", "unshare"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def runner(kind: str) -> SandboxRunner:
    return make(kind)


def start_script(
    runner: SandboxRunner, script: str, *args: str, socket_path: Path | None = None, **kw: object
) -> SandboxedBot:
    return runner.start(
        BOTS / script,
        socket_path=socket_path,
        token="seat-token-123",
        name=script,
        python_args=["{bot}", *args],
        **kw,  # type: ignore[arg-type]
    )


def run_script(runner: SandboxRunner, script: str, *args: str, timeout: float = 30, **kw: object):
    with start_script(runner, script, *args, **kw) as bot:
        rc = bot.wait(timeout)
        assert rc is not None, f"{script} still running after {timeout} s"
        return rc, bot.output().decode(errors="replace")


def wait_for_output(bot: SandboxedBot, text: str, timeout: float = 20) -> str:
    """The bot's output once it holds ``text`` and the rest of that line: a bot's print may
    arrive in pieces (the sandbox runs Python unbuffered, which writes each part at once)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = bot.output().decode(errors="replace")
        at = out.find(text)
        if at >= 0 and "\n" in out[at + len(text) :]:
            return out
        if bot.returncode is not None:
            break
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never printed; output: {bot.output()[-2000:]!r}")


def processes_with_marker(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found
