"""Replays: one JSON document per game, and their verification by re-playing through the engine.

The format is documented in ``docs/replay-format.md``. :class:`ReplayRecorder` wraps a
:class:`GameState` and records every decision as it is applied; :func:`verify_replay` re-plays a
document and raises :class:`ReplayError` naming the first step that is illegal or differs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .cards import Card, Cell, Species
from .decisions import DECK, Decision, Draw, Play
from .errors import ArboretumError, ReplayError
from .scoring import GameResult, PathScore
from .state import GameState, deal_from_seed
from .version import ENGINE_VERSION, RULES_VERSION

__all__ = [
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "ReplayRecorder",
    "load_replay",
    "result_to_json",
    "verify_replay",
]

REPLAY_FORMAT = "arboretum-replay"
REPLAY_VERSION = 1
FAULT_KINDS = ("timeout", "disconnect", "crash", "malformed", "illegal", "forfeited")


class ReplayRecorder:
    """Applies decisions to a game and records them in the replay format.

    ``fault`` marks a decision the referee applied as a fallback: ``{"kind": ..., "reason": ...}``.
    """

    def __init__(
        self,
        state: GameState,
        *,
        match_id: str,
        seats: Sequence[str],
        game_index: int = 0,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if len(seats) != state.players:
            raise ValueError(
                f"{state.players} seats need {state.players} bot names, got {len(seats)}"
            )
        if state.event_count:
            raise ValueError("a recorder must start with a fresh game")
        self.state = state
        self.match_id = match_id
        self.seats = list(seats)
        self.game_index = game_index
        self.extra = dict(extra or {})
        self._steps: list[dict[str, Any] | _Applied] = []
        self._converted = 0
        """Steps before this index are all JSON objects already."""

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The steps so far, as JSON objects. A decision is kept as it was applied until the steps
        are asked for (the referee records one per decision, and looks at them once a game)."""
        steps = self._steps
        for i in range(self._converted, len(steps)):
            step = steps[i]
            if type(step) is tuple:
                steps[i] = _decision_step(*step)
        self._converted = len(steps)
        return steps  # type: ignore[return-value]

    def apply(
        self, decision: Decision, *, ms: float | None = None, fault: Mapping[str, str] | None = None
    ) -> Card | None:
        """Validate and apply ``decision`` for the seat due, and record it."""
        state = self.state
        seat, turn = state.current_seat, state.turn
        card = state.apply(decision)
        if fault is not None:
            if fault.get("kind") not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {fault.get('kind')!r}")
            fault = {"kind": fault["kind"], "reason": str(fault.get("reason", ""))}
        self._steps.append((turn, seat, decision, card, ms, fault))
        return card

    def forfeit(self, seat: int, reason: str) -> None:
        self.state.forfeit(seat)
        self._steps.append(
            {"turn": self.state.turn, "seat": seat, "kind": "forfeit", "reason": reason}
        )

    def note(self, seat: int, kind: str, reason: str) -> None:
        """Record an event that changes nothing in the game, such as a stale answer ("stale") or a
        disconnect ("disconnect"). Verification skips notes."""
        if kind in ("draw", "play", "forfeit"):
            raise ValueError(f"{kind!r} is not a note kind")
        self._steps.append(
            {"turn": self.state.turn, "seat": seat, "kind": kind, "reason": reason, "note": True}
        )

    def to_json(self) -> dict[str, Any]:
        """The replay document. The game must be over."""
        state = self.state
        result = state.result()
        doc: dict[str, Any] = {
            "format": REPLAY_FORMAT,
            "version": REPLAY_VERSION,
            "engine": {"version": ENGINE_VERSION, "rules": RULES_VERSION},
            "match_id": self.match_id,
            "game_index": self.game_index,
            "seed": None if state.seed is None else str(state.seed),
            "players": state.players,
            "species": [s.value for s in state.species],
            "seats": [{"seat": i, "bot": name} for i, name in enumerate(self.seats)],
            "deck": [str(c) for c in state.initial_deck],
            "hands": [[str(c) for c in hand] for hand in state.initial_hands],
            "steps": self.steps,
            "final_hands": [[str(c) for c in hand] for hand in result.hands],
            "result": result_to_json(result),
        }
        doc.update(self.extra)
        return doc

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")


_Applied = tuple[int, int, Decision, Card | None, float | None, dict[str, str] | None]
"""A decision step as recorded: turn, seat, decision, card drawn, ms, fault."""


