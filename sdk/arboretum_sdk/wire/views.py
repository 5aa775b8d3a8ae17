"""A seat's view (``SeatView``) and the public board, to and from protobuf; the fast decoder of
a bot's own view with its caches."""

from __future__ import annotations

from collections.abc import Sequence

from arboretum import (
    HAND_SIZE,
    SPECIES_PER_PLAYER_COUNT,
    Arboretum,
    Card,
    Cell,
    DecisionKind,
    SeatView,
    Species,
)
from arboretum_proto.v1 import common_pb2, game_pb2

from ..clitools import plural
from .values import (
    _LIMIT,
    _PB_CARDS,
    WireError,
    _missing,
    _placed_from_pb,
    _placed_to_pb,
    card_from_pb,
    card_to_pb,
)

__all__ = ["public_state_to_pb", "seat_view_from_pb", "seat_view_to_pb"]


def public_state_to_pb(
    view: SeatView,
    *,
    game_index: int = 0,
    bank_left_ms: Sequence[int] | None = None,
    faults: Sequence[int] | None = None,
) -> game_pb2.PublicState:
    """The public part of ``view`` (the same for every seat's view of one state)."""
    players = view.players
    banks = list(bank_left_ms) if bank_left_ms is not None else [0] * players
    fault_counts = list(faults) if faults is not None else [0] * players
    if len(banks) != players or len(fault_counts) != players:
        raise WireError(
            "board.seats", f"needs one bank_left_ms and faults value per seat ({players})"
        )
    board = game_pb2.PublicState(
        game_index=game_index,
        turn_number=view.turn + 1,
        current_seat=view.current_seat,
        deck_size=view.deck_size,
    )
    for seat in range(players):
        board.seats.append(
            game_pb2.SeatState(
                seat=seat,
                arboretum=[_placed_to_pb(c, card) for c, card in view.arboretums[seat].items()],
                discard_pile=[card_to_pb(c) for c in view.discard_piles[seat]],
                hand_size=view.hand_sizes[seat],
                known_hand_cards=[card_to_pb(c) for c in view.known_cards[seat]],
                bank_left_ms=max(0, int(banks[seat])),
                faults=int(fault_counts[seat]),
                forfeited=view.forfeited[seat],
            )
        )
    return board


def seat_view_to_pb(
    view: SeatView,
    *,
    game_index: int = 0,
    bank_left_ms: Sequence[int] | None = None,
    faults: Sequence[int] | None = None,
) -> game_pb2.SeatView:
    """Encode a seat's view. The per-seat clocks and fault counts are referee data (default 0)."""
    return game_pb2.SeatView(
        seat=view.seat,
        hand=[card_to_pb(c) for c in view.hand],
        board=public_state_to_pb(
            view, game_index=game_index, bank_left_ms=bank_left_ms, faults=faults
        ),
    )


def _infer_kind(
    hand_size: int, deck_size: int, piles_empty: bool, field: str
) -> tuple[DecisionKind, bool]:
    if hand_size == HAND_SIZE:
        return (DecisionKind.GAME_OVER if deck_size == 0 else DecisionKind.FIRST_DRAW), False
    if hand_size == HAND_SIZE + 1:
        if deck_size == 0 and piles_empty:
            return DecisionKind.PLAY, False
        return DecisionKind.SECOND_DRAW, False
    if hand_size == HAND_SIZE + 2:
        return DecisionKind.PLAY, True
    raise WireError(field, f"is {hand_size} for the current seat (expected 7, 8 or 9)")


def seat_view_from_pb(
    pb: game_pb2.SeatView,
    *,
    species: Sequence[Species],
    kind: DecisionKind | None = None,
    discard_required: bool | None = None,
    field: str = "view",
) -> SeatView:
    """Decode and check a seat's view (``species``: the game's species in play, from GameSetup).

    The decision kind and ``discard_required`` are inferred from the board; when ``kind`` or
    ``discard_required`` are given (from the request) they must agree. Checks: seat numbers, card
    species in play, values, no card seen twice, arboretums grown legally from (0, 0), hand sizes,
    and that the counts add up to the species' 8 cards each.
    """
    view = _seat_view_fast(pb, species, kind, discard_required)
    if view is not None:
        return view
    return _seat_view_checked(
        pb, species=species, kind=kind, discard_required=discard_required, field=field
    )


