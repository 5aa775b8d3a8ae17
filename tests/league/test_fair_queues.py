"""The workers' queues and the authors' fair share (queues.py, units.py), on a real
redis-server, with rq's in-process worker running the units where a unit must run."""

from __future__ import annotations

import time

import pytest
import redis
from rq import Queue, SimpleWorker

from arboretum_worker import queues, units
from arboretum_worker.queues import FairSettings, QueueKind, QuotaExceeded
from arboretum_worker.settings import SettingsError, WorkerSettings
from arboretum_worker.units import UnitSpec

WS = WorkerSettings(queue="fairtest", retries=0)


def _units(prefix: str, count: int, matches: int = 1, seconds: float = 0.0) -> list[UnitSpec]:
    return [
        UnitSpec(
            id=f"{prefix}-{i}", func="time.sleep", args=(seconds,), matches=matches, timeout=60
        )
        for i in range(count)
    ]


def _queued(r: redis.Redis, kind: QueueKind) -> list[str]:
    return list(Queue(queues.queue_name(kind, WS.queue), connection=r).job_ids)


def test_queue_names_and_priorities() -> None:
    assert queues.queue_name(QueueKind.LEAGUE) == "arena"
    assert queues.queue_name(QueueKind.CHALLENGES) == "arena-challenges"
    assert queues.queue_name("tests", "x") == "x-tests"
    assert queues.kind_of("x-tests", "x") is QueueKind.TESTS
    assert queues.kind_of("other", "x") is None
    assert queues.PRIORITY.index(QueueKind.LEAGUE) < queues.PRIORITY.index(QueueKind.CHALLENGES)
    assert queues.PRIORITY.index(QueueKind.CHALLENGES) < queues.PRIORITY.index(QueueKind.TESTS)
    assert queues.listened_kinds({}) == queues.PRIORITY
    assert queues.listened_kinds({"ARENA_QUEUES": "tests, league"}) == (
        QueueKind.LEAGUE,
        QueueKind.TESTS,
    )
    with pytest.raises(SettingsError, match="no queue kind 'ladder'"):
        queues.listened_kinds({"ARENA_QUEUES": "league,ladder"})


def test_a_worker_of_best_effort_queues_only_runs_at_a_lower_cpu_priority() -> None:
    """Casual games and analyses may wait for a CPU; a league's matches should not wait behind
    them (docs/league.md, "Casual games")."""
    kinds = queues.listened_kinds
    assert queues.worker_niceness(kinds({"ARENA_QUEUES": "casual"}), {}) == 10
    assert queues.worker_niceness(kinds({"ARENA_QUEUES": "analysis,casual"}), {}) == 10
    assert queues.worker_niceness(kinds({"ARENA_QUEUES": "casual,league"}), {}) == 0
    assert queues.worker_niceness(kinds({}), {}) == 0
    setting = {"ARENA_WORKER_NICE": "3"}
    assert queues.worker_niceness(kinds({"ARENA_QUEUES": "casual"}), setting) == 3
    assert queues.worker_niceness(kinds({}), setting) == 3
    for bad in ("-1", "20", "high"):
        with pytest.raises(SettingsError, match=f"ARENA_WORKER_NICE: '{bad}'"):
            queues.worker_niceness(kinds({}), {"ARENA_WORKER_NICE": bad})


def test_fair_settings_from_the_environment() -> None:
    s = FairSettings.from_env({"ARENA_AUTHOR_MAX_MATCHES": "5", "ARENA_LADDER_SHARE": "0.7"})
    assert (s.max_matches, s.ladder_share, s.slots) == (5, 0.7, 1)
    with pytest.raises(SettingsError, match="ARENA_AUTHOR_DAILY_S must be a number"):
        FairSettings.from_env({"ARENA_AUTHOR_DAILY_S": "lots"})
    with pytest.raises(SettingsError, match="ARENA_LADDER_SHARE"):
        FairSettings.from_env({"ARENA_LADDER_SHARE": "1.5"})


