"""Helpers for the bot tests: positions of every decision kind, and in-process duels."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from arboretum import (
    DECK,
    Arboretum,
    Card,
    Cell,
    Decision,
    DecisionKind,
    Draw,
    GameState,
    SeatView,
    derive_game_seed,
)
from arboretum_sdk import Bot
from arboretum_sdk.local import play_game

Z95 = 1.959963984540054


def _pile_loving(state: GameState, rng: random.Random) -> Decision:
    """Random, but draws from a discard pile when one has cards (so views hold known cards)."""
    legal = state.legal_decisions()
    if legal.kind is not DecisionKind.PLAY:
        piles = [d for d in legal if isinstance(d, Draw) and d.source != DECK]
        if piles and rng.random() < 0.9:
            return piles[rng.randrange(len(piles))]
    return legal[rng.randrange(len(legal))]


def positions(seed: int, players: int = 2) -> Iterator[SeatView]:
    """Every decision of one game played by a random pile-loving policy, as the mover's view."""
    rng = random.Random(seed)
    state = GameState.new(players, derive_game_seed(seed, 0))
    while not state.is_over:
        yield state.view(state.current_seat)
        state.apply(_pile_loving(state, rng))


def kind_of(view: SeatView) -> str:
    if view.kind is DecisionKind.PLAY:
        return "play" if view.discard_required else "play-no-discard"
    return view.kind.value


def no_discard_view(seed: int, players: int = 2) -> SeatView:
    """A play with no discard: the first draw took the last deck card and every pile is empty.

    Real games never reach it (the previous player's discard is always on a pile when a turn
    starts, and a pile draw with an empty deck cannot happen because the game is then over), so
    the view is built by hand, consistent in its card counts: this seat holds 8 cards, every
    opponent 7 unseen ones, the deck and the piles are empty and the rest is in the arboretums
    (a row of cards each, so every arboretum is connected).
    """
    state = GameState.new(players, derive_game_seed(seed, 1))
    cards = sorted(state.initial_deck, key=lambda c: c.id)
    random.Random(seed).shuffle(cards)
    hand, rest = cards[:8], cards[8 + 7 * (players - 1) :]
    rows: list[dict[Cell, Card]] = [{} for _ in range(players)]
    for i, card in enumerate(rest):
        rows[i % players][Cell(i // players, 0)] = card
    view = state.view(0)
    return replace(
        view,
        turn=40,
        current_seat=0,
        kind=DecisionKind.PLAY,
        hand=tuple(sorted(hand, key=lambda c: c.id)),
        arboretums=tuple(Arboretum(row) for row in rows),
        discard_piles=tuple(() for _ in range(players)),
        deck_size=0,
        hand_sizes=(8,) + (7,) * (players - 1),
        known_cards=tuple(() for _ in range(players)),
        discard_required=False,
        last_turn=True,
    )


def sample_positions(per_kind: int, players: int = 2) -> dict[str, list[SeatView]]:
    """``per_kind`` views of each kind: first-draw, second-draw, play (from games of a random,
    pile-loving policy, spread over the game) and play-no-discard (built by hand)."""
    found: dict[str, list[SeatView]] = {k: [] for k in ("first-draw", "second-draw", "play")}
    rng = random.Random(players)
    for seed in range(1000):
        for view in positions(seed, players):
            bucket = found[kind_of(view)]
            if len(bucket) < per_kind and rng.random() < 0.1:
                bucket.append(view)
        if all(len(v) >= per_kind for v in found.values()):
            break
    found["play-no-discard"] = [no_discard_view(seed, players) for seed in range(per_kind)]
    return found


@dataclass
class Duel:
    """Results of bot A against bot B over deals played in both seat orders."""

    games: int = 0
    score: float = 0.0
    """A's wins, a shared game counting 1/2."""
    margin: int = 0

    @property
    def rate(self) -> float:
        return self.score / self.games

    def wilson(self) -> tuple[float, float]:
        """95% Wilson interval of A's win rate."""
        n, p, z = self.games, self.rate, Z95
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return centre - half, centre + half

    def difference(self) -> tuple[float, float, float]:
        """A's win rate minus B's (2p - 1 in two-player games), with its 95% interval."""
        low, high = self.wilson()
        return 2 * self.rate - 1, 2 * low - 1, 2 * high - 1


def duel(
    make_a: Callable[[int], Bot], make_b: Callable[[int], Bot], deals: int, match_seed: int
) -> Duel:
    """Each deal is played twice, A in seat 0 then in seat 1, by fresh bots."""
    out = Duel()
    for deal in range(deals):
        seed = derive_game_seed(match_seed, deal)
        for a_seat in (0, 1):
            a, b = make_a(deal), make_b(deal + 1000)
            result = play_game([a, b] if a_seat == 0 else [b, a], seed)
            out.games += 1
            if a_seat in result.winners:
                out.score += 1 / len(result.winners)
            out.margin += result.totals[a_seat] - result.totals[1 - a_seat]
    return out