def _seat_view_checked(
    pb: game_pb2.SeatView,
    *,
    species: Sequence[Species],
    kind: DecisionKind | None = None,
    discard_required: bool | None = None,
    field: str = "view",
) -> SeatView:
    """:func:`seat_view_from_pb` step by step, naming the field of the first problem found."""
    players, in_play = _checked_header(pb, species, field)
    board = pb.board
    card = _CheckedCards(in_play)
    hand = tuple(card(c, f"{field}.hand[{i}]") for i, c in enumerate(pb.hand))
    arboretums: list[Arboretum] = []
    piles: list[tuple[Card, ...]] = []
    known: list[tuple[Card, ...]] = []
    hand_sizes: list[int] = []
    forfeited: list[bool] = []
    for s, state in enumerate(board.seats):
        where = f"{field}.board.seats[{s}]"
        if state.seat != s:
            raise WireError(f"{where}.seat", f"is {state.seat} (expected {s})")
        arboretums.append(_checked_arboretum(state, where, card))
        piles.append(
            tuple(card(c, f"{where}.discard_pile[{i}]") for i, c in enumerate(state.discard_pile))
        )
        if s == pb.seat:
            known.append(_checked_own_known(state, where, hand, card))
        else:
            known.append(_checked_other_known(state, where, card))
        hand_sizes.append(state.hand_size)
        forfeited.append(state.forfeited)
    total = board.deck_size + sum(hand_sizes) + sum(len(a) for a in arboretums)
    total += sum(len(p) for p in piles)
    if total != 8 * len(in_play):
        raise WireError(
            f"{field}.board",
            f"accounts for {total} cards (deck, hands, arboretums, piles) "
            f"but {len(in_play)} species make {8 * len(in_play)}",
        )
    inferred, inferred_discard = _checked_kind(
        hand_sizes[board.current_seat],
        board.deck_size,
        not any(piles),
        f"{field}.board.seats[{board.current_seat}].hand_size",
        kind,
        discard_required,
    )
    return SeatView(
        seat=pb.seat,
        players=players,
        species=in_play,
        turn=board.turn_number - 1,
        current_seat=board.current_seat,
        kind=inferred,
        hand=tuple(sorted(hand)),
        arboretums=tuple(arboretums),
        discard_piles=tuple(piles),
        deck_size=board.deck_size,
        hand_sizes=tuple(hand_sizes),
        known_cards=tuple(known),
        discard_required=inferred_discard if inferred is DecisionKind.PLAY else True,
        last_turn=board.deck_size == 0,
        forfeited=tuple(forfeited),
    )


def _checked_header(
    pb: game_pb2.SeatView, species: Sequence[Species], field: str
) -> tuple[int, tuple[Species, ...]]:
    """The checked path's players and species in play, after checking the board's header."""
    if not pb.HasField("board"):
        raise _missing(f"{field}.board")
    board = pb.board
    players = len(board.seats)
    if players not in SPECIES_PER_PLAYER_COUNT:
        raise WireError(f"{field}.board.seats", f"has {players} seats (expected 2 to 4)")
    in_play = tuple(sorted(set(species), key=lambda s: s.index))
    if len(in_play) != SPECIES_PER_PLAYER_COUNT[players] or len(in_play) != len(species):
        raise WireError(
            "species_in_play",
            f"has {len(species)} species for {players} players "
            f"(expected {SPECIES_PER_PLAYER_COUNT[players]} distinct)",
        )
    if pb.seat >= players:
        raise WireError(f"{field}.seat", f"is {pb.seat} but there are {players} seats")
    if board.current_seat >= players:
        raise WireError(f"{field}.board.current_seat", f"is {board.current_seat} (>= {players})")
    if board.turn_number < 1:
        raise WireError(f"{field}.board.turn_number", "must be >= 1")
    return players, in_play


class _CheckedCards:
    """The checked path's card decoder: a species in play, and (unless ``unique=False``) a card
    not already elsewhere in the view."""

    def __init__(self, in_play: tuple[Species, ...]) -> None:
        self.allowed = set(in_play)
        self.seen: set[Card] = set()

    def __call__(self, pb_card: common_pb2.Card, where: str, *, unique: bool = True) -> Card:
        c = card_from_pb(pb_card, where)
        if c.species not in self.allowed:
            raise WireError(where, f"is {c}, a species not in play")
        if unique:
            if c in self.seen:
                raise WireError(where, f"is {c}, which is already elsewhere in the view")
            self.seen.add(c)
        return c


