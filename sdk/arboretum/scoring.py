"""Final scoring with its explanation, and ranks after the tie-break (RULES.md, "Scoring").

For each species in play: the right to score (hand totals after the 8/1 rule; ties share the right,
a tie at 0 included), then each seat with the right scores its single best path of that species.

A path runs through strictly increasing values, so the search is bounded (at most 8 cards). The
best path is the maximum of two searches: over all paths (1 point per card), and over single-species
paths (2 per card from 4 cards on). The start bonus (+1 for a 1) and end bonus (+2 for an 8) are
added to both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .cards import ALL_CARDS, Card, Cell, Species
from .grid import STRIDE, unpack


class ScoredGame(Protocol):
    """What scoring reads of a game (a :class:`~arboretum.GameState` has it): the species in play,
    each seat's hand (card ids) and arboretum (packed cell -> card id), and the forfeits."""

    players: int
    species: tuple[Species, ...]
    _species_ids: tuple[int, ...]
    _hands: list[list[int]]
    _arbs: list[dict[int, int]]
    _forfeited: list[bool]

    def hand(self, seat: int) -> tuple[Card, ...]: ...


__all__ = ["GameResult", "PathScore", "SeatScore", "SpeciesScore", "rank_seats", "score_game"]


@dataclass(frozen=True, slots=True)
class PathScore:
    """One scored path, lowest card first, with its points broken down."""

    cells: tuple[Cell, ...]
    cards: tuple[Card, ...]
    card_points: int
    """1 per card, or 2 per card when the path has 4+ cards all of the scored species."""
    doubled: bool
    start_bonus: int
    """+1 when the path starts with a 1."""
    end_bonus: int
    """+2 when the path ends with an 8."""

    @property
    def points(self) -> int:
        return self.card_points + self.start_bonus + self.end_bonus


@dataclass(frozen=True, slots=True)
class SpeciesScore:
    """One seat's scoring of one species."""

    species: Species
    hand_total: int
    """The species' values in hand, after the 8/1 rule."""
    has_right: bool
    path: PathScore | None
    """The best path, when the seat has the right and a path exists."""
    points: int


@dataclass(frozen=True, slots=True)
class SeatScore:
    seat: int
    total: int
    species_in_arboretum: int
    forfeited: bool
    rank: int
    """1 is best; seats equal on total and species count share a rank."""
    species: tuple[SpeciesScore, ...]


@dataclass(frozen=True, slots=True)
class GameResult:
    """The outcome of a game: every seat's score explained, the revealed hands and the ranks."""

    seats: tuple[SeatScore, ...]
    hands: tuple[tuple[Card, ...], ...]

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(s.total for s in self.seats)

    @property
    def ranks(self) -> tuple[int, ...]:
        return tuple(s.rank for s in self.seats)

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats ranked first; more than one means a shared game (a draw between them)."""
        return tuple(s.seat for s in self.seats if s.rank == 1)

    @property
    def shared(self) -> bool:
        return len(self.winners) > 1


def rank_seats(totals: list[int], species_counts: list[int], forfeited: list[bool]) -> list[int]:
    """Competition ranks (1, 1, 3, …): forfeited seats last, then total, then species count."""
    keys = [(not f, t, c) for t, c, f in zip(totals, species_counts, forfeited, strict=True)]
    return [1 + sum(1 for other in keys if other > key) for key in keys]


def hand_totals(hands: list[list[int]], species: int) -> list[int]:
    """Each seat's total of ``species`` in hand, after the 8/1 rule."""
    one, eight = species * 8, species * 8 + 7
    holder_of_one = -1
    for seat, hand in enumerate(hands):
        if one in hand:
            holder_of_one = seat
    totals = []
    for seat, hand in enumerate(hands):
        total = 0
        for c in hand:
            if c >> 3 == species:
                total += (c & 7) + 1
        if eight in hand and holder_of_one not in (-1, seat):
            total -= 8
        totals.append(total)
    return totals


def _hand_totals_by_species(hands: list[list[int]]) -> list[list[int]]:
    """:func:`hand_totals` of every species at once, indexed by species index then seat."""
    totals = [[0] * len(hands) for _ in range(10)]
    holder_of_one: dict[int, int] = {}
    eights: list[tuple[int, int]] = []
    for seat, hand in enumerate(hands):
        for c in hand:
            v = c & 7
            totals[c >> 3][seat] += v + 1
            if v == 0:
                holder_of_one[c >> 3] = seat
            elif v == 7:
                eights.append((seat, c >> 3))
    for seat, s in eights:
        if holder_of_one.get(s, seat) != seat:
            totals[s][seat] -= 8
    return totals


def _cells_by_species(arb: dict[int, int]) -> list[list[int]]:
    """The cells of a packed arboretum, indexed by species index, each list in play order."""
    cells: list[list[int]] = [[] for _ in range(10)]
    for p, c in arb.items():
        cells[c >> 3].append(p)
    return cells


def best_path(arb: dict[int, int], species: int) -> tuple[int, list[int]]:
    """The best path of ``species`` in a packed arboretum: (points, packed cells lowest first).

    Returns (0, []) when there is no path of at least two cards. Of equal paths it returns the first
    found: starts in play order, for each the mixed path first, then single-species paths.
    """
    return _best_path(arb, species, [p for p, c in arb.items() if c >> 3 == species])


