"""The sandbox's process scan (``_host_processes``: ``getpgid`` and the namespace link's inode)
finds exactly what reading every process's ``/proc`` files finds, on real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from arboretum_worker.sandbox.base import _host_processes


def _by_stat_files(pgid: int) -> set[int]:
    """The plain way: every process's ``/proc/PID/stat``, its fifth field (the process group)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid:
                found.add(int(entry))
    return found


def _by_ns_links(inode: int) -> set[int]:
    """The plain way: every process's ``/proc/PID/ns/pid`` link, read as text."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                link = os.readlink(f"/proc/{entry}/ns/pid")
            except OSError:
                continue
            if link == f"pid:[{inode}]":
                found.add(int(entry))
    return found


def test_a_process_group_is_found_whole_and_alone() -> None:
    # a group leader with three children (one of them a zombie once it exits), in a session
    # of its own
    script = "import subprocess, sys, time\n" \
        "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']) " \
        "for _ in range(2)]\n" \
        "subprocess.Popen([sys.executable, '-c', 'pass'])\n" \
        "print('ready', flush=True); time.sleep(60)\n"  # fmt: skip
    leader = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, start_new_session=True
    )
    try:
        assert leader.stdout is not None and leader.stdout.readline() == b"ready\n"
        time.sleep(0.2)  # the short-lived child has exited (a zombie: its parent never waits)
        found = _host_processes(None, leader.pid)
        assert len(found) == 4 and leader.pid in found
        assert found == _by_stat_files(leader.pid)
        assert os.getpid() not in found
    finally:
        os.killpg(leader.pid, 9)
        leader.wait()
    # killed: the leader is reaped; its orphans are zombies until the host's init reaps them
    # (reaped between two looks, never added: what the fast way sees lies between them)
    before = _by_stat_files(leader.pid)
    after = _host_processes(None, leader.pid)
    assert leader.pid not in after and before >= after >= _by_stat_files(leader.pid)


def test_a_pid_namespace_is_found_as_its_links_name_it() -> None:
    inode = os.stat("/proc/self/ns/pid").st_ino
    found = _host_processes(inode, None)
    assert os.getpid() in found
    # processes come and go on a busy machine: what both ways saw is all but the few that did
    assert len(found ^ _by_ns_links(inode)) <= 5
    assert _host_processes(inode + 1_000_000_007, None) == set()


def test_nothing_is_looked_for_without_a_namespace_or_a_group() -> None:
    assert _host_processes(None, None) == set()
