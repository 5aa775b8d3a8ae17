"""The league's sequential tests (``arena sprt --league``, docs/sprt.md) on the web: the list of
tests and a test's page (the LLR after every pair against its bounds, the verdict), and their
JSON, ``/api/v1/sprt`` and ``/api/v1/sprt/{test_id}``."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException

from arboretum_worker import store
from arboretum_worker.sprt import league as sprt_store

if TYPE_CHECKING:
    import redis

__all__ = ["load_test", "test_json", "test_summaries"]


def _label(r: redis.Redis, vid: str) -> dict[str, str]:
    version = store.get_version(r, vid)
    return {"version": vid, "bot": version.name if version else "?"}


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def load_test(r: redis.Redis, test_id: str) -> sprt_store.LeagueTest:
    test = sprt_store.get_test(r, test_id)
    if test is None:
        raise HTTPException(404, f"no sequential test {test_id!r}")
    return test


def test_json(
    r: redis.Redis, test: sprt_store.LeagueTest, *, history: bool = False
) -> dict[str, Any]:
    """A test as the API shows it; with ``history``, the LLR after every counted pair."""
    state = sprt_store.test_state(r, test)
    estimate = state.estimate()
    lower, upper = test.settings.bounds
    s = test.settings
    data: dict[str, Any] = {
        "id": test.id,
        "status": test.status.value,
        "verdict": test.verdict.value if test.verdict else None,
        "reason": test.reason,
        "new": _label(r, test.new),
        "old": _label(r, test.old),
        "elo0": s.elo0,
        "elo1": s.elo1,
        "alpha": s.alpha,
        "beta": s.beta,
        "max_pairs": s.max_pairs,
        "batch": test.batch,
        "window": test.window,
        "per_decision_ms": test.time_control.per_decision_ms,
        "bank_ms": test.time_control.bank_ms,
        "seed": str(test.seed),
        "lower_bound": lower,
        "upper_bound": upper,
        "llr": state.llr,
        "pairs": state.pairs,
        "pentanomial": list(state.counts),
        "wins": state.wins,
        "draws": state.draws,
        "losses": state.losses,
        "elo": _finite(estimate.elo),
        "elo_low": _finite(estimate.low),
        "elo_high": _finite(estimate.high),
        "created": test.created,
        "finished": test.finished,
    }
    if history:
        data["llr_history"] = sprt_store.llr_history(r, test.id)
    return data


def test_summaries(r: redis.Redis) -> list[dict[str, Any]]:
    out = []
    for test_id in sprt_store.list_tests(r):
        test = sprt_store.get_test(r, test_id)
        if test is not None:
            out.append(test_json(r, test))
    return out
