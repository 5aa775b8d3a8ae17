"""Greedy beats random at the league level: in-process games, fitted by the league's own
batch fit (``arboretum_worker.fit``; Bradley-Terry for 2 players), give a rating difference whose
95% interval excludes 0.

The games are recorded as the league records them (``MatchResult``: one match per seat rotation,
the engine's ranks). With two bots the fit anchors their mean at 1500, so the difference is twice
greedy's distance from 1500 and its standard error twice greedy's: the interval of the difference
excludes 0 exactly when greedy's own interval lies above 1500.
"""

from __future__ import annotations

from arboretum import derive_game_seed
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.local import play_game
from arboretum_worker.fit import Z95, fit_ratings
from arboretum_worker.store import GameOutcome, MatchResult

DEALS = 30


def test_fit_of_greedy_against_random_separates_them() -> None:
    results = []
    for rotation in range(2):
        names = ("greedy", "random") if rotation == 0 else ("random", "greedy")
        games = []
        for deal in range(DEALS):
            seed = derive_game_seed(7, deal)
            bots = {"greedy": GreedyBot(), "random": RandomBot(seed)}
            result = play_game([bots[n] for n in names], seed)
            games.append(GameOutcome(result.ranks, result.totals, (0, 0)))
        results.append(MatchResult(f"m{rotation}", "bots", names, tuple(games)))
    fit = {r.version: r for r in fit_ratings(results)}
    greedy, random_ = fit["greedy"], fit["random"]
    assert greedy.games == random_.games == 2 * DEALS
    diff = greedy.elo - random_.elo
    half_width = Z95 * 2 * greedy.stderr
    assert diff - half_width > 0, (
        f"rating difference {diff:.0f} +- {half_width:.0f} Elo includes 0 "
        f"(greedy {greedy.elo:.0f} [{greedy.lower:.0f}, {greedy.upper:.0f}], "
        f"random {random_.elo:.0f} [{random_.lower:.0f}, {random_.upper:.0f}])"
    )
    assert greedy.lower > 1500  # the same statement, on greedy's own interval
