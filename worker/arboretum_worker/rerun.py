"""``arena match rerun``: play a stored league match again and name the first decision that differs.

A league match is re-run exactly as its job ran it (:func:`arboretum_worker.jobs.match_plan`): the
same bot versions from the registry, each in its sandbox, the same seeds (so the same deals and the
same per-seat bot seeds), the same clocks, fault policy and compute mode (``ARENA_COMPUTE``), on a
private referee. Its replays are then compared with the stored ones, game by game and decision by
decision.

Two decisions are the same when their turn, seat, kind and content (source and pile of a draw;
card, cell and discard of a play) are, and either both or neither are a fault's fallback (of the
same kind). How long a decision took (``ms``), the fault's wording and the notes (``stale``,
``disconnect``) are not compared: they depend on the machine, not on the bot. A bot that takes
its randomness from its game's bot seed and spends a fixed amount of compute re-runs identically;
one that reads the clock or the OS's randomness shows where it first went another way.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import replays, store
from .settings import WorkerSettings

if TYPE_CHECKING:
    import redis

__all__ = ["Difference", "GameCheck", "RerunError", "RerunReport", "compare_games", "rerun_match"]

_COMPARED = ("turn", "seat", "kind", "source", "pile", "card", "cell", "discard")


class RerunError(ValueError):
    """The match cannot be re-run (the message says why)."""


@dataclass(frozen=True)
class Difference:
    """The first decision of a game that the re-run took differently."""

    decision: int
    """Its index among the game's decisions (draws and plays), from 0."""
    turn: int | None
    seat: int | None
    stored: str
    """The stored decision, as text (``draw deck``, ``play OA5 0,1 discard JA3``, ...)."""
    rerun: str
    step: int | None = None
    """Its index in the stored replay's ``steps`` (the replay's and the viewer's number), or in
    the re-run's when the stored game had ended."""


@dataclass(frozen=True)
class GameCheck:
    game: int
    decisions: int
    """Decisions in the stored game."""
    difference: Difference | None
    stored_ranks: tuple[int, ...]
    rerun_ranks: tuple[int, ...]

    @property
    def identical(self) -> bool:
        return self.difference is None and self.stored_ranks == self.rerun_ranks


@dataclass
class RerunReport:
    match_id: str
    games: list[GameCheck] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def identical(self) -> bool:
        return bool(self.games) and all(g.identical for g in self.games)

    @property
    def first_difference(self) -> GameCheck | None:
        return next((g for g in self.games if not g.identical), None)


