"""The analysis of a game's decisions (``arena replay analyze``; docs/analysis.md): the engine
(:mod:`.engine`) and its report (:mod:`.report`)."""

from __future__ import annotations

from .engine import (
    AnalysisConfig,
    AnalysisError,
    DecisionAnalysis,
    analyse_position,
    analyse_replay,
    decision_json,
)

__all__ = [
    "AnalysisConfig",
    "AnalysisError",
    "DecisionAnalysis",
    "analyse_position",
    "analyse_replay",
    "decision_json",
]
