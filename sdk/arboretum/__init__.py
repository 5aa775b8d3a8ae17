"""Arboretum: the pure rules engine of Arboretum Arena (standard library only).

The referee, the bots and every tool share it. Start with :meth:`GameState.new`::

    import random
    from arboretum import GameState, random_decision

    state = GameState.new(players=2, seed=7)
    rng = random.Random(1)
    while not state.is_over:
        state.apply(random_decision(state, rng))
    print(state.result().totals)

The rules are those of the arena's RULES.md; see ``docs/`` for the replay format and the
engine guide.
"""

from .cards import ALL_CARDS, ID_SPECIES, ID_VALUE, Card, Cell, Species, card_id
from .decisions import DECK, Decision, DecisionKind, Draw, Play, parse_decision
from .determinize import determinize
from .errors import (
    ArboretumError,
    ConfigError,
    DeterminizationError,
    IllegalDecisionError,
    NotationError,
    ReplayError,
    Rule,
)
from .events import DrawEvent, Event, ForfeitEvent, PlayEvent
from .grid import Arboretum
from .legal import LegalDecisions
from .policies import random_decision
from .replay import (
    REPLAY_FORMAT,
    REPLAY_VERSION,
    ReplayCheck,
    ReplayRecorder,
    load_replay,
    verify_replay,
    verify_steps,
)
from .scoring import GameResult, PathScore, SeatScore, SpeciesScore
from .state import (
    HAND_SIZE,
    SPECIES_PER_PLAYER_COUNT,
    GameState,
    derive_bot_seed,
    derive_game_seed,
)
from .version import ENGINE_VERSION, RULES_VERSION
from .views import SeatView

__all__ = [
    "ALL_CARDS",
    "DECK",
    "ENGINE_VERSION",
    "HAND_SIZE",
    "ID_SPECIES",
    "ID_VALUE",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "RULES_VERSION",
    "SPECIES_PER_PLAYER_COUNT",
    "Arboretum",
    "ArboretumError",
    "Card",
    "Cell",
    "ConfigError",
    "Decision",
    "DecisionKind",
    "DeterminizationError",
    "Draw",
    "DrawEvent",
    "Event",
    "ForfeitEvent",
    "GameResult",
    "GameState",
    "IllegalDecisionError",
    "LegalDecisions",
    "NotationError",
    "PathScore",
    "Play",
    "PlayEvent",
    "ReplayCheck",
    "ReplayError",
    "ReplayRecorder",
    "Rule",
    "SeatScore",
    "SeatView",
    "Species",
    "SpeciesScore",
    "card_id",
    "derive_bot_seed",
    "derive_game_seed",
    "determinize",
    "load_replay",
    "parse_decision",
    "random_decision",
    "verify_replay",
    "verify_steps",
]
