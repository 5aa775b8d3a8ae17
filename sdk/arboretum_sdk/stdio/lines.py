"""The line protocol's messages (``docs/stdio-protocol.md``): SDK values to JSON lines and back.

Pure conversion, no I/O: the bridge (:mod:`arboretum_sdk.stdio.child`) writes what this module
builds and reads through it what the bot answers. The arena's messages are built from the same
values the SDK gives a Python bot (:class:`~arboretum.SeatView`, :class:`~arboretum_sdk.Clock`,
:class:`~arboretum_sdk.MatchInfo`, ...); :func:`view_from_json` reads a view back (a round trip
the tests check), and :func:`parse_answer` reads a bot's line into a :class:`~arboretum.Decision`.

A line that is not a well-formed answer raises :class:`LineError`: its ``reason`` is what the
referee records and never quotes the line (the bot's own text never reaches the referee);
``detail`` adds the offending text, for the bot's log.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from arboretum import (
    DECK,
    Arboretum,
    Card,
    Cell,
    Decision,
    DecisionKind,
    Draw,
    Play,
    SeatView,
    Species,
)
from arboretum.errors import NotationError
from arboretum.grid import LIMIT
from arboretum.replay import result_to_json

from ..info import Clock, FaultNotice, GameEnd, GameInfo, MatchEnd, MatchInfo

__all__ = [
    "MAX_LINE_BYTES",
    "PROTOCOL",
    "VERSION",
    "LineError",
    "answer_id",
    "decision_from_json",
    "decision_to_json",
    "encode",
    "fault_message",
    "game_end_message",
    "game_start_message",
    "hello_message",
    "match_end_message",
    "match_start_message",
    "parse_line",
    "request_message",
    "view_from_json",
    "view_to_json",
]

PROTOCOL = "arboretum-stdio"
VERSION = 1
MAX_LINE_BYTES = 4096
"""The longest line a bot may write, its newline included."""

_DRAW_KEYS = frozenset({"id", "draw"})
_PLAY_KEYS = frozenset({"id", "play", "cell", "discard"})
_ALL_KEYS = "id, draw, play, cell, discard"
_CARD_TEXT = {card: str(card) for card in (Card.from_id(i) for i in range(80))}


class LineError(ValueError):
    """A bot's line that is not a well-formed answer.

    ``reason`` is fixed text (with numbers at most), safe to hand the referee; ``detail`` may
    quote the bot's line, for its log only.
    """

    def __init__(self, reason: str, detail: object = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self._detail = detail

    @property
    def detail(self) -> str:
        return str(self._detail)


# ----------------------------------------------------------------------------- arena -> bot


_ENCODER = json.JSONEncoder(separators=(",", ":"))
"""One encoder for every line (``json.dumps`` with options builds one per call). Its output is
ASCII (other characters as ``\\u`` escapes), which is UTF-8 too, and faster to write."""


def encode(message: Mapping[str, Any]) -> bytes:
    """One line: compact JSON (no whitespace outside strings) and a newline."""
    return _ENCODER.encode(message).encode() + b"\n"


def hello_message() -> dict[str, Any]:
    return {
        "type": "hello",
        "protocol": PROTOCOL,
        "version": VERSION,
        "max_line_bytes": MAX_LINE_BYTES,
    }


def match_start_message(info: MatchInfo) -> dict[str, Any]:
    return {
        "type": "match_start",
        "match_id": info.match_id,
        "seat": info.seat,
        "players": info.players,
        "games": info.game_count,
        "names": list(info.seat_names),
        "clock": {
            "per_decision_ms": info.time_control.per_decision_ms,
            "bank_ms": info.time_control.bank_ms,
        },
        "faults_to_forfeit": info.fault_policy.faults_to_forfeit,
    }


def game_start_message(info: GameInfo) -> dict[str, Any]:
    return {
        "type": "game_start",
        "game": info.game_index,
        "games": info.game_count,
        "species": [s.value for s in info.species],
        "seed": str(info.bot_seed),
        "view": view_to_json(info.view),
    }


def request_message(number: int, game_index: int, view: SeatView, clock: Clock) -> dict[str, Any]:
    """The request for decision ``number``: the seat's view, its legal options and its clock."""
    play = view.kind is DecisionKind.PLAY
    if play:
        legal_cells = [[c.x, c.y] for c in view.arboretums[view.seat].legal_cells()]
        sources: list[Any] = []
    else:
        legal_cells = []
        sources = ["deck"] if view.deck_size else []
        sources += [s for s, pile in enumerate(view.discard_piles) if pile]
    return {
        "type": "request",
        "id": number,
        "game": game_index,
        "kind": view.kind.value,
        "view": view_to_json(view),
        "legal_sources": sources,
        "legal_cells": legal_cells,
        "discard_required": bool(play and view.discard_required),
        "clock": {
            "per_decision_ms": clock.per_decision_ms,
            "bank_left_ms": clock.bank_left_ms,
            "elapsed_ms": clock.elapsed_ms,
            "limit_ms": clock.limit_ms,
        },
    }


