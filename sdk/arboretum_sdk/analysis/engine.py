"""The analysis engine: each decision of a replay valued from its seat's view (docs/analysis.md).

For every decision of the analysed seats that had a choice, the engine values the decision taken
and a shortlist of alternatives in **expected final-score margin**: the seat's final score minus
the best other seat's, averaged over ``samples`` determinizations of the cards the seat could not
see (``SeatView.determinize``: its hand, the public board and the cards publicly known to be held;
never the replay's hidden cards). Each candidate is made on a copy of the determinization and the
game is played on to its end by :class:`~arboretum_sdk.bots.planning.TurnPlanner`'s policy for
every seat (``replies=-1``). Every candidate of one decision is played out on the same
determinizations (common random numbers), so the differences between them carry far less noise
than the values.

The shortlist: every draw source for a draw; for a play, the decision taken and the best
``alternatives`` of the ``expert`` bot's heuristic ranking (exact path scoring, the potential of the
hand, the discard's worth to the next seat). The best candidate is the one of highest mean; the
loss is ``value(best) - value(taken)``, less ``shrink`` standard errors of that difference (the
correction for picking the best of noisy means), never below 0; it is 0 when the decision taken is
the best.

Fixed compute and reproducible: the work per decision is ``samples`` x candidates playouts whatever
the machine, and the determinizations are drawn from a generator seeded by the replay's deck, the
step's index and ``seed``.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arboretum import (
    Card,
    Decision,
    DecisionKind,
    Draw,
    GameState,
    ReplayError,
    SeatView,
    Species,
    verify_replay,
    verify_steps,
)
from arboretum.replay import step_to_decision

from ..bots.compute import Allowance
from ..bots.expert import ExpertBot
from ..bots.planning import TurnPlanner

__all__ = [
    "AnalysisConfig",
    "AnalysisError",
    "DecisionAnalysis",
    "analyse_position",
    "analyse_replay",
    "decision_json",
    "game_state_at",
]


class AnalysisError(ValueError):
    """A replay that cannot be analysed (it does not verify), or a seat it does not have."""


@dataclass(frozen=True, slots=True)
class AnalysisConfig:
    """The analysis's fixed compute and its marks' thresholds (points of expected margin)."""

    samples: int = 8
    """Determinizations per decision, shared by every candidate."""
    alternatives: int = 3
    """Alternatives to a play from the heuristic's ranking (every draw source is tried)."""
    shrink: float = 2.0
    """Standard errors of the difference taken off the loss (selection-bias correction)."""
    inaccuracy: float = 1.0
    mistake: float = 2.5
    blunder: float = 5.0
    seed: int = 0
    """Mixed into every decision's generator: another seed, other determinizations."""

    def mark(self, loss: float) -> str | None:
        """``blunder``, ``mistake``, ``inaccuracy`` or None for a loss in points."""
        if loss >= self.blunder:
            return "blunder"
        if loss >= self.mistake:
            return "mistake"
        if loss >= self.inaccuracy:
            return "inaccuracy"
        return None


@dataclass(frozen=True, slots=True)
class DecisionAnalysis:
    """One analysed decision: what was taken, the best candidate found, their values, the loss."""

    step: int
    """The step's index in the replay's ``steps`` (as every page and the CLI number steps)."""
    turn: int
    seat: int
    kind: str
    """``first-draw``, ``second-draw`` or ``play``."""
    taken: Decision
    best: Decision
    value_taken: float
    value_best: float
    loss: float
    mark: str | None
    candidates: int
    fault: str | None = None
    """The fault kind when the decision taken was the referee's fallback."""
    values: list[tuple[Decision, float]] = field(default_factory=list)
    """Every candidate with its value, best first."""
    difference: float = 0.0
    """``value_best - value_taken`` before the correction (0 when the taken one is best)."""
    stderr: float = 0.0
    """The standard error of that difference over the determinizations."""


def decision_json(decision: Decision) -> dict[str, Any]:
    """A decision as the replay's step fields (without ``kind``, ``turn``, ``seat``, ``card`` of
    a draw): ``{"source": "deck"}``, ``{"source": "pile", "pile": 1}`` or ``{"card": "OA5",
    "cell": [0, 1], "discard": "JA3"}``."""
    if isinstance(decision, Draw):
        if decision.from_deck:
            return {"source": "deck"}
        return {"source": "pile", "pile": decision.source}
    return {
        "card": str(decision.card),
        "cell": [decision.cell[0], decision.cell[1]],
        "discard": None if decision.discard is None else str(decision.discard),
    }


def _candidates(view: SeatView, taken: Decision, config: AnalysisConfig) -> list[Decision]:
    """The taken decision first, then the alternatives to value."""
    legal = view.legal_decisions()
    if view.kind is not DecisionKind.PLAY:
        return [taken, *(Draw(s) for s in legal.sources if Draw(s) != taken)]
    ranked, _ = ExpertBot(compute="fixed")._play_candidates(view, Allowance(1))
    out = [taken]
    for decision in ranked:
        if len(out) > config.alternatives:
            break
        if decision != taken:
            out.append(decision)
    return out