def test_one_unit_per_author_is_released_round_robin(r: redis.Redis) -> None:
    s = FairSettings(max_matches=100)
    assert units.submit(r, "alice", QueueKind.TESTS, _units("a", 10), WS, s) == 10
    units.submit(r, "bob", QueueKind.TESTS, _units("b", 2), WS, s)
    units.submit(r, "carol", QueueKind.CHALLENGES, _units("c", 1), WS, s)
    assert _queued(r, QueueKind.TESTS) == ["a-0", "b-0"]
    assert _queued(r, QueueKind.CHALLENGES) == ["c-0"]
    assert r.zcard("arena:fair:claimed") == 0  # every claim settled by its release
    assert units.dispatch(r, s) == []  # every author has its slot taken
    usage = queues.author_usage(r, "alice", s)
    assert (usage.active_matches, usage.pending_units, usage.running_units) == (10, 9, 1)

    # The queues' units run: each end releases its author's next unit, behind the others.
    worker = SimpleWorker(
        [Queue(queues.queue_name(k, WS.queue), connection=r) for k in queues.PRIORITY],
        connection=r,
    )
    worker.work(burst=True, max_jobs=3)
    assert _queued(r, QueueKind.TESTS) == ["a-1", "b-1"]
    assert units.get_unit(r, "c-0").state == "done"  # type: ignore[union-attr]
    worker.work(burst=True)
    assert queues.author_usage(r, "alice", s).active_matches == 0
    assert queues.author_usage(r, "bob", s).total_s >= 0
    assert r.zcard("arena:fair:authors") == 0


def test_an_authors_challenges_go_before_their_tests(r: redis.Redis) -> None:
    s = FairSettings()
    units.submit(r, "alice", QueueKind.TESTS, _units("t", 1), WS, s)
    units.submit(r, "alice", QueueKind.TESTS, _units("t2", 1), WS, s)
    units.submit(r, "alice", QueueKind.CHALLENGES, _units("c", 1), WS, s)
    units.cancel_units(r, ["t-0"])  # its slot is alice's again: her challenge comes next
    assert _queued(r, QueueKind.CHALLENGES) == ["c-0"]
    assert units.get_unit(r, "t2-0").state == "pending"  # type: ignore[union-attr]


def test_the_match_limit_is_all_or_nothing(r: redis.Redis) -> None:
    s = FairSettings(max_matches=4)
    units.submit(r, "alice", QueueKind.CHALLENGES, _units("a", 3), WS, s)
    with pytest.raises(QuotaExceeded, match="alice has 3 matches queued or running") as caught:
        units.submit(r, "alice", QueueKind.CHALLENGES, _units("b", 2), WS, s)
    assert caught.value.limit == "matches" and caught.value.retry_after > 0
    assert r.get("arena:fair:unit:b-0") is None and r.hlen("arena:fair:unit:b-0") == 0
    with pytest.raises(QuotaExceeded, match="limit is 4"):
        queues.admit(r, "alice", 2, s)
    with pytest.raises(QuotaExceeded, match="more than the 4 an author may have"):
        queues.admit(r, "bob", 5, s)
    queues.admit(r, "bob", 4, s)  # another author is not held up
    units.cancel_units(r, ["a-0", "a-1"])
    queues.admit(r, "alice", 2, s)
    # A running test's successor is not refused (force): the test was admitted as a whole.
    assert units.submit(r, "alice", QueueKind.TESTS, _units("f", 3), WS, s, force=True) == 3


