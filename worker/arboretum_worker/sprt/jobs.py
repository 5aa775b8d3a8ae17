"""The rq job of a sequential test on league workers: play one batch, record it, take the test
further, hand on to the next batch (see :mod:`.league`).

A batch is two matches of the batch's deals, NEW seated first in one and second in the other,
each on the worker's private referee with both bots in their sandboxes, as league matches are
played (:func:`arboretum_worker.jobs.run_match`'s path). Safe to run more than once for the same
batch: the batch is recorded once, the successor is claimed once.
"""

from __future__ import annotations

import logging
import shutil
import time
from typing import TYPE_CHECKING, Any

from .. import store
from ..jobs import failure_reason, job_connection, new_match_dir, play_planned, seat_names
from ..play import MatchError, MatchPlan, SeatPlan
from ..settings import WorkerSettings, job_timeout
from .league import (
    LeagueTest,
    TestStatus,
    advance,
    claim_successor,
    enqueue_batch,
    get_test,
    record_batch,
    record_failure,
)
from .pairs import SEATINGS, batch_seed, new_score

if TYPE_CHECKING:
    import redis

__all__ = ["on_sprt_failure", "run_sprt_batch"]

log = logging.getLogger(__name__)


def run_sprt_batch(test_id: str, batch: int) -> dict[str, Any]:
    """Play batch ``batch`` of test ``test_id`` (unless it is recorded or the test is over)."""
    settings = WorkerSettings.from_env()
    r = job_connection(settings)
    test = get_test(r, test_id)
    if test is None:
        raise MatchError(f"no sequential test {test_id!r} in the store")
    if test.status is not TestStatus.RUNNING:
        return {"test": test_id, "batch": batch, "played": False, "reason": test.status.value}
    played = False
    if not r.hexists(store.Keys.sprt(test_id, "batches"), str(batch)):
        r.hincrby(store.Keys.sprt(test_id, "attempts"), str(batch), 1)
        scores = _play_batch(r, settings, test, batch)
        if scores is None:
            return {"test": test_id, "batch": batch, "played": False, "reason": "test over"}
        played = record_batch(r, test_id, batch, scores)
    after = advance(r, test_id)
    if test.author:
        from .authors import after_batch

        after_batch(r, after)
    successor = _hand_on(r, after or test, batch, settings)
    log.info(
        "sprt %s batch %d: %s; successor %s",
        test_id,
        batch,
        "recorded" if played else "already recorded",
        successor,
    )
    return {"test": test_id, "batch": batch, "played": played, "successor": successor}


def _hand_on(r: redis.Redis, test: LeagueTest, batch: int, settings: WorkerSettings) -> int | None:
    successor = claim_successor(r, test, batch)
    if successor is not None:
        enqueue_batch(r, test, successor, settings)
    return successor


def _play_batch(
    r: redis.Redis, settings: WorkerSettings, test: LeagueTest, batch: int
) -> list[tuple[float, float]] | None:
    """NEW's scores in each pair of the batch; None when the test ended before the second match."""
    games = test.batch_pairs(batch)
    seed = batch_seed(test.seed, batch)
    tc, fp = test.time_control, test.fault_policy
    deadline = job_timeout(2, games, tc.per_decision_ms, tc.bank_ms) - 10
    entrants = (test.new, test.old)
    scores: list[list[float]] = [[] for _ in range(games)]
    for seating, order in enumerate(SEATINGS):
        if seating > 0:
            current = get_test(r, test.id)
            if current is None or current.status is not TestStatus.RUNNING:
                return None
        versions = tuple(entrants[i] for i in order)
        plan = MatchPlan(
            match_id=f"sprt-{test.id}-{batch}-{seating}",
            seed=seed,
            players=2,
            games=games,
            per_decision_ms=tc.per_decision_ms,
            bank_ms=tc.bank_ms,
            faults_to_forfeit=fp.faults_to_forfeit,
            seats=tuple(SeatPlan(name=name) for name in seat_names(r, versions)),
        )
        match_dir = new_match_dir(settings, plan.match_id)
        started = time.monotonic()
        try:
            outcome = play_planned(r, settings, plan, versions, match_dir, deadline)
        finally:
            shutil.rmtree(match_dir, ignore_errors=True)
        if outcome.status != "finished" or len(outcome.games) != games:
            raise MatchError(
                f"batch {batch}, seating {seating}: the referee ended the match as "
                f"{outcome.status} after {len(outcome.games)} of {games} games: "
                f"{outcome.reason or '-'}"
            )
        if test.author:  # an author's test links its games (sprt/authors.py)
            from .authors import record_match

            record_match(r, test, batch, seating, versions, outcome, settings.output_cap)
        for game in outcome.games:
            scores[game.game_index].append(new_score(order, game.result.ranks))
        log.info(
            "sprt %s batch %d seating %d: %d games in %.1f s",
            test.id,
            batch,
            seating,
            games,
            time.monotonic() - started,
        )
    return [(pair[0], pair[1]) for pair in scores]


def on_sprt_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """rq failure callback: a batch whose retries are spent is marked failed, and the chain
    goes on with its successor."""
    if len(job.args) != 2:
        return
    test_id, batch = job.args
    reason = failure_reason(exc_type, exc)
    if job.retries_left:
        log.warning("sprt %s batch %s: attempt failed (retrying): %s", test_id, batch, reason)
        return
    test = get_test(connection, test_id)
    if test is None or test.status is not TestStatus.RUNNING:
        return
    log.warning("sprt %s batch %s: failed: %s", test_id, batch, reason)
    record_failure(connection, test, int(batch), reason)
    after = advance(connection, test_id)
    if test.author:
        from .authors import after_batch

        after_batch(connection, after)
    if after is not None and after.status is TestStatus.RUNNING:
        _hand_on(connection, after, int(batch), WorkerSettings.from_env())
