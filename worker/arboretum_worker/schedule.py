"""League schedule: a round robin in which seats and deals are fair.

**Combinations.** With ``players`` = P seats and v bots, every P-subset of the bots (a
*combination*) plays, as long as there are at most :data:`MAX_FULL_COMBINATIONS` (200) of them.
Beyond that, the league plays a *balanced* block set instead (:func:`design`): a set of
P-subsets in which every pair of bots meets the same number of times (lambda), found as a
cyclic design (see :func:`design`). Two-player leagues always play every pair: that is the
only balanced set.

**The league's order.** The bots are sorted by version id and then put in an order drawn from
the league seed (:func:`league_order`: position i of the sorted list is ranked by
``sha256("arboretum-order:{league seed}:{i}")``). The order depends on the seed and on how many
bots there are, never on a name, an id or a file's contents: nothing an author controls places a
bot next to another, or (above 200 combinations) in one block of the design rather than another.

**Deals and seats.** Each combination plays ``games_per_pairing`` = N deals, and each deal in
all P rotations of one cyclic seat order (:func:`seating`): N * P games per combination. With the
combination's bots in league order b_0 .. b_(P-1), deal d takes the cyclic order number
``d mod (P-1)!`` of :func:`cyclic_orders` (b_0 first, the other bots in each of their (P-1)!
orders), and rotation r seats that order's bot ``(s + r) mod P`` in seat s. So:

- every bot sits in every seat once per deal;
- over every block of (P-1)! consecutive deals (1, 2 and 6 deals for 2, 3 and 4 players), every
  ordered pair "X sits directly before Y" (Y moves right after X, and may take X's discard first)
  occurs equally often, P (P-2)! times, and equally often at every seat. The P rotations of one
  cyclic order keep its neighbours; the (P-1)! orders give each bot each neighbour.

When N is not a multiple of (P-1)! the last, partial block plays only some of the orders (the
first ones, in the league order), so a few neighbours meet once more than the others (with 4
players and 8 bots and N = 1, some "X before Y" orders occur 60 times and their reverse never).
So a new league takes N = (P-1)! unless told otherwise, and refuses an N that is not a multiple
of it unless the league is created with ``allow_unbalanced`` (:func:`balance_problem`).

**A match is a series** (:func:`pack_series`): several deals of one combination in one seating,
played one after the other by the same bot processes, one per seat, started fresh for the match.
The other seatings of those deals are other matches, with other processes. So a bot process never
sees a deal twice: it plays each deal of its series once, in its one seating. A series holds up to
``deals_per_series`` deals (a league setting), taken in deal order among the deals that share its
seating. Every game keeps its deal's own seed (``derive_game_seed(deal seed, 0)``, see below),
whatever the packing: the same deal is the same game in every seating, and a league plays the
same games with any ``deals_per_series``.

**Ids and seeds are deterministic.** The schedule depends on the set of bots and the league
seed only (not on the order the bots are listed in).
``match_id = sha256("arboretum-match:{league}:{sorted ids of the combination, '/'-joined}:{deal}:
{rotation}")``, first 20 hex digits; ``seed = first 8 bytes of
sha256("arboretum-deal:{league seed}:{combination}:{deal}")``. Raising N later keeps the ids and
seeds of the deals already scheduled. That is the id of a one-deal series (so
``deals_per_series = 1`` is the schedule of one game per match); a longer series is
``sha256("arboretum-series:{league}:{combination}:{rotation}:{its deals, ','-joined}")``.

**A known leak.** A game's seed is revealed to its bots when the game ends, while another
seating of the same deal may still be running on another worker. Bots are sandboxed without
network and each match starts fresh processes, so a bot cannot pass the seed on; the leak is
harmless only under that isolation. (The seeds of a series' later games do not follow from its
earlier ones: each is a hash of its own deal number.)
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_DEALS_PER_SERIES",
    "MAX_DEALS_PER_SERIES",
    "MAX_FULL_COMBINATIONS",
    "Design",
    "MatchSpec",
    "ScheduleError",
    "balance_problem",
    "balanced_games_per_pairing",
    "block_deals",
    "check_deals_per_series",
    "cyclic_orders",
    "deal_seed",
    "design",
    "league_order",
    "match_id",
    "pack_series",
    "pair_counts",
    "round_robin",
    "seating",
    "series_id",
]

MAX_FULL_COMBINATIONS = 200
SEARCH_STEPS = 4_000
"""Moves per base block and restart of the design search."""
SEARCH_BUDGET = 400_000
"""Moves of the design search in all (deterministic; bounds its time to a few seconds)."""
MAX_COMBINATIONS = 20_000
"""When no design is found, every combination is played, up to this many (else an error)."""
DEFAULT_DEALS_PER_SERIES = 10
"""Deals per series of a new league: ten games per match spread a bot start over ten games."""
MAX_DEALS_PER_SERIES = 100
"""The most deals a series may hold (a series is one rq job: its timeout grows with its games)."""


class ScheduleError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """One scheduled match: a series of deals of one combination in one seating.

    Built for one game (``deal``, ``seed``) it is a one-deal series; :func:`pack_series` makes
    the longer ones."""

    match_id: str
    league: str
    seats: tuple[str, ...]
    """Version ids in seat order (seat 0 moves first)."""
    combination: tuple[str, ...]
    """The combination's version ids, sorted (they name its matches and deals)."""
    deal: int
    """The series' first deal."""
    rotation: int
    seed: int
    """The first deal's seed (:func:`deal_seed`); each game's own seed is in ``game_seeds``."""
    deals: tuple[int, ...] = ()
    """The deals of the combination this match plays, game i playing ``deals[i]``."""
    game_seeds: tuple[int, ...] = ()
    """Each game's seed: ``derive_game_seed(deal_seed(..., deal), 0)`` of its deal."""
    siblings: tuple[str, ...] = ()
    """Ids of the other matches that play any of these deals (in other seatings)."""

    def __post_init__(self) -> None:
        if not self.deals:
            from arboretum import derive_game_seed  # the engine, only once a spec is built

            object.__setattr__(self, "deals", (self.deal,))
            object.__setattr__(self, "game_seeds", (derive_game_seed(self.seed, 0),))
        if len(self.game_seeds) != len(self.deals) or self.deals[0] != self.deal:
            raise ScheduleError("a series has one seed per deal, and starts at its first deal")

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def games(self) -> int:
        return len(self.deals)


