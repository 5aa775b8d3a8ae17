"""A stored game's analysis on a real rq worker (arboretum_worker.analysis_jobs): queued once on
the arena-analysis queue, run, stored with its status; a replay that does not verify fails with
its one-line reason."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import redis
from rq import Queue, SimpleWorker

from arboretum import GameState, ReplayRecorder
from arboretum_worker import analysis_jobs, replays
from arboretum_worker.keys import StoreError


def partial_replay(steps: int) -> dict[str, Any]:
    """The first ``steps`` steps of a game of the fallback policy, as a partial replay (few
    decisions: the test stays short)."""
    state = GameState.new(2, 77)
    recorder = ReplayRecorder(state, match_id="analysed", seats=["a", "b"])
    for _ in range(steps):
        recorder.apply(state.fallback_decision())
    return recorder.partial_json("stopped for the test")


def _work(r: redis.Redis) -> None:
    queue = Queue(analysis_jobs.analysis_queue(), connection=r)
    SimpleWorker([queue], connection=r).work(burst=True)


def test_an_analysis_is_queued_once_run_and_stored(r: redis.Redis) -> None:
    assert analysis_jobs.analysis_queue() == "arena-analysis"
    with pytest.raises(StoreError, match="no stored replay"):
        analysis_jobs.request_analysis(r, "analysed", 0)
    replays.save_replay(r, "analysed", 0, json.dumps(partial_replay(9)))
    assert analysis_jobs.get_analysis(r, "analysed", 0) == {"status": "none"}
    first = analysis_jobs.request_analysis(r, "analysed", 0, by="alice")
    again = analysis_jobs.request_analysis(r, "analysed", 0, by="alice")
    assert first["status"] == again["status"] == "queued"
    assert Queue("arena-analysis", connection=r).count == 1
    _work(r)
    done = analysis_jobs.get_analysis(r, "analysed", 0)
    assert done["status"] == "done", done
    report = done["analysis"]
    assert report["format"] == "arboretum-analysis" and report["match_id"] == "analysed"
    assert report["decisions"] and all(d["step"] < 9 for d in report["decisions"])
    assert [s["seat"] for s in report["seats"]] == [0, 1]
    # Done: asking again queues nothing.
    assert analysis_jobs.request_analysis(r, "analysed", 0)["status"] == "done"
    assert Queue("arena-analysis", connection=r).count == 0


def test_a_stored_replay_that_does_not_verify_fails_with_its_reason(r: redis.Redis) -> None:
    doc = copy.deepcopy(partial_replay(6))
    doc["steps"][2]["seat"] = 1
    replays.save_replay(r, "edited", 0, json.dumps(doc))
    analysis_jobs.request_analysis(r, "edited", 0)
    _work(r)
    failed = analysis_jobs.get_analysis(r, "edited", 0)
    assert failed["status"] == "failed"
    assert failed["error"].startswith("the replay does not verify: step 2: ")
    assert "\n" not in failed["error"] and "analysis" not in failed
