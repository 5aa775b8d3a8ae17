"""Setup from a seed (RULES.md "Cards and setup"; docs/replay-format.md "The deal")."""

from __future__ import annotations

import hashlib
import random

import pytest

from arboretum import (
    ALL_CARDS,
    HAND_SIZE,
    ConfigError,
    DecisionKind,
    GameState,
    Species,
    derive_bot_seed,
    derive_game_seed,
)

from .layouts import species_cards

SPECIES = {2: 6, 3: 8, 4: 10}
DECK_AFTER_DEAL = {2: 34, 3: 43, 4: 52}


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 7, 2**63 + 5, 2**64 - 1])
def test_new_game_counts(players: int, seed: int) -> None:
    state = GameState.new(players, seed)
    assert state.players == players
    assert len(state.species) == SPECIES[players] == len(set(state.species))
    assert list(state.species) == sorted(state.species, key=lambda s: s.index)
    assert state.deck_size == DECK_AFTER_DEAL[players] == len(state.deck)
    assert state.hand_sizes() == (HAND_SIZE,) * players == (7,) * players
    assert all(state.discard_pile(s) == () for s in range(players))
    assert all(len(state.arboretum(s)) == 0 for s in range(players))
    assert state.current_seat == 0 and state.turn == 0
    assert state.decision_kind is DecisionKind.FIRST_DRAW
    assert not state.is_over and not state.last_turn
    assert state.seed == seed
    # Every card of the species in play, once.
    everything = list(state.deck) + [c for s in range(players) for c in state.hand(s)]
    assert sorted(everything) == species_cards(state.species)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_new_game_is_deterministic(players: int) -> None:
    for seed in (0, 3, 12345):
        a, b = GameState.new(players, seed), GameState.new(players, seed)
        assert a.species == b.species
        assert a.initial_deck == b.initial_deck
        assert a.deck == b.deck
        assert [a.hand(s) for s in range(players)] == [b.hand(s) for s in range(players)]
    decks = {GameState.new(players, seed).initial_deck for seed in range(20)}
    assert len(decks) == 20


def test_species_in_play_come_from_the_seed() -> None:
    chosen = {GameState.new(2, seed).species for seed in range(30)}
    assert len(chosen) > 5  # not a fixed list


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 99, 2**40 + 3])
def test_deal_follows_the_documented_procedure(players: int, seed: int) -> None:
    # docs/replay-format.md: random.Random(seed) samples the species' indices (sorted), builds the
    # deck in species-then-value order and shuffles it; the deck is dealt one card at a time in
    # seat order from the top.
    rng = random.Random(seed)
    indices = sorted(rng.sample(range(10), SPECIES[players]))
    deck = [ALL_CARDS[s * 8 + v] for s in indices for v in range(8)]
    rng.shuffle(deck)
    state = GameState.new(players, seed)
    assert state.species == tuple(Species.from_index(i) for i in indices)
    assert list(state.initial_deck) == deck
    for seat in range(players):
        dealt = deck[seat : players * HAND_SIZE : players]
        assert list(state.initial_hands[seat]) == dealt
        assert state.hand(seat) == tuple(sorted(dealt))
    assert list(state.deck) == deck[players * HAND_SIZE :]


def test_explicit_species_override_the_seed() -> None:
    wanted = [
        Species.WILLOW,
        Species.OAK,
        Species.CASSIA,
        Species.MAPLE,
        Species.DOGWOOD,
        Species.JACARANDA,
    ]
    state = GameState.new(2, 5, species=wanted)
    assert state.species == tuple(sorted(wanted, key=lambda s: s.index))
    assert GameState.new(2, 5, species=wanted).initial_deck == state.initial_deck


def test_from_deck_deals_seat_by_seat() -> None:
    species = list(Species)[:8]
    deck = [c for c in ALL_CARDS if c.species in species][::-1]
    state = GameState.from_deck(3, species, deck)
    assert state.seed is None
    assert state.initial_hands[0] == tuple(deck[0:21:3])
    assert state.initial_hands[2] == tuple(deck[2:21:3])
    assert state.deck == tuple(deck[21:])