def _decision_step(
    turn: int,
    seat: int,
    decision: Decision,
    card: Card | None,
    ms: float | None,
    fault: dict[str, str] | None,
) -> dict[str, Any]:
    step: dict[str, Any] = {"turn": turn, "seat": seat}
    step.update(decision_to_json(decision, card))
    if ms is not None:
        step["ms"] = round(ms, 3)
    if fault is not None:
        step["fault"] = fault
    return step


def decision_to_json(decision: Decision, card: Card | None) -> dict[str, Any]:
    if isinstance(decision, Draw):
        out: dict[str, Any] = {"kind": "draw"}
        if decision.source == DECK:
            out["source"] = "deck"
        else:
            out["source"] = "pile"
            out["pile"] = decision.source
        out["card"] = str(card)
        return out
    return {
        "kind": "play",
        "card": str(decision.card),
        "cell": [decision.cell.x, decision.cell.y],
        "discard": None if decision.discard is None else str(decision.discard),
    }


def path_to_json(path: PathScore | None) -> dict[str, Any] | None:
    if path is None:
        return None
    return {
        "cells": [[c.x, c.y] for c in path.cells],
        "cards": [str(c) for c in path.cards],
        "card_points": path.card_points,
        "doubled": path.doubled,
        "start_bonus": path.start_bonus,
        "end_bonus": path.end_bonus,
        "points": path.points,
    }


def result_to_json(result: GameResult) -> dict[str, Any]:
    return {
        "totals": list(result.totals),
        "ranks": list(result.ranks),
        "winners": list(result.winners),
        "seats": [
            {
                "seat": s.seat,
                "total": s.total,
                "rank": s.rank,
                "species_in_arboretum": s.species_in_arboretum,
                "forfeited": s.forfeited,
                "species": [
                    {
                        "species": sp.species.value,
                        "hand_total": sp.hand_total,
                        "has_right": sp.has_right,
                        "points": sp.points,
                        "path": path_to_json(sp.path),
                    }
                    for sp in s.species
                ],
            }
            for s in result.seats
        ],
    }


