"""How the referee settles a decision: the decision applied, with its public events, or a fault
ruled and the fallback applied in its place.

:class:`Rulings`, an object each :class:`~arboretum_server.match.Match` holds, turns the outcome of
a pending decision (:mod:`arboretum_server.game`) into the game's next state: an answer in time that
the engine accepts is applied and the bank charged beyond L; anything else is a fault (``timeout``,
``disconnect``, ``crash``, ``malformed``, ``illegal``, ``bot_error``), told to the seat, after which
the engine's fallback decision is applied; at its N-th fault in a game the seat forfeits. It also
logs the public events in the game and publishes them to the match's spectators
(:class:`~arboretum_server.watchers.Spectators`).
"""

from __future__ import annotations

import logging

from arboretum import (
    Decision,
    DecisionKind,
    Draw,
    IllegalDecisionError,
    NotationError,
    Play,
)
from arboretum_sdk.clitools import plural

from .game import Crashed, Game, Outcome, Pending, TimedOut
from .matchconfig import MatchConfig
from .messages import (
    Discard,
    EventBody,
    Fault,
    FaultKind,
    FaultNotice,
    Forfeit,
    LoggedEvent,
    Place,
    SecondDrawSkipped,
)
from .messages import Draw as DrawEvent
from .seats import Answer, Failure, InvalidMessage, SeatSession
from .watchers import Spectators

__all__ = ["Rulings"]

log = logging.getLogger(f"{__package__}.match")
"""The match's log: a fault is a line of its match."""

# Module constants: an enum member looked up on its class costs several times more, and the hot
# path compares decision kinds a few times per decision.
_FIRST_DRAW = DecisionKind.FIRST_DRAW
_PLAY = DecisionKind.PLAY


