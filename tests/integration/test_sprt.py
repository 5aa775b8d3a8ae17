"""``arena sprt --league`` end to end: real `arena worker` processes (rq) on a real redis-server,
bots in the sandbox. A worker killed with -9 in the middle of a batch: the test still reaches
its verdict, the killed batch is played again and counted once, and no pair is counted twice."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from rq import Worker
from rq.registry import StartedJobRegistry

from arboretum_worker import registry
from arboretum_worker.league import builtin_bot_files, sandbox_check
from arboretum_worker.sprt import league as sprt
from arboretum_worker.sprt.stats import SprtState, Verdict

from .conftest import Arena, kill_tree

pytestmark = pytest.mark.integration

CLOCK = ["--per-decision-ms", "1000", "--bank-ms", "5000"]


def _submit(arena: Arena, name: str) -> str:
    return registry.add_version(arena.r, name, builtin_bot_files(name), check=sandbox_check("auto"))


def _current_job(arena: Arena, name: str) -> str | None:
    for worker in Worker.all(connection=arena.r):
        if worker.name == name:
            return worker.get_current_job_id()  # type: ignore[no-any-return]
    return None


def _horse(worker_pid: int) -> int:
    """The work horse: the worker's child that runs the job, a fork of the worker (the same
    command line; the worker's other children, such as its bots' fork server, run another)."""
    with open(f"/proc/{worker_pid}/cmdline", "rb") as f:
        command = f.read()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    stat = f.read()
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    child_command = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2 :].split()[1]) == worker_pid and (
                child_command == command
            ):
                return int(entry)
    raise AssertionError(f"worker {worker_pid} has no work horse")


@pytest.mark.parametrize("horse", ["killed", "outlives it"])
def test_a_worker_killed_mid_batch_loses_nothing_and_counts_nothing_twice(
    arena: Arena, horse: str
) -> None:
    """kill -9 of the worker and its work horse: the batch is lost and played again. Or kill -9
    of the worker alone, its horse held (SIGSTOP) until the retry has recorded the batch, then
    let go: it finishes the same batch and records it too, and that second record is not
    counted."""
    r = arena.r
    _submit(arena, "greedy")
    _submit(arena, "random")
    # One worker until the kill, and the rescuer only once the killed batch has been given up:
    # then no other worker can play the rest of the test (and reach its verdict) before the
    # killed batch's retry is queued, however fast the other batches are.
    victim = arena.start_worker()
    arena.wait_workers(1)
    victim_name = f"test-worker-0-{os.getpid()}"
    started = arena.run(
        "sprt", "greedy", "random", "--league", "--elo1", "50", "--batch", "3", "--window", "2",
        "--seed", "4", "--detach", *CLOCK,
    )  # fmt: skip
    test_id = started.stdout.strip()
    assert sprt.get_test(r, test_id) is not None, started.stdout + started.stderr

    # Catch the victim in the middle of a batch: hold its work horse (SIGSTOP; a batch is
    # recorded only by the process that played it) and check the batch is unrecorded.
    batches = f"arena:sprt:{test_id}:batches"

    def hold(pid: int) -> None:
        os.kill(pid, signal.SIGSTOP)
        # A command the horse wrote just before it stopped may still be in Redis's socket buffer,
        # behind this test's next read: give Redis the time to apply it, so that "unrecorded"
        # means unrecorded.
        time.sleep(0.5)

    def catch(victim_name: str, victim_pid: int) -> tuple[int, int]:
        deadline = time.monotonic() + 90
        while True:
            assert time.monotonic() < deadline, arena.worker_logs()
            job = _current_job(arena, victim_name)
            if job and job.startswith(f"{sprt.JOB_PREFIX}{test_id}-"):
                batch = int(job.rsplit("-", 1)[1])
                if r.hget(f"arena:sprt:{test_id}:attempts", str(batch)):
                    held = _horse(victim_pid)
                    hold(held)
                    if not r.hexists(batches, str(batch)):
                        return batch, held
                    os.kill(held, signal.SIGCONT)  # it had just finished: try the next one
            time.sleep(0.05)

    def rescue(batch: int) -> None:
        """Once the killed batch's execution has expired (no heartbeat came), start a worker:
        its maintenance gives the batch up as abandoned and retries it."""
        job_id = f"{sprt.JOB_PREFIX}{test_id}-{batch}"
        started = StartedJobRegistry(name="arena", connection=r)
        deadline = time.monotonic() + 120
        while job_id not in started.get_expired_job_ids():
            assert time.monotonic() < deadline, f"{job_id} never expired"
            time.sleep(0.2)
        arena.start_worker()

    killed_batch, held = catch(victim_name, victim.pid)
    if horse == "killed":
        kill_tree(victim.pid)
        victim.wait(10)
        rescue(killed_batch)
    else:
        # A stopped process whose process group becomes orphaned gets SIGHUP (and dies), so
        # the horse runs on while its worker is killed, and is held again once it is dead.
        for _ in range(3):
            os.kill(held, signal.SIGCONT)
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(10)  # orphaned now (not stopped: no SIGHUP); hold it again
            hold(held)
            if not r.hexists(batches, str(killed_batch)):
                break
            # It finished the batch in that instant: start over with another worker.
            os.kill(held, signal.SIGCONT)
            victim = arena.start_worker()
            victim_name = f"test-worker-{len(arena.workers) - 1}-{os.getpid()}"
            killed_batch, held = catch(victim_name, victim.pid)
        else:
            raise AssertionError("could not hold a work horse in the middle of a batch")
        rescue(killed_batch)
        victim_log = arena.tmp / f"worker{arena.workers.index(victim)}.log"
        deadline = time.monotonic() + 90
        while not r.hexists(batches, str(killed_batch)):  # recorded by the retry
            assert time.monotonic() < deadline, arena.worker_logs()
            time.sleep(0.1)
        os.kill(held, signal.SIGCONT)
        deadline = time.monotonic() + 90
        while os.path.exists(f"/proc/{held}"):
            assert time.monotonic() < deadline, "the held work horse did not finish"
            time.sleep(0.1)
        horse_log = victim_log.read_text(errors="replace")
        assert f"batch {killed_batch}: already recorded" in horse_log, horse_log[-3000:]

    followed = arena.run("sprt", "--follow", test_id, "--json", timeout=240)
    report = json.loads(followed.stdout)
    assert report["status"] == "finished" and report["verdict"] == "H1", report
    test = sprt.get_test(r, test_id)
    assert test is not None and test.verdict is Verdict.H1

    # The killed batch was played again and recorded once.
    attempts = int(r.hget(f"arena:sprt:{test_id}:attempts", str(killed_batch)))
    print(f"killed batch {killed_batch}: {attempts} attempts")
    assert attempts >= 2
    assert r.hexists(f"arena:sprt:{test_id}:batches", str(killed_batch))
    order = [int(b) for b in r.lrange(f"arena:sprt:{test_id}:order", 0, -1)]
    assert len(order) == len(set(order)), order
    assert killed_batch in order

    # The counts are the recorded batches in their order, each pair once, up to the verdict.
    replay = SprtState(test.settings)
    for b in order:
        outcome = json.loads(r.hget(f"arena:sprt:{test_id}:batches", str(b)))
        assert len(outcome["scores"]) == 3
        for first, second in outcome["scores"]:
            replay.add(first, second)
            if replay.verdict:
                break
        if replay.verdict:
            break
    assert report["pentanomial"] == replay.counts
    assert report["pairs"] == replay.pairs == len(report["llr_history"])
    assert report["wins"] + report["draws"] + report["losses"] == 2 * replay.pairs
    assert report["llr"] >= report["upper_bound"]


def test_bad_input_is_refused_before_any_batch_and_a_test_can_be_cancelled(arena: Arena) -> None:
    r = arena.r
    greedy = _submit(arena, "greedy")
    _submit(arena, "random")
    cases = [
        (["greedy", f"greedy@{greedy[:10]}"], "NEW and OLD are the same version"),
        (["greedy", "nobody"], "no bot named 'nobody'"),
        (["greedy", "random", "--elo0", "3", "--elo1", "1"], "elo0 must be below elo1"),
        (["greedy", "random", "--alpha", "0.6"], "alpha must be between 0 and 0.5"),
    ]
    for args, message in cases:
        done = arena.run("sprt", *args, "--league", "--detach", check=False)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert sprt.list_tests(r) == []
    assert r.llen("rq:queue:arena") == 0

    started = arena.run("sprt", "greedy", "random", "--league", "--detach", "--window", "1")
    test_id = started.stdout.strip()
    assert arena.run("sprt", "--cancel", test_id).stdout.strip() == f"test {test_id}: cancelled"
    listed = arena.run("sprt", "--list").stdout
    assert test_id in listed and "cancelled" in listed
    followed = arena.run("sprt", "--follow", test_id, check=False)
    assert followed.returncode == 1 and "cancelled" in followed.stdout
    again = arena.run("sprt", "--cancel", test_id, check=False)
    assert again.returncode == 1 and "cancelled already" in again.stderr