def _checked_arboretum(state: game_pb2.SeatState, where: str, card: _CheckedCards) -> Arboretum:
    """A seat's arboretum, grown legally from (0, 0)."""
    cells: dict[Cell, Card] = {}
    for i, placed in enumerate(state.arboretum):
        pwhere = f"{where}.arboretum[{i}]"
        cell, _ = _placed_from_pb(placed, pwhere)
        c = card(placed.card, f"{pwhere}.card")
        if i == 0 and cell != (0, 0):
            raise WireError(f"{pwhere}.cell", f"is {cell} (the first card is at 0,0)")
        if abs(cell.x) > _LIMIT or abs(cell.y) > _LIMIT:
            raise WireError(f"{pwhere}.cell", f"is {cell}, out of range")
        if cell in cells:
            raise WireError(f"{pwhere}.cell", f"is {cell}, already occupied")
        if i > 0 and not any(n in cells for n in cell.neighbours()):
            raise WireError(f"{pwhere}.cell", f"is {cell}, not adjacent to an earlier card")
        cells[cell] = c
    return Arboretum(cells)


def _checked_own_known(
    state: game_pb2.SeatState, where: str, hand: tuple[Card, ...], card: _CheckedCards
) -> tuple[Card, ...]:
    """The viewing seat's own known cards: its hand size is its hand's, and they are in it."""
    if state.hand_size != len(hand):
        raise WireError(
            f"{where}.hand_size",
            f"is {state.hand_size} but the hand has {plural(len(hand), 'card')}",
        )
    own = []
    for i, pb_card in enumerate(state.known_hand_cards):
        kc = card(pb_card, f"{where}.known_hand_cards[{i}]", unique=False)
        if kc not in hand:
            raise WireError(f"{where}.known_hand_cards[{i}]", f"is {kc}, not in the hand")
        own.append(kc)
    return tuple(sorted(own))


def _checked_other_known(
    state: game_pb2.SeatState, where: str, card: _CheckedCards
) -> tuple[Card, ...]:
    """Another seat's known cards: at most its hand size, which is at most 9."""
    if state.hand_size > HAND_SIZE + 2:
        raise WireError(f"{where}.hand_size", f"is {state.hand_size} (at most 9)")
    if len(state.known_hand_cards) > state.hand_size:
        raise WireError(f"{where}.known_hand_cards", "has more cards than the hand")
    return tuple(
        sorted(
            card(c, f"{where}.known_hand_cards[{i}]") for i, c in enumerate(state.known_hand_cards)
        )
    )


def _checked_kind(
    current_hand: int,
    deck_size: int,
    piles_empty: bool,
    where: str,
    kind: DecisionKind | None,
    discard_required: bool | None,
) -> tuple[DecisionKind, bool]:
    """The decision due, inferred from the board, and that the request's fields agree with it."""
    inferred, inferred_discard = _infer_kind(current_hand, deck_size, piles_empty, where)
    if kind is not None and kind is not inferred:
        raise WireError(
            "kind", f"is {kind.value} but the view's hand sizes say {inferred.value} is due"
        )
    if (
        discard_required is not None
        and inferred is DecisionKind.PLAY
        and discard_required != inferred_discard
    ):
        raise WireError(
            "discard_required",
            f"is {discard_required} but the view says {inferred_discard}",
        )
    return inferred, inferred_discard


_IN_PLAY: dict[tuple[Species, ...], tuple[tuple[Species, ...], frozenset[int]]] = {}


def _in_play(species: Sequence[Species]) -> tuple[tuple[Species, ...], frozenset[int]]:
    """The species in play, sorted, and their protobuf values (cached per game's species)."""
    key = tuple(species)
    found = _IN_PLAY.get(key)
    if found is None:
        in_play = tuple(sorted(set(species), key=lambda s: s.index))
        found = (in_play, frozenset(s.index + 1 for s in in_play))
        if len(_IN_PLAY) < 1024:
            _IN_PLAY[key] = found
    return found