@dataclass(frozen=True, slots=True)
class Design:
    """A block set on points 0..v-1 in which every pair of points meets ``lam`` times."""

    v: int
    k: int
    blocks: tuple[tuple[int, ...], ...]
    lam: int
    method: str
    """``all`` (every k-subset), ``cyclic`` (base blocks developed mod v) or
    ``1-rotational`` (points Z_(v-1) plus a fixed point, base blocks developed mod v-1)."""


def pair_counts(blocks: Iterable[Sequence[int]]) -> Counter[tuple[int, int]]:
    """How many blocks each pair (a < b) appears in."""
    counts: Counter[tuple[int, int]] = Counter()
    for block in blocks:
        for a, b in itertools.combinations(sorted(block), 2):
            counts[a, b] += 1
    return counts


def _is_balanced(v: int, blocks: Sequence[Sequence[int]], lam: int) -> bool:
    counts = pair_counts(blocks)
    return len(counts) == v * (v - 1) // 2 and all(c == lam for c in counts.values())


def _full(v: int, k: int) -> Design:
    blocks = tuple(itertools.combinations(range(v), k))
    return Design(v, k, blocks, math.comb(v - 2, k - 2), "all")


def _candidates(v: int, k: int, limit: int) -> list[tuple[int, str, int, int, int]]:
    """(blocks, method, lam, base blocks with infinity, base blocks without), fewest first.

    cyclic on Z_v: b base blocks, each with k(k-1) ordered differences, must give every
    nonzero difference lam times: b k (k-1) = lam (v-1); v * b blocks.
    1-rotational on Z_m + {inf}, m = v-1: c base blocks hold inf, each pairs inf with k-1
    points of every orbit, so lam = c (k-1); their finite parts have (k-1)(k-2) differences,
    the f others k(k-1): c (k-1)(k-2) + f k (k-1) = lam (m-1); m (c + f) blocks.
    """
    out = []
    kk = k * (k - 1)
    for lam in range(1, 4 * kk + 1):
        if (lam * (v - 1)) % kk == 0:
            b = lam * (v - 1) // kk
            if v * b < limit:
                out.append((v * b, "cyclic", lam, 0, b))
        m = v - 1
        if lam % (k - 1) == 0 and m > k:
            c = lam // (k - 1)
            rest = lam * (m - 1) - c * (k - 1) * (k - 2)
            if rest >= 0 and rest % kk == 0 and m * (c + rest // kk) < limit:
                out.append((m * (c + rest // kk), "1-rotational", lam, c, rest // kk))
    out.sort()
    return out


def _short_orbit(block: Sequence[int], m: int) -> bool:
    s = set(block)
    first = block[0]
    return any(all((x + t) % m in s for x in block) for t in ((y - first) % m for y in block[1:]))


def _orbit_key(block: Sequence[int], m: int) -> tuple[int, ...]:
    return min(tuple(sorted((x - t) % m for x in block)) for t in block)


def _full_distinct_orbits(blocks: Sequence[Sequence[int]], sizes: Sequence[int], m: int) -> bool:
    """Every base block has a full orbit (m blocks) and no two share an orbit."""
    if any(_short_orbit(b, m) for b in blocks if len(b) > 1):
        return False
    keys = {(size, _orbit_key(b, m)) for b, size in zip(blocks, sizes, strict=True)}
    return len(keys) == len(blocks)


def _search(
    m: int, lam: int, sizes: Sequence[int], rng: random.Random, steps: int, budget: list[int]
) -> list[list[int]] | None:
    """Base blocks in Z_m (given sizes) whose ordered differences cover 1..m-1 ``lam`` times.

    A deterministic local search on the squared error of the difference counts: move one
    point of one block, keep the move unless it raises the error (and rarely even then, to
    leave plateaus); restart from scratch a few times.
    """
    for _restart in range(4):
        blocks = [rng.sample(range(m), size) for size in sizes]
        cnt = [0] * m
        for block in blocks:
            for a in block:
                for b in block:
                    if a != b:
                        cnt[(a - b) % m] += 1
        err = sum((c - lam) ** 2 for c in cnt[1:])
        force = False
        for _ in range(steps):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if err == 0:
                if _full_distinct_orbits(blocks, sizes, m):
                    return [sorted(b) for b in blocks]
                force = True  # a short or repeated orbit: move on from here
            block = blocks[rng.randrange(len(blocks))]
            if len(block) < 2:
                continue
            pos = rng.randrange(len(block))
            new = rng.randrange(m)
            if new in block:
                continue
            old = block[pos]
            change: dict[int, int] = {}
            for x in block:
                if x != old:
                    for d, sign in (
                        ((old - x) % m, -1),
                        ((x - old) % m, -1),
                        ((new - x) % m, 1),
                        ((x - new) % m, 1),
                    ):
                        change[d] = change.get(d, 0) + sign
            delta = sum(
                (cnt[d] + c - lam) ** 2 - (cnt[d] - lam) ** 2 for d, c in change.items() if c
            )
            if delta <= 0 or force or rng.random() < 0.002:
                force = False
                for d, c in change.items():
                    cnt[d] += c
                block[pos] = new
                err += delta
    return None


def _develop(v: int, k: int, method: str, lam: int, base: list[list[int]], c: int) -> Design:
    m = v if method == "cyclic" else v - 1
    blocks = []
    for index, block in enumerate(base):
        with_inf = index < c
        for t in range(m):
            b = sorted((x + t) % m for x in block)
            if with_inf:
                b.append(m)  # the fixed point is v - 1
            blocks.append(tuple(b))
    return Design(v, k, tuple(sorted(blocks)), lam, method)


@functools.lru_cache(maxsize=64)
def design(v: int, k: int) -> Design:
    """The combinations a league of ``v`` bots and ``k`` seats plays, as blocks on 0..v-1.

    Every k-subset when there are at most MAX_FULL_COMBINATIONS of them, or when k = 2.
    Otherwise the smallest balanced design found among: cyclic designs (base blocks
    developed mod v) and 1-rotational designs (points Z_(v-1) and one fixed point; base
    blocks developed mod v-1, some containing the fixed point), tried from the fewest
    blocks up for every lambda that the counting conditions allow, each by a seeded (so
    deterministic) local search for base blocks whose differences cover every nonzero
    residue lambda times. Falls back to every k-subset if no such design is found. Every
    design returned is checked: every pair meets exactly ``lam`` times, no block twice.
    """
    if not 2 <= k <= v:
        raise ScheduleError(f"cannot seat {k} players from {v} bot{'' if v == 1 else 's'}")
    total = math.comb(v, k)
    if total <= MAX_FULL_COMBINATIONS or k == 2 or k >= v - 1:
        return _full(v, k)
    budget = [SEARCH_BUDGET]
    for _count, method, lam, c, f in _candidates(v, k, total):
        if budget[0] <= 0:
            break
        m = v if method == "cyclic" else v - 1
        rng = random.Random(f"arboretum-design:{v}:{k}:{method}:{lam}")
        sizes = [k - 1] * c + [k] * f
        base = _search(m, lam, sizes, rng, SEARCH_STEPS * (c + f), budget)
        if base is None:
            continue
        found = _develop(v, k, method, lam, base, c)
        if len(set(found.blocks)) == len(found.blocks) and _is_balanced(v, found.blocks, lam):
            return found
    if total > MAX_COMBINATIONS:
        raise ScheduleError(
            f"no balanced design found for {v} bots in {k}-player games, and all {total} "
            f"combinations are more than {MAX_COMBINATIONS}: use fewer bots or players"
        )
    return _full(v, k)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def match_id(league: str, combination: Sequence[str], deal: int, rotation: int) -> str:
    return _digest(f"arboretum-match:{league}:{'/'.join(combination)}:{deal}:{rotation}").hex()[:20]


def series_id(league: str, combination: Sequence[str], rotation: int, deals: Sequence[int]) -> str:
    """The id of a series of several deals (a one-deal series keeps :func:`match_id`)."""
    text = f"arboretum-series:{league}:{'/'.join(combination)}:{rotation}:"
    return _digest(text + ",".join(str(d) for d in deals)).hex()[:20]


def deal_seed(league_seed: int, combination: Sequence[str], deal: int) -> int:
    text = f"arboretum-deal:{league_seed}:{'/'.join(combination)}:{deal}"
    return int.from_bytes(_digest(text)[:8], "big")


def league_order(bots: Sequence[str], seed: int) -> list[str]:
    """The league's bots in the order the league seed draws: the sorted ids, permuted by a
    permutation that depends only on the seed and the number of bots."""
    ordered = sorted(bots)
    ranks = sorted(range(len(ordered)), key=lambda i: _digest(f"arboretum-order:{seed}:{i}"))
    return [ordered[i] for i in ranks]


def block_deals(players: int) -> int:
    """Deals in one balanced block of seat orders: (P-1)!, the number of cyclic orders."""
    return math.factorial(players - 1)


def balanced_games_per_pairing(players: int) -> int:
    """The smallest number of deals per combination that balances the seat orders, (P-1)!:
    1, 2 and 6 for 2, 3 and 4 players (the default of a new league; 1 for other counts, which
    a league refuses anyway)."""
    return block_deals(players) if players in (2, 3, 4) else 1


def balance_problem(players: int, games_per_pairing: int) -> str | None:
    """Why ``games_per_pairing`` deals per combination leave ``players``-player seat orders
    unbalanced (some bots sit directly before others more often), or None when they do not."""
    block = balanced_games_per_pairing(players)
    if games_per_pairing % block == 0:
        return None
    one = games_per_pairing == 1
    return (
        f"{games_per_pairing} deal{'' if one else 's'} per combination "
        f"leave{'s' if one else ''} {players}-player seat orders unbalanced: each bot sits "
        f"directly before each other equally often only over a multiple of {block} deals"
    )


@functools.lru_cache(maxsize=8)
def cyclic_orders(players: int) -> tuple[tuple[int, ...], ...]:
    """The (P-1)! cyclic orders of positions 0..P-1, each starting at 0, in lexicographic order."""
    return tuple((0, *rest) for rest in itertools.permutations(range(1, players)))


def seating(order: Sequence[str], deal: int, rotation: int) -> tuple[str, ...]:
    """The seats of one game: deal ``deal`` of a combination, in rotation ``rotation``.

    ``order`` is the combination's bots in league order (:func:`league_order`). The deal takes
    cyclic order ``deal mod (P-1)!`` of :func:`cyclic_orders`; seat s gets that order's bot
    ``(s + rotation) mod P``. This is the league's one seating rule (see the module doc).
    """
    players = len(order)
    if not 0 <= rotation < players:
        raise ScheduleError(f"rotation {rotation} is not one of 0..{players - 1}")
    if deal < 0:
        raise ScheduleError(f"deal {deal} is negative")
    orders = cyclic_orders(players)
    cycle = [order[i] for i in orders[deal % len(orders)]]
    return tuple(cycle[(s + rotation) % players] for s in range(players))


def check_deals_per_series(value: object) -> int:
    """``value`` if it is a valid ``deals_per_series``, else a ScheduleError naming the setting."""
    if type(value) is not int or not 1 <= value <= MAX_DEALS_PER_SERIES:
        raise ScheduleError(
            f"deals_per_series must be a whole number from 1 to {MAX_DEALS_PER_SERIES}, "
            f"not {value!r}"
        )
    return value


def pack_series(games: Sequence[MatchSpec], deals_per_series: int) -> list[MatchSpec]:
    """Pack one-game matches into series of up to ``deals_per_series`` deals.

    A series takes, in deal order, deals of one combination that share one seating (the same
    seats): the games ``games`` gives that seating. Series are listed in the order of their first
    game in ``games``; a one-deal series is its game unchanged (id included). Each series names
    its siblings: the other series that play any of its deals.
    """
    check_deals_per_series(deals_per_series)
    groups: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[tuple[int, MatchSpec]]] = {}
    for position, game in enumerate(games):
        if game.games != 1:
            raise ScheduleError("pack_series packs one-game matches")
        key = (game.league, game.combination, game.seats)
        groups.setdefault(key, []).append((position, game))
    packed: list[tuple[int, MatchSpec]] = []
    for members in groups.values():
        members.sort(key=lambda m: m[1].deal)
        for start in range(0, len(members), deals_per_series):
            chunk = members[start : start + deals_per_series]
            first = chunk[0][1]
            if len(chunk) == 1:
                packed.append((chunk[0][0], first))
                continue
            deals = tuple(g.deal for _p, g in chunk)
            series = dataclasses.replace(
                first,
                match_id=series_id(first.league, first.combination, first.rotation, deals),
                deals=deals,
                game_seeds=tuple(g.game_seeds[0] for _p, g in chunk),
            )
            packed.append((min(p for p, _g in chunk), series))
    packed.sort(key=lambda item: item[0])
    playing: dict[tuple[str, tuple[str, ...], int], list[str]] = {}
    for _p, spec in packed:
        for deal in spec.deals:
            playing.setdefault((spec.league, spec.combination, deal), []).append(spec.match_id)
    out = []
    for _p, spec in packed:
        siblings = {
            mid
            for deal in spec.deals
            for mid in playing[spec.league, spec.combination, deal]
            if mid != spec.match_id
        }
        out.append(dataclasses.replace(spec, siblings=tuple(sorted(siblings))))
    return out


def round_robin(
    league: str,
    bots: Sequence[str],
    players: int,
    games_per_pairing: int,
    seed: int,
    deals_per_series: int = 1,
) -> list[MatchSpec]:
    """Every match of the league: its games (deal by deal, then rotation, then combination)
    packed into series of up to ``deals_per_series`` deals (:func:`pack_series`)."""
    check_deals_per_series(deals_per_series)
    if players not in (2, 3, 4):
        raise ScheduleError(f"players must be 2, 3 or 4, not {players!r}")
    if games_per_pairing < 1:
        raise ScheduleError("games_per_pairing must be 1 or more")
    if len(set(bots)) != len(bots):
        raise ScheduleError("each bot may appear once in a league")
    if not 0 <= seed < 1 << 64:
        raise ScheduleError("the league seed is an integer from 0 to 2**64-1")
    if len(bots) < players:
        raise ScheduleError(
            f"{len(bots)} bot{'' if len(bots) == 1 else 's'} cannot fill {players} seats"
        )
    ordered = league_order(bots, seed)
    d = design(len(ordered), players)
    orders = [tuple(ordered[i] for i in block) for block in d.blocks]
    combos = [(order, tuple(sorted(order))) for order in orders]
    specs = []
    for deal in range(games_per_pairing):
        for rotation in range(players):
            for order, combo in combos:
                seats = seating(order, deal, rotation)
                specs.append(
                    MatchSpec(
                        match_id=match_id(league, combo, deal, rotation),
                        league=league,
                        seats=seats,
                        combination=combo,
                        deal=deal,
                        rotation=rotation,
                        seed=deal_seed(seed, combo, deal),
                    )
                )
    return pack_series(specs, deals_per_series)