def test_the_daily_budget_refuses_and_holds(r: redis.Redis) -> None:
    s = FairSettings(daily_seconds=100)
    now = time.time()
    day, left = queues.utc_day(now)
    units.submit(r, "alice", QueueKind.TESTS, _units("a", 2), WS, s, now=now)
    assert _queued(r, QueueKind.TESTS) == ["a-0"]
    r.set(f"arena:fair:used:alice:{day}", 150)
    with pytest.raises(QuotaExceeded, match="alice used 150 s of worker time today") as caught:
        queues.admit(r, "alice", 1, s, now=now)
    assert caught.value.limit == "daily" and 0 < caught.value.retry_after <= left
    units.cancel_units(r, ["a-0"], s)
    assert _queued(r, QueueKind.TESTS) == []  # a-1 is held: no budget left today
    assert units.get_unit(r, "a-1").state == "pending"  # type: ignore[union-attr]
    # The next UTC day releases it.
    assert units.dispatch(r, s, now=now + left + 1) == ["a-1"]


def test_a_unit_is_submitted_once_while_it_lives(r: redis.Redis) -> None:
    s = FairSettings()
    assert units.submit(r, "alice", QueueKind.TESTS, _units("a", 1), WS, s) == 1
    assert units.submit(r, "alice", QueueKind.TESTS, _units("a", 1), WS, s) == 0
    assert queues.author_usage(r, "alice", s).active_matches == 1
    units.cancel_units(r, ["a-0"])
    assert units.submit(r, "alice", QueueKind.TESTS, _units("a", 1), WS, s) == 1


def _killed(*args: object) -> None:
    raise ConnectionError("the dispatcher's Redis went away")


