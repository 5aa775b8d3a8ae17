"""Playing one league match on a private referee, with every bot in its sandbox.

:func:`play_match` is what a match job does between reading its plan from the store and recording
the outcome: it starts a referee (``arboretum_server``) in this process, listening only on the
unix socket ``<match dir>/referee.sock`` for the bots' streams, creates the match through the
in-process match API (:mod:`arboretum_server.runner`: direct calls, no protobuf), starts each
seat's bot in its sandbox with the seat token (the match directory is mounted into the sandboxes,
so the bots reach the socket), waits for the match to end, takes the results (the engine's
``GameResult`` and the faults per game) and every game's replay from the referee's memory (it
writes no replay files), and in any case kills the sandboxes and stops the referee. A match may
be a series of games (one seed each, ``MatchPlan.game_seeds``); a seat whose process exits during
a series gets a fresh one (see :func:`_wait_for_end`).

It must run in the process that plays the match: rq forks a work horse per job, and neither a
gRPC server nor an asyncio loop survives a fork, so they are all created here, inside the job.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk.info import FaultPolicy, GameEnd, TimeControl

from .sandbox.capture import MARKER_ROOM, truncation_marker

if TYPE_CHECKING:
    from arboretum_server import MatchConfig
    from arboretum_server.runner import MatchHandle

    from .live import LivePublisher

__all__ = [
    "MatchError",
    "MatchPlan",
    "PlayedMatch",
    "SeatPlan",
    "WorkerStopping",
    "capped_output",
    "play_match",
    "poll_interval_s",
    "run_play_match",
    "stop_match",
]

log = logging.getLogger(__name__)

SOCKET_NAME = "referee.sock"
POLL_INTERVAL_S = 0.05
"""How often the worker looks at the bots' processes while a match with the default clock runs
(the match's end itself wakes it at once: the referee is in this process)."""
POLL_CLOCK_SHARE = 20
"""A slower clock is looked at less often: every ``per_decision_ms / POLL_CLOCK_SHARE``, at
least ``POLL_INTERVAL_S`` and at most ``POLL_MAX_S`` (a crash is seen within a twentieth of a
decision's free time)."""
POLL_MAX_S = 5.0
"""A casual game's clock (minutes a decision): its bots' crash or the worker's stop is seen within
5 s; each look wakes the work horse of a table that mostly waits for its person."""
# How long the referee waits for every seat to connect before starting anyway (absent seats fault).
START_TIMEOUT_MS = 60_000
RAW_OUTPUT_CAP = 16 * 1024 * 1024
"""A seat's raw output is held to the sandbox's own cap (``output_bytes``); this is only a
backstop for a runner that keeps more."""


class MatchError(RuntimeError):
    """The match could not be played (the reason is the message); the job fails and may retry."""


class WorkerStopping(Exception):
    """The worker playing the match is stopping: the match is given up, to be played again."""


_stopping = threading.Event()
_playing = False


def stop_match() -> bool:
    """Ask the match this process plays to stop (safe in a signal handler): its wait for the
    end raises :class:`WorkerStopping` within its look interval (:func:`poll_interval_s`, at
    most ``POLL_MAX_S``), and the sandboxes and the
    referee are stopped on the way out. False when no match is being played (then the caller
    raises it itself)."""
    _stopping.set()
    return _playing


@dataclass(frozen=True)
class SeatPlan:
    """One seat: the bot's display name, and where its code is (or the built-in bot's name);
    ``clock``: the seat's own time control in place of the match's (a casual game's bots)."""

    name: str
    bot_path: Path | None = None
    builtin: str | None = None
    clock: TimeControl | None = None


@dataclass(frozen=True)
class MatchPlan:
    match_id: str
    seed: int
    players: int
    games: int
    per_decision_ms: int
    bank_ms: int
    faults_to_forfeit: int
    seats: tuple[SeatPlan, ...]
    game_seeds: tuple[int, ...] = ()
    """Empty, or each game's seed (then ``seed`` derives none of them)."""


@dataclass
class PlayedMatch:
    """A match as the job played it: the referee's outcome, replays, bot output and timings."""

    referee_match_id: str
    status: str
    """The referee's ``MatchStatus`` value: ``finished``, ``cancelled`` or ``failed``."""
    reason: str
    games: list[GameEnd] = field(default_factory=list)
    """Each finished game, in order: the engine's ``result`` (ranks, totals), ``faults`` per
    seat, ``seed``, ``game_index``."""
    replays: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    raw_outputs: list[str] = field(default_factory=list)
    """Each seat's output as the sandbox kept it (its own cap), with the SDK's decision markers:
    split per decision by :mod:`.botoutput`."""
    output_nonces: list[str] = field(default_factory=list)
    """Each seat's nonce of the SDK's decision markers (``ARENA_OUTPUT_NONCE``), or none."""
    seconds: float = 0.0
    """The whole job's part: the referee's start to its stop."""
    games_seconds: float = 0.0
    """The games alone: the match created on the referee to its end."""


StartBot = Callable[[int, SeatPlan, Path, str, Path], Any]
"""``start_bot(seat, plan, socket_path, token, log_path)`` -> a handle with ``kill()`` and
``output()``; the job passes one built on the sandbox runner."""
OnCreated = Callable[["MatchHandle"], None]
"""``on_created(handle)``: told the match's handle once the referee created it."""


def run_play_match(
    plan: MatchPlan,
    match_dir: Path,
    start_bot: StartBot,
    *,
    deadline_s: float,
    output_cap: int,
    live: LivePublisher | None = None,
    on_created: OnCreated | None = None,
) -> PlayedMatch:
    """Synchronous entry point: a fresh event loop for this match (uvloop when installed, as
    ``arena serve`` runs the referee; see :mod:`arboretum_sdk.eventloop`), closed at the end."""
    from arboretum_sdk import eventloop

    global _playing
    if _stopping.is_set():
        raise WorkerStopping("the worker was stopped before the match started")
    _playing = True
    try:
        return eventloop.run(
            play_match(
                plan,
                match_dir,
                start_bot,
                deadline_s=deadline_s,
                output_cap=output_cap,
                live=live,
                on_created=on_created,
            )
        )
    finally:
        _playing = False


async def play_match(
    plan: MatchPlan,
    match_dir: Path,
    start_bot: StartBot,
    *,
    deadline_s: float,
    output_cap: int,
    live: LivePublisher | None = None,
    on_created: OnCreated | None = None,
) -> PlayedMatch:
    """Play ``plan`` on a private referee (see the module's docstring). ``live``, when given,
    publishes the match's public events as the referee produces them (:mod:`.live`);
    ``on_created`` is called with the match's handle, on the referee's event loop, before the
    seats start (a casual game's relay resigns its seat through it)."""
    from arboretum_server.runner import MatchRunner

    started = time.monotonic()
    socket_path = match_dir / SOCKET_NAME
    runner = await MatchRunner.start_private(socket_path)
    seats = _Seats(plan, match_dir, socket_path, start_bot)
    try:
        handle = await runner.create(match_config(plan), plan.match_id)
        created_at = time.monotonic()
        if live is not None:
            live.start(handle)
        if on_created is not None:
            on_created(handle)
        log.info("match %s: created on the private referee", handle.match_id)
        await seats.start(handle.tokens)
        await _wait_for_end(handle, seats, started, deadline_s)
        outcome = handle.outcome()
        played = PlayedMatch(
            referee_match_id=handle.match_id,
            status=outcome.status.value,
            reason=outcome.reason,
            games=list(outcome.games),
            replays=await handle.replays(),
            games_seconds=time.monotonic() - created_at,
        )
    finally:
        await seats.kill()
        if live is not None:  # its stream ends with the match; a stopped match has no end
            await live.stop(0.5 if _stopping.is_set() else 5.0)
        await runner.stop(1.0)
    played.outputs = seats.outputs(output_cap)
    played.raw_outputs = seats.outputs(RAW_OUTPUT_CAP)
    played.seconds = time.monotonic() - started
    return played


def match_config(plan: MatchPlan) -> MatchConfig:
    """The referee's ``MatchConfig`` for ``plan``."""
    from arboretum_server import MatchConfig

    clock = TimeControl(per_decision_ms=plan.per_decision_ms, bank_ms=plan.bank_ms)
    own = any(seat.clock is not None for seat in plan.seats)
    return MatchConfig(
        players=plan.players,
        match_seed=plan.seed,
        game_count=plan.games,
        time_control=clock,
        seat_time_controls=tuple(seat.clock or clock for seat in plan.seats) if own else (),
        fault_policy=FaultPolicy(faults_to_forfeit=plan.faults_to_forfeit),
        seat_names=tuple(seat.name for seat in plan.seats),
        start_timeout_ms=START_TIMEOUT_MS,
        game_seeds=plan.game_seeds,
    )


_RESTART_NOTE = (
    "[arena: the bot process exited; a fresh process took the seat for the rest of the series]"
)


class _Seats:
    """The bot processes of a match's seats, one sandbox each, and those that exited early."""

    def __init__(
        self, plan: MatchPlan, match_dir: Path, socket_path: Path, start_bot: StartBot
    ) -> None:
        self.plan = plan
        self.match_dir = match_dir
        self.socket_path = socket_path
        self.start_bot = start_bot
        self.tokens: tuple[str, ...] = ()
        self.bots: list[Any] = []
        self.retired: list[list[str]] = [[] for _ in plan.seats]
        """Per seat, the output of each process that exited before the match ended."""

    async def start(self, tokens: tuple[str, ...]) -> None:
        """Every seat's sandbox at once (each start is a blocking spawn, in a thread)."""
        self.tokens = tokens
        started = await asyncio.gather(
            *(
                asyncio.to_thread(self._start, seat, match_dir_log(self.match_dir, seat, 0))
                for seat in range(len(self.plan.seats))
            ),
            return_exceptions=True,
        )
        failures = [b for b in started if isinstance(b, BaseException)]
        self.bots.extend(b for b in started if not isinstance(b, BaseException))
        if failures:
            raise MatchError(f"a bot's sandbox did not start: {failures[0]}") from failures[0]

    def _start(self, seat: int, log_path: Path) -> Any:
        plan = self.plan.seats[seat]
        return self.start_bot(seat, plan, self.socket_path, self.tokens[seat], log_path)

    async def restart(self, seat: int, count: int) -> None:
        """A fresh process for a seat whose process exited (its output is kept)."""
        old = self.bots[seat]
        await asyncio.to_thread(old.kill)
        self.retired[seat].append(_output_of(old))
        log_path = match_dir_log(self.match_dir, seat, count)
        self.bots[seat] = await asyncio.to_thread(self._start, seat, log_path)

    async def kill(self) -> None:
        """All sandboxes at once (each kill waits until none of its processes is left)."""
        killed = await asyncio.gather(
            *(asyncio.to_thread(bot.kill) for bot in self.bots), return_exceptions=True
        )
        for failure in killed:
            if isinstance(failure, BaseException):  # the others were cleaned up all the same
                log.error("match %s: killing a sandbox failed: %r", self.plan.match_id, failure)

    def outputs(self, cap: int) -> list[str]:
        """Each seat's output (its exited processes' first), capped."""
        return [
            capped_output(
                "".join(f"{text}\n{_RESTART_NOTE}\n" for text in self.retired[seat])
                + _output_of(bot),
                cap,
            )
            for seat, bot in enumerate(self.bots)
        ]


def match_dir_log(match_dir: Path, seat: int, restart: int) -> Path:
    """The log of a seat's first process, or of its ``restart``-th fresh one."""
    return match_dir / (f"seat{seat}.log" if restart == 0 else f"seat{seat}-restart{restart}.log")


async def _wait_for_end(
    handle: MatchHandle, seats: _Seats, started: float, deadline_s: float
) -> None:
    """Wait until the match is over (woken by its end, else every :func:`poll_interval_s` to
    look at the bots' processes).

    A bot process that exits is reported to the referee as a crash (the seat's decisions then
    fault at once for the rest of the game in progress, so it forfeits that game unless the fresh
    process connects in time) and, in a series, replaced by a fresh process, at most ``games``
    times per seat; from the next game on the seat waits on its clock for it. The fresh process
    has seen no deal before, so isolation holds."""
    games = seats.plan.games
    interval = poll_interval_s(seats.plan.per_decision_ms)
    restarts = [0] * len(seats.bots)
    crashed: set[int] = set()
    while True:
        for seat, bot in enumerate(seats.bots):
            code = getattr(bot, "returncode", None)
            if code is None or seat in crashed:
                continue
            log.info("match %s: the bot of seat %d exited (status %s)", handle.match_id, seat, code)
            handle.report_crash(seat, f"the bot process exited with status {code}")
            if restarts[seat] < games and games > 1:
                restarts[seat] += 1
                # first: the seat then waits for the fresh process from the next game on
                handle.report_restart(seat)
                await seats.restart(seat, restarts[seat])
            else:
                crashed.add(seat)
        if time.monotonic() - started > deadline_s:
            raise MatchError(f"the match did not end within {deadline_s:.0f} s")
        if _stopping.is_set():
            raise WorkerStopping("the worker was stopped before the match finished")
        if await handle.wait(interval):
            return


def poll_interval_s(per_decision_ms: int) -> float:
    """How often a match with this clock looks at its bots' processes: ``POLL_INTERVAL_S`` for
    the league's default clock (1 s a decision), up to ``POLL_MAX_S`` for a casual game's
    minutes. A person's table holds a worker for minutes; looking every 50 ms cost each such
    work horse about 4 ms of CPU a second (bench/casual_load.py, docs/benchmarks.md)."""
    return min(POLL_MAX_S, max(POLL_INTERVAL_S, per_decision_ms / 1000 / POLL_CLOCK_SHARE))


def _output_of(bot: Any) -> str:
    try:
        text = bot.output()
    except Exception as exc:
        return f"(the bot's output could not be read: {exc})"
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return str(text or "")


def capped_output(text: str, cap: int) -> str:
    """At most ``cap`` bytes of ``text`` and the truncation marker. A runner's capture keeps
    ``cap`` bytes and adds the same marker itself; that output is left as it is."""
    data = text.encode("utf-8")
    if len(data) <= cap + MARKER_ROOM:
        return text
    kept = data[:cap]
    return kept.decode("utf-8", "ignore") + truncation_marker(cap, len(data) - cap).decode()
