"""Authors' sequential tests on the workers, as fishtest runs them: two of the author's own
versions, bounds and a cap on pairs the author chooses within the operator's limits
(:class:`TestLimits`), batches run as the author's units on the tests queue
(:mod:`arboretum_worker.units`), games linked, cancelled by their owner.

The test itself is :mod:`.league`'s (the same records, jobs and verdict); this module adds the
author: the checks before it starts, the list of the author's tests, the matches it played
(their replays kept for the first ``ARENA_TEST_REPLAY_BATCHES`` batches), the end notice.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import store
from ..challenges.records import NotYours
from ..queues import FairSettings, admit, notify
from ..settings import WorkerSettings, numbers_from_env
from .league import LeagueTest, TestStatus, batch_job_id, cancel_test, create_test, get_test
from .stats import SprtError, SprtSettings

if TYPE_CHECKING:
    import redis

    from ..play import PlayedMatch

__all__ = [
    "NotYours",
    "TestError",
    "TestLimits",
    "TestMatch",
    "after_batch",
    "cancel_author_test",
    "create_author_test",
    "list_author_tests",
    "record_match",
    "sprt_matches",
]


class TestError(ValueError):
    """An author's test cannot be made or changed; the message says why, in one line."""

    __test__ = False


@dataclass(frozen=True)
class TestLimits:
    """The operator's limits on authors' tests (docs/league.md, "Author tests")."""

    __test__ = False

    max_pairs: int = 2000
    """``ARENA_TEST_MAX_PAIRS``: the largest cap an author may choose."""
    min_elo_gap: float = 5.0
    """``ARENA_TEST_MIN_ELO_GAP``: elo1 - elo0 at least this (a narrower gap needs more games)."""
    max_abs_elo: float = 400.0
    """``ARENA_TEST_MAX_ABS_ELO``: |elo0| and |elo1| at most this."""
    min_alpha: float = 0.01
    """``ARENA_TEST_MIN_ALPHA``: alpha and beta at least this (and below 0.5)."""
    batch: int = 4
    """``ARENA_TEST_BATCH``: pairs per batch (one unit: two matches of this many games)."""
    window: int = 2
    """``ARENA_TEST_WINDOW``: batches of one test in play at once."""
    replay_batches: int = 8
    """``ARENA_TEST_REPLAY_BATCHES``: the first batches whose replays are kept."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TestLimits:
        fields = (
            ("max_pairs", "ARENA_TEST_MAX_PAIRS", int),
            ("min_elo_gap", "ARENA_TEST_MIN_ELO_GAP", float),
            ("max_abs_elo", "ARENA_TEST_MAX_ABS_ELO", float),
            ("min_alpha", "ARENA_TEST_MIN_ALPHA", float),
            ("batch", "ARENA_TEST_BATCH", int),
            ("window", "ARENA_TEST_WINDOW", int),
            ("replay_batches", "ARENA_TEST_REPLAY_BATCHES", int),
        )
        return cls(**numbers_from_env(os.environ if env is None else env, fields))


def _own_version(r: redis.Redis, author: str, spec: str) -> str:
    from ..league import LeagueError, resolve_version

    version = store.get_version(r, spec) if "@" not in spec and len(spec) == 64 else None
    name = version.name if version else spec.partition("@")[0]
    try:
        bot = store.get_bot(r, store.validate_name("bot", name))
    except store.StoreError as exc:
        raise TestError(str(exc)) from None
    if bot is None:
        raise TestError(f"no bot named {name!r}")
    if bot.owner != author:
        raise NotYours(f"bot {name!r} is not yours: a test compares two of your own versions")
    try:
        return resolve_version(r, spec)
    except LeagueError as exc:
        raise TestError(str(exc)) from None


def check_bounds(
    limits: TestLimits, elo0: float, elo1: float, alpha: float, beta: float, max_pairs: int
) -> SprtSettings:
    """The author's bounds as settings, or :class:`TestError` naming the first out of limits."""
    if type(max_pairs) is not int or not 1 <= max_pairs <= limits.max_pairs:
        raise TestError(f"max_pairs must be 1 to {limits.max_pairs}, not {max_pairs}")
    for name, value in (("elo0", elo0), ("elo1", elo1)):
        if abs(value) > limits.max_abs_elo:
            raise TestError(f"{name} must be within ±{limits.max_abs_elo:g} Elo, not {value:g}")
    if elo1 - elo0 < limits.min_elo_gap:
        raise TestError(
            f"elo1 - elo0 must be at least {limits.min_elo_gap:g} (got {elo1 - elo0:g})"
        )
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not limits.min_alpha <= value < 0.5:
            raise TestError(f"{name} must be {limits.min_alpha:g} to below 0.5, not {value:g}")
    try:
        return SprtSettings(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_pairs=max_pairs)
    except SprtError as exc:
        raise TestError(str(exc)) from None


