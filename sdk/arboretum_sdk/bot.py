"""The :class:`Bot` base class: subclass it and implement one method.

Either one method for every decision::

    from arboretum import Decision, SeatView
    from arboretum_sdk import Bot

    class MyBot(Bot):
        def choose(self, view: SeatView) -> Decision:
            return view.legal_decisions()[0]

or one per decision kind, ``choose_draw`` (first and second draw; ``view.kind`` says which) and
``choose_play`` (a card, a cell and, when ``view.discard_required``, a discard)::

    class MyBot(Bot):
        def choose_draw(self, view: SeatView) -> Draw: ...
        def choose_play(self, view: SeatView) -> Play: ...

The view is the engine's own :class:`~arboretum.SeatView` (``view.legal_decisions()``,
``view.determinize(rng)`` for search, ...) and the answer is the engine's :class:`~arboretum.Draw`
or :class:`~arboretum.Play`. A bot never sees a wire message.

**Randomness.** :attr:`Bot.rng` is a :class:`random.Random` that the SDK seeds afresh at every
game's start from the seat's bot seed (:attr:`GameInfo.bot_seed`, which the referee derives one way
from the game's seed and the seat). A bot that takes every random number from it plays the same game
again when the game is re-run (``arena match rerun``). **Compute.** :attr:`Bot.compute` says
whether to spend a fixed amount of work per decision (``"fixed"``: leagues, for re-runnable
games) or to keep a wall-clock budget (``"time"``: the default for local play); it comes from the
environment variable ``ARENA_COMPUTE``.

While ``choose`` runs, :attr:`Bot.clock` holds this decision's :class:`~arboretum_sdk.Clock`
(``self.clock.remaining()`` is the time left before a timeout), :attr:`Bot.events` the game's public
history as this seat saw it, and :attr:`Bot.match` / :attr:`Bot.game` what the referee said at the
match's and the game's start. The ``on_*`` hooks are optional.
"""

from __future__ import annotations

import logging
import os
import random
from typing import Literal

from arboretum import Decision, DecisionKind, Draw, Event, GameResult, Play, SeatView

from .info import Clock, FaultNotice, GameEnd, GameInfo, MatchEnd, MatchInfo

__all__ = ["COMPUTE_ENV", "Bot", "Compute", "compute_mode"]

Compute = Literal["fixed", "time"]
COMPUTE_ENV = "ARENA_COMPUTE"
"""The environment variable that chooses :attr:`Bot.compute` (``fixed`` or ``time``)."""


def compute_mode() -> Compute:
    """The compute mode the environment asks for: ``ARENA_COMPUTE``, ``time`` when unset.

    Raises ``ValueError`` naming the variable when it holds anything else.
    """
    value = os.environ.get(COMPUTE_ENV, "").strip().lower() or "time"
    if value == "fixed":
        return "fixed"
    if value == "time":
        return "time"
    raise ValueError(f"{COMPUTE_ENV} must be 'fixed' or 'time', got {value!r}")


class Bot:
    """Base class of every bot. Implement :meth:`choose`, or :meth:`choose_draw` and
    :meth:`choose_play`. A subclass is built with no arguments by the loader.
    """

    name: str = "Bot"
    """A display name for logs; defaults to the class name (``arena bot run --name`` sets it)."""

    clock: Clock | None = None
    """The clock of the decision being asked (set before every ``choose`` call)."""
    decision_number: int = 0
    """The referee's number of the decision being asked (set before every ``choose`` call)."""
    match: MatchInfo | None = None
    """The match, once it started."""
    game: GameInfo | None = None
    """The game in progress (its setup; ``game.view`` is the view at the game's start)."""
    events: tuple[Event, ...] = ()
    """The public events of the game in progress so far, as this seat saw them, oldest first."""
    rng: random.Random
    """This game's random generator: seeded from :attr:`GameInfo.bot_seed` at every game's start,
    before :meth:`on_game_start` (before the first game, an unseeded one). Keep a generator of your
    own under another name: the SDK replaces this one at each game."""

    def __getattr__(self, name: str) -> object:
        # Only reached when normal lookup fails: ``rng`` before the first game starts.
        if name == "rng":
            rng = random.Random()
            self.rng = rng
            return rng
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def compute(self) -> Compute:
        """``"fixed"``: spend a fixed amount of work per decision, so that a re-run game takes the
        same decisions (leagues run bots this way by default); ``"time"``: keep a wall-clock budget
        (local play). From the environment variable ``ARENA_COMPUTE``."""
        return compute_mode()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    @property
    def log(self) -> logging.Logger:
        """A logger for the bot's own messages (they go to stderr under ``arena bot run``)."""
        return logging.getLogger(f"arboretum_sdk.bot.{self.name}")

    # ------------------------------------------------------------------ the one method

    def choose(self, view: SeatView) -> Decision:
        """The decision due now (``view.kind``) for this seat.

        The default dispatches to :meth:`choose_draw` or :meth:`choose_play`; override either this
        method or those two.
        """
        if view.kind is DecisionKind.PLAY:
            return self.choose_play(view)
        if view.kind in (DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW):
            return self.choose_draw(view)
        raise ValueError(f"no decision is due (view.kind is {view.kind.value})")

    def choose_draw(self, view: SeatView) -> Draw:
        """Where to draw from: ``Draw(DECK)`` or ``Draw(seat)`` for the top of a discard pile.

        Called for the first and the second draw of a turn (``view.kind`` says which).
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not say how to draw: implement "
            "choose(self, view) -> Decision, or both choose_draw(self, view) -> Draw "
            "and choose_play(self, view) -> Play"
        )

    def choose_play(self, view: SeatView) -> Play:
        """Which card to play where, and which card to discard (``None`` only when
        ``view.discard_required`` is false)."""
        raise NotImplementedError(
            f"{type(self).__name__} does not say how to play: implement "
            "choose(self, view) -> Decision, or both choose_draw(self, view) -> Draw "
            "and choose_play(self, view) -> Play"
        )

    # ------------------------------------------------------------------ optional hooks

    def on_match_start(self, info: MatchInfo) -> None:
        """The match starts: seat, player count, game count, names, clock and fault policy."""

    def on_game_start(self, info: GameInfo) -> None:
        """A game starts (``info.resumed`` after a reconnection mid-game)."""

    def on_game_end(self, result: GameResult, info: GameEnd) -> None:
        """A game ended: the engine's scored result, and the referee's data (seed, faults)."""

    def on_match_end(self, info: MatchEnd) -> None:
        """The match ended (``info.status``: finished, cancelled or failed)."""

    def on_fault(self, notice: FaultNotice) -> None:
        """One of this seat's decisions faulted; the referee applied ``notice.fallback``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