@pytest.mark.parametrize("where", ["_release", "_enqueue"])
def test_a_unit_whose_dispatcher_died_after_the_claim_is_released_once_later(
    r: redis.Redis, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """A dispatcher lost between claiming a unit (its author's slot taken) and handing it to rq,
    before or after marking it released: within the grace nobody touches it (its dispatcher may
    be slow), after it the next dispatch releases it, once however many dispatch at once; then
    it runs and the author's next unit follows."""
    s = FairSettings()
    claimed = "arena:fair:claimed"
    with monkeypatch.context() as m:
        m.setattr(units, where, _killed)
        with pytest.raises(ConnectionError):
            units.submit(r, "alice", QueueKind.TESTS, _units("a", 2), WS, s)
    stranded = units.get_unit(r, "a-0")
    assert stranded is not None
    assert stranded.state == ("pending" if where == "_release" else "released")
    assert r.smembers("arena:fair:running:alice") == {b"a-0"}  # the slot is taken
    assert _queued(r, QueueKind.TESTS) == [] and r.zcard(claimed) == 1
    assert units.dispatch(r, s) == []  # within the grace
    late = time.time() + units.CLAIM_GRACE_S + 1
    assert units.dispatch(r, s, now=late) == ["a-0"]
    assert units.dispatch(r, s, now=late + 1) == []  # taken once
    assert _queued(r, QueueKind.TESTS) == ["a-0"] and r.zcard(claimed) == 0
    assert units.get_unit(r, "a-0").state == "released"  # type: ignore[union-attr]
    worker = SimpleWorker(
        [Queue(queues.queue_name(QueueKind.TESTS, WS.queue), connection=r)], connection=r
    )
    worker.work(burst=True, max_jobs=1)
    assert units.get_unit(r, "a-0").state == "done"  # type: ignore[union-attr]
    assert _queued(r, QueueKind.TESTS) == ["a-1"] and r.zcard(claimed) == 0


def test_a_stranded_unit_cancelled_meanwhile_is_not_released(
    r: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = FairSettings()
    with monkeypatch.context() as m:
        m.setattr(units, "_release", _killed)
        with pytest.raises(ConnectionError):
            units.submit(r, "alice", QueueKind.TESTS, _units("a", 1), WS, s)
    assert units.cancel_units(r, ["a-0"], s) == 1
    assert units.dispatch(r, s, now=time.time() + units.CLAIM_GRACE_S + 1) == []
    assert _queued(r, QueueKind.TESTS) == [] and r.zcard("arena:fair:claimed") == 0
    assert units.get_unit(r, "a-0").state == "cancelled"  # type: ignore[union-attr]


def test_the_ladder_keeps_its_share(r: redis.Redis) -> None:
    s = FairSettings(ladder_share=0.5, window_s=600)
    kinds = list(queues.PRIORITY)
    assert queues.queue_order(r, kinds, s)[:2] == [QueueKind.WEBHOOKS, QueueKind.LEAGUE]
    queues.record_usage(r, QueueKind.LEAGUE, 60, s)
    queues.record_usage(r, QueueKind.TESTS, 20, s)
    order = queues.queue_order(r, kinds, s)  # 75 % to leagues: the authors first
    assert order.index(QueueKind.LEAGUE) > order.index(QueueKind.TESTS)
    assert order[0] is QueueKind.WEBHOOKS
    queues.record_usage(r, QueueKind.CHALLENGES, 60, s)
    assert queues.queue_order(r, kinds, s)[1] is QueueKind.LEAGUE  # 43 %: leagues first
    # Old usage fades: an hour later 60 s counts for 60 * exp(-6).
    queues.record_usage(r, QueueKind.TESTS, 1, s, now=time.time() + 3600)
    assert queues.shares(r)["league"] == pytest.approx(60 * 2.718281828**-6, rel=0.01)


def test_busy_workers_split_between_the_ladder_and_the_authors(r: redis.Redis) -> None:
    s = FairSettings(ladder_share=0.5)
    kinds = list(queues.PRIORITY)

    def league_first(running: dict[QueueKind, int]) -> bool:
        order = queues.queue_order(r, kinds, s, running=running)
        return order.index(QueueKind.LEAGUE) < order.index(QueueKind.CHALLENGES)

    # The other worker plays for the ladder: this one takes the authors' work, and back.
    assert not league_first({QueueKind.LEAGUE: 1})
    assert league_first({QueueKind.TESTS: 1})
    # Three others: two for the ladder, one for an author; a share of 0.5 of four is two.
    assert not league_first({QueueKind.LEAGUE: 2, QueueKind.CHALLENGES: 1})
    assert league_first({QueueKind.LEAGUE: 1, QueueKind.CHALLENGES: 2})
    # Webhook deliveries and idle queues count for nobody: the decayed time decides (none yet).
    assert league_first({QueueKind.WEBHOOKS: 3, QueueKind.LEAGUE: 0})
    queues.record_usage(r, QueueKind.LEAGUE, 5, s)
    queues.record_usage(r, QueueKind.LEAGUE, 5, s)
    assert queues.totals(r) == {"league": pytest.approx(10.0, rel=0.01)}
    assert not league_first({})


def test_ordering_the_queues_never_requeues_a_running_match(r: redis.Redis) -> None:
    """Right after a Redis outage every running match's execution looks expired until its worker's
    next heartbeat. The worker's look at the running matches (to order its queues) must not act on
    that: rq's cleanup would re-queue the match as abandoned, and it would be played twice."""
    from rq.executions import Execution
    from rq.job import JobStatus

    from arboretum_worker.worker import ArenaWorker

    names = [queues.queue_name(kind) for kind in (QueueKind.LEAGUE, QueueKind.CASUAL)]
    league = Queue(names[0], connection=r)
    job = league.enqueue("builtins.print", "a match", retry=None)
    with r.pipeline() as pipe:
        job.set_status(JobStatus.STARTED, pipeline=pipe)
        league.remove(job, pipeline=pipe)
        Execution.create(job, ttl=60, pipeline=pipe)
        pipe.execute()
    registry = league.started_job_registry
    expired = {key: 1.0 for key in r.zrange(registry.key, 0, -1)}  # no heartbeat for long
    r.zadd(registry.key, expired)
    worker = ArenaWorker([Queue(name, connection=r) for name in names], connection=r)
    worker._last_dispatch = time.monotonic()  # (units.dispatch is not what is tested)
    worker._order_queues()
    assert job.get_status(refresh=True) == JobStatus.STARTED
    assert league.job_ids == [] and r.zcard(registry.key) == 1
