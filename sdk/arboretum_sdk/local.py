"""Play bots in-process against each other with the engine, no referee and no network.

For testing a bot quickly and for benchmarks; the clock is reported (``bot.clock``) but not
enforced, and an illegal decision raises instead of faulting. ``arena play`` (the referee's local
runner) is the real thing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arboretum import Event, GameResult, GameState, derive_bot_seed

from .bot import Bot
from .info import Clock, FaultPolicy, GameInfo, TimeControl

__all__ = ["play_game"]


def play_game(
    bots: Sequence[Bot],
    seed: int,
    *,
    game_index: int = 0,
    game_count: int = 1,
    time_control: TimeControl | None = None,
) -> GameResult:
    """Play one game between ``bots`` (seat order) from ``seed``; returns the engine's result.

    Each bot gets ``on_game_start`` and its ``clock``/``events`` before each decision (the other
    hooks need referee data and are not called). Raises :class:`arboretum.IllegalDecisionError`
    if a bot answers illegally.
    """
    players = len(bots)
    state = GameState.new(players, seed)
    tc = time_control or TimeControl()
    names = tuple(bot.name for bot in bots)
    seen = [0] * players
    history: list[list[Event]] = [[] for _ in range(players)]
    for seat, bot in enumerate(bots):
        bot.events = ()
        bot.game = GameInfo(
            game_index=game_index,
            game_count=game_count,
            players=players,
            species=state.species,
            seat=seat,
            seat_names=names,
            time_control=tc,
            fault_policy=FaultPolicy(),
            view=state.view(seat),
            bot_seed=derive_bot_seed(seed, seat),
        )
        bot.rng = random.Random(bot.game.bot_seed)
        bot.on_game_start(bot.game)
    while not state.is_over:
        seat = state.current_seat
        bot = bots[seat]
        history[seat].extend(state.events(seat=seat, since=seen[seat]))
        seen[seat] = state.event_count
        bot.events = tuple(history[seat])
        bot.clock = Clock(tc.per_decision_ms, tc.bank_ms)
        state.apply(bot.choose(state.view(seat)))
    return state.result()
