"""The built-in bots, written with the public SDK only (``arena bot list``).

``BUILTIN_BOTS`` maps each name usable as a bot spec to ``module:Class`` in this package. (The
order is the order of ``arena bot list``; the demo league plays the first three.)
"""

from __future__ import annotations

__all__ = ["BUILTIN_BOTS"]

BUILTIN_BOTS: dict[str, tuple[str, str, str]] = {
    "random": ("random_bot", "RandomBot", "uniform among the legal options"),
    "greedy": (
        "greedy",
        "GreedyBot",
        "one-move heuristic: extends its best paths, guards its hand",
    ),
    "search": ("search", "SearchBot", "determinized Monte Carlo search, <= 0.3 s a decision"),
    "lookahead": (
        "lookahead",
        "LookaheadBot",
        "one-ply heuristic: exact path scoring, a model of the right to score",
    ),
    "expert": (
        "expert",
        "ExpertBot",
        "the strongest: exact paths, the hand's potential, sampled endgames",
    ),
}
"""name -> (module in arboretum_sdk.bots, class name, one-line description)"""
