"""The analysis's report: per-seat summary (total loss, accuracy), the JSON document and the text
table of ``arena replay analyze`` (docs/analysis.md gives the format)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from .engine import AnalysisConfig, DecisionAnalysis, decision_json

__all__ = [
    "ACCURACY_SCALE",
    "ANALYSIS_FORMAT",
    "ANALYSIS_VERSION",
    "accuracy",
    "analysis_json",
    "render_text",
]

ANALYSIS_FORMAT = "arboretum-analysis"
ANALYSIS_VERSION = 1
ACCURACY_SCALE = 4.0
"""Points of loss that bring a decision's accuracy down to 1/e (37%)."""


def accuracy(losses: Sequence[float]) -> float:
    """A seat's accuracy in percent: the mean over its analysed decisions of
    ``100 * exp(-loss / ACCURACY_SCALE)`` (100 when every decision was the best found; 100 too
    when there was nothing to analyse)."""
    if not losses:
        return 100.0
    return sum(100.0 * math.exp(-loss / ACCURACY_SCALE) for loss in losses) / len(losses)


def _r(value: float) -> float:
    return round(value + 0.0, 2)


def _seat_summary(seat: int, bot: str, decisions: Sequence[DecisionAnalysis]) -> dict[str, Any]:
    losses = [d.loss for d in decisions]
    marks = [d.mark for d in decisions]
    return {
        "seat": seat,
        "bot": bot,
        "decisions": len(decisions),
        "total_loss": _r(sum(losses)),
        "average_loss": _r(sum(losses) / len(losses)) if losses else 0.0,
        "accuracy": round(accuracy(losses), 1),
        "inaccuracies": marks.count("inaccuracy"),
        "mistakes": marks.count("mistake"),
        "blunders": marks.count("blunder"),
    }


def analysis_json(
    doc: Mapping[str, Any],
    decisions: Sequence[DecisionAnalysis],
    config: AnalysisConfig,
    seats: Sequence[int] | None = None,
) -> dict[str, Any]:
    """The analysis document of replay ``doc`` (docs/analysis.md, "The JSON format")."""
    players = doc["players"]
    analysed = list(range(players)) if seats is None else sorted(set(seats))
    names = [s.get("bot", "") if isinstance(s, dict) else "" for s in doc.get("seats", [])]
    names += [""] * (players - len(names))
    return {
        "format": ANALYSIS_FORMAT,
        "version": ANALYSIS_VERSION,
        "match_id": doc.get("match_id"),
        "game_index": doc.get("game_index"),
        "players": players,
        "method": {
            "samples": config.samples,
            "alternatives": config.alternatives,
            "shrink": config.shrink,
            "seed": config.seed,
        },
        "thresholds": {
            "inaccuracy": config.inaccuracy,
            "mistake": config.mistake,
            "blunder": config.blunder,
        },
        "seats": [
            _seat_summary(s, names[s], [d for d in decisions if d.seat == s]) for s in analysed
        ],
        "decisions": [
            {
                "step": d.step,
                "turn": d.turn,
                "seat": d.seat,
                "kind": d.kind,
                "taken": decision_json(d.taken),
                "taken_text": str(d.taken),
                "best": decision_json(d.best),
                "best_text": str(d.best),
                "value_taken": _r(d.value_taken),
                "value_best": _r(d.value_best),
                "loss": _r(d.loss),
                "mark": d.mark,
                "candidates": d.candidates,
                "fault": d.fault,
            }
            for d in decisions
        ],
    }


def render_text(report: Mapping[str, Any]) -> str:
    """The analysis document as the text table of ``arena replay analyze``."""
    method = report["method"]
    marks = report["thresholds"]
    lines = [
        f"analysis of match {report['match_id']} game {report['game_index']}: "
        f"{method['samples']} determinizations a decision, every seat playing on to the end; "
        f"loss in points of expected final margin (inaccuracy >= {marks['inaccuracy']}, "
        f"mistake >= {marks['mistake']}, blunder >= {marks['blunder']})",
        "",
        f"{'step':>4} {'turn':>4} {'seat':>4}  {'taken':<28} {'value':>6}  "
        f"{'best found':<28} {'value':>6} {'loss':>5}  mark",
    ]
    for d in report["decisions"]:
        same = d["best_text"] == d["taken_text"]
        best = "=" if same else d["best_text"]
        mark = d["mark"] or ""
        if d["fault"]:
            mark = f"{mark} (fault: {d['fault']})".strip()
        lines.append(
            f"{d['step']:>4} {d['turn']:>4} {d['seat']:>4}  {d['taken_text']:<28} "
            f"{d['value_taken']:>6.2f}  {best:<28} {d['value_best']:>6.2f} {d['loss']:>5.2f}  "
            f"{mark}".rstrip()
        )
    lines.append("")
    for s in report["seats"]:
        lines.append(
            f"seat {s['seat']} ({s['bot']}): {s['decisions']} decisions, total loss "
            f"{s['total_loss']:.2f}, average {s['average_loss']:.2f}, accuracy "
            f"{s['accuracy']:.1f}%; {s['inaccuracies']} inaccuracies, {s['mistakes']} mistakes, "
            f"{s['blunders']} blunders"
        )
    return "\n".join(lines)
