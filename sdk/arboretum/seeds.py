"""Seeds and the deal they fix: a match seed derives each game's seed and a game's seed each
seat's bot seed (SHA-256, one way), and a game's seed fixes the species in play and the shuffled
deck. Replays record decks that follow from seeds through exactly these draws."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

from .cards import ALL_CARDS, Card, Species
from .errors import ConfigError

__all__ = [
    "SEED_BITS",
    "SPECIES_PER_PLAYER_COUNT",
    "check_deck",
    "check_seed",
    "deal_from_seed",
    "derive_bot_seed",
    "derive_game_seed",
    "seeded_deck",
]

SPECIES_PER_PLAYER_COUNT = {2: 6, 3: 8, 4: 10}
SEATS = tuple(tuple(range(players)) for players in range(max(SPECIES_PER_PLAYER_COUNT) + 1))
"""The seat numbers of a game, indexed by the player count."""
SEED_BITS = 64
_SPECIES = tuple(Species)
"""The species by index."""


def derive_game_seed(match_seed: int, game_index: int) -> int:
    """The seed of game ``game_index`` of a match: the first 8 bytes of SHA-256 of both.

    Revealing one game's seed reveals nothing about the match seed or the other games.
    """
    check_seed(match_seed)
    if game_index < 0:
        raise ConfigError(f"game index must be 0 or more, got {game_index}")
    data = f"arboretum-game:{match_seed}:{game_index}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def derive_bot_seed(game_seed: int, seat: int) -> int:
    """The seed of ``seat``'s own randomness in the game of seed ``game_seed``: the first 8 bytes
    of SHA-256 of both.

    The referee sends it to the seat at the game's start, so that a bot that draws all its random
    numbers from it plays the same game again when the game is re-run. It is one-way: it reveals
    nothing of the game's seed, hence nothing of the deal, and one seat's bot seed says nothing of
    another's.
    """
    check_seed(game_seed)
    if type(seat) is not int or seat < 0:
        raise ConfigError(f"a seat is an integer from 0 up, got {seat!r}")
    data = f"arboretum-bot:{game_seed}:{seat}".encode()
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


def check_seed(seed: int) -> int:
    if type(seed) is not int or not 0 <= seed < 1 << SEED_BITS:
        raise ConfigError(f"a seed is an integer from 0 to 2**64-1, got {seed!r}")
    return seed


def deal_from_seed(
    players: int, seed: int, species: Sequence[Species] | None = None
) -> tuple[tuple[Species, ...], list[int]]:
    """The species in play and the shuffled deck (top first) that ``seed`` fixes."""
    chosen, deck = seeded_deck(players, seed, species)
    return tuple([_SPECIES[s] for s in chosen]), deck


def seeded_deck(
    players: int, seed: int, species: Sequence[Species] | None
) -> tuple[list[int], list[int]]:
    """:func:`deal_from_seed` with the species as sorted indices."""
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise ConfigError(f"Arboretum is played by 2, 3 or 4 players, not {players!r}")
    check_seed(seed)
    count = SPECIES_PER_PLAYER_COUNT[players]
    rng = random.Random(seed)
    if species is None:
        chosen = sorted(rng.sample(range(10), count))
    else:
        try:
            chosen = sorted({Species(s).index for s in species})
        except ValueError as exc:
            raise ConfigError(f"unknown species: {exc}") from None
        if len(chosen) != count or len(species) != count:
            raise ConfigError(
                f"{players} players play with {count} different species, got {len(species)}"
            )
    deck = [s * 8 + v for s in chosen for v in range(8)]
    _shuffle(rng, deck)
    return chosen, deck


_SHUFFLE_STEPS = [(n - 1, n, n.bit_length()) for n in range(len(ALL_CARDS), 1, -1)]
"""For each n from 80 down to 2: (n - 1, n, bits needed for a number below n)."""


def _shuffle(rng: random.Random, x: list[int]) -> None:
    """``rng.shuffle(x)`` for up to 80 items, draw for draw: the same order from the same state.

    This is the algorithm of :meth:`random.Random.shuffle` (CPython 3.11 to 3.13) with its
    ``_randbelow`` inlined, because every game starts with a shuffle. Replays record decks that
    follow from seeds through exactly these draws: do not change them.
    """
    getrandbits = rng.getrandbits
    for i, n, k in _SHUFFLE_STEPS[len(ALL_CARDS) - len(x) :]:
        j = getrandbits(k)  # rng.randrange(n): the top k bits of the next word, until below n
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def check_deck(
    players: int, species: Sequence[Species], deck: Sequence[Card]
) -> tuple[Species, ...]:
    """``species`` as a tuple if ``deck`` deals a game of ``players``: each card of the species in
    play exactly once, as many species as the player count plays with; raises ConfigError
    otherwise."""
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise ConfigError(f"Arboretum is played by 2, 3 or 4 players, not {players!r}")
    species = tuple(species)
    expected = sorted(s.index * 8 + v for s in species for v in range(8))
    if sorted(c.id for c in deck) != expected or len(set(species)) != len(species):
        raise ConfigError("the deck must hold each card of the species in play exactly once")
    if len(species) != SPECIES_PER_PLAYER_COUNT[players]:
        raise ConfigError(
            f"{players} players play with {SPECIES_PER_PLAYER_COUNT[players]} species, "
            f"got {len(species)}"
        )
    return species
