"""A seat's output per decision: the captured output split at the SDK's markers
(:mod:`arboretum_sdk.output`), each decision's lines tied to the replay's game and step, capped,
and stored with the match (``Keys.bot_output``), private to the bot's owner like its log.

The referee numbers the decisions it asks across the whole match, from 1; every decision it asks
ends as one ``draw`` or ``play`` step of a replay (its answer, or the fallback after a fault),
and the steps it does not ask are notes, forfeits and a forfeited seat's turns (fault kind
``forfeited``). :func:`decision_steps` reads that numbering back from the match's replays, so a
line of decision 24 is shown at the step the replay records it, in the replay's own numbers.
The caps are documented in ``docs/bot-runtime.md``.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arboretum_sdk.output import MARK, parse_marker

from .keys import Keys, StoreError

if TYPE_CHECKING:
    import redis

__all__ = [
    "DECISION_LINES",
    "GAME_LINES",
    "LINE_CHARS",
    "DecisionStep",
    "SplitOutput",
    "decision_steps",
    "game_output",
    "get_output",
    "save_output",
    "split_output",
]

DECISION_LINES = 200
"""Lines kept per decision (its step); past it, one note says how many were dropped."""
GAME_LINES = 2000
"""Lines kept per game (its steps and between them); past it, one note at the game's end."""
LINE_CHARS = 1000
"""Characters kept per line; a longer line is cut, and says how much."""
VERSION = 1
_DECISION = re.compile(r"\bdecision (\d+)\b")


@dataclass(frozen=True, slots=True)
class DecisionStep:
    """Where the replay records a decision the referee asked."""

    game: int
    step: int
    seat: int
    turn: int
    kind: str


def decision_steps(replays: Sequence[dict[str, Any]]) -> dict[int, DecisionStep]:
    """The referee's decision numbers of a match (from 1) to their replay steps; ``replays`` are
    the match's games in order, from game 0."""
    steps: dict[int, DecisionStep] = {}
    number = 0
    for doc in replays:
        game = int(doc.get("game_index", 0))
        for index, step in enumerate(doc.get("steps", ())):
            if step.get("kind") not in ("draw", "play") or step.get("note"):
                continue
            if (step.get("fault") or {}).get("kind") == "forfeited":
                continue  # a forfeited seat's turn: played without asking
            number += 1
            steps[number] = DecisionStep(
                game, index, int(step.get("seat", -1)), int(step.get("turn", 0)), step["kind"]
            )
    return steps


@dataclass
class _Game:
    steps: dict[int, dict[str, Any]] = field(default_factory=dict)
    between: list[str] = field(default_factory=list)
    kept: int = 0
    dropped: int = 0


@dataclass
class SplitOutput:
    """A seat's output split per decision: ``log`` is the whole text (markers out, no line
    dropped) with each decision's lines headed by its game and step; ``doc`` the per-step JSON
    stored with the match, within the caps."""

    log: str
    doc: dict[str, Any]


def _cut(line: str) -> str:
    if len(line) <= LINE_CHARS:
        return line
    return f"{line[:LINE_CHARS]}[arena: {len(line) - LINE_CHARS} more characters cut]"


def _dropped_note(count: int, what: str) -> str:
    return f"[arena: {count} {'line' if count == 1 else 'lines'} dropped ({what})]"