class Rulings:
    """The settling of a match's decisions: what :class:`~arboretum_server.match.Match` calls
    when a pending decision has an outcome, and to apply a decision it makes itself."""

    __slots__ = ("_publish", "_watchers", "config", "match_id", "seats")

    def __init__(
        self,
        match_id: str,
        config: MatchConfig,
        seats: list[SeatSession],
        spectators: Spectators,
    ) -> None:
        self.match_id = match_id
        self.config = config
        self.seats = seats
        self._watchers = spectators.watchers  # the set itself: the hot path only tests it
        self._publish = spectators.publish

    def emit(self, game: Game, seat: int, turn_number: int, body: EventBody) -> None:
        event = LoggedEvent(len(game.events), turn_number, seat, body)
        game.log(event)
        if self._watchers:
            self._publish(event.seen_by(None))

    def apply(
        self,
        game: Game,
        seat: int,
        decision: Decision,
        *,
        ms: float | None,
        fault: dict[str, str] | None = None,
    ) -> None:
        """Apply (validated, recorded) and log the public events; raises the engine's errors."""
        state = game.state
        kind = state.decision_kind
        turn_number = state.turn + 1
        card = game.recorder.apply(decision, ms=ms, fault=fault)
        if isinstance(decision, Draw):
            game.drew(seat, decision.source)
            self.emit(game, seat, turn_number, DrawEvent(kind, decision.source, card))
            if kind is _FIRST_DRAW and state.decision_kind is _PLAY:
                self.emit(game, seat, turn_number, SecondDrawSkipped())
        else:
            game.placed(seat, decision.card, decision.cell)
            self.emit(game, seat, turn_number, Place(decision.card, decision.cell))
            if decision.discard is not None:
                self.emit(game, seat, turn_number, Discard(decision.discard))

    def resign(self, game: Game, seat: int, reason: str) -> Pending | None:
        """``seat`` gives up ``game`` (not over, the seat not forfeited): recorded and told as a
        forfeit. The seat's decision pending now, if any, is returned for the caller to settle
        (by :meth:`play_forfeited`); its later turns are played by the match loop."""
        game.recorder.forfeit(seat, reason or "resigned")
        game.changed()
        self.emit(game, seat, game.state.turn + 1, Forfeit(game.faults[seat]))
        log.info("match %s seat %d: resigns game %d", self.match_id, seat, game.index)
        pending = game.pending
        return pending if pending is not None and pending.seat == seat and pending.waiting else None

    def play_forfeited(self, game: Game, seat: int) -> None:
        """Play a forfeited seat's turn: the fallback decision, recorded as ``forfeited``."""
        reason = f"seat {seat} forfeited this game; the fallback plays its turns"
        self.apply(
            game,
            seat,
            game.state.fallback_decision(),
            ms=None,
            fault={"kind": "forfeited", "reason": reason},
        )

    def conclude(self, game: Game, pending: Pending, outcome: Outcome, now: float) -> None:
        """Settle the pending decision with ``outcome``, at ``now`` on the loop's clock."""
        game.pending = None
        try:
            self.settle(game, pending, outcome, now)
        finally:
            game.changed(pending.seat)  # its clock, faults, cards

    def settle(self, game: Game, pending: Pending, outcome: Outcome, now: float) -> None:
        """Settle the pending decision with an outcome that is not a well-formed answer (the
        caller tells the game what changed); ``now``: the loop's clock, for a crash."""
        seat = pending.seat
        clock = game.clocks[seat]
        budget = pending.budget_ms
        if isinstance(outcome, Crashed):
            elapsed = (now - pending.sent_at) * 1000
            clock.charge(elapsed)
            self._fault(game, pending, FaultKind.CRASH, outcome.reason, elapsed)
            return
        if isinstance(outcome, TimedOut):
            clock.expire()
            session = self.seats[seat]
            if session.stream is None:
                reason = (
                    f"no open stream when the time ran out ({budget} ms: "
                    f"{clock.per_decision_ms} ms + {pending.bank_before_ms} ms bank); "
                    f"{session.last_disconnect}"
                )
                self._fault(game, pending, FaultKind.DISCONNECT, reason, float(budget))
            else:
                reason = (
                    f"no answer within {budget} ms ({clock.per_decision_ms} ms per decision "
                    f"+ {pending.bank_before_ms} ms bank)"
                )
                self._fault(game, pending, FaultKind.TIMEOUT, reason, float(budget))
            return
        inbound = outcome.inbound
        elapsed = (outcome.at - pending.sent_at) * 1000
        if elapsed > budget:
            clock.expire()
            reason = f"the answer came after {elapsed:.0f} ms, over the {budget} ms allowed"
            self._fault(game, pending, FaultKind.TIMEOUT, reason, elapsed)
            return
        clock.charge(elapsed)
        if isinstance(inbound, InvalidMessage):
            self._fault(
                game, pending, FaultKind.MALFORMED, f"invalid message: {inbound.reason}", elapsed
            )
            return
        if isinstance(inbound, Failure):
            self._fault(game, pending, FaultKind.BOT_ERROR, inbound.reason, elapsed)
            return
        self._fault(game, pending, FaultKind.MALFORMED, inbound.reason, elapsed)

    def settle_answer(self, game: Game, pending: Pending, inbound: Answer, at: float) -> None:
        """Settle the pending decision with a well-formed answer received at ``at``."""
        elapsed = (at - pending.sent_at) * 1000
        clock = game.clocks[pending.seat]
        if elapsed > pending.budget_ms:
            clock.expire()
            reason = (
                f"the answer came after {elapsed:.0f} ms, over the {pending.budget_ms} ms allowed"
            )
            self._fault(game, pending, FaultKind.TIMEOUT, reason, elapsed)
            return
        if elapsed > clock.per_decision_ms:
            clock.charge(elapsed)
            game.changed(pending.seat)  # its bank
        if inbound.kind is not pending.kind:
            reason = (
                f"the answer is a {inbound.kind.value} decision "
                f"but a {pending.kind.value} was asked"
            )
            self._fault(game, pending, FaultKind.MALFORMED, reason, elapsed)
            return
        decision = inbound.decision
        if isinstance(decision, Play) and (decision.discard is None) == game.state.discard_required:
            reason = (
                "answer.decision.play.discard is missing (a discard is required)"
                if decision.discard is None
                else "answer.decision.play.discard is set but no discard is allowed "
                "(the second draw was skipped)"
            )
            self._fault(game, pending, FaultKind.MALFORMED, reason, elapsed)
            return
        try:
            self.apply(game, pending.seat, decision, ms=elapsed)
        except IllegalDecisionError as exc:
            self._fault(game, pending, FaultKind.ILLEGAL, str(exc), elapsed)
        except NotationError as exc:
            self._fault(game, pending, FaultKind.MALFORMED, str(exc), elapsed)

    def _fault(
        self, game: Game, pending: Pending, kind: FaultKind, reason: str, elapsed_ms: float
    ) -> None:
        seat = pending.seat
        state = game.state
        game.faults[seat] += 1
        game.changed(seat)
        faults = game.faults[seat]
        forfeits = faults >= self.config.fault_policy.faults_to_forfeit
        log.info(
            "match %s seat %d: %s fault on decision %d (%d in game %d): %s",
            self.match_id,
            seat,
            kind.value,
            pending.number,
            faults,
            game.index,
            reason,
        )
        turn_number = state.turn + 1
        self.emit(game, seat, turn_number, Fault(kind, pending.kind, pending.number, faults))
        fallback = state.fallback_decision()
        self.apply(
            game, seat, fallback, ms=elapsed_ms, fault={"kind": kind.value, "reason": reason}
        )
        session = self.seats[seat]
        if session.stream is not None:
            session.stream.send(
                FaultNotice(
                    decision_number=pending.number,
                    game_index=game.index,
                    decision_kind=pending.kind,
                    kind=kind,
                    reason=reason,
                    fallback=fallback,
                    faults=faults,
                    forfeited=forfeits,
                )
            )
            closing = session.stream.closing
            if closing is not None:
                session.stream.end(closing.status, closing.message)
        if forfeits:
            game.recorder.forfeit(
                seat, f"{plural(faults, 'fault')} in this game (last: {kind.value})"
            )
            game.changed()
            self.emit(game, seat, turn_number, Forfeit(faults))
            log.info("match %s seat %d: forfeits game %d", self.match_id, seat, game.index)
