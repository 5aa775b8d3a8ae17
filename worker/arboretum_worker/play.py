"""Playing one league match on a private referee, over gRPC, with every bot in its sandbox.

:func:`play_match` is what a match job does between reading its plan from the store and recording
the outcome: it starts a grpc.aio referee (``arboretum_server``) listening on the unix socket
``<match dir>/referee.sock``, creates the match over gRPC with the admin token, starts each seat's
bot in its sandbox with the seat token (the match directory is mounted into the sandboxes, so the
bots reach the socket), waits for the match to end, fetches the results (``GetMatch``) and every
game's replay (``GetReplay``, from the referee's memory: it writes no replay files), and in any
case kills the sandboxes and stops the referee. A match may be a series of games (one seed each,
``MatchPlan.game_seeds``); a seat whose process exits during a series gets a fresh one (see
:func:`_wait_for_end`).

It must run in the process that plays the match: rq forks a work horse per job, and neither a
gRPC channel nor an asyncio loop survives a fork, so they are all created here, inside the job.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .sandbox.capture import MARKER_ROOM, truncation_marker

if TYPE_CHECKING:
    from .live import LivePublisher

__all__ = [
    "MatchError",
    "MatchOutcome",
    "MatchPlan",
    "PlayedGame",
    "SeatPlan",
    "WorkerStopping",
    "play_match",
    "run_play_match",
    "stop_match",
]

log = logging.getLogger(__name__)

ADMIN_METADATA = "x-arena-admin-token"
PROTOCOL_VERSION = 1
SOCKET_NAME = "referee.sock"
# How often the worker checks the bots' processes while the match runs; the match's end itself
# wakes it at once (the referee is in this process).
POLL_INTERVAL_S = 0.05
# How long the referee waits for every seat to connect before starting anyway (absent seats fault).
START_TIMEOUT_MS = 60_000


class MatchError(RuntimeError):
    """The match could not be played (the reason is the message); the job fails and may retry."""


class WorkerStopping(Exception):
    """The worker playing the match is stopping: the match is given up, to be played again."""


_stopping = threading.Event()
_playing = False


def stop_match() -> bool:
    """Ask the match this process plays to stop (safe in a signal handler): its wait for the
    end raises :class:`WorkerStopping` within ``POLL_INTERVAL_S``, and the sandboxes and the
    referee are stopped on the way out. False when no match is being played (then the caller
    raises it itself)."""
    _stopping.set()
    return _playing


@dataclass(frozen=True)
class SeatPlan:
    """One seat: the bot's display name, and where its code is (or the built-in bot's name)."""

    name: str
    bot_path: Path | None = None
    builtin: str | None = None


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


@dataclass(frozen=True)
class PlayedGame:
    """One finished game, per seat: rank (1 = best), total points, forfeited, faults."""

    game_index: int
    seed: int
    ranks: tuple[int, ...]
    totals: tuple[int, ...]
    forfeited: tuple[bool, ...]
    faults: tuple[int, ...]
    turns: int


@dataclass
class MatchOutcome:
    referee_match_id: str
    status: str
    reason: str
    games: list[PlayedGame] = field(default_factory=list)
    replays: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    """The whole job's part: the referee's start to its stop."""
    games_seconds: float = 0.0
    """The games alone: the match created on the referee to its end."""


StartBot = Callable[[int, SeatPlan, Path, str, Path], Any]
"""``start_bot(seat, plan, socket_path, token, log_path)`` -> a handle with ``kill()`` and
``output()``; the job passes one built on the sandbox runner."""


def run_play_match(
    plan: MatchPlan,
    match_dir: Path,
    start_bot: StartBot,
    *,
    deadline_s: float,
    output_cap: int,
    live: LivePublisher | None = None,
) -> MatchOutcome:
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
                plan, match_dir, start_bot, deadline_s=deadline_s, output_cap=output_cap, live=live
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
) -> MatchOutcome:
    """Play ``plan`` on a private referee (see the module's docstring). ``live``, when given,
    publishes the match's public events as the referee produces them (:mod:`.live`)."""
    import grpc

    from arboretum_proto.v1 import common_pb2, match_pb2, match_pb2_grpc

    from .referee import start_private_referee

    started = time.monotonic()
    socket_path = match_dir / SOCKET_NAME
    admin_token = secrets.token_urlsafe(24)
    referee = await start_private_referee(socket_path, admin_token)
    bots: list[Any] = []
    retired: list[list[str]] = [[] for _ in plan.seats]
    """Per seat, the output of each process that exited before the match ended."""
    metadata = ((ADMIN_METADATA, admin_token),)
    try:
        async with grpc.aio.insecure_channel(f"unix:{socket_path}") as channel:
            stub = match_pb2_grpc.MatchServiceStub(channel)
            config = match_pb2.MatchConfig(
                player_count=plan.players,
                match_seed=plan.seed,
                game_count=plan.games,
                time_control=common_pb2.TimeControl(
                    per_decision_ms=plan.per_decision_ms, bank_ms=plan.bank_ms
                ),
                fault_policy=common_pb2.FaultPolicy(faults_to_forfeit=plan.faults_to_forfeit),
                seat_names=[seat.name for seat in plan.seats],
                start_timeout_ms=START_TIMEOUT_MS,
                game_seeds=plan.game_seeds,
            )
            created = await stub.CreateMatch(
                match_pb2.CreateMatchRequest(
                    protocol_version=PROTOCOL_VERSION, config=config, match_id=plan.match_id
                ),
                metadata=metadata,
                timeout=30,
            )
            created_at = time.monotonic()
            tokens = {t.seat: t.token for t in created.seat_tokens}
            ref_id = created.match_id
            if live is not None:
                live.start(referee, ref_id)
            log.info("match %s: created on the private referee", ref_id)
            # All seats' sandboxes start at once (each start is a blocking spawn, in a thread).
            started_bots = await asyncio.gather(
                *(
                    asyncio.to_thread(
                        start_bot, seat, seat_plan, socket_path, tokens[seat],
                        match_dir / f"seat{seat}.log",
                    )
                    for seat, seat_plan in enumerate(plan.seats)
                ),
                return_exceptions=True,
            )  # fmt: skip
            failures = [b for b in started_bots if isinstance(b, BaseException)]
            bots.extend(b for b in started_bots if not isinstance(b, BaseException))
            if failures:
                raise MatchError(f"a bot's sandbox did not start: {failures[0]}") from failures[0]

            async def restart(seat: int, count: int) -> None:
                """A fresh process for a seat whose process exited (its output is kept)."""
                old = bots[seat]
                await asyncio.to_thread(old.kill)
                retired[seat].append(_output_of(old))
                bots[seat] = await asyncio.to_thread(
                    start_bot, seat, plan.seats[seat], socket_path, tokens[seat],
                    match_dir / f"seat{seat}-restart{count}.log",
                )  # fmt: skip

            info = await _wait_for_end(
                stub, match_pb2, ref_id, started, deadline_s, referee, bots, plan.games, restart
            )
            games_seconds = time.monotonic() - created_at
            status = common_pb2.MatchStatus.Name(info.status).removeprefix("MATCH_STATUS_").lower()
            outcome = MatchOutcome(
                referee_match_id=ref_id,
                status=status,
                reason=info.reason,
                games_seconds=games_seconds,
            )
            for result in sorted(info.results, key=lambda r: r.game_index):
                seats = sorted(result.seats, key=lambda s: s.seat)
                outcome.games.append(
                    PlayedGame(
                        game_index=result.game_index,
                        seed=result.seed,
                        ranks=tuple(s.rank for s in seats),
                        totals=tuple(s.total for s in seats),
                        forfeited=tuple(s.forfeited for s in seats),
                        faults=tuple(s.faults for s in seats),
                        turns=result.turns,
                    )
                )
            for game in outcome.games:
                reply = await stub.GetReplay(
                    match_pb2.GetReplayRequest(
                        protocol_version=PROTOCOL_VERSION,
                        match_id=ref_id,
                        game_index=game.game_index,
                    ),
                    metadata=metadata,
                    timeout=30,
                )
                outcome.replays.append(reply.replay_json)
    finally:
        # all sandboxes at once (each kill waits until none of its processes is left)
        killed = await asyncio.gather(
            *(asyncio.to_thread(bot.kill) for bot in bots), return_exceptions=True
        )
        for failure in killed:
            if isinstance(failure, BaseException):  # the others were cleaned up all the same
                log.error("match %s: killing a sandbox failed: %r", plan.match_id, failure)
        if live is not None:  # its stream ends with the match; a stopped match has no end
            await live.stop(0.5 if _stopping.is_set() else 5.0)
        await referee.stop(1.0)
    outcome.outputs = [
        _capped(
            "".join(f"{text}\n{_RESTART_NOTE}\n" for text in retired[seat]) + _output_of(bot),
            output_cap,
        )
        for seat, bot in enumerate(bots)
    ]
    outcome.seconds = time.monotonic() - started
    return outcome


Restart = Callable[[int, int], Any]
"""``await restart(seat, count)``: replace the seat's exited process by a fresh one."""

_RESTART_NOTE = (
    "[arena: the bot process exited; a fresh process took the seat for the rest of the series]"
)


async def _wait_for_end(
    stub: Any,
    match_pb2: Any,
    ref_id: str,
    started: float,
    deadline_s: float,
    referee: Any,
    bots: list[Any],
    games: int,
    restart: Restart,
) -> Any:
    """Wait until the match is over (woken by its end on the in-process referee, else every
    ``POLL_INTERVAL_S`` to look at the bots' processes), then ``GetMatch`` once: its info.

    A bot process that exits is reported to the referee as a crash (the seat's decisions then
    fault at once for the rest of the game in progress, so it forfeits that game unless the fresh
    process connects in time) and, in a series, replaced by a fresh process, at most ``games``
    times per seat; from the next game on the seat waits on its clock for it. The fresh process
    has seen no deal before, so isolation holds."""
    from arboretum_proto.v1 import common_pb2

    over = {
        common_pb2.MATCH_STATUS_FINISHED,
        common_pb2.MATCH_STATUS_CANCELLED,
        common_pb2.MATCH_STATUS_FAILED,
    }
    request = match_pb2.GetMatchRequest(protocol_version=PROTOCOL_VERSION, match_id=ref_id)
    restarts = [0] * len(bots)
    crashed: set[int] = set()
    ended = False
    while True:
        if ended:
            reply = await stub.GetMatch(request, timeout=30)
            if reply.match.status in over:
                return reply.match
        for seat, bot in enumerate(bots):
            code = getattr(bot, "returncode", None)
            if code is None or seat in crashed:
                continue
            log.info("match %s: the bot of seat %d exited (status %s)", ref_id, seat, code)
            try:
                referee.report_crash(ref_id, seat, f"the bot process exited with status {code}")
            except Exception as exc:  # the match may have just ended
                log.debug("match %s: report_crash: %s", ref_id, exc)
            if restarts[seat] < games and games > 1:
                restarts[seat] += 1
                try:  # first: the seat then waits for the fresh process from the next game on
                    referee.report_restart(ref_id, seat)
                except Exception as exc:  # the match may have just ended
                    log.debug("match %s: report_restart: %s", ref_id, exc)
                await restart(seat, restarts[seat])
            else:
                crashed.add(seat)
        if time.monotonic() - started > deadline_s:
            raise MatchError(f"the match did not end within {deadline_s:.0f} s")
        if _stopping.is_set():
            raise WorkerStopping("the worker was stopped before the match finished")
        ended = await referee.wait_match(ref_id, POLL_INTERVAL_S)


def _output_of(bot: Any) -> str:
    try:
        text = bot.output()
    except Exception as exc:
        return f"(the bot's output could not be read: {exc})"
    if isinstance(text, bytes):
        return text.decode("utf-8", "replace")
    return str(text or "")


def _capped(text: str, cap: int) -> str:
    """At most ``cap`` bytes of ``text`` and the truncation marker. A runner's capture keeps
    ``cap`` bytes and adds the same marker itself; that output is left as it is."""
    data = text.encode("utf-8")
    if len(data) <= cap + MARKER_ROOM:
        return text
    kept = data[:cap]
    return kept.decode("utf-8", "ignore") + truncation_marker(cap, len(data) - cap).decode()
