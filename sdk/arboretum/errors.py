"""The engine's exceptions.

One tree, rooted at :class:`ArboretumError`::

    ArboretumError
     ├── NotationError          (also ValueError) text that is not a card, cell or decision
     ├── IllegalDecisionError   (also ValueError) a well-formed decision the rules forbid now
     ├── ConfigError            (also ValueError) a game that cannot be set up as asked
     ├── DeterminizationError   a view whose counts cannot be dealt consistently
     └── ReplayError            a replay that is malformed, or does not re-play as recorded

A malformed decision and an illegal one are distinct on purpose: the referee maps each to its own
fault reason and gRPC status.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ArboretumError",
    "ConfigError",
    "DeterminizationError",
    "IllegalDecisionError",
    "NotationError",
    "ReplayError",
    "Rule",
]


class Rule(StrEnum):
    """The rule an illegal decision breaks; the value is a stable identifier used in reasons."""

    GAME_OVER = "game-over"
    WRONG_DECISION = "wrong-decision-kind"
    EMPTY_SOURCE = "empty-source"
    NO_SUCH_PILE = "no-such-pile"
    CARD_NOT_IN_HAND = "card-not-in-hand"
    FIRST_CARD_AT_ORIGIN = "first-card-at-origin"
    CELL_OCCUPIED = "cell-occupied"
    CELL_NOT_ADJACENT = "cell-not-adjacent"
    DISCARD_REQUIRED = "discard-required"
    DISCARD_NOT_ALLOWED = "discard-not-allowed"
    DISCARD_NOT_IN_HAND = "discard-not-in-hand"

    @property
    def text(self) -> str:
        return _RULE_TEXT[self]


_RULE_TEXT = {
    Rule.GAME_OVER: "the game is over; no decision is due",
    Rule.WRONG_DECISION: "the decision does not match the kind due now",
    Rule.EMPTY_SOURCE: "a card can only be drawn from the deck or a discard pile that has cards",
    Rule.NO_SUCH_PILE: "the discard pile named does not exist",
    Rule.CARD_NOT_IN_HAND: "the card played must be in the player's hand",
    Rule.FIRST_CARD_AT_ORIGIN: "the first card of an arboretum is placed at (0, 0)",
    Rule.CELL_OCCUPIED: "a card cannot be placed on an occupied cell",
    Rule.CELL_NOT_ADJACENT: "a card must share an edge with a card already in the arboretum",
    Rule.DISCARD_REQUIRED: "after two draws the player must discard one card",
    Rule.DISCARD_NOT_ALLOWED: "when the second draw was skipped the player does not discard",
    Rule.DISCARD_NOT_IN_HAND: "the discarded card must be in the hand after the play",
}


class ArboretumError(Exception):
    """Base class of every error the engine raises."""


class NotationError(ArboretumError, ValueError):
    """Text that does not parse as a card, a cell or a decision."""


class IllegalDecisionError(ArboretumError, ValueError):
    """A well-formed decision that the rules forbid in the current state.

    ``rule`` names the rule broken; the message never contains a hidden card.
    """

    def __init__(self, rule: Rule, detail: str = "") -> None:
        self.rule = rule
        self.detail = detail
        message = f"illegal decision ({rule.value}): {rule.text}"
        if detail:
            message += f"; {detail}"
        super().__init__(message)


class ConfigError(ArboretumError, ValueError):
    """A game that cannot be set up as asked (player count, species list, seed)."""


class DeterminizationError(ArboretumError):
    """A seat view whose public counts cannot be dealt consistently."""


class ReplayError(ArboretumError):
    """A replay that is malformed, or that does not re-play as recorded.

    ``step`` is the index of the offending step, or ``None`` for a header or final-result problem.
    """

    def __init__(self, message: str, step: int | None = None) -> None:
        self.step = step
        super().__init__(f"step {step}: {message}" if step is not None else message)
