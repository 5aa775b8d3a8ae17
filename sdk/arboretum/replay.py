"""Replays: one JSON document per game, and their verification by re-playing through the engine.

The format is documented in ``docs/replay-format.md``. :class:`ReplayRecorder` wraps a
:class:`GameState` and records every decision as it is applied; :func:`verify_replay` re-plays a
document and raises :class:`ReplayError` naming the first step that is illegal or differs.

Since version 2 every step carries ``digest``: a link of a hash chain over the game, computed from
the previous link, the step as recorded and the game state after it (:func:`step_digest`). An edit
anywhere, even one that leaves a legal game (another card of the hand played), is found at the
step it changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cards import Card, Cell, Species
from .decisions import DECK, Decision, Draw, Play
from .digests import Chain, Position, chain_start, position_bytes, step_digest
from .errors import ArboretumError, ReplayError
from .scoring import GameResult, PathScore
from .seeds import deal_from_seed
from .state import GameState
from .version import ENGINE_VERSION, RULES_VERSION

__all__ = [
    "READABLE_VERSIONS",
    "REPLAY_FORMAT",
    "REPLAY_VERSION",
    "ReplayCheck",
    "ReplayRecorder",
    "chain_start",
    "load_replay",
    "position_bytes",
    "result_to_json",
    "step_digest",
    "verify_replay",
    "verify_steps",
]

REPLAY_FORMAT = "arboretum-replay"
REPLAY_VERSION = 2
"""The version this engine writes. Version 2 added the ``digest`` of every step."""
READABLE_VERSIONS = (1, 2)
"""The versions this engine verifies: version 1 replays (no digests) still verify."""
FAULT_KINDS = ("timeout", "disconnect", "crash", "malformed", "illegal", "bot_error", "forfeited")


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
        """Steps before this index are all JSON objects already, with their digests."""
        self._start = state.copy()
        self._chain: Chain | None = None
        """The digests' game, built when the steps are first asked for."""

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The steps so far, as JSON objects with their digests. A decision is kept as it was
        applied until the steps are asked for (the referee records one per decision, and looks
        at them once a game); the digests are computed then, on a copy of the game of its own
        that follows the steps, so that applying a decision costs nothing more."""
        steps = self._steps
        if self._converted == len(steps):
            return steps  # type: ignore[return-value]
        chain = self._chain
        if chain is None:
            start = self._start
            chain = self._chain = Chain(start, chain_start(start))
        for i in range(self._converted, len(steps)):
            recorded = steps[i]
            if isinstance(recorded, tuple):
                step = steps[i] = _decision_step(*recorded)
                chain.state.push(recorded[2])
            else:
                step = recorded
                if step["kind"] == "forfeit":
                    chain.state.forfeit(step["seat"])
            chain.link(step)
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
        doc = self._header()
        doc["steps"] = self.steps
        doc["final_hands"] = [[str(c) for c in hand] for hand in result.hands]
        doc["result"] = result_to_json(result)
        doc.update(self.extra)
        return doc

    def partial_json(self, reason: str = "") -> dict[str, Any]:
        """The replay of a game that is not over (or was stopped): the header and the steps so far,
        ``"complete": false``, the ``"stopped"`` reason if given, and no result. It verifies with
        ``verify_steps`` (``arena replay verify --partial``)."""
        doc = self._header()
        doc["steps"] = list(self.steps)
        doc["complete"] = False
        if reason:
            doc["stopped"] = reason
        doc.update(self.extra)
        return doc

    def _header(self) -> dict[str, Any]:
        state = self.state
        return {
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
        }

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
    """Read a replay file; raises :class:`ReplayError` if it is not a replay document (its
    message says what is wrong with the file, and leaves naming the file to the caller)."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise ReplayError(f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReplayError(f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
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


@dataclass(frozen=True)
class ReplayCheck:
    """What :func:`verify_steps` checked: the steps, and the game they lead to."""

    steps: int
    """How many steps were checked (notes included)."""
    digests: bool
    """Whether the steps carried digests (version 2 and later), all of them checked."""
    state: GameState
    """The game re-played up to the last step."""
    stopped: str | None = None
    """Why the game was stopped, when the document says so (a partial replay)."""

    def describe(self) -> str:
        state = self.state
        links = "digests checked" if self.digests else "no digests (version 1)"
        steps = f"{self.steps} step{'' if self.steps == 1 else 's'}"
        if state.is_over:
            where = "the game is over"
        else:
            where = (
                f"unfinished: turn {state.turn}, seat {state.current_seat} due "
                f"({state.decision_kind.value})"
            )
        stopped = f"; stopped: {self.stopped}" if self.stopped else ""
        return f"{steps}, {links}; {where}{stopped}"


