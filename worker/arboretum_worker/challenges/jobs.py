"""The job of one challenge match: played on the worker's private referee with every bot in its
sandbox, exactly as a league match (:func:`arboretum_worker.jobs.run_match`'s path), then its
ranks, replays and bot logs stored under the match's id. Nothing is rated.

Safe to run again for the same match (a retry): a match already finished is not played again.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from typing import TYPE_CHECKING, Any

from .. import store
from ..jobs import (
    failure_reason,
    job_connection,
    new_match_dir,
    play_planned,
    seat_names,
    store_artifacts,
)
from ..play import MatchError, MatchPlan, SeatPlan
from ..queues import notify
from ..settings import WorkerSettings, job_timeout
from .records import (
    ENDED,
    ChallengeStatus,
    challenge_matches,
    end_challenge,
    get_challenge,
    match_id,
)

if TYPE_CHECKING:
    import redis

__all__ = ["notify_end", "on_challenge_failure", "run_challenge_match"]

log = logging.getLogger(__name__)


def _set_match(r: redis.Redis, challenge_id: str, index: int, **changes: Any) -> None:
    key = store.Keys.challenge_matches(challenge_id)
    raw = r.hget(key, str(index))
    entry = json.loads(raw) if raw else {}
    entry.update(changes)
    r.hset(key, str(index), json.dumps(entry))


def run_challenge_match(challenge_id: str, index: int) -> dict[str, Any]:
    """Play match ``index`` of the challenge (unless it is over) and store what it played."""
    settings = WorkerSettings.from_env()
    r = job_connection(settings)
    challenge = get_challenge(r, challenge_id)
    if challenge is None:
        raise MatchError(f"no challenge {challenge_id!r} in the store")
    if challenge.status in ENDED:
        return {"challenge": challenge_id, "match": index, "played": False}
    entry = next(m for m in challenge_matches(r, challenge_id) if m.index == index)
    if entry.status == "finished":
        return {"challenge": challenge_id, "match": index, "played": False}
    _set_match(r, challenge_id, index, status="running", started=time.time())
    if challenge.status is ChallengeStatus.QUEUED:
        r.hset(store.Keys.challenge(challenge_id), "status", ChallengeStatus.RUNNING.value)
    mid = match_id(challenge_id, index)
    plan = MatchPlan(
        match_id=mid,
        seed=challenge.seed,  # every seat order plays the same deals
        players=challenge.players,
        games=challenge.deals,
        per_decision_ms=challenge.per_decision_ms,
        bank_ms=challenge.bank_ms,
        faults_to_forfeit=challenge.faults_to_forfeit,
        seats=tuple(SeatPlan(name=name) for name in seat_names(r, entry.seats)),
    )
    deadline = (
        job_timeout(challenge.players, challenge.deals, plan.per_decision_ms, plan.bank_ms) - 10
    )
    match_dir = new_match_dir(settings, mid)
    try:
        outcome = play_planned(r, settings, plan, entry.seats, match_dir, deadline, publish=False)
    finally:
        shutil.rmtree(match_dir, ignore_errors=True)
    if outcome.status != "finished" or len(outcome.games) != challenge.deals:
        raise MatchError(
            f"the referee ended the match as {outcome.status} after {len(outcome.games)} of "
            f"{challenge.deals} games: {outcome.reason or '-'}"
        )
    store_artifacts(r, mid, outcome, settings.output_cap)
    ranks = [list(g.result.ranks) for g in outcome.games]
    totals = [list(g.result.totals) for g in outcome.games]
    _set_match(r, challenge_id, index, status="finished", ranks=ranks, totals=totals)
    _end_if_done(r, challenge_id)
    log.info("challenge %s match %d: %d games in %.1f s", challenge_id, index, len(ranks),
             outcome.seconds)  # fmt: skip
    return {"challenge": challenge_id, "match": index, "played": True, "ranks": ranks}


def _end_if_done(r: redis.Redis, challenge_id: str) -> None:
    matches = challenge_matches(r, challenge_id)
    if any(m.status not in ("finished", "failed") for m in matches):
        return
    failed = [m for m in matches if m.status == "failed"]
    status = ChallengeStatus.FAILED if failed else ChallengeStatus.FINISHED
    reason = f"{len(failed)} of {len(matches)} matches failed" if failed else ""
    if end_challenge(r, challenge_id, status, reason):
        notify_end(r, challenge_id)


def notify_end(r: redis.Redis, challenge_id: str) -> None:
    """The one call site of the challenger's webhook when a challenge ends."""
    challenge = get_challenge(r, challenge_id)
    if challenge is None:
        return
    payload = {
        "challenge": challenge.id,
        "status": challenge.status.value,
        "reason": challenge.reason,
        "url": f"/api/v1/challenges/{challenge.id}",
        "standings": list(challenge.standings),
    }
    notify(r, challenge.author, "challenge.finished", payload)


def on_challenge_failure(
    job: Any, connection: Any, exc_type: Any = None, exc: Any = None, tb: Any = None
) -> None:
    """Failure callback (through the unit's): a match whose retries are spent is failed."""
    if len(job.args) != 2:
        return
    challenge_id, index = job.args
    reason = failure_reason(exc_type, exc)
    if job.retries_left and type(exc).__name__ != "StopRequested":
        log.warning("challenge %s match %s: attempt failed (retrying): %s", challenge_id, index,
                    reason)  # fmt: skip
        _set_match(connection, challenge_id, int(index), status="queued", failure=reason)
        return
    challenge = get_challenge(connection, challenge_id)
    if challenge is None or challenge.status in ENDED:
        return
    log.warning("challenge %s match %s: failed: %s", challenge_id, index, reason)
    _set_match(connection, challenge_id, int(index), status="failed", failure=reason)
    _end_if_done(connection, challenge_id)
