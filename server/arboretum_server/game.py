"""The game in progress of a match (:class:`Game`): its engine state, clocks, faults, events and
replay recorder, the pieces of its decision requests encoded until they change, the pending
decision (:class:`Pending`) with its possible outcomes, and what a seat's new stream and a new
spectator are told of it (:meth:`Game.greet`, :meth:`Game.spectator_greeting`).

:class:`DecisionTimer` times the pending decision out: one timer per match, armed for the
earliest deadline it may have to enforce. A decision asked while the timer is armed for an
earlier instant leaves it alone: when it fires, it times the pending decision out or arms itself
again for that decision's deadline. (Most decisions are answered long before their deadline:
none of them costs a timer.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from arboretum import (
    Card,
    Cell,
    DecisionKind,
    GameState,
    ReplayRecorder,
    derive_bot_seed,
    derive_game_seed,
)

from . import wirebytes
from .matchconfig import MatchConfig
from .messages import (
    Board,
    ClockState,
    DecisionPending,
    GameEnd,
    GameSetup,
    GameStart,
    LoggedEvent,
    SeatPublic,
    TimeControl,
    View,
    WatchGameStart,
    WatchMessage,
)
from .messages import Draw as DrawEvent
from .seats import (
    Failure,
    InvalidMessage,
    MalformedAnswer,
    SeatStream,
)

__all__ = [
    "CONCLUDED",
    "Answered",
    "Concluded",
    "Crashed",
    "DecisionTimer",
    "Game",
    "Outcome",
    "Pending",
    "SeatClock",
    "TimedOut",
]

# A module constant: an enum member looked up on its class costs several times more.
_PLAY = DecisionKind.PLAY


@dataclass(frozen=True, slots=True)
class Answered:
    """An answer that is not well-formed, or the bot's report that its code failed (well-formed
    answers are settled by :meth:`Rulings.settle_answer`)."""

    inbound: MalformedAnswer | Failure | InvalidMessage
    at: float


@dataclass(frozen=True, slots=True)
class TimedOut:
    pass


@dataclass(frozen=True, slots=True)
class Crashed:
    reason: str


@dataclass(frozen=True, slots=True)
class Concluded:
    """Not an outcome: the decisions were settled where their answers came in (see
    :meth:`Match.receive`), and the match loop goes on from the game's state."""


Outcome = Answered | TimedOut | Crashed
CONCLUDED = Concluded()


@dataclass(slots=True)
class Pending:
    number: int
    kind: DecisionKind
    seat: int
    sent_at: float
    budget_ms: int
    bank_before_ms: int
    future: asyncio.Future[Outcome | Concluded]
    """What the match loop waits on. The decisions that :meth:`Match._answered` asks one after
    another share it: it is resolved once, with the outcome of the decision pending then (or with
    ``CONCLUDED``)."""

    @property
    def deadline(self) -> float:
        """When it times out, on the loop's clock."""
        return self.sent_at + self.budget_ms / 1000

    def elapsed_ms(self, now: float) -> int:
        """Whole milliseconds since it was asked, at ``now`` on the loop's clock."""
        return max(0, int((now - self.sent_at) * 1000))

    @property
    def waiting(self) -> bool:
        """Still waiting for its outcome."""
        return not self.future.done()


class SeatClock:
    """One seat's clock in one game."""

    __slots__ = ("bank_left_ms", "per_decision_ms")

    def __init__(self, control: TimeControl) -> None:
        self.per_decision_ms = control.per_decision_ms
        self.bank_left_ms = control.bank_ms

    @property
    def budget_ms(self) -> int:
        """The longest a decision may take now: L + bank left."""
        return self.per_decision_ms + self.bank_left_ms

    def charge(self, elapsed_ms: float) -> None:
        """Charge an answered decision: the bank loses the time beyond L."""
        over = max(0.0, elapsed_ms - self.per_decision_ms)
        self.bank_left_ms = max(0, self.bank_left_ms - round(over))

    def expire(self) -> None:
        """The decision timed out: the bank is empty from now on."""
        self.bank_left_ms = 0