class _Splitter:
    def __init__(self, steps: dict[int, DecisionStep], seat: int) -> None:
        self.steps = steps
        self.seat = seat
        self.games: dict[int, _Game] = {}
        self.before: list[str] = []
        self.before_dropped = 0
        self.log: list[str] = []
        self.current: DecisionStep | None = None
        self.number = 0
        self.game: int | None = None
        self.headed = False

    def _game(self, index: int) -> _Game:
        return self.games.setdefault(index, _Game())

    def marker(self, begin: bool, number: int | None) -> None:
        self.close()
        if not begin or number is None:
            return
        found = self.steps.get(number)
        if found is None or found.seat != self.seat:
            return  # not one of this seat's decisions: its lines stay between decisions
        self.current, self.number, self.game = found, number, found.game

    def close(self) -> None:
        current = self.current
        if current is not None:
            entry = self._game(current.game).steps.get(current.step)
            if entry is not None and entry["dropped"] and not entry["noted"]:
                note = _dropped_note(entry["dropped"], f"past {DECISION_LINES} in a decision")
                entry["lines"].append(note)
                entry["noted"] = True
        self.current = None
        self.headed = False

    def line(self, text: str) -> None:
        """One line: into the log (whole: its own byte cap applies later) and, within the caps,
        into its step's or its game's lines."""
        current = self.current
        if current is None:
            self.log.append(text)
            text = _cut(text)
            if self.game is None:
                if len(self.before) < GAME_LINES:
                    self.before.append(text)
                else:
                    self.before_dropped += 1
                return
            game = self._game(self.game)
            if game.kept >= GAME_LINES:
                game.dropped += 1
                return
            game.kept += 1
            game.between.append(text)
            return
        # The SDK's own messages name the referee's decision number: say the replay's instead.
        if "decision " in text:
            number, step = str(self.number), f"step {current.step}"
            text = _DECISION.sub(lambda m: step if m[1] == number else m[0], text)
        if not self.headed:
            self.headed = True
            self.log.append(
                f"--- game {current.game}, step {current.step} "
                f"(turn {current.turn}, {current.kind}) ---"
            )
        self.log.append(text)
        text = _cut(text)
        game = self._game(current.game)
        entry = game.steps.setdefault(
            current.step,
            {
                "step": current.step,
                "turn": current.turn,
                "kind": current.kind,
                "lines": [],
                "dropped": 0,
                "noted": False,
            },
        )
        if game.kept >= GAME_LINES:
            game.dropped += 1
            return
        if len(entry["lines"]) >= DECISION_LINES:
            entry["dropped"] += 1
            return
        game.kept += 1
        entry["lines"].append(text)

    def finish(self) -> dict[str, Any]:
        self.close()
        games = {}
        for index in sorted(self.games):
            game = self.games[index]
            between = list(game.between)
            if game.dropped:
                between.append(_dropped_note(game.dropped, f"past {GAME_LINES} in a game"))
            games[str(index)] = {
                "steps": [
                    {k: v for k, v in entry.items() if k != "noted"}
                    for _, entry in sorted(game.steps.items())
                ],
                "between": between,
                "dropped": game.dropped,
            }
        return {
            "version": VERSION,
            "seat": self.seat,
            "caps": {
                "decision_lines": DECISION_LINES,
                "game_lines": GAME_LINES,
                "line_chars": LINE_CHARS,
            },
            "before": self.before
            + (
                [_dropped_note(self.before_dropped, f"past {GAME_LINES} before a decision")]
                if self.before_dropped
                else []
            ),
            "games": games,
        }


def split_output(text: str, nonce: str, steps: dict[int, DecisionStep], seat: int) -> SplitOutput:
    """Split seat ``seat``'s captured ``text`` at the markers with ``nonce``; lines of a marker
    that names no decision of this seat stay between decisions."""
    splitter = _Splitter(steps, seat)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for index, raw in enumerate(lines):
        found = parse_marker(raw, nonce)
        if found is not None:
            splitter.marker(*found)
            continue
        if raw == "" and index + 1 < len(lines) and lines[index + 1].startswith(MARK):
            continue  # the line break a marker writes first, to start on a line of its own
        splitter.line(raw.rstrip("\r"))
    doc = splitter.finish()
    log = "\n".join(splitter.log)
    return SplitOutput(log + "\n" if log else "", doc)


def save_output(r: redis.Redis, match_id: str, seat: int, doc: dict[str, Any]) -> None:
    """Store a seat's per-step output (zlib-compressed JSON), replacing a stale run's."""
    raw = json.dumps(doc, separators=(",", ":")).encode()
    r.set(Keys.bot_output(match_id, seat), zlib.compress(raw, 6))


def get_output(r: redis.Redis, match_id: str, seat: int) -> dict[str, Any] | None:
    """A seat's per-step output of a match, or None when none was stored."""
    raw: Any = r.get(Keys.bot_output(match_id, seat))
    if raw is None:
        return None
    try:
        doc = json.loads(zlib.decompress(bytes(raw)))
    except (zlib.error, ValueError) as exc:
        raise StoreError(f"a stored bot output is not zlib-compressed JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise StoreError("a stored bot output is not a JSON object")
    return doc


def game_output(doc: dict[str, Any] | None, game: int) -> dict[str, Any]:
    """One game's part of a seat's output: its steps' lines and the lines between them."""
    part = ((doc or {}).get("games") or {}).get(str(int(game))) or {}
    return {
        "caps": (doc or {}).get("caps")
        or {"decision_lines": DECISION_LINES, "game_lines": GAME_LINES, "line_chars": LINE_CHARS},
        "steps": list(part.get("steps", ())),
        "between": list(part.get("between", ())),
        "dropped": int(part.get("dropped", 0)),
    }
