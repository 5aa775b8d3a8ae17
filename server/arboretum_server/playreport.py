"""What ``arena play`` reports: its entrants, each rotation's match as the runner saw it, the
totals per bot, and each bot's first fault and first error (the referee's reason and the bot's
log), as a table or as JSON.

The runner (:mod:`arboretum_server.local`) fills these in; nothing here runs a match.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arboretum_sdk.clitools import plural
from arboretum_sdk.info import GameEnd

__all__ = [
    "Entrant",
    "EntrantTotals",
    "FirstFault",
    "MatchRun",
    "PlayReport",
    "note_first_faults",
]


@dataclass(frozen=True)
class Entrant:
    """One of the bots named on the command line: ``index`` is its position there."""

    index: int
    spec: str
    """What ``arena bot run`` gets: a built-in name, an absolute path, or ``cmd:COMMAND``."""
    name: str
    """Display name: the built-in name or the file's stem; ``#k`` added to tell twins apart."""


@dataclass
class EntrantTotals:
    games: int = 0
    wins: float = 0.0
    points: int = 0
    rank_sum: int = 0
    faults: int = 0
    forfeits: int = 0
    crashes: int = 0


@dataclass
class MatchRun:
    """One rotation's match, as the runner saw it."""

    rotation: int
    match_id: str = ""
    seats: tuple[int, ...] = ()
    status: str = ""
    reason: str = ""
    results: list[GameEnd] = field(default_factory=list)
    """The finished games, by game index (the engine's result and the seats' faults)."""
    replays: list[Path] = field(default_factory=list)
    crashes: list[tuple[int, str]] = field(default_factory=list)
    """(seat, what happened) for each bot process that exited before the match ended."""
    seconds: float = 0.0
    started: bool = False
    """Whether the first game has started (all seats connected, or the start timeout passed)."""
    logs: dict[int, Path] = field(default_factory=dict)
    """Each seat's bot log."""
    first_faults: dict[int, FirstFault] = field(default_factory=dict)
    """Each seat's first fault in the match, read from the replays (when they are fetched)."""
    first_errors: dict[int, FirstFault] = field(default_factory=dict)
    """Each seat's first ``bot_error`` fault (its code failed): the one an author wants to see."""


@dataclass(frozen=True)
class FirstFault:
    """A seat's first fault: where, what, why (the referee's reason, which names what the bot
    did or raised), and the bot's log."""

    match_id: str
    game_index: int
    seat: int
    kind: str
    reason: str
    log: Path | None

    def describe(self) -> str:
        where = f"match {self.match_id} game {self.game_index} seat {self.seat}"
        log = f"; its log: {self.log}" if self.log is not None else ""
        return f"{where}: {self.kind}: {self.reason}{log}"

    def to_json(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "game": self.game_index,
            "seat": self.seat,
            "kind": self.kind,
            "reason": self.reason,
            "log": None if self.log is None else str(self.log),
        }


