"""A worker cut off from Redis mid-match, as workers on other machines are by the network: Redis
and three workers, each worker in a network namespace of its own joined to Redis by a veth pair;
the link of the one running a match goes down (packets dropped: no connection is refused or
reset) for 60 s, longer than the abandoned-job timeout, or for 8 s, and comes back. Root only: it
makes namespaces and links (docs/league.md, "Reliability", says what happens)."""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from rq import Queue, Worker

from arboretum_worker import store
from arboretum_worker.settings import WorkerSettings

from .conftest import ARENA, Arena, kill_tree
from .test_outages import (
    BACK,
    LOST,
    _counted_once,
    _league,
    _run,
    _status,
    _wait_running,
    _worker_log,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

WORKERS = 3
_DEFAULTS = WorkerSettings()
ABANDONED_S = (
    _DEFAULTS.monitor_interval_s + _DEFAULTS.heartbeat_margin_s + _DEFAULTS.maintenance_interval_s
)
"""The abandoned-job timeout: the last heartbeat of a match's worker, then its execution expires
after the margin, then the next maintenance pass re-queues it (5 + 15 + 10 s)."""


@dataclass(frozen=True)
class Link:
    """A worker's network namespace and the veth pair that joins it to Redis."""

    netns: str
    host_if: str
    host_ip: str
    netns_ip: str


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        raise AssertionError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def _free_subnet() -> int:
    """A third octet x such that nothing on this host uses 10.200.x.0/24."""
    routes = subprocess.run(
        ["ip", "-4", "route", "show", "table", "all"], capture_output=True, text=True, check=True
    ).stdout
    addrs = subprocess.run(["ip", "-4", "addr"], capture_output=True, text=True, check=True).stdout
    used = {int(m) for m in re.findall(r"\b10\.200\.(\d+)\.", routes + addrs)}
    start = os.getpid() % 200 + 20
    for x in [*range(start, 250), *range(20, start)]:
        if x not in used:
            return x
    raise AssertionError("no free 10.200.x.0/24 here")


@pytest.fixture
def links(arena: Arena) -> Iterator[list[Link]]:
    """One namespace and veth pair per worker, named for this run; all removed at the end (the
    workers in them are killed first, whatever the test's outcome)."""
    if os.geteuid() != 0:
        pytest.skip("needs root: it makes network namespaces and veth pairs")
    if shutil.which("ip") is None:
        pytest.skip("ip (iproute2) is not installed")
    tag = f"{os.getpid() % 100_000}{secrets.token_hex(2)}"  # interface names: 15 bytes at most
    x = _free_subnet()
    probe = subprocess.run(
        ["ip", "netns", "add", f"arena-cut-{tag}-0"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here: {probe.stderr.strip()}")
    made: list[Link] = []
    try:
        for i in range(WORKERS):
            link = Link(
                netns=f"arena-cut-{tag}-{i}",
                host_if=f"arc{tag}h{i}",
                host_ip=f"10.200.{x}.{4 * i + 1}",
                netns_ip=f"10.200.{x}.{4 * i + 2}",
            )
            if i:
                _ip("netns", "add", link.netns)
            made.append(link)
            _ip("link", "add", link.host_if, "type", "veth", "peer", "name", f"arc{tag}n{i}")
            _ip("link", "set", f"arc{tag}n{i}", "netns", link.netns)
            _ip("addr", "add", f"{link.host_ip}/30", "dev", link.host_if)
            _ip("link", "set", link.host_if, "up")
            inside = ["netns", "exec", link.netns, "ip"]
            _ip(*inside, "addr", "add", f"{link.netns_ip}/30", "dev", f"arc{tag}n{i}")
            _ip(*inside, "link", "set", f"arc{tag}n{i}", "up")
            _ip(*inside, "link", "set", "lo", "up")
        # Redis answers on each link's host side too (and on 127.0.0.1, for the test); those
        # addresses exist only on these links, so it needs no protected mode.
        arena.r.config_set("bind", " ".join(["127.0.0.1", *(link.host_ip for link in made)]))
        arena.r.config_set("protected-mode", "no")
        yield made
    finally:
        for proc in arena.workers:
            kill_tree(proc.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        for link in made:
            for args in (("link", "del", link.host_if), ("netns", "del", link.netns)):
                subprocess.run(["ip", *args], capture_output=True, timeout=30, check=False)


def _start_worker(arena: Arena, link: Link) -> str:
    """`arena worker` inside the link's namespace, reaching Redis at the link's host side."""
    index = len(arena.workers)
    name = f"cut-worker-{index}-{os.getpid()}"
    env = dict(arena.env, REDIS_URL=f"redis://{link.host_ip}:{arena.port}/0")
    with open(arena.tmp / f"worker{index}.log", "wb") as out:
        proc = subprocess.Popen(
            ["ip", "netns", "exec", link.netns, *ARENA, "worker", "--name", name],
            env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    arena.workers.append(proc)
    return name


@pytest.mark.parametrize("cut_s", [60, 8], ids=["cut-60s", "cut-8s"])
def test_a_worker_cut_off_from_redis_mid_match(arena: Arena, links: list[Link], cut_s: int) -> None:
    # 60 s: longer than the abandoned-job timeout, so the match is retried elsewhere and the
    # cut-off worker's late result refused. 8 s: back before the match's execution expires (its
    # last heartbeat + 5 + 15 s), so the cut-off worker records it itself, once.
    r = arena.r
    arena.run("bot", "submit", str(Path(__file__).parent / "bots" / "slow.py"), "--name", "slow")
    _league(arena, "cut", "--games-per-pairing", "1", bots=("greedy", "slow"))
    for var in (
        "ARENA_MAINTENANCE_INTERVAL_S",
        "ARENA_MONITOR_INTERVAL_S",
        "ARENA_HEARTBEAT_MARGIN_S",
    ):
        del arena.env[var]  # the defaults, as deployed: the abandoned-job timeout is theirs
    names = [_start_worker(arena, link) for link in links]
    arena.wait_workers(WORKERS)
    match_ids = _run(arena, "cut")
    assert len(match_ids) == 2  # two workers play them (a game each), the third waits

    running = _wait_running(arena, match_ids)
    record = store.get_match(r, running)
    assert record.worker in names and store.get_result(r, running) is None
    cut = names.index(record.worker)
    _ip("link", "set", links[cut].host_if, "down")
    cut_at, cut_wall = time.monotonic(), time.time()
    retried: store.MatchRecord | None = None
    done_at = None
    recorded_in_cut = False  # a result of the match in Redis while the link was down
    try:
        while time.monotonic() < cut_at + cut_s:
            record = store.get_match(r, running)
            if retried is None and record.attempts > 1:
                retried = record
            if done_at is None and all(
                s is store.MatchStatus.FINISHED for s in _status(arena, match_ids).values()
            ):
                done_at = time.monotonic()
            if store.get_result(r, running) is not None:
                recorded_in_cut = True
            time.sleep(0.2)
    finally:
        _ip("link", "set", links[cut].host_if, "up")
    up_at, up_wall = time.monotonic(), time.time()
    deadline = up_at + ABANDONED_S  # for everything after the link is back
    others = "".join(_worker_log(arena, i) for i in range(WORKERS) if i != cut)
    recorded = f"match {running}: recorded in"

    if cut_s > ABANDONED_S:
        # Its heartbeats lapsed; another worker's maintenance found the match abandoned and
        # re-queued it, and the idle worker played it again: within the abandoned-job timeout of
        # the cut (and the retry's own game), with the link still down.
        assert retried is not None, arena.worker_logs()
        assert retried.worker != names[cut]
        requeued = retried.started - cut_wall
        assert requeued <= ABANDONED_S + 3, arena.worker_logs()
        assert done_at is not None, arena.worker_logs()  # the league did not wait for the link
        assert f"match {running}: attempt failed: the worker running the match died" in others
        assert recorded in others
        # When the link came back, the cut-off worker's work horse (its games had ended
        # meanwhile) tried to record the match: refused, the retry's result stands.
        said = f"match {running}: already recorded by another run in"
        outcome = f"re-queued and started elsewhere {requeued:.1f} s after the cut"
    else:
        # Back before the execution expired: nothing was retried, and the cut-off worker's work
        # horse records the match once the link is back.
        assert retried is None and done_at is None, arena.worker_logs()
        assert not recorded_in_cut, arena.worker_logs()
        assert running not in others
        said = recorded
        outcome = "not retried"
    while said not in _worker_log(arena, cut):
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.1)
    back = time.monotonic() - up_at
    record = store.get_match(r, running)
    result = store.get_result(r, running)
    if retried is not None:
        assert recorded not in _worker_log(arena, cut)
        assert record.attempts == 2 and record.worker == retried.worker
        assert retried.started <= result.finished < up_wall
    else:
        assert record.attempts == 1 and record.worker == names[cut]
        # Its games ended in the cut or after it (``finished`` is when they ended, not when
        # the result was stored: that came once the link was back, as recorded_in_cut shows).
        assert result.finished >= cut_wall

    arena.wait_league("cut", timeout=60)
    _counted_once(arena, "cut", match_ids)
    # The cut-off worker carries on: registered (again, if its key expired), no traceback, one
    # line for the outage and one for its end at most.
    queue = Queue("arena", connection=r)
    while names[cut] not in {w.name for w in Worker.all(queue=queue)}:
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.1)
    for index, worker in enumerate(arena.workers):
        assert worker.poll() is None, arena.worker_logs()
        text = _worker_log(arena, index)
        assert "Traceback" not in text, text
        assert len(LOST.findall(text)) == len(BACK.findall(text)) <= (index == cut), text
    print(
        f"link of worker{cut} down {up_at - cut_at:.1f} s from mid-match: {outcome} (abandoned-"
        f"job timeout {ABANDONED_S} s); league done "
        f"{(done_at or time.monotonic()) - cut_at:.1f} s after the cut; the cut-off worker said "
        f"{said!r} {back:.1f} s after the link came back"
    )
