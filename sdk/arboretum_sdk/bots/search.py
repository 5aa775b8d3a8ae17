"""The ``search`` bot: determinized (information-set) Monte Carlo search over a pruned shortlist.

Written with the public SDK only (``arboretum``, ``arboretum_sdk.Bot`` and the built-in bots'
path table, :class:`~arboretum_sdk.bots.paths.PathTable`). Each decision:

1. **Prune.** A cheap path heuristic (the greedy bot's path table) rates every
   (card, cell) placement: the weighted growth of the best path of each species, where a
   species' weight is a rough chance of holding the right to score it. The best ``pairs``
   placements are kept, each with every possible discard: 8 x 8 = 64 candidate plays out of the
   ~700 legal ones. Draws have at most ``players + 1`` options and are not pruned.
2. **Sample.** ``view.determinize(rng)`` deals the hidden cards (the opponents' hands and the deck
   order) at random, consistently with the view. Every candidate is evaluated on the *same*
   determinizations (common random numbers), so differences between candidates are not drowned
   in the noise of the deal.
3. **Evaluate.** On each determinization the candidate is pushed (``GameState.push``) and the
   position is scored as if the game ended now with ``arboretum.scoring.final_totals``, which is
   exact for the sampled hands: paths, the right to score, the 8/1 rule. The value is this seat's
   total minus the best opponent's, plus a discounted *potential*: the best path growth the cards
   left in hand can make on the next turn, and minus what the discard is worth to the next player
   (who can take it from the pile). Near the end of the game (``rollout_deck`` deck cards or
   fewer) the position is instead played out to the end (``GameState.playout``, the same random
   future for every candidate) and scored exactly. Random play-outs from earlier positions were
   measured and are much worse: they lose the hand management that decides the right to score
   (8.5 wins in 24 games against greedy, where this evaluation wins about 0.63 of the games).
4. **Choose** the candidate with the best mean value.

**Compute.** In fixed mode (``ARENA_COMPUTE=fixed``, or ``compute="fixed"``) every decision
evaluates exactly ``max_rounds`` determinizations (default 32) and ignores the clock. In time mode
(the default) it evaluates at most that many, and stops when its ``budget`` (default 0.3 s,
measured from the request's arrival) is nearly spent (it plans to stop 0.15 s early, for what it
cannot see: the request's way, a loaded machine's stalls), never planning to use more than half of
the decision's free time: the clock is checked between candidates and inside every loop of the
preparation (the shortlist, the path tables, the deny values), and an unfinished round of samples
is dropped (:mod:`arboretum_sdk.bots.compute`). ``last_elapsed`` is the time the last decision
took, by its own measurement.

**Determinism.** Every decision's random generator is seeded from the game's bot seed
(:attr:`GameInfo.bot_seed <arboretum_sdk.GameInfo.bot_seed>`; the ``seed`` argument outside a
game) and the view (turn, decision kind, seat, hand, pile sizes), so the same position gives the
same samples. The choice depends only on the number of rounds finished: in fixed mode the bot is
fully deterministic.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterable, Mapping, Sequence

from arboretum import DECK, ID_SPECIES, Card, Cell, Decision, DecisionKind, Draw, Play, SeatView
from arboretum.grid import pack, unpack
from arboretum.scoring import final_totals
from arboretum_sdk import Bot
from arboretum_sdk.bot import Compute

from .compute import Allowance, allowance
from .paths import PathTable

__all__ = ["SearchBot"]


class SearchBot(Bot):
    """Determinized Monte Carlo search; see the module's documentation."""

    name = "search"

    def __init__(
        self,
        seed: int = 0,
        *,
        compute: Compute | None = None,
        budget: float | None = 0.3,
        max_rounds: int = 32,
        pairs: int = 8,
        potential: float = 0.5,
        deny: float = 0.5,
        seed_bonus: float = 0.35,
        rollout_deck: int = 4,
    ) -> None:
        self.seed = seed
        self.compute_mode: Compute | None = "fixed" if budget is None else compute
        """``fixed``, ``time``, or None: ``Bot.compute`` (the environment) decides."""
        self.budget = 0.3 if budget is None else budget
        """Seconds per decision at most, in time mode."""
        self.max_rounds = max_rounds
        """Determinizations per decision: exactly this many in fixed mode, at most in time mode."""
        self.pairs = pairs
        self.potential = potential
        self.deny = deny
        self.seed_bonus = seed_bonus
        self.rollout_deck = rollout_deck
        self.last_elapsed = 0.0
        """Seconds the last decision took (time.perf_counter), by the bot's own measurement."""
        self.last_rounds = 0
        """Determinizations evaluated for every candidate in the last decision."""
        self.last_candidates = 0

    # ------------------------------------------------------------------ estimates

    @staticmethod
    def _opponent_totals(view: SeatView) -> dict[int, float]:
        """Per species, the largest expected hand total among the opponents."""
        unseen = view.unseen_cards()
        unseen_value = {s.index: 0 for s in view.species}
        for card in unseen:
            unseen_value[ID_SPECIES[card.id]] += card.value
        out = {s.index: 0.0 for s in view.species}
        for seat in range(view.players):
            if seat == view.seat:
                continue
            known = view.known_cards[seat]
            hidden = max(0, view.hand_sizes[seat] - len(known))
            share = hidden / len(unseen) if unseen else 0.0
            for s in out:
                expected = (
                    sum(c.value for c in known if ID_SPECIES[c.id] == s) + share * unseen_value[s]
                )
                out[s] = max(out[s], expected)
        return out

    @staticmethod
    def _weights(hand: Iterable[Card], opp: Mapping[int, float]) -> dict[int, float]:
        """Per species, a rough chance of holding the right to score with this hand."""
        totals = dict.fromkeys(opp, 0)
        for card in hand:
            totals[ID_SPECIES[card.id]] += card.value
        return {s: 1 / (1 + math.exp(-(totals[s] - opp[s] + 0.5) / 2.5)) for s in opp}

    def _rng(self, view: SeatView) -> random.Random:
        seed = self.seed if self.game is None else self.game.bot_seed
        hand = ".".join(str(c.id) for c in view.hand)
        piles = ".".join(str(len(p)) for p in view.discard_piles)
        key = f"search:{seed}:{view.turn}:{view.kind.value}:{view.seat}:{hand}:{piles}"
        return random.Random(key)  # str seeds hash with SHA-512: stable across processes

    # ------------------------------------------------------------------ decisions

    def choose(self, view: SeatView) -> Decision:
        start = time.perf_counter()
        allow = allowance(self, self.max_rounds, self.budget, self.compute_mode)
        try:
            legal = view.legal_decisions()
            if len(legal) == 1:
                self.last_rounds, self.last_candidates = 0, 1
                return legal[0]
            if view.kind is DecisionKind.PLAY:
                return self._choose_play(view, allow)
            return self._choose_draw(view, allow)
        finally:
            self.last_elapsed = time.perf_counter() - start

    def _search(
        self,
        view: SeatView,
        candidates: Sequence[Decision],
        bonus: Sequence[float],
        allow: Allowance,
    ) -> int:
        """The index of the candidate with the best mean value over determinizations."""
        seat = view.seat
        rng = self._rng(view)
        rollout = view.deck_size <= self.rollout_deck
        sums = [0.0] * len(candidates)
        rounds = 0
        timed_out = allow.over()
        while rounds < allow.simulations and not timed_out:
            det = view.determinize(rng)
            roll_seed = rng.getrandbits(64)
            values = []
            for decision in candidates:
                if allow.over():
                    timed_out = True
                    break
                sim = det.copy()
                sim.push(decision)
                if rollout:
                    sim.playout(random.Random(roll_seed))  # the same future for every candidate
                totals = final_totals(sim)
                mine = totals[seat]
                values.append(mine - max(t for s, t in enumerate(totals) if s != seat))
            if timed_out:
                break
            for i, v in enumerate(values):
                sums[i] += v
            rounds += 1
        self.last_rounds, self.last_candidates = rounds, len(candidates)
        scale = 1.0 / max(rounds, 1)  # no round finished: the bonus and the prefilter decide
        return max(range(len(candidates)), key=lambda i: (sums[i] * scale + bonus[i], -i))

    def _choose_play(self, view: SeatView, allow: Allowance) -> Play:
        species = [s.index for s in view.species]
        opp = self._opponent_totals(view)
        table = _table(view.arboretum, species)
        hand = list(view.hand)
        pairs: list[tuple[float, int, int]] = []
        for i, card in enumerate(hand):
            if pairs and allow.over():  # out of time: a shortlist of the cards rated so far
                break
            weights = self._weights(hand[:i] + hand[i + 1 :], opp)
            seed = self.seed_bonus * weights[ID_SPECIES[card.id]]
            for cell in table.free:
                pairs.append((table.gain(cell, card.id, weights) + seed, i, cell))
        pairs.sort(key=lambda t: (-t[0], t[1], t[2]))
        shortlist = pairs[: self.pairs]
        nxt = (view.seat + 1) % view.players
        next_table = _table(view.arboretums[nxt], species)
        # What a discard is worth to the next player: its path growth, weighted as if certain.
        ones = dict.fromkeys(species, 1.0)
        deny_value = dict.fromkeys((c.id for c in hand), 0.0)  # out of time: no deny penalty
        for c in hand:
            if allow.over():
                break
            deny_value[c.id] = next_table.best_gain(c.id, ones)[0]
        candidates: list[Play] = []
        bonus: list[float] = []
        for _, i, cell in shortlist:
            if candidates and allow.over():
                break
            card = hand[i]
            rest = hand[:i] + hand[i + 1 :]
            cells = _cells(view.arboretum)
            cells[cell] = card.id
            after = PathTable(cells, species)
            weights = self._weights(rest, opp)
            next_gain = [0.0 if allow.over() else after.best_gain(c.id, weights)[0] for c in rest]
            for j, discard in enumerate(rest) if view.discard_required else [(-1, None)]:
                future = max((g for k, g in enumerate(next_gain) if k != j), default=0.0)
                penalty = self.deny * deny_value[discard.id] if discard is not None else 0.0
                candidates.append(Play(card, unpack(cell), discard))
                bonus.append(self.potential * future - penalty)
        best = self._search(view, candidates, bonus, allow)
        return candidates[best]

    def _choose_draw(self, view: SeatView, allow: Allowance) -> Draw:
        species = [s.index for s in view.species]
        opp = self._opponent_totals(view)
        table = _table(view.arboretum, species)
        hand = list(view.hand)
        sources = [d.source for d in view.legal_decisions()]  # type: ignore[union-attr]
        # The bonus of a pile is the best play its top card allows now; the deck's is the mean
        # over the cards it may hold, which the determinizations sample.
        weights = self._weights(hand, opp)
        best_now = max((table.best_gain(c.id, weights)[0] for c in hand), default=0.0)
        gains = []
        for card in view.unseen_cards():
            if allow.over():  # out of time: the mean over the cards rated so far
                break
            gains.append(max(best_now, table.best_gain(card.id, weights)[0]))
        deck_gain = sum(gains) / len(gains) if gains else best_now
        candidates: list[Draw] = []
        bonus: list[float] = []
        for source in sources:
            if source == DECK:
                future = deck_gain
            else:
                top = view.discard_piles[source][-1]
                future = max(best_now, table.best_gain(top.id, weights)[0])
            candidates.append(Draw(source))
            bonus.append(self.potential * future)
        best = self._search(view, candidates, bonus, allow)
        return candidates[best]


def _cells(arb: Mapping[Cell, Card]) -> dict[int, int]:
    """An arboretum as the path table reads it: packed cell -> card id."""
    return {pack(cell.x, cell.y): card.id for cell, card in arb.items()}


def _table(arb: Mapping[Cell, Card], species: Iterable[int]) -> PathTable:
    return PathTable(_cells(arb), species)