def fault_message(notice: FaultNotice) -> dict[str, Any]:
    return {
        "type": "fault",
        "id": notice.decision_number,
        "game": notice.game_index,
        "kind": notice.kind.value,
        "reason": notice.reason,
        "fallback": decision_to_json(notice.fallback),
        "faults": notice.faults,
        "forfeited": notice.forfeited,
    }


def game_end_message(end: GameEnd) -> dict[str, Any]:
    return {
        "type": "game_end",
        "game": end.game_index,
        "result": result_to_json(end.result),
        "final_hands": [[_CARD_TEXT[c] for c in hand] for hand in end.result.hands],
    }


def match_end_message(end: MatchEnd) -> dict[str, Any]:
    return {
        "type": "match_end",
        "status": end.status.value,
        "reason": end.reason,
        "games": end.games_finished,
    }


def view_to_json(view: SeatView) -> dict[str, Any]:
    """The view as the protocol writes it (``docs/stdio-protocol.md``, ``request``)."""
    text = _CARD_TEXT
    return {
        "seat": view.seat,
        "players": view.players,
        "species": [s.value for s in view.species],
        "turn": view.turn,
        "current_seat": view.current_seat,
        "kind": view.kind.value,
        "hand": [text[c] for c in view.hand],
        "arboretums": [
            [{"card": text[card], "cell": [cell.x, cell.y]} for cell, card in arb.items()]
            for arb in view.arboretums
        ],
        "discard_piles": [[text[c] for c in pile] for pile in view.discard_piles],
        "deck_size": view.deck_size,
        "hand_sizes": list(view.hand_sizes),
        "known_cards": [[text[c] for c in known] for known in view.known_cards],
        "discard_required": view.discard_required,
        "last_turn": view.last_turn,
        "forfeited": list(view.forfeited),
    }


def view_from_json(obj: Any) -> SeatView:
    """A view back from its JSON form; ``ValueError`` naming the key on a malformed one."""
    if not isinstance(obj, dict):
        raise ValueError("view: not an object")
    try:
        arboretums = tuple(
            Arboretum({_cell(p["cell"], "view.arboretums"): _card(p["card"]) for p in arb})
            for arb in obj["arboretums"]
        )
        return SeatView(
            seat=_int(obj["seat"], "view.seat"),
            players=_int(obj["players"], "view.players"),
            species=tuple(Species(s) for s in obj["species"]),
            turn=_int(obj["turn"], "view.turn"),
            current_seat=_int(obj["current_seat"], "view.current_seat"),
            kind=DecisionKind(obj["kind"]),
            hand=tuple(_card(c) for c in obj["hand"]),
            arboretums=arboretums,
            discard_piles=tuple(tuple(_card(c) for c in pile) for pile in obj["discard_piles"]),
            deck_size=_int(obj["deck_size"], "view.deck_size"),
            hand_sizes=tuple(_int(n, "view.hand_sizes") for n in obj["hand_sizes"]),
            known_cards=tuple(tuple(_card(c) for c in k) for k in obj["known_cards"]),
            discard_required=bool(obj["discard_required"]),
            last_turn=bool(obj["last_turn"]),
            forfeited=tuple(bool(f) for f in obj["forfeited"]),
        )
    except KeyError as exc:
        raise ValueError(f"view: no key {exc.args[0]!r}") from None
    except (TypeError, NotationError) as exc:
        raise ValueError(f"view: {exc}") from None


def _int(value: Any, where: str) -> int:
    if type(value) is not int:
        raise ValueError(f"{where}: not an integer")
    return value


def _card(text: Any) -> Card:
    if not isinstance(text, str):
        raise TypeError("a card is a string")
    return Card.parse(text)


def _cell(value: Any, where: str) -> Cell:
    if not isinstance(value, list) or len(value) != 2 or any(type(v) is not int for v in value):
        raise ValueError(f"{where}: a cell is [x, y], two integers")
    return Cell(value[0], value[1])


# ----------------------------------------------------------------------------- bot -> arena


def decision_to_json(decision: Decision) -> dict[str, Any]:
    """A decision in the answer's form, without the ``id``."""
    if isinstance(decision, Draw):
        return {"draw": "deck" if decision.source == DECK else decision.source}
    out: dict[str, Any] = {
        "play": _CARD_TEXT[decision.card],
        "cell": [decision.cell.x, decision.cell.y],
    }
    if decision.discard is not None:
        out["discard"] = _CARD_TEXT[decision.discard]
    return out