class Game:
    """The game in progress."""

    def __init__(self, config: MatchConfig, match_id: str, index: int) -> None:
        self.index = index
        self.seat_names = config.seat_names
        self.seed = (
            config.game_seeds[index]
            if config.game_seeds
            else derive_game_seed(config.match_seed, index)
        )
        self.state = GameState.new(config.players, self.seed, config.species)
        tc = config.time_control
        extra: dict[str, Any] = {
            "time_control": _clock_json(tc),
            "fault_policy": {"faults_to_forfeit": config.fault_policy.faults_to_forfeit},
        }
        if config.seat_time_controls:
            extra["seat_time_controls"] = [_clock_json(c) for c in config.seat_time_controls]
        self.recorder = ReplayRecorder(
            self.state, match_id=match_id, seats=config.seat_names, game_index=index, extra=extra
        )
        self.clocks = [SeatClock(config.seat_clock(s)) for s in range(config.players)]
        self.faults = [0] * config.players
        self.events: list[LoggedEvent] = []
        self.pending: Pending | None = None
        self._public: list[SeatPublic | None] = [None] * config.players
        """Each seat's public state as last built; ``None`` once it may have changed."""
        self._arboretums: list[tuple[tuple[Card, Cell], ...] | None] = [None] * config.players
        """Each seat's arboretum as last built; ``None`` once the seat played a card."""
        # The same pieces encoded for decision requests (see wirebytes), each kept until it may
        # have changed: a seat's public state (and, apart, its first fields, its known cards and
        # its clock and faults) and its hand; its arboretum and legal cells until it plays; each
        # event's public encoding once it is first sent.
        n = config.players
        self._seat_wire: list[bytes | None] = [None] * n
        self._seat_head: list[bytes | None] = [None] * n
        self._known_wire: list[bytes | None] = [None] * n
        self._seat_tail: list[bytes | None] = [None] * n
        self._hand_wire: list[bytes | None] = [None] * n
        self._arboretum_wire: list[bytes | None] = [None] * n
        self._cells_wire: list[bytes | None] = [None] * n
        self._event_wire: list[bytes | None] = []
        self.setup = GameSetup(
            game_index=index,
            game_count=config.game_count,
            players=config.players,
            species=self.state.species,
            time_control=tc,
            fault_policy=config.fault_policy,
            seat_names=config.seat_names,
        )
        self.seat_setups = tuple(
            replace(self.setup, time_control=config.seat_clock(s))
            if config.seat_time_controls
            else self.setup
            for s in range(config.players)
        )
        """What each seat is told at the game's start: the setup with the seat's own clock."""

    def changed(self, seat: int | None = None, *, played: bool = False) -> None:
        """The public state of ``seat`` (``None``: of every seat) may have changed; ``played``: the
        seat placed a card in its arboretum."""
        if seat is None:
            n = len(self._public)
            self._public, self._arboretums = [None] * n, [None] * n
            self._seat_wire, self._hand_wire = [None] * n, [None] * n
            self._seat_head, self._known_wire, self._seat_tail = [None] * n, [None] * n, [None] * n
            self._arboretum_wire, self._cells_wire = [None] * n, [None] * n
        else:
            self._public[seat] = self._seat_wire[seat] = self._hand_wire[seat] = None
            self._seat_head[seat] = self._known_wire[seat] = self._seat_tail[seat] = None
            if played:
                self._arboretums[seat] = self._arboretum_wire[seat] = self._cells_wire[seat] = None

    def drew(self, seat: int, source: int) -> None:
        """``seat`` drew a card from ``source``: what that changed."""
        self._public[seat] = self._seat_wire[seat] = self._hand_wire[seat] = None
        if source >= 0:
            self._known_wire[seat] = None
            self._public[source] = self._seat_wire[source] = self._seat_head[source] = None

    def placed(self, seat: int, card: Card, cell: Cell) -> None:
        """``seat`` played ``card`` on ``cell`` (and discarded, or not): what that changed. Its
        encoded arboretum, when there is one, grows by that card: the engine keeps an arboretum's
        cards in the order they were played, and that is the order they are sent in."""
        arboretum = self._arboretum_wire[seat]
        self.changed(seat, played=True)
        if arboretum is not None:
            self._arboretum_wire[seat] = arboretum + wirebytes.placed_field(card, cell)

    def _arboretum(self, s: int) -> tuple[tuple[Card, Cell], ...]:
        arboretum = self._arboretums[s]
        if arboretum is None:
            arboretum = tuple((card, cell) for cell, card in self.state.arboretum(s).items())
            self._arboretums[s] = arboretum
        return arboretum

    def _seat_public(self, s: int) -> SeatPublic:
        state = self.state
        public = SeatPublic(
            seat=s,
            arboretum=self._arboretum(s),
            discard_pile=state.discard_pile(s),
            hand_size=state.hand_size(s),
            known_hand_cards=state.known_cards(s),
            bank_left_ms=self.clocks[s].bank_left_ms,
            faults=self.faults[s],
            forfeited=state.forfeited[s],
        )
        self._public[s] = public
        return public

    def board(self) -> Board:
        """The public state. A seat's part is rebuilt only when it may have changed (see
        :meth:`changed`): between two decisions most seats' parts stay the same objects."""
        state = self.state
        return Board(
            game_index=self.index,
            turn_number=state.turn + 1,
            current_seat=state.current_seat,
            deck_size=state.deck_size,
            seats=tuple(p or self._seat_public(s) for s, p in enumerate(self._public)),
        )

    def view(self, seat: int) -> View:
        return View(seat=seat, hand=self.state.hand(seat), board=self.board())

    def events_for(self, viewer: int | None, since: int = 0) -> tuple[LoggedEvent, ...]:
        return tuple(e.seen_by(viewer) for e in self.events[since:])

    def log(self, event: LoggedEvent) -> None:
        """Append ``event`` to the game's log."""
        self.events.append(event)
        self._event_wire.append(None)

    def _events_wire(self, viewer: int, since: int) -> bytes:
        """The events from ``since`` on as ``viewer`` sees them, encoded: its own deck draws with
        their cards, everything else as everyone sees it (encoded once, when first sent)."""
        events, encoded = self.events, self._event_wire
        parts = []
        for i in range(since, len(events)):
            event = events[i]
            if event.seat == viewer and type(event.body) is DrawEvent:
                parts.append(wirebytes.event_field(event))  # seen_by(viewer) is the event
                continue
            public = encoded[i]
            if public is None:
                public = encoded[i] = wirebytes.event_field(event.seen_by(None))
            parts.append(public)
        return b"".join(parts)

    def _seat_field(self, s: int) -> bytes:
        state = self.state
        head = self._seat_head[s]
        if head is None:
            arboretum = self._arboretum_wire[s]
            if arboretum is None:
                arboretum = wirebytes.arboretum_fields(self._arboretum(s))
                self._arboretum_wire[s] = arboretum
            head = self._seat_head[s] = wirebytes.seat_head(s, arboretum, state.discard_pile(s))
        known = self._known_wire[s]
        if known is None:
            known = self._known_wire[s] = wirebytes.known_fields(state.known_cards(s))
        tail = self._seat_tail[s]
        if tail is None:
            clock = self.clocks[s]
            tail = wirebytes.seat_tail(clock.bank_left_ms, self.faults[s], state.forfeited[s])
            self._seat_tail[s] = tail
        encoded = wirebytes.seat_state_field(head, state.hand_size(s), known, tail)
        self._seat_wire[s] = encoded
        return encoded

    def request_wire(
        self, seat: int, number: int, kind: DecisionKind, clock: tuple[int, int, int], since: int
    ) -> bytes:
        """The serialized ``RefereeMessage`` asking ``seat`` decision ``number`` (the one due), with
        the events from ``since`` on and ``clock`` (per-decision ms, bank left, elapsed ms): the
        bytes ``edge.referee_message`` gives for the same ``DecisionRequest``, built from the
        cached encodings."""
        state = self.state
        hand = self._hand_wire[seat]
        if hand is None:
            hand = self._hand_wire[seat] = wirebytes.hand_fields(state.hand_ids(seat))
        if kind is _PLAY:
            cells = self._cells_wire[seat]
            if cells is None:
                options = state.legal_decisions().cell_options()
                cells = self._cells_wire[seat] = wirebytes.cell_fields(options)
            sources: tuple[int, ...] = ()
            discard_required = state.discard_required
        else:
            cells, sources, discard_required = b"", state.draw_sources(), False
        return wirebytes.decision_request(
            number,
            kind,
            self.index,
            seat,
            hand,
            state.turn + 1,
            state.current_seat,
            state.deck_size,
            [w or self._seat_field(s) for s, w in enumerate(self._seat_wire)],
            self._events_wire(seat, since),
            wirebytes.clock_field(*clock),
            discard_required,
            sources,
            cells,
        )

    def request(self, pending: Pending, stream: SeatStream, elapsed_ms: int) -> bytes:
        """The decision request for ``pending``, serialized (see :meth:`request_wire`), with the
        events since ``stream``'s last message (its cursor moves on); ``elapsed_ms``: since the
        decision was asked."""
        seat = pending.seat
        clock = (self.clocks[seat].per_decision_ms, pending.bank_before_ms, elapsed_ms)
        since = stream.cursor if stream.cursor_game == self.index else 0
        stream.cursor_game, stream.cursor = self.index, len(self.events)
        return self.request_wire(seat, pending.number, pending.kind, clock, since)

    def events_since(self, stream: SeatStream) -> tuple[LoggedEvent, ...]:
        """The events ``stream``'s seat sees since its last message (its cursor moves on)."""
        since = stream.cursor if stream.cursor_game == self.index else 0
        stream.cursor_game, stream.cursor = self.index, len(self.events)
        return self.events_for(stream.seat, since)

    def greet(self, seat: int, stream: SeatStream, now: float, *, resumed: bool) -> None:
        """Bring ``seat``'s new ``stream`` into this game at ``now``: its start (with the events
        so far: none at the game's start) and, when the seat's decision is pending, its request.
        ``resumed``: the game was in progress already (the stream joins it, as ``GameStart``
        tells the bot), not starting now."""
        stream.cursor_game, stream.cursor = self.index, len(self.events)
        bot_seed = derive_bot_seed(self.seed, seat)
        events = self.events_for(seat)
        setup = self.seat_setups[seat]
        stream.send(GameStart(setup, seat, self.view(seat), events, resumed, bot_seed))
        pending = self.pending
        if pending is not None and pending.seat == seat and pending.waiting:
            stream.send(self.request(pending, stream, pending.elapsed_ms(now)))

    def spectator_greeting(self, now: float) -> list[WatchMessage]:
        """What a spectator who comes in at ``now`` is told of this game: its start with the
        board and events so far, and the decision pending, if any."""
        greeting: list[WatchMessage] = [
            WatchGameStart(self.setup, self.board(), self.events_for(None), True)
        ]
        pending = self.pending
        if pending is not None and pending.waiting:
            greeting.append(self.pending_message(pending, pending.elapsed_ms(now)))
        return greeting

    def pending_message(self, pending: Pending, elapsed_ms: int) -> DecisionPending:
        """What spectators are told of ``pending``, asked ``elapsed_ms`` ago."""
        clock = ClockState(
            self.clocks[pending.seat].per_decision_ms, pending.bank_before_ms, elapsed_ms
        )
        return DecisionPending(self.index, pending.seat, pending.number, pending.kind, clock)

    def outcome(self) -> GameEnd:
        """The finished game: the engine's result, the faults, the seed, the turns."""
        state = self.state
        return GameEnd(
            game_index=self.index,
            seed=self.seed,
            species=state.species,
            turns=state.turn + 1,
            seat_names=self.seat_names,
            faults=tuple(self.faults),
            result=state.result(),
        )


class DecisionTimer:
    """Times out the decision that ``pending()`` returns (None: no decision is pending) once its
    deadline has passed. It runs on the loop given to :meth:`start`."""

    __slots__ = ("_at", "_handle", "_loop", "_pending")

    def __init__(self, pending: Callable[[], Pending | None]) -> None:
        self._pending = pending
        self._handle: asyncio.TimerHandle | None = None
        self._at = 0.0
        self._loop: asyncio.AbstractEventLoop

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def cover(self, deadline: float) -> None:
        """Make sure the timer fires by ``deadline`` (a decision was asked)."""
        if self._handle is None or self._at > deadline:
            self._arm(deadline)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _arm(self, at: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._at = at
        self._handle = self._loop.call_at(at, self._fire)

    def _fire(self) -> None:
        self._handle = None
        pending = self._pending()
        if pending is None or pending.future.done():
            return
        if self._loop.time() >= pending.deadline:
            pending.future.set_result(TimedOut())
        else:
            self._arm(pending.deadline)


def _clock_json(control: TimeControl) -> dict[str, int]:
    """A time control as the replay's ``time_control`` writes it."""
    return {"per_decision_ms": control.per_decision_ms, "bank_ms": control.bank_ms}
