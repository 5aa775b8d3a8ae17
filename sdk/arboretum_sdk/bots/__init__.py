"""The built-in bots, written with the public SDK only (``arena bot list``).

``BUILTIN_BOTS`` maps each name usable as a bot spec to ``module:Class`` in this package.
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
}
"""name -> (module in arboretum_sdk.bots, class name, one-line description)"""