_DecodedSeat = tuple[Arboretum, tuple[Card, ...], tuple[Card, ...], int, bool, frozenset[Card]]
"""Another seat's part of a view: arboretum, pile, known cards, hand size, forfeited, and the
set of all those cards (each one once: checked)."""

_SEAT_CACHE_LIMIT = 4096
_OTHER_SEATS: dict[tuple[int, frozenset[int], bytes], _DecodedSeat] = {}
"""Other seats' parts of views, by (seat, species in play, serialized ``SeatState``): between two
requests most seats' states are unchanged, and serializing one costs far less than decoding it."""


def _decode_card(c: common_pb2.Card, allowed: frozenset[int]) -> Card | None:
    species = c.species
    card = _PB_CARDS.get((species, c.value))
    return card if species in allowed else None


def _decode_arboretum(
    state: game_pb2.SeatState, allowed: frozenset[int], seen: set[Card]
) -> Arboretum | None:
    cards = _PB_CARDS
    limit = _LIMIT
    cells: dict[Cell, Card] = {}
    for placed in state.arboretum:
        if not placed.HasField("card") or not placed.HasField("cell"):
            return None
        pc = placed.cell
        x, y = pc.x, pc.y
        c = placed.card
        species = c.species
        card = cards.get((species, c.value))
        if card is None or species not in allowed or card in seen:
            return None
        seen.add(card)
        if cells:
            if (x, y) in cells or abs(x) > limit or abs(y) > limit:
                return None
            if (
                (x + 1, y) not in cells
                and (x - 1, y) not in cells
                and (x, y + 1) not in cells
                and (x, y - 1) not in cells
            ):
                return None
        elif x or y:
            return None
        cells[Cell(x, y)] = card
    return Arboretum(cells)


def _decode_pile(
    state: game_pb2.SeatState, allowed: frozenset[int], seen: set[Card]
) -> tuple[Card, ...] | None:
    cards = _PB_CARDS
    pile: list[Card] = []
    for c in state.discard_pile:
        species = c.species
        card = cards.get((species, c.value))
        if card is None or species not in allowed or card in seen:
            return None
        seen.add(card)
        pile.append(card)
    return tuple(pile)


_Board = tuple[Arboretum, tuple[Card, ...], frozenset[Card]]
"""A seat's arboretum and discard pile, and the set of their cards (each one once: checked)."""


def _decode_board(state: game_pb2.SeatState, allowed: frozenset[int]) -> _Board | None:
    seen: set[Card] = set()
    arboretum = _decode_arboretum(state, allowed, seen)
    if arboretum is None:
        return None
    pile = _decode_pile(state, allowed, seen)
    if pile is None:
        return None
    return arboretum, pile, frozenset(seen)


def _other_seat(state: game_pb2.SeatState, s: int, allowed: frozenset[int]) -> _DecodedSeat | None:
    key = (s, allowed, state.SerializeToString())
    found = _OTHER_SEATS.get(key)
    if found is not None:
        return found
    if state.seat != s:
        return None
    board = _decode_board(state, allowed)
    if board is None:
        return None
    arboretum, pile, placed = board
    seen = set(placed)
    hand_size = state.hand_size
    if hand_size > HAND_SIZE + 2 or len(state.known_hand_cards) > hand_size:
        return None
    known: list[Card] = []
    for c in state.known_hand_cards:
        card = _decode_card(c, allowed)
        if card is None or card in seen:
            return None
        seen.add(card)
        known.append(card)
    decoded = (arboretum, pile, tuple(sorted(known)), hand_size, state.forfeited, frozenset(seen))
    if len(_OTHER_SEATS) >= _SEAT_CACHE_LIMIT:
        _OTHER_SEATS.clear()
    _OTHER_SEATS[key] = decoded
    return decoded


_OWN_BOARDS: dict[tuple[frozenset[int], bytes], _Board] = {}
"""The seat's own arboretum and pile by (species in play, serialized ``SeatState`` without its hand
size, known cards, clock and faults): its own state changes with every draw, its arboretum and pile
only with its plays and with draws from its pile."""