def create_author_test(
    r: redis.Redis,
    author: str,
    new: str,
    old: str,
    *,
    elo0: float = 0.0,
    elo1: float = 10.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_pairs: int,
    seed: int | None = None,
    limits: TestLimits | None = None,
    worker_settings: WorkerSettings | None = None,
    fair: FairSettings | None = None,
) -> LeagueTest:
    """Start ``author``'s test of their version ``new`` against their ``old``.

    Raises :class:`TestError` (an unknown bot, one version twice, bounds outside the limits),
    :class:`NotYours` or :class:`~arboretum_worker.queues.QuotaExceeded`; nothing is stored
    then."""
    limits = limits or TestLimits.from_env()
    settings = check_bounds(limits, elo0, elo1, alpha, beta, max_pairs)
    new_id, old_id = _own_version(r, author, new), _own_version(r, author, old)
    if new_id == old_id:
        raise TestError(f"NEW and OLD are the same version ({old_id[:12]}): a test compares two")
    admit(r, author, 2 * limits.window, fair)
    return create_test(
        r,
        new_id,
        old_id,
        settings,
        worker_settings or WorkerSettings.from_env(),
        seed=seed,
        batch=limits.batch,
        window=limits.window,
        author=author,
    )


def list_author_tests(r: redis.Redis, author: str, limit: int = 100) -> list[LeagueTest]:
    """The author's tests, newest first."""
    ids = r.zrevrange(store.Keys.author_tests(author), 0, max(0, limit - 1))
    found = (get_test(r, store.as_text(t)) for t in ids)
    return [t for t in found if t is not None]


def _units(r: redis.Redis, test: LeagueTest) -> list[str]:
    handed_out = int(r.get(store.Keys.sprt(test.id, "next")) or 0)
    return [batch_job_id(test.id, b) for b in range(handed_out)]


def cancel_author_test(r: redis.Redis, author: str | None, test_id: str) -> LeagueTest:
    """Cancel a running test; only its author (or the operator: ``author`` None) may."""
    from ..units import cancel_units

    test = get_test(r, test_id)
    if test is None:
        raise TestError(f"no test {test_id!r}")
    if author is not None and test.author != author:
        raise NotYours(f"test {test_id} is not yours: only its author cancels it")
    if cancel_test(r, test_id):
        cancel_units(r, _units(r, test))
        after_batch(r, get_test(r, test_id))
    after = get_test(r, test_id)
    assert after is not None
    return after


def after_batch(r: redis.Redis, test: LeagueTest | None) -> None:
    """Once an author's test has ended: its units still waiting for release are dropped, and its
    author is notified (once: the one call site of the ``test.finished`` webhook)."""
    if test is None or not test.author or test.status is TestStatus.RUNNING:
        return
    if not r.hsetnx(store.Keys.sprt(test.id), "notified", "1"):
        return
    from ..units import cancel_units, get_unit

    # Only those still waiting: a released one runs and returns at once (the test is over),
    # and one of them may be the job calling this.
    waiting = [u for u in _units(r, test) if (unit := get_unit(r, u)) and unit.state == "pending"]
    cancel_units(r, waiting)
    payload = {
        "test": test.id,
        "status": test.status.value,
        "verdict": test.verdict.value if test.verdict else None,
        "reason": test.reason,
        "url": f"/api/v1/sprt/{test.id}",
    }
    notify(r, test.author, "test.finished", payload)


# --------------------------------------------------------------------------- linked games


@dataclass(frozen=True)
class TestMatch:
    __test__ = False

    id: str
    batch: int
    seating: int
    """0: NEW in seat 0; 1: NEW in seat 1."""
    seats: tuple[str, ...]
    ranks: tuple[tuple[int, ...], ...]
    replays: bool
    """Whether its replays (and bot logs) are kept."""


def record_match(
    r: redis.Redis,
    test: LeagueTest,
    batch: int,
    seating: int,
    versions: Sequence[str],
    outcome: PlayedMatch,
    output_cap: int,
) -> None:
    """Link a played match to its test; keep its replays for the first batches."""
    from ..jobs import store_artifacts

    kept = batch < TestLimits.from_env().replay_batches
    match_id = f"sprt-{test.id}-{batch}-{seating}"
    if kept:
        store_artifacts(r, match_id, outcome, output_cap)
    entry = {
        "batch": int(batch),
        "seating": int(seating),
        "seats": list(versions),
        "ranks": [list(g.result.ranks) for g in outcome.games],
        "replays": kept,
    }
    r.hset(store.Keys.sprt(test.id, "matches"), match_id, json.dumps(entry))


def sprt_matches(r: redis.Redis, test_id: str) -> list[TestMatch]:
    """The test's matches played so far, by batch then seating."""
    raw = r.hgetall(store.Keys.sprt(test_id, "matches"))
    out = []
    for key, value in raw.items():
        m = json.loads(value)
        out.append(
            TestMatch(
                id=store.as_text(key),
                batch=int(m["batch"]),
                seating=int(m["seating"]),
                seats=tuple(m["seats"]),
                ranks=tuple(tuple(g) for g in m["ranks"]),
                replays=bool(m["replays"]),
            )
        )
    return sorted(out, key=lambda m: (m.batch, m.seating))
