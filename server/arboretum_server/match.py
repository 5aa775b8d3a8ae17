"""The match loop: a series of games between seats, transport-agnostic.

A :class:`Match` owns the engine state of its game in progress. It talks to seats only through
:class:`~arboretum_server.seats.SeatStream` outboxes (messages out) and :meth:`Match.receive`
(answers in), and to spectators through :class:`Watcher` queues, so it knows nothing of gRPC.
Every message it sends is built from engine state; nothing a bot sends is forwarded.

For each decision the loop numbers it, starts the seat's clock, sends the request (if the seat has
a stream) and waits for the first of: an answer for that number, the clock running out, a crash
report. Then:

- an answer in time that the engine accepts is applied (the bank is charged beyond L);
- an answer that is not a well-formed decision of the asked kind is a ``malformed`` fault, one the
  engine refuses an ``illegal`` fault (``IllegalDecisionError`` names the rule);
- a ``DecisionFailure`` (the bot's code failed on the decision) is a ``bot_error`` fault, at once,
  its reason naming the error the bot reported;
- the clock running out is a ``timeout`` fault if the seat had a stream then, else a ``disconnect``;
- a crash report (only a runner that launched the bot process can make one, see
  :meth:`Match.report_crash`) is a ``crash`` fault, at once, for every decision while the process
  is gone.

On a fault the engine's fallback decision is applied and recorded with ``fault={kind, reason}``,
the seat is told (``FaultNotice``), and at its N-th fault in a game the seat forfeits: the fallback
plays its remaining decisions (recorded with fault kind ``forfeited``) and it ranks last. A
disconnect is not a fault in itself; answers for a decision that is not pending are dropped and
noted as ``stale``.

A match is a few collaborating objects: it holds its seats
(:class:`~arboretum_server.seats.Seating`: arrival, crashes, restarts), the settling of its
decisions (:class:`~arboretum_server.rulings.Rulings`: an outcome to the game's next state, faults
included), its decision timer (:class:`~arboretum_server.game.DecisionTimer`), its spectators
(:class:`~arboretum_server.watchers.Spectators`) and the record of its finished games
(:class:`~arboretum_server.record.MatchRecord`). The match itself runs the games and asks the
decisions.

An answer to the pending decision is settled in :meth:`Match.receive`, in the step of the stream
that read it, which also asks the next decision (:meth:`Match._answered`): the match loop's task
wakes only for the other outcomes, a forfeited seat's turn and the game's end. That saves an
event-loop hop per decision and changes nothing else. Decision requests are queued already
serialized, assembled from encoded pieces that the game keeps until they change
(:meth:`Game.request_wire`, :mod:`arboretum_server.wirebytes`); every other message is a plain
value that the service serializes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from .errors import AlreadyConnected, MatchOver
from .game import (
    CONCLUDED,
    Answered,
    Concluded,
    Crashed,
    DecisionTimer,
    Game,
    Outcome,
    Pending,
)
from .matchconfig import MatchConfig
from .messages import (
    GameEnd,
    GameOver,
    MatchEnd,
    MatchSnapshot,
    MatchStatus,
    MatchSummary,
    SeatConnection,
    WatchGameEnd,
    WatchGameStart,
    is_over,
)
from .record import MatchRecord, ReplayStore
from .rulings import Rulings
from .seats import (
    Answer,
    Inbound,
    InvalidMessage,
    Seating,
    SeatStream,
    StreamEnd,
)
from .watchers import Spectators, Watcher

__all__ = ["Match"]

log = logging.getLogger(__name__)


class Match:
    """One match: its seats, its games and its spectators. Start it with :meth:`start`."""

    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        tokens: list[str],
        *,
        store: ReplayStore | None = None,
        max_duration_s: float = 4 * 3600.0,
        on_end: Callable[[Match], None] | None = None,
    ) -> None:
        self.match_id = match_id
        self.config = config
        self.seating = Seating(config.seat_names, tokens)
        self.seats = self.seating.sessions
        self.status = MatchStatus.WAITING
        self.reason = ""
        self.created_unix_ms = int(time.time() * 1000)
        self.record = MatchRecord(match_id, config.seat_names, store or ReplayStore(None))
        self.outcomes: list[GameEnd] = self.record.outcomes  # the record's: they grow
        self.replays: dict[int, dict[str, Any]] = self.record.replays
        self.partial_replays: dict[int, dict[str, Any]] = self.record.partial_replays
        self.max_duration_s = max_duration_s
        self._on_end = on_end
        self._game: Game | None = None
        self.spectators = Spectators()
        self._watchers = self.spectators.watchers  # tested before building a message
        self.rulings = Rulings(match_id, config, self.seats, self.spectators)
        self.timer = DecisionTimer(self._pending)
        self._numbers = 0
        self._stop_after_game: str | None = None
        self._cancel_reason: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop
        """Set by :meth:`start` (each ``asyncio.get_running_loop()`` makes a system call in
        Python 3.11, and the hot path reads the loop's clock a few times per decision)."""
        self.done = asyncio.Event()

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.timer.start(self._loop)
        self._task = asyncio.create_task(self._run(), name=f"match {self.match_id}")

    def cancel(self, reason: str) -> None:
        """Stop the match now (the game in progress has no result)."""
        if is_over(self.status) or self._cancel_reason is not None:
            return
        self._cancel_reason = reason or "cancelled"
        if self._task is not None:
            self._task.cancel()

    def stop_after_game(self, reason: str) -> None:
        """Let the game in progress finish, then stop (draining). A waiting match stops now."""
        if self.status is MatchStatus.WAITING:
            self.cancel(reason)
        elif self._stop_after_game is None:
            self._stop_after_game = reason

    @property
    def game_in_progress(self) -> int | None:
        return None if self._game is None else self._game.index

    async def _run(self) -> None:
        try:
            async with asyncio.timeout(self.max_duration_s):
                absent = await self.seating.wait(self.config.start_timeout_ms / 1000)
                if absent:
                    log.info("match %s: starting without seats %s", self.match_id, absent)
                self.status = MatchStatus.RUNNING
                log.info("match %s: running (%d games)", self.match_id, self.config.game_count)
                for index in range(self.config.game_count):
                    if self._stop_after_game is not None:
                        raise _Stopped(self._stop_after_game)
                    self.seating.next_game()
                    await self._play_game(index)
            self.status = MatchStatus.FINISHED
            if not self.config.game_seeds:  # else the match seed derived none of the games
                await self.record.reveal_match_seed(self.config.match_seed)
        except _Stopped as stop:
            self.status, self.reason = MatchStatus.CANCELLED, stop.reason
        except asyncio.CancelledError:
            self.status = MatchStatus.CANCELLED
            self.reason = self._cancel_reason or "cancelled"
            await self._stop_game(self.reason)
            if self._cancel_reason is None:
                self._finish()
                raise
        except TimeoutError:
            self.status = MatchStatus.CANCELLED
            self.reason = f"the match exceeded the referee's limit of {self.max_duration_s:g} s"
            await self._stop_game(self.reason)
        except Exception as exc:
            log.exception("match %s: internal error", self.match_id)
            self.status, self.reason = MatchStatus.FAILED, f"internal error: {type(exc).__name__}"
            with contextlib.suppress(Exception):
                await self._stop_game(self.reason)
        self._finish()

    def _finish(self) -> None:
        if self.done.is_set():
            return
        self.timer.stop()
        log.info("match %s: %s %s", self.match_id, self.status.value, self.reason)
        end = self.end_message()
        for session in self.seats:
            if session.stream is not None:
                session.stream.send(end)
                session.stream.end()
        self.spectators.publish(end)
        self.spectators.close()
        self.done.set()
        if self._on_end is not None:
            self._on_end(self)

    async def _stop_game(self, reason: str) -> None:
        game = self._game
        if game is None:
            return
        self._game = None
        if game.pending is not None and not game.pending.future.done():
            game.pending.future.cancel()
        game.recorder.note(game.state.current_seat, "stopped", reason)
        await self.record.stopped(game.index, game.recorder, reason)

    # ------------------------------------------------------------------ seats

    def connect(self, seat: int) -> SeatStream:
        """Attach a new stream to ``seat`` and queue the messages that bring it up to date."""
        if is_over(self.status):
            raise MatchOver(f"match {self.match_id} is over ({self.status.value})")
        if self.seats[seat].stream is not None:
            raise AlreadyConnected(
                f"seat {seat} of match {self.match_id} already has a live stream"
            )
        stream, resumed = self.seating.attach(seat)
        stream.send(self.config.seat_info(self.match_id, seat, resumed))
        game = self._game
        if game is not None:
            game.greet(seat, stream, self._loop.time(), resumed=True)
            self._note(seat, "reconnect" if resumed else "connect", "the seat opened a stream")
        log.info(
            "match %s seat %d: connected%s", self.match_id, seat, " (resumed)" if resumed else ""
        )
        return stream

    def disconnect(self, seat: int, stream: SeatStream, reason: str) -> None:
        """The stream ended (for ``reason``); the seat stays in the match and may reconnect."""
        if self.seating.detach(seat, stream, reason) and not is_over(self.status):
            log.info("match %s seat %d: disconnected: %s", self.match_id, seat, reason)
            self._note(seat, "disconnect", reason)

    def report_crash(self, seat: int, reason: str) -> None:
        """A runner that launched the seat's bot process reports that it exited.

        Until the seat reconnects, each of its decisions faults with ``crash`` at once. A seat that
        never connected counts as arrived: the match does not wait the start timeout for it.
        """
        crashed = self.seating.crash(seat, reason)
        log.info("match %s seat %d: crash reported: %s", self.match_id, seat, crashed)
        pending = self._pending()
        if pending is not None and pending.seat == seat and pending.waiting:
            pending.future.set_result(Crashed(crashed))

    def report_restart(self, seat: int) -> None:
        """The runner is starting a fresh process for the crashed ``seat``. The seat stays
        crashed for the rest of the game in progress (the crash costs that game); from the next
        game on it is only disconnected (its decisions wait for its clock) until it connects."""
        if self.seating.restart(seat):
            log.info("match %s seat %d: a fresh bot process is starting", self.match_id, seat)

    def resign(self, seat: int, reason: str) -> bool:
        """``seat`` gives up the game in progress, as the fault policy's forfeit does: it ranks
        last, the replay records it, and the fallback plays its remaining decisions (a decision
        of the seat's that is pending now first). False when no game is in progress or the seat
        forfeited already (a waiting match cannot be resigned: its game has not started)."""
        game = self._game
        if game is None or is_over(self.status) or game.state.is_over or game.state.forfeited[seat]:
            return False
        pending = self.rulings.resign(game, seat, reason)
        if pending is None:
            return True  # its turns are played by the match loop (Match._decide)

        def settle() -> None:
            self.rulings.play_forfeited(game, seat)
            game.changed(seat)

        self._settle_then_ask(game, pending.future, settle)
        return True

    def receive(self, seat: int, stream: SeatStream, inbound: Inbound) -> None:
        """What a seat's stream sent: an answer (or not), matched against its pending decision."""
        if self.seats[seat].stream is not stream:
            return
        game = self._game
        pending = game.pending if game is not None else None
        is_pending = pending is not None and pending.seat == seat and not pending.future.done()
        if isinstance(inbound, InvalidMessage):
            if is_pending and pending is not None:
                stream.closing = StreamEnd("INVALID_ARGUMENT", inbound.reason)
                pending.future.set_result(Answered(inbound, self._loop.time()))
            else:
                self._note(seat, "invalid", inbound.reason)
                stream.end("INVALID_ARGUMENT", inbound.reason)
            return
        if (
            is_pending
            and game is not None
            and pending is not None
            and inbound.number == pending.number
        ):
            self._answered(game, pending, inbound, self._loop.time())
            return
        expected = f"decision {pending.number}" if is_pending and pending is not None else "none"
        reason = f"answer for decision {inbound.number}, which is not pending (pending: {expected})"
        log.debug("match %s seat %d: stale: %s", self.match_id, seat, reason)
        self._note(seat, "stale", reason)

    def _note(self, seat: int, kind: str, reason: str) -> None:
        if self._game is not None:
            self._game.recorder.note(seat, kind, reason)

    def _pending(self) -> Pending | None:
        """The decision pending in the game in progress, if any."""
        game = self._game
        return game.pending if game is not None else None

    # ------------------------------------------------------------------ spectators

    def watch(self) -> Watcher:
        """A new spectator, told the match as it stands (and its end, when it is over)."""
        if is_over(self.status):
            return self.spectators.subscribe([self.info(), self.end_message()], over=True)
        game = self._game
        later = [] if game is None else game.spectator_greeting(self._loop.time())
        return self.spectators.subscribe([self.info(), *later])

    def unwatch(self, watcher: Watcher) -> None:
        self.spectators.remove(watcher)

    # ------------------------------------------------------------------ info

    def summary(self) -> MatchSummary:
        """Per-seat totals over the finished games (kept between calls: see
        :meth:`MatchRecord.summary`)."""
        return self.record.summary()

    def end_message(self) -> MatchEnd:
        finished = self.status is MatchStatus.FINISHED
        seed = self.config.match_seed if finished else None
        return self.record.end_message(self.status, self.reason, seed)

    def info(self, with_results: bool = True) -> MatchSnapshot:
        config = self.config
        return MatchSnapshot(
            match_id=self.match_id,
            players=config.players,
            game_count=config.game_count,
            match_seed=config.match_seed if self.status is MatchStatus.FINISHED else None,
            species=config.species,
            time_control=config.time_control,
            fault_policy=config.fault_policy,
            seat_names=config.seat_names,
            start_timeout_ms=config.start_timeout_ms,
            status=self.status,
            current_game_index=self.game_in_progress,
            results=tuple(self.outcomes) if with_results else (),
            final_boards=tuple(self.record.final_boards) if with_results else (),
            summary=self.summary(),
            seats=tuple(SeatConnection(s.seat, s.name, s.connected) for s in self.seats),
            created_unix_ms=self.created_unix_ms,
            reason=self.reason,
            seat_time_controls=config.seat_time_controls,
        )

    def replay(self, game_index: int) -> tuple[dict[str, Any], bool] | None:
        """The replay of a game and whether it is complete; None for a game not started."""
        game = self._game
        if game is not None and game.index == game_index and game_index not in self.replays:
            return game.recorder.partial_json(""), False
        return self.record.replay(game_index)

    # ------------------------------------------------------------------ games

    async def _play_game(self, index: int) -> None:
        game = Game(self.config, self.match_id, index)
        self._game = game
        log.info("match %s: game %d starts", self.match_id, index)
        now = self._loop.time()
        for session in self.seats:
            if session.stream is not None:
                game.greet(session.seat, session.stream, now, resumed=False)
        self.spectators.publish(WatchGameStart(game.setup, game.board(), (), False))
        state = game.state
        while not state.is_over:
            await self._decide(game, state.current_seat)
        outcome = game.outcome()
        board = game.board()
        doc = game.recorder.to_json()
        self.record.finished(outcome, board, doc)
        self._game = None
        for session in self.seats:
            stream = session.stream
            if stream is not None:
                stream.send(GameOver(outcome, board, game.events_since(stream)))
        self.spectators.publish(WatchGameEnd(outcome, board))
        totals = list(outcome.result.totals)
        log.info("match %s: game %d over, totals %s", self.match_id, index, totals)
        await self.record.save(index)

    async def _decide(self, game: Game, seat: int) -> None:
        """Ask ``seat``'s decision and wait until it is settled. Answers that come in time are
        settled by :meth:`_answered` in the reader's step, which also asks the decisions that
        follow: the loop then wakes only when the game is over, for a forfeited seat, or for an
        outcome that is not such an answer (a timeout, a crash, an invalid message)."""
        state = game.state
        if state.forfeited[seat]:
            self.rulings.play_forfeited(game, seat)
            await asyncio.sleep(0)
            return
        future: asyncio.Future[Outcome | Concluded] = self._loop.create_future()
        self._ask(game, seat, future)
        try:
            outcome = await future
        except BaseException:
            game.pending = None
            self.timer.stop()
            raise
        if not isinstance(outcome, Concluded):
            pending = game.pending  # the last decision asked; the earlier ones are settled
            assert pending is not None and pending.future is future
            self.rulings.conclude(game, pending, outcome, self._loop.time())

    def _ask(self, game: Game, seat: int, future: asyncio.Future[Outcome | Concluded]) -> None:
        """Number ``seat``'s decision, send the request (if the seat has a stream) and start its
        clock (the match's timer covers its deadline); ``future`` gets the outcome."""
        state = game.state
        clock = game.clocks[seat]
        self._numbers += 1
        sent_at = self._loop.time()
        budget_ms = clock.per_decision_ms + clock.bank_left_ms
        pending = Pending(
            self._numbers,
            state.decision_kind,
            seat,
            sent_at,
            budget_ms,
            clock.bank_left_ms,
            future,
        )
        game.pending = pending
        if self._watchers:
            self.spectators.publish(game.pending_message(pending, 0))
        session = self.seats[seat]
        if session.crashed is not None:
            future.set_result(Crashed(session.crashed))
        elif session.stream is not None:
            session.stream.send(game.request(pending, session.stream, 0))
        self.timer.cover(pending.deadline)

    def _answered(self, game: Game, pending: Pending, inbound: Inbound, at: float) -> None:
        """A (well-formed or not) answer to the pending decision, received at ``at``, in time or
        not: settle it here, in the step of the stream that read it, and ask the next decision at
        once, without waking the match loop. The loop takes over when the game is over or the next
        seat forfeited."""

        def settle() -> None:
            rulings = self.rulings
            if isinstance(inbound, Answer):
                # (settle_answer tells the game what changed)
                rulings.settle_answer(game, pending, inbound, at)
            else:
                try:
                    rulings.settle(game, pending, Answered(inbound, at), at)
                finally:
                    game.changed(pending.seat)  # its clock, faults, cards

        self._settle_then_ask(game, pending.future, settle)

    def _settle_then_ask(
        self, game: Game, future: asyncio.Future[Outcome | Concluded], settle: Callable[[], None]
    ) -> None:
        """Settle the pending decision whose outcome ``future`` awaits (``settle`` does, with no
        decision pending), then ask the next decision with the same future, or conclude it when the
        game is over or the next seat forfeited (the match loop takes over then). An internal error
        fails ``future``: the match loop fails the match with it."""
        try:
            game.pending = None
            settle()
            state = game.state
            if state.is_over or state.forfeited[state.current_seat]:
                future.set_result(CONCLUDED)
            else:
                self._ask(game, state.current_seat, future)
        except Exception as exc:  # an internal error: the match loop fails the match with it
            if not future.done():
                future.set_exception(exc)


class _Stopped(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