def load_replay(path: Path) -> dict[str, Any]:
    """Read a replay file; raises :class:`ReplayError` if it is not a replay document."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplayError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ReplayError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ReplayError("a replay is a JSON object")
    return doc


def _field(obj: Mapping[str, Any], name: str, kind: type | tuple[type, ...], where: str) -> Any:
    if name not in obj:
        raise ReplayError(f"{where}: missing field {name!r}")
    value = obj[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReplayError(f"{where}: field {name!r} has the wrong type ({type(value).__name__})")
    return value


def _cards(texts: Any, where: str) -> list[Card]:
    if not isinstance(texts, list):
        raise ReplayError(f"{where}: expected a list of cards")
    try:
        return [Card.parse(t) for t in texts]
    except (ArboretumError, TypeError) as exc:
        raise ReplayError(f"{where}: {exc}") from None


def step_to_decision(step: Mapping[str, Any], where: str) -> Decision:
    kind = step.get("kind")
    try:
        if kind == "draw":
            source = _field(step, "source", str, where)
            if source == "deck":
                return Draw(DECK)
            if source == "pile":
                pile = _field(step, "pile", int, where)
                if pile < 0:
                    raise ReplayError(f"{where}: pile numbers are seats, 0 or more; got {pile}")
                return Draw(pile)
            raise ReplayError(f"{where}: unknown draw source {source!r}")
        if kind == "play":
            cell = _field(step, "cell", list, where)
            if len(cell) != 2 or not all(type(v) is int for v in cell):
                raise ReplayError(f"{where}: a cell is [x, y] with integers")
            discard = step.get("discard")
            if discard is not None and not isinstance(discard, str):
                raise ReplayError(f"{where}: field 'discard' is a card or null")
            return Play(
                Card.parse(_field(step, "card", str, where)),
                Cell(cell[0], cell[1]),
                None if discard is None else Card.parse(discard),
            )
    except ArboretumError as exc:
        if isinstance(exc, ReplayError):
            raise
        raise ReplayError(f"{where}: {exc}") from None
    raise ReplayError(f"{where}: unknown step kind {kind!r}")


def verify_replay(doc: Mapping[str, Any]) -> GameResult:
    """Re-play a replay document through the engine and check every recorded fact.

    Returns the recomputed result; raises :class:`ReplayError` naming the first step (or header
    field) that is illegal or differs from the record.
    """
    if doc.get("format") != REPLAY_FORMAT:
        raise ReplayError(f"not an Arboretum replay (format {doc.get('format')!r})")
    version = doc.get("version")
    if version != REPLAY_VERSION:
        raise ReplayError(f"replay version {version!r} is not supported (this engine reads 1)")
    players = _field(doc, "players", int, "header")
    try:
        species = [Species(s) for s in _field(doc, "species", list, "header")]
    except ValueError as exc:
        raise ReplayError(f"header: {exc}") from None
    deck = _cards(_field(doc, "deck", list, "header"), "header deck")
    try:
        state = GameState.from_deck(players, species, deck)
    except ArboretumError as exc:
        raise ReplayError(f"header: {exc}") from None
    seed_text = doc.get("seed")
    if seed_text is not None:
        try:
            seed = int(seed_text)
        except (TypeError, ValueError):
            raise ReplayError(f"header: seed {seed_text!r} is not an integer") from None
        _check_seed_deal(players, seed, species, deck)
        state.seed = seed
    seats = _field(doc, "seats", list, "header")
    if len(seats) != players:
        raise ReplayError(f"header: {players} players but {len(seats)} seats")
    hands = _field(doc, "hands", list, "header")
    if [_cards(h, "header hands") for h in hands] != [list(h) for h in state.initial_hands]:
        raise ReplayError("header: the dealt hands do not follow from the deck")
    for i, step in enumerate(_field(doc, "steps", list, "header")):
        if not isinstance(step, dict):
            raise ReplayError("a step is a JSON object", i)
        kind = step.get("kind")
        if step.get("note"):
            continue
        seat = step.get("seat")
        if kind == "forfeit":
            if type(seat) is not int or not 0 <= seat < players:
                raise ReplayError(f"forfeit of an unknown seat {seat!r}", i)
            state.forfeit(seat)
            continue
        if seat != state.current_seat:
            raise ReplayError(f"recorded for seat {seat!r} but seat {state.current_seat} is due", i)
        if step.get("turn") != state.turn:
            raise ReplayError(f"recorded in turn {step.get('turn')!r}, expected {state.turn}", i)
        try:
            decision = step_to_decision(step, "decision")
        except ReplayError as exc:
            raise ReplayError(str(exc), i) from None
        try:
            card = state.apply(decision)
        except ArboretumError as exc:
            raise ReplayError(f"{decision}: {exc}", i) from None
        if kind == "draw" and str(card) != step.get("card"):
            raise ReplayError(f"the draw gives {card}, the replay says {step.get('card')!r}", i)
    if not state.is_over:
        raise ReplayError(
            f"the steps end before the game does ({state.decision_kind.value} is due)"
        )
    result = state.result()
    final = [_cards(h, "final_hands") for h in _field(doc, "final_hands", list, "final")]
    if [sorted(h) for h in final] != [list(h) for h in result.hands]:
        raise ReplayError("final: the final hands differ from the re-played game")
    recorded = _field(doc, "result", dict, "final")
    expected = result_to_json(result)
    for key in ("totals", "ranks", "winners"):
        if recorded.get(key) != expected[key]:
            raise ReplayError(
                f"final: {key} recorded as {recorded.get(key)!r}, re-played as {expected[key]!r}"
            )
    if recorded.get("seats") != expected["seats"]:
        got_seats = recorded.get("seats")
        got_seats = got_seats if isinstance(got_seats, list) else []
        for got, want in zip(got_seats, expected["seats"], strict=False):
            if got != want:
                raise ReplayError(
                    f"final: the scoring of seat {want['seat']} differs: {got!r} "
                    f"re-played as {want!r}"
                )
        raise ReplayError("final: the scoring explanation differs")
    return result


def _check_seed_deal(players: int, seed: int, species: list[Species], deck: list[Card]) -> None:
    try:
        drawn, order = deal_from_seed(players, seed)
        if list(drawn) != sorted(species, key=lambda s: s.index):
            drawn, order = deal_from_seed(players, seed, species)
    except ArboretumError as exc:
        raise ReplayError(f"header: {exc}") from None
    if [c.id for c in deck] != order:
        raise ReplayError("header: the deck order does not follow from the seed")
