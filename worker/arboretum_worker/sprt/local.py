"""``arena sprt NEW OLD``: the sequential test played here, through real bot processes.

The pairs are played as ``arena play`` plays its matches (:class:`arboretum_server.local.
LocalSession`: a referee on loopback in this process, one process per seat and match), laid out
in batches (:mod:`.pairs`); the test (:class:`.stats.SprtState`) takes each pair as soon as both of
its games have ended and stops at a bound or at the cap. ``concurrency`` batches are played at
once (each is two matches at once); when the test ends, the matches still running are cancelled
and their pairs are not counted.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arboretum_server.local import (
    Entrant,
    LocalSession,
    MatchRun,
    PlayError,
    PlayOptions,
    check_entrants,
    resolve_entrants,
)

from .pairs import NEW, OLD, SEATINGS, batch_pairs, batch_seed, new_score
from .stats import SprtSettings, SprtState

__all__ = [
    "LocalTest",
    "LocalTestReport",
    "MatchFailed",
    "ProgressLine",
    "run_local_test",
    "same_version",
]

_SKIP = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".venv"}


@dataclass(frozen=True)
class LocalTest:
    new: str
    old: str
    settings: SprtSettings
    seed: int
    batch: int = 8
    """Pairs per batch (games per match)."""
    concurrency: int = 1
    """Batches played at once."""
    replays: Path | None = None
    """Keep every game's replay (and the bot logs) here; None: a temporary folder for the logs,
    removed at the end unless a bot crashed."""
    per_decision_ms: int | None = None
    bank_ms: int | None = None
    faults_to_forfeit: int | None = None
    start_timeout_ms: int = 30000


@dataclass
class LocalTestReport:
    new: Entrant
    old: Entrant
    state: SprtState
    seed: int
    seconds: float = 0.0
    history: list[float] = field(default_factory=list)
    """The LLR after each pair."""
    problems: list[str] = field(default_factory=list)
    """Bot processes that exited early, and matches that did not finish."""
    logs: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "new": {"bot": self.new.name, "spec": self.new.spec},
            "old": {"bot": self.old.name, "spec": self.old.spec},
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
            **self.state.to_json(),
            "llr_history": [round(v, 6) for v in self.history],
            "problems": self.problems,
            "logs": str(self.logs) if self.logs else None,
        }


def _digest(spec: str) -> str:
    """What a bot version is: a built-in's name, or a hash of its file or folder's contents."""
    path = Path(spec)
    if not path.exists():
        return f"builtin:{spec}"
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
        return h.hexdigest()
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP)
        for name in sorted(names):
            full = Path(root, name)
            if name.endswith((".pyc", ".pyo")) or not full.is_file():
                continue
            h.update(full.relative_to(path).as_posix().encode() + b"\0")
            h.update(full.read_bytes() + b"\0")
    return h.hexdigest()


def same_version(new: Entrant, old: Entrant) -> bool:
    return new.spec == old.spec or _digest(new.spec) == _digest(old.spec)


class _Pairs:
    """Game scores as they come, per batch; a pair is complete when both seatings played it."""

    def __init__(self, state: SprtState, on_pair: Callable[[], None]) -> None:
        self.state = state
        self.on_pair = on_pair
        self.scores: dict[tuple[int, int], dict[int, float]] = {}
        self.history: list[float] = []
        self.done = asyncio.Event()

    def game(self, batch: int, seating: int, run: MatchRun, result: Any) -> None:
        if self.state.verdict is not None:
            return  # the test has ended: later games are not counted
        score = new_score(run.seats, list(result.result.ranks))
        key = (batch, result.game_index)
        pair = self.scores.setdefault(key, {})
        pair[seating] = score
        if len(pair) < len(SEATINGS):
            return
        del self.scores[key]
        self.state.add(pair[0], pair[1])
        self.history.append(self.state.llr)
        self.on_pair()
        if self.state.verdict is not None:
            self.done.set()


async def run_local_test(
    test: LocalTest,
    *,
    on_pair: Callable[[SprtState], None] | None = None,
    on_start: Callable[[Entrant, Entrant], None] | None = None,
) -> LocalTestReport:
    """Play the test to its verdict. Raises :class:`PlayError` on bad input (before any game);
    ``on_start(new, old)`` is called once the bots are checked, ``on_pair(state)`` after every
    pair."""
    entrants = resolve_entrants([test.new, test.old])
    await check_entrants(entrants, test.start_timeout_ms)
    if entrants[NEW].spec == entrants[OLD].spec:
        raise PlayError(
            f"NEW and OLD are the same version ({test.new}): a test compares two versions"
        )
    if same_version(entrants[NEW], entrants[OLD]):
        raise PlayError(
            f"NEW and OLD are the same version: {test.new} and {test.old} have the same contents"
        )
    if on_start is not None:
        on_start(entrants[NEW], entrants[OLD])
    logs = test.replays
    if logs is None:
        logs = Path(tempfile.mkdtemp(prefix="arena-sprt-"))
    options = PlayOptions(
        specs=(test.new, test.old),
        games=test.batch,
        seed=test.seed,
        replays=logs,
        per_decision_ms=test.per_decision_ms,
        bank_ms=test.bank_ms,
        faults_to_forfeit=test.faults_to_forfeit,
        start_timeout_ms=test.start_timeout_ms,
        progress=False,
        fetch_replays=test.replays is not None,
    )
    state = SprtState(test.settings)
    report = LocalTestReport(entrants[NEW], entrants[OLD], state, test.seed, logs=logs)
    pairs = _Pairs(state, (lambda: on_pair(state)) if on_pair else (lambda: None))
    started = time.monotonic()
    try:
        async with LocalSession(
            options, max_games=test.batch, keep_finished=4 * test.concurrency + 2
        ) as session:
            await _play_batches(session, test, entrants, pairs, report)
    finally:
        report.seconds = time.monotonic() - started
        report.history = pairs.history
        if test.replays is None and not report.problems:
            shutil.rmtree(logs, ignore_errors=True)
            report.logs = None
    return report


async def _play_batches(
    session: LocalSession,
    test: LocalTest,
    entrants: list[Entrant],
    pairs: _Pairs,
    report: LocalTestReport,
) -> None:
    running: set[asyncio.Task[None]] = set()
    next_batch = 0
    stopper: asyncio.Task[Any] = asyncio.ensure_future(pairs.done.wait())
    try:
        while True:
            while len(running) < test.concurrency and pairs.state.verdict is None:
                size = batch_pairs(next_batch, test.batch, test.settings.max_pairs)
                if size == 0:
                    break
                task = asyncio.ensure_future(
                    _play_batch(session, test, entrants, pairs, report, next_batch, size)
                )
                running.add(task)
                next_batch += 1
            if not running or pairs.state.verdict is not None:
                break
            done, _ = await asyncio.wait(running | {stopper}, return_when=asyncio.FIRST_COMPLETED)
            for task in done - {stopper}:
                running.discard(task)
                task.result()  # a batch's failure ends the test
    finally:
        stopper.cancel()
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


class MatchFailed(RuntimeError):
    """A match of the test did not finish (the referee's reason is in the message)."""


async def _play_batch(
    session: LocalSession,
    test: LocalTest,
    entrants: list[Entrant],
    pairs: _Pairs,
    report: LocalTestReport,
    batch: int,
    size: int,
) -> None:
    seed = batch_seed(test.seed, batch)
    runs = [MatchRun(seating, seats=seats) for seating, seats in enumerate(SEATINGS)]

    def on_game(seating: int) -> Callable[[MatchRun, Any], None]:
        return lambda run, result: pairs.game(batch, seating, run, result)

    await asyncio.gather(
        *(
            session.play_match(entrants, run, seed=seed, games=size, on_game=on_game(i))
            for i, run in enumerate(runs)
        )
    )
    for run in runs:
        report.problems.extend(note for _, note in run.crashes)
        if run.status != "MATCH_STATUS_FINISHED" and pairs.state.verdict is None:
            status = run.status.removeprefix("MATCH_STATUS_").lower() or "unfinished"
            problem = f"match {run.match_id} (batch {batch}) ended {status}: {run.reason or '-'}"
            report.problems.append(problem)
            raise MatchFailed(problem)


class ProgressLine:
    """The live progress line on stderr: redrawn on a terminal, else a line every 5 s. Its
    ``label`` (the bots' names) is set when the test starts."""

    def __init__(self, *, enabled: bool) -> None:
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.label = ""
        self.last = 0.0

    def __call__(self, state: SprtState) -> None:
        if not self.enabled:
            return
        line = f"{self.label}: {state.line()}"
        if self.tty:
            sys.stderr.write(f"\r{line}\x1b[K")
            sys.stderr.flush()
        elif time.monotonic() - self.last >= 5.0 or state.verdict is not None:
            self.last = time.monotonic()
            print(line, file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
