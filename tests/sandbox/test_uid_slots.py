"""Sandbox uids are the machine's: two installations (two temporary folders) never hand out the
same one, and a sandbox's cleanup ends only its own processes, never every process of its uid."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arboretum_worker.sandbox import SandboxError, SandboxRunner, UidSlotPool
from arboretum_worker.sandbox.base import DEFAULT_UID_LOCK_DIR, UID_LOCK_DIR_ENV, uid_lock_dir
from arboretum_worker.settings import SettingsError, WorkerSettings

from .conftest import make, processes_with_marker, start_script, wait_for_output

pytestmark = pytest.mark.integration


def _need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("only a root worker gives each sandbox a host uid of its own")


@pytest.fixture
def own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``TMPDIR`` set for this test, as another installation of the worker would have it."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield


def _foreign(uid: int, marker: str) -> subprocess.Popen[bytes]:
    """A process of ``uid`` that belongs to no sandbox (another installation's bot, say)."""
    return subprocess.Popen(
        ["/bin/sh", "-c", "sleep 300; true", marker],
        user=uid,
        group=uid,
        extra_groups=[],
        start_new_session=True,
    )


def _end(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def test_the_uid_locks_are_one_folder_whatever_tmpdir_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two pools made under two temporary folders take their slots from the same locks, so the
    second never gets the uid the first holds."""
    _need_root()
    monkeypatch.delenv(UID_LOCK_DIR_ENV, raising=False)
    pools = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.setenv("TMPDIR", str(folder))
        monkeypatch.setattr(tempfile, "tempdir", None)
        pools.append(UidSlotPool())
    assert pools[0].lock_dir == pools[1].lock_dir == Path(DEFAULT_UID_LOCK_DIR)
    first = pools[0].acquire()
    try:
        second = pools[1].acquire()
        try:
            assert first.uid != second.uid
        finally:
            second.release()
    finally:
        first.release()


def test_the_lock_folder_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(UID_LOCK_DIR_ENV, str(tmp_path / "locks"))
    assert uid_lock_dir() == tmp_path / "locks"
    assert UidSlotPool().lock_dir == tmp_path / "locks"
    assert uid_lock_dir({}) == Path(DEFAULT_UID_LOCK_DIR)
    with pytest.raises(SandboxError, match=f"{UID_LOCK_DIR_ENV} must be an absolute path"):
        uid_lock_dir({UID_LOCK_DIR_ENV: "locks"})
    with pytest.raises(SettingsError, match=f"{UID_LOCK_DIR_ENV} must be an absolute path"):
        WorkerSettings.from_env({UID_LOCK_DIR_ENV: "locks"})  # refused as the worker starts
    if os.geteuid() == 0:
        open_to_all = tmp_path / "open"
        open_to_all.mkdir()
        open_to_all.chmod(0o777)
        with pytest.raises(SandboxError, match="writable by it alone"):
            UidSlotPool(lock_dir=open_to_all).acquire()


def test_a_cleanup_spares_a_process_of_its_uid_outside_the_sandbox(kind: str) -> None:
    """A process of the sandbox's uid that is not in the sandbox (here started by hand) outlives
    the sandbox's end; the sandbox's own processes do not."""
    _need_root()
    runner: SandboxRunner = make(kind)
    inside, outside = (f"arena-marker-{uuid.uuid4().hex}" for _ in range(2))
    with start_script(runner, "leave_child.py", inside) as bot:
        wait_for_output(bot, "CHILDREN-STARTED")
        assert bot.uid is not None
        foreign = _foreign(bot.uid, outside)
        try:
            bot.kill()  # raises if anything of the sandbox is left
            assert processes_with_marker(inside) == []
            assert foreign.poll() is None, "the cleanup killed a process outside its sandbox"
            assert bot.remaining_pids() == []
        finally:
            _end(foreign)


# Started twice at once, each with a TMPDIR of its own: 50 sandboxes at once, their uids (as the
# handles and the sandboxed processes say) on stdout; on "end" from stdin, all killed.
_INSTALLATION = r"""
import json, re, sys
from concurrent.futures import ThreadPoolExecutor
from arboretum_worker.sandbox import BwrapRunner, DEFAULT_LIMITS

runner = BwrapRunner(DEFAULT_LIMITS, fork_server=False)
script = "import os, time; print('UID', os.getuid(), flush=True); time.sleep(300)"

def start(i):
    return runner.start("random", socket_path=None, token="t", builtin=True, name=f"b{i}",
                        python_args=["-S", "-c", script])

sys.stdin.readline()  # both installations start together
# bwrap --die-with-parent: its parent is the thread that started it, which must live on
pool = ThreadPoolExecutor(50)
bots = list(pool.map(start, range(50)))
# a whole line: the bot's output may arrive in pieces (an unbuffered print writes each part)
line = re.compile(rb"UID (\d+)\n")
seen = []
for bot in bots:
    while not line.search(bot.output()) and bot.returncode is None:
        bot.wait(0.02)
    found = line.search(bot.output())
    if not found:
        sys.exit(f"{bot!r} ended ({bot.returncode}) before it ran: {bot.output()[-2000:]!r}")
    seen.append(int(found.group(1)))
print(json.dumps({"handles": [bot.uid for bot in bots], "inside": seen}), flush=True)
sys.stdin.readline()
for bot in bots:
    bot.kill()
pool.shutdown()
print("ENDED", flush=True)
"""


def test_two_installations_start_50_sandboxes_each_at_once(tmp_path: Path) -> None:
    """No uid is handed out twice, and each installation's cleanups spare the processes of the
    uids it held that were never its own."""
    _need_root()
    make("bwrap")  # skips where bubblewrap does not work
    procs = []
    for name in ("one", "two"):
        folder = tmp_path / name
        folder.mkdir()
        env = {**os.environ, "TMPDIR": str(folder)}
        env.pop(UID_LOCK_DIR_ENV, None)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", _INSTALLATION],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        )
    foreign: list[subprocess.Popen[bytes]] = []
    try:
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"start\n")
            proc.stdin.flush()
        held = []
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line, f"an installation ended early (exit {proc.wait(30)})"
            held.append(json.loads(line))
        for uids in held:
            assert uids["inside"] == uids["handles"], uids
            assert len(set(uids["handles"])) == 50, uids
        assert not set(held[0]["handles"]) & set(held[1]["handles"]), "a uid handed out twice"
        marker = f"arena-marker-{uuid.uuid4().hex}"
        foreign = [_foreign(uids["handles"][0], marker) for uids in held]
        time.sleep(0.2)  # they run under those uids by now
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(b"end\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline() == b"ENDED\n"
            assert proc.wait(60) == 0
        assert [p.poll() for p in foreign] == [None, None], "a cleanup killed a foreign process"
        assert len(processes_with_marker(marker)) == 2
    finally:
        for p in [*procs, *foreign]:
            _end(p)
