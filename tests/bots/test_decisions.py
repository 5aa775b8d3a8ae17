"""The built-in bots decide as they always did: every bot's decisions on fixed positions (every
third decision of random pile-loving games, two, three and four players, fixed compute) hash to
the digests recorded when the bots shared three path tables of their own, before they moved to
the one table of :mod:`arboretum_sdk.bots.paths`. A change of strategy is a new digest here,
made on purpose and said in its commit."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from itertools import islice

import pytest

from arboretum_sdk import Bot
from arboretum_sdk.bots.expert import ExpertBot
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.lookahead import LookaheadBot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.bots.search import SearchBot

from .support import positions

MAKERS: dict[str, Callable[[], Bot]] = {
    "random": lambda: RandomBot(seed=5),
    "greedy": GreedyBot,
    "lookahead": LookaheadBot,
    "search": lambda: SearchBot(seed=5, compute="fixed", max_rounds=2),
    "expert": lambda: ExpertBot(seed=5, compute="fixed", simulations=2),
}

GAMES = ((2, 11), (3, 12), (4, 13))
"""(players, seed) of the games whose positions are asked."""

RECORDED = {
    "random": "c2cd90d3dcbd4f18eff8969f29b2185fe6fb836c8534eb21bf77a5c47e09cabf",
    "greedy": "8fda5f60c74604a51d160b7b058c8574e8544054a63aa6f7cd8b8b8016a5d3e8",
    "lookahead": "0d31a7143160b3ddff8d621f7abfc68d6dbad40c158e2b2b024190c25ab26cdd",
    "search": "9633c6b929d001e723cf1233745fd948c80388ed85b8cd802c0cb476f8d93d19",
    "expert": "b27c60123b1929f4d9db7f4d82b55e8fcf0ec37ba8fec4f96fe38903a9c4ebbe",
}


def decisions_digest(make: Callable[[], Bot]) -> tuple[int, str]:
    bot = make()
    lines = []
    for players, seed in GAMES:
        for view in islice(positions(seed, players), 0, None, 3):
            lines.append(f"{players} {seed} {view.turn} {view.kind.value} {bot.choose(view)}")
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_the_decisions_of_each_builtin_bot_are_unchanged(name: str) -> None:
    count, digest = decisions_digest(MAKERS[name])
    assert count > 100
    assert digest == RECORDED[name], f"{name}: the decisions changed"
