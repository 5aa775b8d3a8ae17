"""The league's sequential tests in Redis (no workers): a batch is recorded once, every batch is
handed out once however often and by however many processes its successor is claimed, and the
verdict taken from the recorded batches is the same whoever advances the test and in what
interleaving."""

from __future__ import annotations

import random
import threading

import pytest
import redis

from arboretum_worker import registry, store
from arboretum_worker.league import LeagueError, builtin_bot_files
from arboretum_worker.settings import WorkerSettings
from arboretum_worker.sprt import league as sprt
from arboretum_worker.sprt.stats import SprtSettings, SprtState, Verdict


@pytest.fixture
def versions(r: redis.Redis) -> tuple[str, str]:
    new = registry.add_version(r, "greedy", builtin_bot_files("greedy"))
    old = registry.add_version(r, "random", builtin_bot_files("random"))
    return new, old


def _test(r: redis.Redis, redis_url: str, **kwargs: object) -> sprt.LeagueTest:
    settings = kwargs.pop("settings", SprtSettings(elo0=0, elo1=20, max_pairs=60))
    return sprt.create_test(
        r,
        "greedy",
        "random",
        settings,  # type: ignore[arg-type]
        WorkerSettings(redis_url=redis_url, queue="sprt-test"),
        seed=1,
        **kwargs,  # type: ignore[arg-type]
    )


def test_create_enqueues_the_window_and_refuses_the_same_version(
    r: redis.Redis, redis_url: str, versions: tuple[str, str]
) -> None:
    from rq import Queue

    test = _test(r, redis_url, batch=4, window=3)
    assert test.batches == 15 and sprt.get_test(r, test.id) == test
    queue = Queue("sprt-test", connection=r)
    assert sorted(queue.job_ids) == sorted(sprt.batch_job_id(test.id, b) for b in range(3))
    assert int(r.get(store.Keys.sprt(test.id, "next"))) == 3
    assert sprt.list_tests(r) == [test.id]
    with pytest.raises(LeagueError, match="same version"):
        sprt.create_test(
            r, "greedy", versions[0], SprtSettings(), WorkerSettings(redis_url=redis_url)
        )
    with pytest.raises(LeagueError, match="no bot named 'nobody'"):
        sprt.create_test(r, "nobody", "random", SprtSettings(), WorkerSettings(redis_url=redis_url))
    assert sprt.list_tests(r) == [test.id]


def test_a_batch_is_recorded_once(r: redis.Redis, redis_url: str, versions: object) -> None:
    test = _test(r, redis_url, batch=2, window=1)
    assert sprt.record_batch(r, test.id, 0, [(1.0, 0.0), (1.0, 1.0)])
    assert not sprt.record_batch(r, test.id, 0, [(0.0, 0.0), (0.0, 0.0)])
    assert r.lrange(store.Keys.sprt(test.id, "order"), 0, -1) == [b"0"]
    after = sprt.advance(r, test.id)
    state = sprt.test_state(r, after)
    assert state.counts == [0, 0, 1, 0, 1] and state.pairs == 2


def test_successors_are_handed_out_once_under_concurrent_claims(
    r: redis.Redis, redis_url: str, versions: object
) -> None:
    """Eight threads each claim the successor of every batch, in their own order: every batch
    gets one successor, the same for all, and no index is handed out twice or skipped."""
    test = _test(r, redis_url, batch=2, window=4)  # 30 batches; 4 handed out at creation
    claims: dict[int, set[int | None]] = {b: set() for b in range(30)}
    lock = threading.Lock()

    def claimer(seed: int) -> None:
        client = redis.Redis.from_url(redis_url)
        order = list(range(30))
        random.Random(seed).shuffle(order)
        for b in order:
            got = sprt.claim_successor(client, test, b)
            with lock:
                claims[b].add(got)

    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(len(got) == 1 for got in claims.values())
    handed = [next(iter(got)) for got in claims.values()]
    real = sorted(h for h in handed if h is not None)
    assert real == list(range(4, 30))  # every batch after the first window, once
    assert handed.count(None) == 4  # the cap: nothing left for the last four claims


def test_concurrent_advances_agree_with_one_sequential_pass(
    r: redis.Redis, redis_url: str, versions: object
) -> None:
    """Batches are recorded in a random order while four threads advance the test at once; the
    result is the test fed the recorded batches in their recorded order, stopped at its verdict,
    with one LLR per counted pair."""
    test = _test(
        r, redis_url, batch=5, window=1, settings=SprtSettings(elo0=0, elo1=30, max_pairs=400)
    )
    rng = random.Random(9)
    batches = {
        b: [(float(rng.random() < 0.6), float(rng.random() < 0.6)) for _ in range(5)]
        for b in range(80)
    }
    order = list(batches)
    rng.shuffle(order)
    stop = threading.Event()

    def advancer() -> None:
        client = redis.Redis.from_url(redis_url)
        while not stop.is_set():
            sprt.advance(client, test.id)

    threads = [threading.Thread(target=advancer) for _ in range(4)]
    for t in threads:
        t.start()
    for b in order:
        sprt.record_batch(r, test.id, b, batches[b])
    stop.set()
    for t in threads:
        t.join()
    final = sprt.advance(r, test.id)
    assert final is not None
    recorded = [int(x) for x in r.lrange(store.Keys.sprt(test.id, "order"), 0, -1)]
    assert recorded == order
    expected = SprtState(test.settings)
    history = []
    for b in recorded:
        for first, second in batches[b]:
            expected.add(first, second)
            history.append(expected.llr)
            if expected.verdict:
                break
        if expected.verdict:
            break
    got = sprt.test_state(r, final)
    assert got.counts == expected.counts and got.llr == pytest.approx(expected.llr)
    assert sprt.llr_history(r, test.id) == pytest.approx(history)
    assert final.verdict is expected.verdict is not None
    assert final.status is sprt.TestStatus.FINISHED


def test_failed_batches_end_the_test_when_nothing_is_left(
    r: redis.Redis, redis_url: str, versions: object
) -> None:
    test = _test(r, redis_url, batch=10, window=1, settings=SprtSettings(max_pairs=20))
    sprt.record_batch(r, test.id, 0, [(1.0, 0.0)] * 10)
    sprt.record_failure(r, test, 1, "the sandbox did not start")
    final = sprt.advance(r, test.id)
    assert final is not None and final.status is sprt.TestStatus.FINISHED
    assert final.verdict is Verdict.INCONCLUSIVE and "every batch" in final.reason
    # Three failures fail the test.
    other = _test(r, redis_url, batch=10, window=1)
    for b in range(3):
        sprt.record_failure(r, other, b, f"boom {b}")
    failed = sprt.get_test(r, other.id)
    assert failed is not None and failed.status is sprt.TestStatus.FAILED
    assert "3 batches failed; the last: boom 2" in failed.reason


def test_cancel_stops_handing_out_batches(r: redis.Redis, redis_url: str, versions: object) -> None:
    test = _test(r, redis_url, batch=2, window=2)
    assert sprt.cancel_test(r, test.id)
    assert not sprt.cancel_test(r, test.id)
    assert sprt.claim_successor(r, test, 0) is None
    cancelled = sprt.get_test(r, test.id)
    assert cancelled is not None and cancelled.status is sprt.TestStatus.CANCELLED
