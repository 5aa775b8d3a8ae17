"""The game state: setup from a seed, the decision due, legal options, applying decisions.

Two ways to move:

- :meth:`GameState.apply` validates a :class:`Draw` or :class:`Play` and raises
  :class:`IllegalDecisionError` naming the rule broken. Use it for anything that comes from outside.
- :meth:`GameState.push` trusts its input (a decision the engine itself generated, such as an
  element of :meth:`GameState.legal_decisions`), and :meth:`GameState.playout` plays random
  decisions to the end on the internal representation. These are the fast paths for search
  rollouts.

Internally a card is its id (0..79), a cell is a packed int (see :mod:`arboretum.grid`), piles and
the deck are lists with the top at the end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import compress

from .cards import ALL_CARDS, Card, Species
from .decisions import DECK, FIRST, OVER, PLAY, SECOND, Decision, DecisionKind, Draw, Play
from .errors import IllegalDecisionError, NotationError, Rule
from .events import LOG_DRAW, LOG_FORFEIT, LOG_PLAY, Event, events_from_log
from .grid import ORIGIN, STRIDE, Arboretum, pack
from .legal import LegalDecisions, check_draw, check_play
from .playout import play_out
from .scoring import GameResult, score_game
from .seeds import (
    SEATS,
    SPECIES_PER_PLAYER_COUNT,
    check_deck,
    derive_bot_seed,
    derive_game_seed,
    seeded_deck,
)
from .views import SeatView

__all__ = [
    "HAND_SIZE",
    "SPECIES_PER_PLAYER_COUNT",
    "GameState",
    "derive_bot_seed",
    "derive_game_seed",
]

HAND_SIZE = 7
_SPECIES = tuple(Species)
"""The species by index."""
_KINDS = (
    DecisionKind.FIRST_DRAW,
    DecisionKind.SECOND_DRAW,
    DecisionKind.PLAY,
    DecisionKind.GAME_OVER,
)
_PLAY_KIND = DecisionKind.PLAY  # a module constant is cheaper to look up than an enum member


class GameState:
    """One game of Arboretum: the full state, hidden cards included. Only the referee holds one
    for a live game; bots get a :class:`~arboretum.views.SeatView` and may build states by
    determinizing.
    """

    __slots__ = (
        "_arbs",
        "_deck",
        "_discard_required",
        "_forfeited",
        "_frontier",
        "_hands",
        "_known",
        "_last_turn",
        "_log",
        "_phase",
        "_piles",
        "_seat",
        "_species_ids",
        "initial_deck",
        "initial_hands",
        "players",
        "seed",
        "species",
        "turn",
    )

    players: int
    species: tuple[Species, ...]
    seed: int | None
    turn: int
    initial_deck: tuple[Card, ...]
    initial_hands: tuple[tuple[Card, ...], ...]

    _species_ids: tuple[int, ...]
    _deck: list[int]
    _hands: list[list[int]]
    _piles: list[list[int]]
    _arbs: list[dict[int, int]]
    _frontier: list[set[int]]
    """Per seat, the free cells that touch its arboretum (empty while the arboretum is)."""
    _known: list[set[int]]
    _forfeited: list[bool]
    _log: list[tuple[int, ...]]
    _seat: int
    _phase: int
    _discard_required: bool
    _last_turn: bool

    # ----------------------------------------------------------------- setup

    @classmethod
    def new(cls, players: int, seed: int, species: Sequence[Species] | None = None) -> GameState:
        """A new game. ``seed`` fixes the species in play (unless given), the shuffle, the deal."""
        chosen, order = seeded_deck(players, seed, species)
        return cls._deal(players, chosen, order, seed)

    @classmethod
    def from_deck(
        cls,
        players: int,
        species: Sequence[Species],
        deck: Sequence[Card],
        *,
        seed: int | None = None,
    ) -> GameState:
        """A new game dealt from ``deck`` (top first): 7 cards to each seat, one at a time in seat
        order, starting with seat 0. The rest is the draw pile."""
        species = check_deck(players, species, deck)
        return cls._deal(players, sorted(s.index for s in species), [c.id for c in deck], seed)

    @classmethod
    def _deal(
        cls, players: int, species_ids: list[int], order: list[int], seed: int | None
    ) -> GameState:
        """Deal ``order`` (card ids, top first; already checked), one card at a time in seat
        order, 7 to each seat. ``species_ids`` are the sorted indices of the species in play."""
        self = cls.__new__(cls)
        self.players = players
        self.species = tuple([_SPECIES[s] for s in species_ids])
        self._species_ids = tuple(species_ids)
        self.seed = seed
        self.initial_deck = tuple([ALL_CARDS[c] for c in order])
        dealt = players * HAND_SIZE
        hands = [order[seat:dealt:players] for seat in range(players)]
        self.initial_hands = tuple([tuple([ALL_CARDS[c] for c in hand]) for hand in hands])
        deck = order[dealt:]
        deck.reverse()
        self._deck = deck
        self._hands = hands
        self._piles = [[] for _ in range(players)]
        self._arbs = [{} for _ in range(players)]
        self._frontier = [set() for _ in range(players)]
        self._known = [set() for _ in range(players)]
        self._forfeited = [False] * players
        self._log = []
        self._seat = 0
        self._phase = FIRST
        self._discard_required = True
        self._last_turn = False
        self.turn = 0
        return self

    def copy(self) -> GameState:
        """An independent copy, cheap enough for search."""
        new = GameState.__new__(GameState)
        new.players = self.players
        new.species = self.species
        new._species_ids = self._species_ids
        new.seed = self.seed
        new.initial_deck = self.initial_deck
        new.initial_hands = self.initial_hands
        new._deck = self._deck[:]
        new._hands = [h[:] for h in self._hands]
        new._piles = [p[:] for p in self._piles]
        new._arbs = [a.copy() for a in self._arbs]
        new._frontier = [f.copy() for f in self._frontier]
        new._known = [k.copy() for k in self._known]
        new._forfeited = self._forfeited[:]
        new._log = self._log[:]
        new._seat = self._seat
        new._phase = self._phase
        new._discard_required = self._discard_required
        new._last_turn = self._last_turn
        new.turn = self.turn
        return new

    __copy__ = copy

    # ----------------------------------------------------------------- queries

    @property
    def current_seat(self) -> int:
        """The seat whose decision is due (after the game, the seat that played last)."""
        return self._seat

    @property
    def decision_kind(self) -> DecisionKind:
        """The decision due now, or ``GAME_OVER``."""
        return _KINDS[self._phase]

    @property
    def is_over(self) -> bool:
        return self._phase == OVER

    @property
    def discard_required(self) -> bool:
        """False only on a turn whose second draw had no source: its play has no discard."""
        return self._discard_required

    @property
    def last_turn(self) -> bool:
        """True once the last deck card has been drawn: the current turn is the game's last."""
        return self._last_turn

    @property
    def deck_size(self) -> int:
        return len(self._deck)

    @property
    def deck(self) -> tuple[Card, ...]:
        """The draw pile, top first. Hidden information: for the referee and replays only."""
        return tuple(ALL_CARDS[c] for c in reversed(self._deck))

    def hand(self, seat: int) -> tuple[Card, ...]:
        """A seat's hand, sorted. Hidden from every other seat."""
        return tuple([ALL_CARDS[c] for c in sorted(self._hands[seat])])

    def hand_ids(self, seat: int) -> list[int]:
        """A seat's hand as card ids (``Card.id``), sorted: :meth:`hand` without making the cards.
        Hidden from every other seat."""
        return sorted(self._hands[seat])

    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self._hands)

    def hand_size(self, seat: int) -> int:
        """The number of cards in ``seat``'s hand (public)."""
        return len(self._hands[seat])

    def discard_pile(self, seat: int) -> tuple[Card, ...]:
        """A seat's discard pile, bottom first (the top card is last)."""
        return tuple(ALL_CARDS[c] for c in self._piles[seat])

    def arboretum(self, seat: int) -> Arboretum:
        return Arboretum._from_packed(self._arbs[seat])

    def known_cards(self, seat: int) -> tuple[Card, ...]:
        """Cards publicly known to be in ``seat``'s hand: taken from a discard pile, not yet
        gone."""
        return tuple(ALL_CARDS[c] for c in sorted(self._known[seat]))

    @property
    def forfeited(self) -> tuple[bool, ...]:
        return tuple(self._forfeited)

    @property
    def event_count(self) -> int:
        """The number of events so far; pass it as ``since`` to :meth:`events` later."""
        return len(self._log)

    def events(self, seat: int | None = None, since: int = 0) -> list[Event]:
        """Events after index ``since``, as ``seat`` saw them (``None``: a spectator's public view).

        A draw from the deck shows its card only to the seat that drew it.
        """
        return events_from_log(self._log, since, seat)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now: its own hand plus public information only."""
        return SeatView(
            seat=seat,
            players=self.players,
            species=self.species,
            turn=self.turn,
            current_seat=self.current_seat,
            kind=self.decision_kind,
            hand=self.hand(seat),
            arboretums=tuple(self.arboretum(s) for s in range(self.players)),
            discard_piles=tuple(self.discard_pile(s) for s in range(self.players)),
            deck_size=self.deck_size,
            hand_sizes=self.hand_sizes(),
            known_cards=tuple(self.known_cards(s) for s in range(self.players)),
            discard_required=self.discard_required,
            last_turn=self.last_turn,
            forfeited=self.forfeited,
        )

    def legal_decisions(self) -> LegalDecisions:
        """The legal options for the decision due now, as a lazy sequence (empty once over)."""
        phase = self._phase
        if phase < PLAY:
            return LegalDecisions(_KINDS[phase], self._sources(), (), (), False)
        if phase == OVER:
            return LegalDecisions(DecisionKind.GAME_OVER, (), (), (), False)
        seat = self._seat
        cells = tuple(sorted(self._frontier[seat])) if self._arbs[seat] else (ORIGIN,)
        return LegalDecisions(
            _PLAY_KIND,
            (),
            tuple(sorted(self._hands[seat])),
            cells,
            self._discard_required,
        )

    def draw_sources(self) -> tuple[int, ...]:
        """The sources that a draw due now may take, in order: the deck if it has cards, then each
        non-empty discard pile by seat (``legal_decisions().sources`` without the rest). Empty
        when no draw is due."""
        return self._sources() if self._phase < PLAY else ()

    def _sources(self) -> tuple[int, ...]:
        """The draw sources, in order: the deck if it has cards, then each non-empty pile."""
        piles = compress(SEATS[self.players], self._piles)
        return (DECK, *piles) if self._deck else tuple(piles)

    def result(self) -> GameResult:
        """Final scoring with its explanation. Only once the game is over."""
        if self._phase != OVER:
            raise IllegalDecisionError(Rule.WRONG_DECISION, "the game is not over yet")
        return score_game(self)

    def fallback_decision(self) -> Decision:
        """The documented decision the referee applies for a seat that faulted or forfeited
        (:meth:`LegalDecisions.fallback`): a draw takes the deck if it has cards, else the
        lowest-numbered non-empty discard pile; a play puts the lowest card of the hand (species
        order, then value) on the first legal cell in (x, y) order and discards the lowest
        remaining card.
        """
        if self._phase == OVER:
            raise IllegalDecisionError(Rule.GAME_OVER)
        return self.legal_decisions().fallback()

    # ----------------------------------------------------------------- moving

    def apply(self, decision: Decision) -> Card | None:
        """Validate and apply a decision for the seat due; returns the card drawn (None for a play).

        Raises :class:`IllegalDecisionError` naming the rule broken (the checks of
        :mod:`arboretum.legal`).
        """
        phase = self._phase
        if phase == OVER:
            raise IllegalDecisionError(Rule.GAME_OVER)
        if type(decision) is Draw:
            source = decision.source
            check_draw(phase, source, self.players, self._deck, self._piles)
            return ALL_CARDS[self._draw(source)]
        if type(decision) is Play:
            seat = self._seat
            cid, p, did = check_play(
                phase,
                decision,
                self._hands[seat],
                self._arbs[seat],
                self._frontier[seat],
                self._discard_required,
            )
            self._play(cid, p, did)
            return None
        raise NotationError(f"not a decision: {decision!r}")

    def push(self, decision: Decision) -> Card | None:
        """Apply a decision without validation: only for decisions the engine generated itself."""
        if type(decision) is Draw:
            return ALL_CARDS[self._draw(decision.source)]
        play: Play = decision  # type: ignore[assignment]
        x, y = play.cell
        self._play(play.card.id, pack(x, y), -1 if play.discard is None else play.discard.id)
        return None

    def forfeit(self, seat: int) -> None:
        """Mark ``seat`` as forfeited: it ranks below every seat that did not forfeit."""
        if not self._forfeited[seat]:
            self._forfeited[seat] = True
            self._log.append((LOG_FORFEIT, seat))

    def playout(self, rng: random.Random) -> None:
        """Play uniformly random legal decisions to the end of the game (the search fast path).

        A draw picks one of the sources; a play picks a card of the hand, then a cell (in (x, y)
        order), then the discard among the other cards. Each pick is ``rng.randrange(count)``,
        computed from ``rng.getrandbits`` the way :class:`random.Random` does it
        (:func:`arboretum.playout.play_out`, on this state's lists).
        """
        now = (self._seat, self._phase, self.turn, self._discard_required, self._last_turn)
        seat, phase, turn, discard_required, last_turn = play_out(
            rng.getrandbits,
            self.players,
            self._deck,
            self._hands,
            self._piles,
            self._log,
            self._arbs,
            self._frontier,
            self._known,
            now,
        )
        self._seat, self._phase, self.turn = seat, phase, turn
        self._discard_required, self._last_turn = discard_required, last_turn

    # ----------------------------------------------------------------- internals

    def _draw(self, source: int) -> int:
        seat = self._seat
        if source == DECK:
            deck = self._deck
            cid = deck.pop()
            if not deck:
                self._last_turn = True
        else:
            cid = self._piles[source].pop()
            self._known[seat].add(cid)
        self._hands[seat].append(cid)
        self._log.append((LOG_DRAW, seat, source, cid))
        if self._phase == FIRST:
            if self._deck or any(self._piles):
                self._phase = SECOND
            else:
                self._phase = PLAY
                self._discard_required = False
        else:
            self._phase = PLAY
            self._discard_required = True
        return cid

    def _play(self, cid: int, p: int, did: int) -> None:
        seat = self._seat
        hand = self._hands[seat]
        hand.remove(cid)
        arb = self._arbs[seat]
        arb[p] = cid
        frontier = self._frontier[seat]
        frontier.discard(p)
        for n in (p + 1, p - 1, p + STRIDE, p - STRIDE):
            if n not in arb:
                frontier.add(n)
        known = self._known[seat]
        if known:
            known.discard(cid)
            known.discard(did)
        if did >= 0:
            hand.remove(did)
            self._piles[seat].append(did)
        self._log.append((LOG_PLAY, seat, p, cid, did))
        if self._last_turn:
            self._phase = OVER
        else:
            self._seat = (seat + 1) % self.players
            self._phase = FIRST
            self._discard_required = True
            self.turn += 1

    def __repr__(self) -> str:
        return (
            f"<GameState players={self.players} turn={self.turn} seat={self._seat} "
            f"due={self.decision_kind.value} deck={len(self._deck)}>"
        )