def parse_line(raw: bytes) -> dict[str, Any]:
    """A bot's line (without its newline) as a JSON object; :class:`LineError` otherwise."""
    if len(raw) + 1 > MAX_LINE_BYTES:
        raise LineError(
            f"the line is longer than the {MAX_LINE_BYTES} bytes a line may have",
            f"{len(raw) + 1} bytes, starting {_quote(raw)}",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LineError("the line is not UTF-8", f"{exc}; the line: {_quote(raw)}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:  # (its msg is fixed text, positions are numbers)
        raise LineError(
            f"the line is not JSON ({exc.msg} at column {exc.colno})", f"the line: {_quote(raw)}"
        ) from None
    except RecursionError:
        raise LineError("the line is not JSON (nested too deeply)", _quote(raw)) from None
    if not isinstance(obj, dict):
        raise LineError(
            f"the line is a JSON {_json_type(obj)}, not an object", f"the line: {_quote(raw)}"
        )
    return obj


def answer_id(obj: Mapping[str, Any]) -> int:
    """The answer's ``id``; :class:`LineError` when it is missing or not an integer."""
    value = obj.get("id")
    if type(value) is not int:
        raise LineError('the answer\'s "id" is missing or not an integer', f"the answer: {obj!r}")
    return value


def decision_from_json(
    obj: Mapping[str, Any], kind: DecisionKind, discard_required: bool
) -> Decision:
    """The decision of an answer to a request of ``kind``; :class:`LineError` naming what is
    wrong (a well-formed decision may still be illegal: the referee judges that)."""
    detail = _Quoted(obj)
    if kind is DecisionKind.PLAY:
        if "draw" in obj:
            raise LineError('a play was asked, but the answer has "draw"', detail)
        unknown = [k for k in obj if k not in _PLAY_KEYS]
        if unknown:
            raise LineError(
                f"the answer has a key the protocol does not define (keys: {_ALL_KEYS})",
                _Quoted(obj, f"unknown keys {unknown!r}; "),
            )
        if "play" not in obj:
            raise LineError('a play was asked, but the answer has no "play"', detail)
        card = _answer_card(obj["play"], "play", detail)
        if "cell" not in obj:
            raise LineError('the answer has no "cell"', detail)
        cell = obj["cell"]
        if not isinstance(cell, list) or len(cell) != 2 or any(type(v) is not int for v in cell):
            raise LineError('the answer\'s "cell" is not [x, y], two integers', detail)
        if any(abs(v) > LIMIT for v in cell):
            raise LineError(f'the answer\'s "cell" is out of range (at most {LIMIT})', detail)
        discard_value = obj.get("discard")
        if discard_value is None:
            if discard_required:
                raise LineError('the answer has no "discard" (a discard is required)', detail)
            return Play(card, Cell(cell[0], cell[1]), None)
        if not discard_required:
            raise LineError(
                'the answer has a "discard", but none is allowed (the second draw was skipped)',
                detail,
            )
        return Play(card, Cell(cell[0], cell[1]), _answer_card(discard_value, "discard", detail))
    if "play" in obj:
        raise LineError(f'a {kind.value} was asked, but the answer has "play"', detail)
    unknown = [k for k in obj if k not in _DRAW_KEYS]
    if unknown:
        raise LineError(
            f"the answer has a key the protocol does not define (keys: {_ALL_KEYS})",
            _Quoted(obj, f"unknown keys {unknown!r}; "),
        )
    if "draw" not in obj:
        raise LineError(f'a {kind.value} was asked, but the answer has no "draw"', detail)
    source = obj["draw"]
    if source == "deck":
        return Draw(DECK)
    if type(source) is not int:
        raise LineError('the answer\'s "draw" is neither "deck" nor a seat number', detail)
    if source < 0 or source > LIMIT:
        raise LineError('the answer\'s "draw" is not a seat number (0 or more)', detail)
    return Draw(source)


class _Quoted:
    """An answer quoted for the log, formatted only when a :class:`LineError` is logged."""

    __slots__ = ("obj", "prefix")

    def __init__(self, obj: Mapping[str, Any], prefix: str = "") -> None:
        self.obj = obj
        self.prefix = prefix

    def __str__(self) -> str:
        return f"{self.prefix}the answer: {_quote(json.dumps(self.obj).encode())}"


def _answer_card(value: Any, key: str, detail: _Quoted) -> Card:
    if isinstance(value, str) and len(value) <= 16:
        try:
            return Card.parse(value)
        except NotationError:
            pass
    raise LineError(
        f'the answer\'s "{key}" is not a card (a species code and a value, like OA5)', detail
    )


def _json_type(obj: Any) -> str:
    if isinstance(obj, list):
        return "list"
    if isinstance(obj, str):
        return "string"
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    return "number"


def _quote(raw: bytes, limit: int = 200) -> str:
    text = raw[:limit].decode("utf-8", "replace")
    return repr(text) + ("..." if len(raw) > limit else "")
