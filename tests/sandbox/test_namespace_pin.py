"""A sandbox's cleanup finds its processes by the number of its pid namespace; the kernel gives a
freed namespace's number to the next new one. The sandbox therefore holds its namespace open
(``base._pin_namespace``) until its cleanup is done, so that a sandbox another match starts
meanwhile never gets that number and is never taken for this one's leftovers (and killed)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from arboretum_worker.sandbox.base import _pin_namespace

pytestmark = pytest.mark.integration


def _namespaced_sleep() -> tuple[subprocess.Popen[bytes], int, int]:
    """``sleep`` as pid 1 of a new pid namespace: (the unshare process, the sleep's host pid,
    the namespace's number)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs util-linux unshare and root to make pid namespaces")
    proc = subprocess.Popen(["unshare", "--pid", "--fork", "sleep", "60"])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as fh:
            children = fh.read().split()
        if children:
            child = int(children[0])
            inode = os.stat(f"/proc/{child}/ns/pid").st_ino
            if inode != os.stat("/proc/self/ns/pid").st_ino:
                return proc, child, inode
        time.sleep(0.01)
    proc.kill()
    raise AssertionError("unshare did not start its child in a new pid namespace")


def _end(proc: subprocess.Popen[bytes], child: int) -> None:
    os.kill(child, signal.SIGKILL)
    proc.wait(10)


def test_a_pinned_namespace_keeps_its_number_after_its_processes_are_gone() -> None:
    first, child, inode = _namespaced_sleep()
    pin = _pin_namespace(child, inode)
    assert pin is not None
    try:
        _end(first, child)  # the namespace has no process left, but is held open
        assert _pin_namespace(child, inode) is None  # its init is gone: nothing to pin any more
        seconds = []
        for _ in range(5):  # a freed number would go to the next new namespace
            proc, other, other_inode = _namespaced_sleep()
            seconds.append(other_inode)
            _end(proc, other)
        assert inode not in seconds, (inode, seconds)
        assert os.fstat(pin).st_ino == inode
    finally:
        os.close(pin)


def test_a_number_that_now_names_another_namespace_is_not_pinned() -> None:
    proc, child, inode = _namespaced_sleep()
    try:
        assert _pin_namespace(child, inode + 1) is None
        assert _pin_namespace(child, None) is None
        assert _pin_namespace(None, inode) is None
    finally:
        _end(proc, child)