def _best_path(arb: dict[int, int], species: int, starts: list[int]) -> tuple[int, list[int]]:
    """:func:`best_path`, given the cells of ``species`` in play order."""
    if len(starts) < 2:
        return 0, []
    # Every path ends on a card of the species, so it climbs no higher than the highest of them,
    # and that card can only end a path.
    top_card = 0
    for a in starts:
        c = arb[a]
        if c > top_card:
            top_card = c
    top = top_card & 7
    get = arb.get
    memo: dict[int, tuple[int, int]] = {}
    best_points, best_cells = 0, []
    doubles = len(starts) >= 4  # a doubled path has 4 or more cards of the species
    for a in starts:
        v = arb[a] & 7
        if v >= top:
            continue
        start_bonus = 1 if v == 0 else 0
        # Mixed paths of at least two cards: the best climb from a higher neighbour.
        best, nxt = -99, -1
        for n in (a + 1, a - 1, a + STRIDE, a - STRIDE):
            cn = get(n)
            if cn is not None and (v < (cn & 7) < top or cn == top_card):
                hit = memo.get(n)
                rest = hit[0] if hit is not None else _climb(arb, n, species, top_card, memo)
                if rest > 0 and rest + 1 > best:
                    best, nxt = rest + 1, n
        if best > 0 and best + start_bonus > best_points:
            cells = [a]
            p = nxt
            while p != -1:
                cells.append(p)
                p = memo[p][1]
            best_points, best_cells = best + start_bonus, cells
        # Single-species paths, doubled from 4 cards: a small exhaustive search. Within one
        # species a higher value is a higher card id.
        if doubles and v <= 4:  # a start at 6 or higher cannot reach 4 cards
            stack = [(a, [a])]
            while stack:
                p, cells = stack.pop()
                cp = arb[p]
                for n in (p + 1, p - 1, p + STRIDE, p - STRIDE):
                    cn = get(n)
                    if cn is not None and cn >> 3 == species and cn > cp:
                        path = [*cells, n]
                        length = len(path)
                        if length >= 4:
                            points = 2 * length + start_bonus + (2 if cn & 7 == 7 else 0)
                            if points > best_points:
                                best_points, best_cells = points, path
                        stack.append((n, path))
    return best_points, best_cells


def _climb(
    arb: dict[int, int], p: int, species: int, top_card: int, memo: dict[int, tuple[int, int]]
) -> int:
    """The best climb from ``p`` to an end of ``species``: its cards plus the end bonus, or a
    negative number when no end is reachable. Records (that score, the next cell or -1) in
    ``memo[p]``; ``top_card`` is the highest card of the species in the arboretum."""
    c = arb[p]
    nxt = -1
    if c == top_card:
        best = 3 if c & 7 == 7 else 1
    else:
        v = c & 7
        top = top_card & 7
        best = (3 if v == 7 else 1) if c >> 3 == species else -99
        get = arb.get
        for n in (p + 1, p - 1, p + STRIDE, p - STRIDE):
            cn = get(n)
            if cn is not None and (v < (cn & 7) < top or cn == top_card):
                hit = memo.get(n)
                rest = hit[0] if hit is not None else _climb(arb, n, species, top_card, memo)
                if rest > 0 and rest + 1 > best:
                    best, nxt = rest + 1, n
    memo[p] = (best, nxt)
    return best


def explain_path(arb: dict[int, int], species: int, cells: list[int]) -> PathScore:
    cards = [arb[p] for p in cells]
    doubled = len(cards) >= 4 and all(c >> 3 == species for c in cards)
    return PathScore(
        cells=tuple(unpack(p) for p in cells),
        cards=tuple(ALL_CARDS[c] for c in cards),
        card_points=len(cards) * (2 if doubled else 1),
        doubled=doubled,
        start_bonus=1 if cards[0] & 7 == 0 else 0,
        end_bonus=2 if cards[-1] & 7 == 7 else 0,
    )


def final_totals(state: ScoredGame) -> list[int]:
    """Only the totals, without explanation objects (rollouts use this)."""
    arbs = state._arbs
    in_hand = _hand_totals_by_species(state._hands)
    cells = [_cells_by_species(arb) for arb in arbs]
    totals = [0] * state.players
    for s in state._species_ids:
        ht = in_hand[s]
        top = max(ht)
        for seat, t in enumerate(ht):
            if t == top:
                totals[seat] += _best_path(arbs[seat], s, cells[seat][s])[0]
    return totals


def score_game(state: ScoredGame) -> GameResult:
    """Score a finished game, explaining every point."""
    arbs = state._arbs
    players = state.players
    in_hand = _hand_totals_by_species(state._hands)
    cells_of = [_cells_by_species(arb) for arb in arbs]
    per_seat: list[list[SpeciesScore]] = [[] for _ in range(players)]
    totals = [0] * players
    for species, s in zip(state.species, state._species_ids, strict=True):
        ht = in_hand[s]
        top = max(ht)
        for seat in range(players):
            right = ht[seat] == top
            path = None
            points = 0
            if right:
                best, cells = _best_path(arbs[seat], s, cells_of[seat][s])
                if cells:
                    path = explain_path(arbs[seat], s, cells)
                    points = path.points
                    assert points == best
            totals[seat] += points
            per_seat[seat].append(SpeciesScore(species, ht[seat], right, path, points))
    counts = [sum(map(bool, cells)) for cells in cells_of]  # species with a card in the arboretum
    forfeited = list(state._forfeited)
    ranks = rank_seats(totals, counts, forfeited)
    seats = tuple(
        SeatScore(
            seat, totals[seat], counts[seat], forfeited[seat], ranks[seat], tuple(per_seat[seat])
        )
        for seat in range(players)
    )
    return GameResult(seats, tuple(state.hand(seat) for seat in range(players)))