def test_derive_game_seed_is_deterministic_and_differs_per_index() -> None:
    seeds = [derive_game_seed(42, i) for i in range(200)]
    assert seeds == [derive_game_seed(42, i) for i in range(200)]
    assert len(set(seeds)) == 200
    assert all(0 <= s < 2**64 for s in seeds)
    assert derive_game_seed(43, 0) != derive_game_seed(42, 0)
    for match_seed in (0, 1, 2**64 - 1):
        for index in (0, 1, 1000):
            digest = hashlib.sha256(f"arboretum-game:{match_seed}:{index}".encode()).digest()
            assert derive_game_seed(match_seed, index) == int.from_bytes(digest[:8], "big")
    # A derived seed is a valid game seed.
    GameState.new(4, derive_game_seed(2**64 - 1, 7))


def test_derive_bot_seed_is_one_way_per_seat() -> None:
    game_seed = derive_game_seed(42, 0)
    seeds = [derive_bot_seed(game_seed, seat) for seat in range(4)]
    assert len(set(seeds)) == 4 and game_seed not in seeds
    for seat in range(4):
        digest = hashlib.sha256(f"arboretum-bot:{game_seed}:{seat}".encode()).digest()
        assert seeds[seat] == int.from_bytes(digest[:8], "big")
    assert derive_bot_seed(game_seed + 1, 0) != seeds[0]
    for bad_seat in (-1, 1.0):
        with pytest.raises(ConfigError, match="seat"):
            derive_bot_seed(game_seed, bad_seat)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="seed"):
        derive_bot_seed(-1, 0)


@pytest.mark.parametrize(
    ("players", "seed"),
    [
        (1, 0),
        (5, 0),
        (0, 0),
        ("2", 0),
        (2, -1),
        (2, 2**64),
        (2, 1.5),
        (2, "7"),
        (2, True),
        (2, None),
    ],
)
def test_bad_configs_raise_config_error(players: object, seed: object) -> None:
    with pytest.raises(ConfigError):
        GameState.new(players, seed)  # type: ignore[arg-type]


def test_bad_species_lists_raise_config_error() -> None:
    six = [
        Species.WILLOW,
        Species.OAK,
        Species.CASSIA,
        Species.MAPLE,
        Species.DOGWOOD,
        Species.JACARANDA,
    ]
    with pytest.raises(ConfigError):
        GameState.new(2, 0, species=six[:5])
    with pytest.raises(ConfigError):
        GameState.new(3, 0, species=six)
    with pytest.raises(ConfigError):
        GameState.new(2, 0, species=[*six[:5], Species.OAK])  # a duplicate


def test_unknown_species_name_raises_config_error() -> None:
    # GameState.new converts each entry with Species(...), so identifiers are accepted ...
    names = ["WILLOW", "OAK", "CASSIA", "MAPLE", "DOGWOOD", "JACARANDA"]
    assert len(GameState.new(2, 0, species=names).species) == 6  # type: ignore[arg-type]
    # ... and an unknown one is a configuration error like any other.
    with pytest.raises(ConfigError):
        GameState.new(2, 0, species=[*names[:5], "PALM"])  # type: ignore[arg-type]


def test_bad_decks_raise_config_error() -> None:
    species = list(Species)[:6]
    deck = species_cards(species)
    with pytest.raises(ConfigError):
        GameState.from_deck(2, species, deck[:-1])  # a card missing
    with pytest.raises(ConfigError):
        GameState.from_deck(2, species, [*deck[:-1], deck[0]])  # a card twice
    with pytest.raises(ConfigError):
        GameState.from_deck(2, species, [*deck[:-1], ALL_CARDS[79]])  # a foreign card
    with pytest.raises(ConfigError):
        GameState.from_deck(3, species, deck)  # 6 species for 3 players
    with pytest.raises(ConfigError):
        GameState.from_deck(5, species, deck)


@pytest.mark.parametrize(("match_seed", "index"), [(-1, 0), (2**64, 0), (0, -1), ("1", 0)])
def test_derive_game_seed_rejects_bad_input(match_seed: object, index: int) -> None:
    with pytest.raises(ConfigError):
        derive_game_seed(match_seed, index)  # type: ignore[arg-type]


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)
