"""Analysis of stored games on the workers (docs/analysis.md, "Stored games").

:func:`request_analysis` queues one rq job (:func:`run_analysis`) on the lowest-priority queue,
``arena-analysis`` (:data:`~arboretum_worker.queues.QueueKind.ANALYSIS`), unless the game's analysis
is already done, queued or running. The job reads the stored replay, runs the SDK's analysis engine
(``arboretum_sdk.analysis``: every seat, the default configuration) and stores the analysis
document in the hash ``Keys.analysis(match, game)`` with its status: ``queued``, ``running``,
``done`` (field ``document``: the JSON) or ``failed`` (field ``error``: one line).
:func:`get_analysis` reads it back. Who may request it (the owner of a seat's bot, or the
operator) is the web's decision.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any

from .keys import Keys, StoreError
from .queues import QueueKind, queue_name
from .replays import get_replay
from .settings import WorkerSettings

if TYPE_CHECKING:
    import redis

__all__ = [
    "ANALYSIS_JOB_TIMEOUT_S",
    "AnalysisStatus",
    "analysis_queue",
    "get_analysis",
    "request_analysis",
    "run_analysis",
]

log = logging.getLogger(__name__)

ANALYSIS_JOB_TIMEOUT_S = 1800
"""Seconds an analysis job may run: a 2-player game takes under 30 s of CPU, but a 4-player game
more, and a loaded machine many times that in wall time (docs/benchmarks.md, "Analysis")."""
RESULT_TTL_S = 24 * 3600
FAILURE_TTL_S = 7 * 24 * 3600

AnalysisStatus = dict[str, Any]
"""``{"status": "none" | "queued" | "running" | "done" | "failed", "requested": t,
"finished": t, "error": "...", "analysis": {...}}`` (only the fields that apply)."""


def analysis_queue(settings: WorkerSettings | None = None) -> str:
    """The rq queue of analysis jobs: ``{base}-analysis`` (``arena-analysis`` by default)."""
    settings = settings or WorkerSettings.from_env()
    return queue_name(QueueKind.ANALYSIS, settings.queue)


def job_id(match_id: str, game: int) -> str:
    return f"arena-analysis-{match_id}-{int(game)}"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def get_analysis(r: redis.Redis, match_id: str, game: int) -> AnalysisStatus:
    """The game's analysis status, with the document once done (``status`` ``none`` if never
    requested)."""
    raw = r.hgetall(Keys.analysis(match_id, game))
    if not raw:
        return {"status": "none"}
    fields = {_text(k): _text(v) for k, v in raw.items()}
    out: AnalysisStatus = {"status": fields.get("status", "none")}
    for name in ("requested", "finished"):
        if name in fields:
            out[name] = float(fields[name])
    if "error" in fields:
        out["error"] = fields["error"]
    if out["status"] == "done" and "document" in fields:
        out["analysis"] = json.loads(fields["document"])
    return out


def request_analysis(
    r: redis.Redis,
    match_id: str,
    game: int,
    *,
    by: str = "",
    settings: WorkerSettings | None = None,
) -> AnalysisStatus:
    """Queue the analysis of a stored game unless it is done, queued or running; returns its
    status. Raises :class:`StoreError` if the game has no stored replay."""
    from rq import Queue

    if get_replay(r, match_id, game) is None:
        raise StoreError(f"match {match_id!r} has no stored replay of game {game}")
    key = Keys.analysis(match_id, game)
    current = get_analysis(r, match_id, game)
    if current["status"] in ("queued", "running", "done"):
        return current
    now = time.time()
    r.delete(key)
    r.hset(key, mapping={"status": "queued", "requested": repr(now), "by": by})
    Queue(analysis_queue(settings), connection=r).enqueue(
        run_analysis,
        match_id,
        int(game),
        job_id=job_id(match_id, game),
        job_timeout=ANALYSIS_JOB_TIMEOUT_S,
        result_ttl=RESULT_TTL_S,
        failure_ttl=FAILURE_TTL_S,
        description=f"analysis of match {match_id} game {game}",
    )
    return {"status": "queued", "requested": now}


def run_analysis(match_id: str, game: int) -> dict[str, Any]:
    """The rq job: analyse the stored game and store the document (or the one-line error)."""
    from arboretum_sdk.analysis import AnalysisConfig, AnalysisError, analyse_replay
    from arboretum_sdk.analysis.report import analysis_json

    from .jobs import job_connection

    r = job_connection(WorkerSettings.from_env())
    key = Keys.analysis(match_id, game)
    r.hset(key, "status", "running")
    raw = get_replay(r, match_id, game)
    try:
        if raw is None:
            raise AnalysisError(f"match {match_id!r} has no stored replay of game {game}")
        try:
            doc = json.loads(raw)
        except ValueError as exc:
            raise AnalysisError(f"the stored replay is not JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise AnalysisError("the stored replay is not a JSON object")
        config = AnalysisConfig()
        report = analysis_json(doc, analyse_replay(doc, None, config), config)
    except AnalysisError as exc:
        r.hset(key, mapping={"status": "failed", "error": str(exc), "finished": repr(time.time())})
        log.warning("analysis of match %s game %s failed: %s", match_id, game, exc)
        return {"match_id": match_id, "game": game, "status": "failed"}
    except Exception:
        why = "the analysis failed on the worker (see its log)"
        r.hset(key, mapping={"status": "failed", "error": why, "finished": repr(time.time())})
        raise
    r.hset(
        key,
        mapping={
            "status": "done",
            "document": json.dumps(report, separators=(",", ":")),
            "finished": repr(time.time()),
        },
    )
    return {"match_id": match_id, "game": game, "status": "done"}