def _own_board(state: game_pb2.SeatState, allowed: frozenset[int]) -> _Board | None:
    scratch = game_pb2.SeatState()
    scratch.CopyFrom(state)
    scratch.hand_size = scratch.bank_left_ms = scratch.faults = 0
    scratch.forfeited = False
    del scratch.known_hand_cards[:]
    key = (allowed, scratch.SerializeToString())
    found = _OWN_BOARDS.get(key)
    if found is not None:
        return found
    decoded = _decode_board(state, allowed)
    if decoded is None:
        return None
    if len(_OWN_BOARDS) >= _SEAT_CACHE_LIMIT:
        _OWN_BOARDS.clear()
    _OWN_BOARDS[key] = decoded
    return decoded


def _own_seat(
    state: game_pb2.SeatState, s: int, hand: tuple[Card, ...], allowed: frozenset[int]
) -> _DecodedSeat | None:
    """The viewing seat's part of a view, as :func:`_other_seat` gives another's: its hand size is
    its hand's and its known cards are in it (they are the hand's, so not in the set of cards)."""
    if state.seat != s:
        return None
    board_part = _own_board(state, allowed)
    if board_part is None or state.hand_size != len(hand):
        return None
    own: list[Card] = []
    for c in state.known_hand_cards:
        card = _decode_card(c, allowed)
        if card is None or card not in hand:
            return None
        own.append(card)
    arboretum, pile, placed = board_part
    return arboretum, pile, tuple(sorted(own)), state.hand_size, state.forfeited, placed


def _seat_view_fast(
    pb: game_pb2.SeatView,
    species: Sequence[Species],
    kind: DecisionKind | None,
    discard_required: bool | None,
) -> SeatView | None:
    """:func:`seat_view_from_pb` for a view that passes every check, without building a field
    name per card. It makes the same checks; on the first that fails it returns None, and the
    caller decodes again with :func:`_seat_view_checked`, which names the problem."""
    if not pb.HasField("board"):
        return None
    board = pb.board
    seats = board.seats
    players = len(seats)
    wanted = SPECIES_PER_PLAYER_COUNT.get(players)
    if wanted is None:
        return None
    in_play, allowed = _in_play(species)
    if len(in_play) != wanted or len(in_play) != len(species):
        return None
    me = pb.seat
    current = board.current_seat
    if me >= players or current >= players or board.turn_number < 1:
        return None
    seen: set[Card] = set()
    hand_list: list[Card] = []
    for c in pb.hand:
        card = _decode_card(c, allowed)
        if card is None or card in seen:
            return None
        seen.add(card)
        hand_list.append(card)
    hand = tuple(hand_list)
    arboretums: list[Arboretum] = []
    piles: list[tuple[Card, ...]] = []
    known: list[tuple[Card, ...]] = []
    hand_sizes: list[int] = []
    forfeited: list[bool] = []
    for s, state in enumerate(seats):
        part = _other_seat(state, s, allowed) if s != me else _own_seat(state, s, hand, allowed)
        if part is None or not seen.isdisjoint(part[5]):
            return None
        seen.update(part[5])
        arboretums.append(part[0])
        piles.append(part[1])
        known.append(part[2])
        hand_sizes.append(part[3])
        forfeited.append(part[4])
    deck_size = board.deck_size
    total = deck_size + sum(hand_sizes) + sum(len(a) for a in arboretums)
    total += sum(len(p) for p in piles)
    if total != 8 * len(in_play):
        return None
    current_hand = hand_sizes[current]
    if current_hand not in (HAND_SIZE, HAND_SIZE + 1, HAND_SIZE + 2):
        return None
    inferred, inferred_discard = _infer_kind(current_hand, deck_size, not any(piles), "")
    if kind is not None and kind is not inferred:
        return None
    if (
        discard_required is not None
        and inferred is DecisionKind.PLAY
        and discard_required != inferred_discard
    ):
        return None
    return SeatView(
        seat=me,
        players=players,
        species=in_play,
        turn=board.turn_number - 1,
        current_seat=current,
        kind=inferred,
        hand=tuple(sorted(hand)),
        arboretums=tuple(arboretums),
        discard_piles=tuple(piles),
        deck_size=deck_size,
        hand_sizes=tuple(hand_sizes),
        known_cards=tuple(known),
        discard_required=inferred_discard if inferred is DecisionKind.PLAY else True,
        last_turn=deck_size == 0,
        forfeited=tuple(forfeited),
    )