def verify_steps(doc: Mapping[str, Any]) -> ReplayCheck:
    """Check a replay's header and re-play its steps, which may end before the game does (a
    partial replay of a cancelled or drained game, ``"complete": false``).

    Raises :class:`ReplayError` naming the first step (or header field) that is illegal or
    differs from the record; in a version 2 replay that is the first step whose digest differs.
    """
    if doc.get("format") != REPLAY_FORMAT:
        raise ReplayError(f"not an Arboretum replay (format {doc.get('format')!r})")
    version = doc.get("version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        readable = " and ".join(map(str, READABLE_VERSIONS))
        raise ReplayError(
            f"replay version {version!r} is not supported (this engine reads {readable})"
        )
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
    digests = version >= 2
    link = chain_start(state) if digests else ""
    position = Position(state)
    steps = _field(doc, "steps", list, "header")
    if not digests and any(isinstance(step, dict) and "digest" in step for step in steps):
        # Version 1 had no digests: steps that carry them were written as version 2 or later, and
        # a lowered version must not switch their check off.
        raise ReplayError(f"header: a version {version} replay has no digests, but its steps do")
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise ReplayError("a step is a JSON object", i)
        _replay_step(state, step, players, i)
        if digests:
            link = _check_digest(link, step, state, position, i)
    stopped = doc.get("stopped")
    return ReplayCheck(len(steps), digests, state, stopped if isinstance(stopped, str) else None)


def _replay_step(state: GameState, step: dict[str, Any], players: int, i: int) -> None:
    """Apply one recorded step to ``state`` (notes change nothing), or raise naming step ``i``."""
    kind = step.get("kind")
    if step.get("note"):
        return
    seat = step.get("seat")
    if kind == "forfeit":
        if type(seat) is not int or not 0 <= seat < players:
            raise ReplayError(f"forfeit of an unknown seat {seat!r}", i)
        state.forfeit(seat)
        return
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


def _check_digest(
    previous: str, step: dict[str, Any], state: GameState, position: Position, i: int
) -> str:
    recorded = step.get("digest")
    if not isinstance(recorded, str):
        raise ReplayError("missing field 'digest' (every step of a version 2 replay has one)", i)
    expected = step_digest(previous, step, state, position.bytes())
    if recorded != expected:
        raise ReplayError(
            f"the digest differs (recorded {recorded!r}, re-played {expected!r}): this step or "
            "the game state after it is not what was played",
            i,
        )
    return expected


def verify_replay(doc: Mapping[str, Any]) -> GameResult:
    """Re-play a replay document through the engine and check every recorded fact.

    Returns the recomputed result; raises :class:`ReplayError` naming the first step (or header
    field) that is illegal or differs from the record. The game must be over (for a partial
    replay, see :func:`verify_steps`).
    """
    state = verify_steps(doc).state
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
                where, mine, theirs = _first_difference(got, want)
                raise ReplayError(
                    f"final: the scoring of seat {want['seat']} differs at {where or 'its top'}: "
                    f"recorded {_short(mine)}, re-played {_short(theirs)}"
                )
        raise ReplayError("final: the scoring explanation differs")
    return result


_MISSING = object()


def _first_difference(got: Any, want: Any, where: str = "") -> tuple[str, Any, Any]:
    """The path of the first place where ``got`` differs from ``want``, and both values there."""
    if isinstance(got, dict) and isinstance(want, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            a, b = got.get(key, _MISSING), want.get(key, _MISSING)
            if a != b:
                return _first_difference(a, b, f"{where}.{key}" if where else str(key))
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for index, (a, b) in enumerate(zip(got, want, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}[{index}]")
    return where, got, want


def _short(value: Any, limit: int = 80) -> str:
    if value is _MISSING:
        return "nothing"
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _check_seed_deal(players: int, seed: int, species: list[Species], deck: list[Card]) -> None:
    try:
        drawn, order = deal_from_seed(players, seed)
        if list(drawn) != sorted(species, key=lambda s: s.index):
            drawn, order = deal_from_seed(players, seed, species)
    except ArboretumError as exc:
        raise ReplayError(f"header: {exc}") from None
    if [c.id for c in deck] != order:
        raise ReplayError("header: the deck order does not follow from the seed")