def analyse_position(
    view: SeatView, taken: Decision, rng: random.Random, config: AnalysisConfig
) -> tuple[list[tuple[Decision, float]], float]:
    """Value ``taken`` and its alternatives from ``view`` on ``config.samples`` determinizations
    drawn from ``rng`` (the same ones for every candidate). Returns every candidate with its mean
    margin, best first (ties: the taken decision first), and the loss (0 if ``taken`` is best)."""
    values, loss, _, _ = _position(view, taken, rng, config)
    return values, loss


def _position(
    view: SeatView, taken: Decision, rng: random.Random, config: AnalysisConfig
) -> tuple[list[tuple[Decision, float]], float, float, float]:
    """:func:`analyse_position`, and the difference before the correction and its standard
    error."""
    cands = _candidates(view, taken, config)
    planner = TurnPlanner(view, replies=-1)
    rows: list[list[float]] = [[] for _ in cands]
    for _ in range(config.samples):
        det = view.determinize(rng)
        for i, decision in enumerate(cands):
            rows[i].append(planner.margin(det, decision))
    n = config.samples
    means = [sum(r) / n for r in rows]
    best = max(range(len(cands)), key=lambda i: (means[i], i == 0))
    loss = mean = stderr = 0.0
    if best != 0:
        diffs = [b - t for b, t in zip(rows[best], rows[0], strict=True)]
        mean = means[best] - means[0]
        var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
        stderr = math.sqrt(var / n)
        loss = max(0.0, mean - config.shrink * stderr)
    order = sorted(range(len(cands)), key=lambda i: (-means[i], i != 0, i))
    return [(cands[i], means[i]) for i in order], loss, mean, stderr


def _start(doc: Mapping[str, Any]) -> GameState:
    """The dealt game of a verified replay."""
    species = [Species(s) for s in doc["species"]]
    return GameState.from_deck(doc["players"], species, [Card.parse(c) for c in doc["deck"]])


def verify(doc: Mapping[str, Any]) -> None:
    """Raise :class:`AnalysisError` (one line) unless ``doc`` verifies: a finished game's replay
    fully, a partial one (``"complete": false``) up to its last step."""
    try:
        if doc.get("complete") is False:
            verify_steps(doc)
        else:
            verify_replay(doc)
    except ReplayError as exc:
        raise AnalysisError(f"the replay does not verify: {exc}") from None
    except (KeyError, TypeError, ValueError) as exc:  # a header the engine cannot read
        raise AnalysisError(f"the replay does not verify: {exc}") from None


def game_state_at(doc: Mapping[str, Any], step: int) -> GameState:
    """The game of a verified replay just before step ``step``."""
    state = _start(doc)
    for i, s in enumerate(doc["steps"][:step]):
        _advance(state, s, i)
    return state


def _advance(state: GameState, step: Mapping[str, Any], i: int) -> None:
    if step.get("note"):
        return
    if step.get("kind") == "forfeit":
        state.forfeit(step["seat"])
        return
    state.apply(step_to_decision(step, f"step {i}"))


def _rng(doc: Mapping[str, Any], step: int, seed: int) -> random.Random:
    deck = ",".join(doc["deck"])
    key = hashlib.sha256(f"arena-analysis:{deck}:{step}:{seed}".encode()).hexdigest()
    return random.Random(key)


def analyse_replay(
    doc: Mapping[str, Any],
    seats: Sequence[int] | None = None,
    config: AnalysisConfig | None = None,
    steps: Container[int] | None = None,
) -> list[DecisionAnalysis]:
    """Analyse every decision with a choice of ``seats`` (all seats when None) in the replay
    ``doc``, in step order (only the step indexes in ``steps``, when given). Raises
    :class:`AnalysisError` if it does not verify or a seat is not in the game. Decisions the
    fallback made for a forfeited seat are left out."""
    config = config or AnalysisConfig()
    verify(doc)
    players = doc["players"]
    wanted = set(range(players)) if seats is None else set(seats)
    for seat in wanted:
        if not 0 <= seat < players:
            raise AnalysisError(f"seat {seat} is not in this game (seats 0 to {players - 1})")
    state = _start(doc)
    out: list[DecisionAnalysis] = []
    for i, step in enumerate(doc["steps"]):
        fault = step.get("fault")
        fault_kind = fault.get("kind") if isinstance(fault, dict) else None
        if (
            not step.get("note")
            and step.get("kind") in ("draw", "play")
            and step["seat"] in wanted
            and fault_kind != "forfeited"
            and (steps is None or i in steps)
        ):
            view = state.view(state.current_seat)
            if len(view.legal_decisions()) > 1:
                rng = _rng(doc, i, config.seed)
                out.append(_analyse_step(view, step, i, fault_kind, config, rng))
        _advance(state, step, i)
    return out


def _analyse_step(
    view: SeatView,
    step: Mapping[str, Any],
    i: int,
    fault: str | None,
    config: AnalysisConfig,
    rng: random.Random,
) -> DecisionAnalysis:
    taken = step_to_decision(step, f"step {i}")
    values, loss, difference, stderr = _position(view, taken, rng, config)
    value_taken = next(v for d, v in values if d == taken)
    best, value_best = values[0]
    return DecisionAnalysis(
        step=i,
        turn=view.turn,
        seat=view.seat,
        kind=view.kind.value,
        taken=taken,
        best=best,
        value_taken=value_taken,
        value_best=value_best,
        loss=loss,
        mark=config.mark(loss),
        candidates=len(values),
        fault=fault,
        values=values,
        difference=difference,
        stderr=stderr,
    )
