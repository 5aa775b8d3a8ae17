"""Shared helpers for the engine tests: hand-built positions, random games and a scoring oracle.

Positions are built with :func:`build_state`, which goes through the engine's public determinization
(:func:`arboretum.determinize`) from a hand-made :class:`~arboretum.SeatView`, so the tests never
touch ``GameState``'s private fields (the engine is free to change them). The scoring oracle below
re-implements RULES.md "Scoring" by brute force, independently of ``arboretum.scoring``.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise

from arboretum import (
    SPECIES_PER_PLAYER_COUNT,
    Arboretum,
    Card,
    Cell,
    Decision,
    DecisionKind,
    GameState,
    SeatView,
    Species,
    determinize,
    random_decision,
)

Layout = Mapping[Cell, Card]


def cards(text: str) -> list[Card]:
    """``"OA1 JA3"`` -> [Card(OAK, 1), Card(JACARANDA, 3)]."""
    return [Card.parse(word) for word in text.split()]


def grid(text: str) -> dict[Cell, Card]:
    """An arboretum drawn as text: one row per line, cards separated by spaces, ``.`` for a hole.

    The first row is y = 0 and each following row is one lower (y = -1, -2, ...); the first column
    is x = 0. So ``grid("OA1 OA4")`` puts OA1 at (0, 0) and OA4 at (1, 0).
    """
    layout: dict[Cell, Card] = {}
    rows = [line.split() for line in text.strip("\n").splitlines() if line.strip()]
    for r, row in enumerate(rows):
        for c, word in enumerate(row):
            if word != ".":
                layout[Cell(c, -r)] = Card.parse(word)
    return layout


def species_cards(species: Iterable[Species]) -> list[Card]:
    return [Card(s, v) for s in species for v in range(1, 9)]


def build_state(
    players: int,
    hands: Sequence[Sequence[Card]],
    *,
    arbs: Sequence[Layout] | None = None,
    piles: Sequence[Sequence[Card]] | None = None,
    deck: Sequence[Card] = (),
    species: Sequence[Species] | None = None,
    filler: str = "piles",
    kind: DecisionKind = DecisionKind.GAME_OVER,
    current_seat: int = 0,
    turn: int = 30,
    discard_required: bool = True,
    last_turn: bool | None = None,
    forfeited: Sequence[bool] | None = None,
    rng_seed: int = 0,
) -> GameState:
    """A :class:`GameState` with exactly the given hands, arboretums, discard piles and deck cards.

    Built by determinizing a hand-made :class:`SeatView` of seat 0 in which every other seat's whole
    hand is listed as publicly known (``known_cards``); so nothing is dealt at random except the
    order of ``deck``. A side effect: ``state.known_cards(s)`` is the whole hand for ``s != 0``.

    The species in play are ``species`` or, by default, those of the given cards filled up (in the
    rules' order) to the count for ``players``. Every card of those species that is not placed
    explicitly goes, by ``filler``: ``"piles"`` to the bottom of the discard piles (round robin,
    so the given pile tops stay on top), or ``"arboretums"`` in a row from (0, 0) into the
    arboretums of the seats given no arboretum. ``kind`` defaults to a finished game.
    """
    count = SPECIES_PER_PLAYER_COUNT[players]
    arbs_list = [dict(a) for a in arbs] if arbs is not None else [{} for _ in range(players)]
    piles_list = [list(p) for p in piles] if piles is not None else [[] for _ in range(players)]
    assert len(hands) == len(arbs_list) == len(piles_list) == players
    placed = [c for h in hands for c in h]
    placed += [c for a in arbs_list for c in a.values()]
    placed += [c for p in piles_list for c in p] + list(deck)
    duplicates = [c for c, n in Counter(placed).items() if n > 1]
    assert not duplicates, f"cards placed twice: {duplicates}"
    if species is None:
        chosen = {c.species for c in placed}
        for s in Species:
            if len(chosen) >= count:
                break
            chosen.add(s)
        species = sorted(chosen, key=lambda s: s.index)
    species = tuple(sorted(species, key=lambda s: s.index))
    assert len(species) == count, f"{players} players need {count} species, got {species}"
    assert {c.species for c in placed} <= set(species), "a card of a species not in play"
    leftovers = [c for c in species_cards(species) if c not in set(placed)]
    if filler == "piles":
        for i, card in enumerate(leftovers):
            piles_list[i % players].insert(0, card)
    elif filler == "arboretums":
        empty = [s for s in range(players) if not arbs_list[s]]
        assert empty or not leftovers, "no empty arboretum to fill"
        for i, card in enumerate(leftovers):
            seat = empty[i % len(empty)]
            arbs_list[seat][Cell(len(arbs_list[seat]), 0)] = card
    else:
        raise ValueError(f"unknown filler {filler!r}")
    view = SeatView(
        seat=0,
        players=players,
        species=species,
        turn=turn,
        current_seat=current_seat,
        kind=kind,
        hand=tuple(sorted(hands[0])),
        arboretums=tuple(Arboretum(a) for a in arbs_list),
        discard_piles=tuple(tuple(p) for p in piles_list),
        deck_size=len(deck),
        hand_sizes=tuple(len(h) for h in hands),
        known_cards=((), *(tuple(sorted(h)) for h in hands[1:])),
        discard_required=discard_required,
        last_turn=kind is DecisionKind.GAME_OVER if last_turn is None else last_turn,
        forfeited=tuple(forfeited) if forfeited is not None else (False,) * players,
    )
    state = determinize(view, random.Random(rng_seed))
    # The helper is only useful if the state holds exactly what was asked for.
    for seat in range(players):
        assert sorted(state.hand(seat)) == sorted(hands[seat])
        assert dict(state.arboretum(seat)) == arbs_list[seat]
        assert list(state.discard_pile(seat)) == piles_list[seat]
    assert sorted(state.deck) == sorted(deck)
    return state


# --------------------------------------------------------------------------- card bookkeeping


def locations(state: GameState) -> Counter[Card]:
    """How many times each card appears in the deck, the hands, the piles and the arboretums."""
    found: Counter[Card] = Counter(state.deck)
    for seat in range(state.players):
        found.update(state.hand(seat))
        found.update(state.discard_pile(seat))
        found.update(state.arboretum(seat).values())
    return found


def assert_cards_conserved(state: GameState) -> None:
    found = locations(state)
    expected = species_cards(state.species)
    assert sorted(found) == sorted(expected), "a card of the game is missing or foreign"
    assert all(n == 1 for n in found.values()), {c: n for c, n in found.items() if n != 1}


CARD_TEXT = re.compile(r"\b(BS|CA|CB|DO|JA|MA|OA|RP|TP|WI)([1-8])\b")


def cards_in(text: str) -> set[Card]:
    return {Card.parse(m.group(0)) for m in CARD_TEXT.finditer(text)}


def visible_to(state: GameState, seat: int) -> set[Card]:
    """Everything ``seat`` may see: its hand and the public cards."""
    seen = set(state.hand(seat))
    for s in range(state.players):
        seen.update(state.arboretum(s).values())
        seen.update(state.discard_pile(s))
        seen.update(state.known_cards(s))
    return seen


# --------------------------------------------------------------------------- random games


def play_random_game(
    players: int,
    seed: int,
    policy_seed: int,
    on_step: Callable[[GameState, Decision], None] | None = None,
) -> GameState:
    """Play a seeded game with the built-in random policy; ``on_step`` after every decision."""
    state = GameState.new(players, seed)
    rng = random.Random(policy_seed)
    while not state.is_over:
        decision = random_decision(state, rng)
        state.apply(decision)
        if on_step is not None:
            on_step(state, decision)
    return state


def advance_random(state: GameState, rng: random.Random, decisions: int) -> GameState:
    """Apply up to ``decisions`` random decisions (stops at the end of the game)."""
    for _ in range(decisions):
        if state.is_over:
            break
        state.apply(random_decision(state, rng))
    return state


# --------------------------------------------------------------------------- scoring oracle


def neighbours(cell: Cell) -> list[Cell]:
    x, y = cell
    return [Cell(x + 1, y), Cell(x - 1, y), Cell(x, y + 1), Cell(x, y - 1)]


def path_points(cards_on_path: Sequence[Card], species: Species) -> int:
    """RULES.md "Points of a path", for a valid path of ``species``."""
    n = len(cards_on_path)
    doubled = n >= 4 and all(c.species is species for c in cards_on_path)
    points = n * 2 if doubled else n
    if cards_on_path[0].value == 1:
        points += 1
    if cards_on_path[-1].value == 8:
        points += 2
    return points


def all_paths(arb: Layout, species: Species) -> list[list[Cell]]:
    """Every path of ``species`` (RULES.md "Paths"), lowest card first, by exhaustive search."""
    found: list[list[Cell]] = []

    def extend(path: list[Cell]) -> None:
        last = arb[path[-1]]
        if len(path) >= 2 and last.species is species:
            found.append(path)
        for n in neighbours(path[-1]):
            card = arb.get(n)
            if card is not None and card.value > last.value:
                extend([*path, n])

    for cell, card in arb.items():
        if card.species is species:
            extend([cell])
    return found


def oracle_best_points(arb: Layout, species: Species) -> int:
    return max(
        (path_points([arb[c] for c in p], species) for p in all_paths(arb, species)), default=0
    )


def oracle_hand_totals(hands: Sequence[Sequence[Card]], species: Species) -> list[int]:
    one, eight = Card(species, 1), Card(species, 8)
    totals = []
    for seat, hand in enumerate(hands):
        total = sum(c.value for c in hand if c.species is species)
        others_hold_one = any(one in h for other, h in enumerate(hands) if other != seat)
        if eight in hand and others_hold_one:
            total -= 8
        totals.append(total)
    return totals


def oracle_ranks(
    totals: Sequence[int], counts: Sequence[int], forfeited: Sequence[bool]
) -> list[int]:
    """Competition ranks: walk the seats from best to worst, equal keys share the rank."""
    keys = [(0 if f else 1, t, c) for t, c, f in zip(totals, counts, forfeited, strict=True)]
    order = sorted(range(len(keys)), key=lambda s: keys[s], reverse=True)
    ranks = [0] * len(keys)
    for position, seat in enumerate(order):
        if position and keys[seat] == keys[order[position - 1]]:
            ranks[seat] = ranks[order[position - 1]]
        else:
            ranks[seat] = position + 1
    return ranks


def oracle_score(state: GameState) -> tuple[list[int], list[dict[Species, int]], list[int]]:
    """(totals, per-seat points per species, ranks) of a finished game, by brute force."""
    hands = [state.hand(s) for s in range(state.players)]
    arbs = [dict(state.arboretum(s)) for s in range(state.players)]
    per_species: list[dict[Species, int]] = [{} for _ in range(state.players)]
    for species in state.species:
        totals = oracle_hand_totals(hands, species)
        for seat in range(state.players):
            right = totals[seat] == max(totals)
            per_species[seat][species] = oracle_best_points(arbs[seat], species) if right else 0
    totals = [sum(p.values()) for p in per_species]
    counts = [len({c.species for c in a.values()}) for a in arbs]
    return totals, per_species, oracle_ranks(totals, counts, state.forfeited)


def assert_valid_path(arb: Layout, species: Species, path: object) -> None:
    """A PathScore is a real path of ``species`` in ``arb`` and its breakdown follows the rules."""
    cells = path.cells  # type: ignore[attr-defined]
    on_path = path.cards  # type: ignore[attr-defined]
    assert len(cells) == len(on_path) >= 2
    assert [arb[c] for c in cells] == list(on_path)
    assert on_path[0].species is species and on_path[-1].species is species
    for a, b in pairwise(cells):
        assert abs(a.x - b.x) + abs(a.y - b.y) == 1, f"{a} and {b} are not orthogonal neighbours"
    values = [c.value for c in on_path]
    assert all(a < b for a, b in pairwise(values)), values
    doubled = len(on_path) >= 4 and all(c.species is species for c in on_path)
    assert path.doubled is doubled  # type: ignore[attr-defined]
    assert path.card_points == len(on_path) * (2 if doubled else 1)  # type: ignore[attr-defined]
    assert path.start_bonus == (1 if values[0] == 1 else 0)  # type: ignore[attr-defined]
    assert path.end_bonus == (2 if values[-1] == 8 else 0)  # type: ignore[attr-defined]
    assert path.points == path_points(on_path, species)  # type: ignore[attr-defined]