def _decisions(replay: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [s for s in replay.get("steps", []) if s.get("kind") in ("draw", "play")]


def _decision_steps(replay: Mapping[str, Any]) -> list[int]:
    """The replay step index of each of its decisions."""
    steps = replay.get("steps", [])
    return [i for i, s in enumerate(steps) if s.get("kind") in ("draw", "play")]


def _key(step: Mapping[str, Any]) -> tuple[Any, ...]:
    fault = step.get("fault")
    return (*(json.dumps(step.get(f)) for f in _COMPARED), fault.get("kind") if fault else None)


def _text(step: Mapping[str, Any] | None) -> str:
    if step is None:
        return "(no decision: the game had ended)"
    if step["kind"] == "draw":
        text = "draw deck" if step.get("source") == "deck" else f"draw pile {step.get('pile')}"
    else:
        x, y = step["cell"]
        text = f"play {step['card']} {x},{y}"
        if step.get("discard"):
            text += f" discard {step['discard']}"
    fault = step.get("fault")
    return f"{text} (fallback after a {fault.get('kind')} fault)" if fault else text


def compare_games(stored: Mapping[str, Any], rerun: Mapping[str, Any]) -> Difference | None:
    """The first decision where the two replays of one game differ, or None."""
    a, b = _decisions(stored), _decisions(rerun)
    for index in range(max(len(a), len(b))):
        x = a[index] if index < len(a) else None
        y = b[index] if index < len(b) else None
        if x is not None and y is not None and _key(x) == _key(y):
            continue
        where = x or y or {}
        steps = _decision_steps(stored if x is not None else rerun)
        step = steps[index] if index < len(steps) else None
        return Difference(index, where.get("turn"), where.get("seat"), _text(x), _text(y), step)
    return None


def _ranks(replay: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(int(x) for x in replay.get("result", {}).get("ranks", ()))


def rerun_match(r: redis.Redis, match_id: str, settings: WorkerSettings) -> RerunReport:
    """Play the stored match ``match_id`` again in the sandbox and compare it with its replays."""
    from .jobs import match_plan, new_match_dir, play_planned
    from .settings import job_timeout

    record = store.get_match(r, match_id)
    if record is None:
        raise RerunError(f"no match {match_id!r}")
    league = store.get_league(r, record.league)
    if league is None:
        raise RerunError(f"match {match_id}: no league {record.league!r}")
    if record.status is not store.MatchStatus.FINISHED:
        raise RerunError(
            f"match {match_id} is {record.status.value}: only a finished match re-runs"
        )
    from arboretum import ReplayError, verify_replay

    stored: list[dict[str, Any]] = []
    for game, seed in enumerate(record.game_seeds):
        raw = replays.get_replay(r, match_id, game)
        if raw is None:
            raise RerunError(f"match {match_id}: game {game} has no stored replay")
        doc = json.loads(raw)
        try:
            verify_replay(doc)
        except ReplayError as exc:
            raise RerunError(f"match {match_id}: the stored replay of game {game}: {exc}") from None
        if doc.get("seed") != str(seed):
            raise RerunError(f"match {match_id}: the stored replay of game {game} is another deal")
        stored.append(doc)
    for vid in record.seats:
        if store.get_version(r, vid) is None:
            raise RerunError(f"match {match_id}: bot version {vid} is no longer in the registry")
    plan = match_plan(r, record, league.settings)
    ls = league.settings
    tc = ls.time_control
    deadline = job_timeout(ls.players, record.games, tc.per_decision_ms, tc.bank_ms) - 10
    match_dir = new_match_dir(settings, match_id)
    try:
        outcome = play_planned(
            r, settings, plan, record.seats, match_dir, deadline, compute=ls.compute, publish=False
        )
    finally:
        shutil.rmtree(match_dir, ignore_errors=True)
    if outcome.status != "finished":
        raise RerunError(f"the re-run ended as {outcome.status}: {outcome.reason or '-'}")
    report = RerunReport(match_id, seconds=outcome.seconds)
    rerun_docs = [json.loads(text) for text in outcome.replays]
    for game, (old, new) in enumerate(zip(stored, rerun_docs, strict=True)):
        report.games.append(
            GameCheck(
                game=game,
                decisions=len(_decisions(old)),
                difference=compare_games(old, new),
                stored_ranks=_ranks(old),
                rerun_ranks=_ranks(new),
            )
        )
    return report


def format_report(report: RerunReport, labels: Sequence[str]) -> str:
    """The report as text: one line per game, and the first difference in full."""
    lines = []
    for g in report.games:
        if g.identical:
            lines.append(f"game {g.game}: identical ({g.decisions} decisions)")
            continue
        d = g.difference
        if d is None:
            lines.append(
                f"game {g.game}: the same decisions, other ranks "
                f"(stored {list(g.stored_ranks)}, re-run {list(g.rerun_ranks)})"
            )
            continue
        seat = f"seat {d.seat} ({labels[d.seat]})" if d.seat is not None else "?"
        at = (
            f"step {d.step} (decision {d.decision} of {g.decisions}, "
            if d.step is not None
            else (f"decision {d.decision} of {g.decisions} (")
        )
        lines.append(
            f"game {g.game}: differs at {at}turn {d.turn}, {seat}): "
            f"stored {d.stored!r}, re-run {d.rerun!r}"
        )
    return "\n".join(lines)