@dataclass
class PlayReport:
    entrants: list[Entrant]
    games: int
    seed: int
    matches: list[MatchRun] = field(default_factory=list)
    totals: list[EntrantTotals] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(m.status == "MATCH_STATUS_FINISHED" for m in self.matches)

    def add(self, run: MatchRun) -> None:
        self.matches.append(run)
        for game in run.results:
            seats = game.result.seats
            firsts = [s for s in seats if s.rank == 1]
            for s in seats:
                totals = self.totals[run.seats[s.seat]]
                totals.games += 1
                totals.points += s.total
                totals.rank_sum += s.rank
                totals.faults += game.faults[s.seat]
                totals.forfeits += int(s.forfeited)
                if s.rank == 1:
                    totals.wins += 1.0 / len(firsts)

    def first_fault(self, entrant: int) -> FirstFault | None:
        """The first fault of an entrant, in playing order (None: none, or no replays)."""
        return self._first(entrant, lambda m: m.first_faults)

    def first_error(self, entrant: int) -> FirstFault | None:
        """The first ``bot_error`` fault of an entrant (its code raised, or returned something
        that is not a decision), in playing order."""
        return self._first(entrant, lambda m: m.first_errors)

    def _first(
        self, entrant: int, of: Callable[[MatchRun], dict[int, FirstFault]]
    ) -> FirstFault | None:
        for m in self.matches:
            found = [f for seat, f in of(m).items() if m.seats[seat] == entrant]
            if found:
                return min(found, key=lambda f: f.game_index)
        return None

    def format(self) -> str:
        played = sum(len(m.results) for m in self.matches)
        lines = [
            f"{plural(played, 'game')} ({plural(self.games, 'deal')} x "
            f"{plural(len(self.matches), 'seat rotation')}), "
            f"seed {self.seed}, {self.seconds:.1f} s",
            "",
            f"{'bot':<24} {'games':>5} {'wins':>7} {'win %':>6} {'mean score':>10} "
            f"{'mean rank':>9} {'faults':>6} {'forfeits':>8} {'crashes':>7}",
        ]
        for entrant, t in zip(self.entrants, self.totals, strict=True):
            n = max(t.games, 1)
            lines.append(
                f"{entrant.name:<24} {t.games:>5} {t.wins:>7.2f} {100 * t.wins / n:>5.1f}% "
                f"{t.points / n:>10.2f} {t.rank_sum / n:>9.2f} {t.faults:>6} {t.forfeits:>8} "
                f"{t.crashes:>7}"
            )
        problems = []
        for entrant in self.entrants:
            fault = self.first_fault(entrant.index)
            if fault is not None:
                problems.append(f"first fault of {entrant.name}: {fault.describe()}")
            error = self.first_error(entrant.index)
            if error is not None and error != fault:
                problems.append(f"first error of {entrant.name}: {error.describe()}")
        problems += [note for m in self.matches for _, note in m.crashes]
        problems += [
            f"match {m.match_id}: {m.status} {m.reason}".rstrip()
            for m in self.matches
            if m.status != "MATCH_STATUS_FINISHED"
        ]
        if problems:
            lines += ["", *problems]
        replays = [m for m in self.matches if m.replays]
        if replays:
            lines += ["", "replays:"]
            lines += [
                f"  {m.replays[0].parent}/ ({plural(len(m.replays), 'game')})" for m in replays
            ]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "games": self.games,
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
            "bots": [
                {
                    "bot": e.name,
                    "spec": e.spec,
                    "games": t.games,
                    "wins": t.wins,
                    "mean_score": t.points / max(t.games, 1),
                    "mean_rank": t.rank_sum / max(t.games, 1),
                    "faults": t.faults,
                    "forfeits": t.forfeits,
                    "crashes": t.crashes,
                    "first_fault": None if fault is None else fault.to_json(),
                    "first_error": None if error is None else error.to_json(),
                }
                for e, t in zip(self.entrants, self.totals, strict=True)
                for fault, error in [(self.first_fault(e.index), self.first_error(e.index))]
            ],
            "matches": [
                {
                    "rotation": m.rotation,
                    "match_id": m.match_id,
                    "seats": [self.entrants[i].name for i in m.seats],
                    "status": m.status,
                    "reason": m.reason,
                    "games": len(m.results),
                    "replays": [str(p) for p in m.replays],
                    "crashes": [{"seat": seat, "note": note} for seat, note in m.crashes],
                    "seconds": round(m.seconds, 3),
                }
                for m in self.matches
            ],
        }


def note_first_faults(run: MatchRun, game_index: int, doc: dict[str, Any]) -> None:
    """Record in ``run`` each seat's first fault and first ``bot_error`` of the replay ``doc`` (a
    game of that match), unless one is known."""
    for step in doc.get("steps", ()):
        fault = step.get("fault") if isinstance(step, dict) else None
        seat = step.get("seat") if isinstance(step, dict) else None
        if not isinstance(fault, dict) or not isinstance(seat, int):
            continue
        found = FirstFault(
            run.match_id,
            game_index,
            seat,
            str(fault.get("kind", "")),
            str(fault.get("reason", "")),
            run.logs.get(seat),
        )
        run.first_faults.setdefault(seat, found)
        if found.kind == "bot_error":
            run.first_errors.setdefault(seat, found)
