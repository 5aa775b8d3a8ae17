"""The ``expert`` bot: exact path scoring with the potential of the hand, and sampled endgames.

Written with the public SDK only (``arboretum`` and ``arboretum_sdk.Bot``). It values a position
the way :mod:`~arboretum_sdk.bots.lookahead` does, what it expects to score minus what it expects
its opponents to score (for every seat and species, the chance of holding the right to score times
the points of the best path, exact for every placement by
:class:`~arboretum_sdk.bots.paths.PathTable`, the chances from the normal model of
:func:`~arboretum_sdk.bots.paths.right_chances`), and adds what a one-ply heuristic misses:

- **Potential.** The cards kept in hand are worth the path growth they can still make: for each
  card, its best weighted placement on the arboretum after this play; the sum of the best
  ``turns`` of them, where ``turns`` is ``horizon`` x the turns this seat has left (the deck's
  size over twice the player count), the last one counted in part. So a play that opens room for
  the cards it keeps is preferred to one that scores a point now and blocks them, and the weight
  of the future fades as the deck runs out.
- **Wider play search.** Every (card, cell) is rated with the card gone from the hand; the best
  ``placements`` (10) are tried with every discard, each valued with the discard gone too and its
  potential, minus half of what the discard would be worth to the next player.
- **Sampled endgames.** Once the deck holds ``endgame_deck`` cards or fewer (20: the second half
  of a 2-player game), the best ``keep``
  candidates (12) are also valued on ``simulations`` determinizations of the hidden cards
  (``view.determinize``; the same deals for every candidate): each candidate is pushed
  (``GameState.push``) and the position scored as if the game ended now
  (``arboretum.scoring.final_totals``: exact for the sampled hands, the 8/1 rule included). The
  choice is the best mean of the heuristic value and the sampled one (``mix`` 0.5): near the end
  the exact scoring of sampled hands corrects the normal model where it is wrong (a few large
  cards, the 1 and the 8 of a species). Optionally (``playout_deck``, off by default), from that
  many deck cards down each determinization is first played on to the end of the game by the
  cheap policy of :class:`~arboretum_sdk.bots.planning.TurnPlanner` (each seat's best immediate
  placement with the sampled hands, and a discard).
- **Draw.** A discard pile's top card is worth the value it adds to the position (hand strength
  and its best placement); the deck is worth the mean of that over the cards it may hold; in the
  endgame the sources are sampled as above.
- **The last turn** (2 players). Whoever draws the last deck card ends the game after that turn,
  and the other seat moves no more. With ``tempo_deck`` (4) deck cards or fewer left after this
  turn, a draw that leaves a deck the opponent would finish if every later draw were from the
  deck (1 or 2 cards: its next turn ends the game; 3 or 4: this seat's next one does), so that it
  has one turn more than this seat, costs ``tempo`` (2) points; at the first draw the better of
  the second draw's choices counts.
  So near the end the bot takes a pile's card to keep the last turn, or the deck to end the game.

Measured against the other built-ins (2 players, fixed compute, duplicate deals): see
docs/benchmarks.md, "Bots: the ladder".

**Compute.** In fixed mode (``ARENA_COMPUTE=fixed``, or ``compute="fixed"``) every sampled
decision uses exactly ``simulations`` determinizations (default :attr:`ExpertBot.SIMULATIONS`) and
ignores the clock; the heuristic part is the same work whatever the machine. In time mode (the
default) it samples at most that many and stops when its ``budget`` (default 0.3 s from the
request's arrival, never more than half of the decision's free time) is nearly spent; the clock is
also checked inside the loops of the heuristic, which then decides among the candidates rated so
far (:mod:`arboretum_sdk.bots.compute`). ``last_elapsed`` is the time the last decision took by
its own measurement, ``last_rounds`` the determinizations it finished.

**Determinism.** The samples are drawn from a generator seeded by the game's bot seed
(:attr:`GameInfo.bot_seed <arboretum_sdk.GameInfo.bot_seed>`; the ``seed`` argument outside a
game) and the view, so in fixed mode the same position gives the same decision.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from arboretum import ALL_CARDS, DECK, Decision, DecisionKind, Draw, Play, SeatView
from arboretum.grid import unpack
from arboretum.scoring import final_totals
from arboretum_sdk import Bot
from arboretum_sdk.bot import Compute

from .compute import Allowance, allowance
from .lookahead import (
    card_value,
    card_values,
    defence_value,
    position_value,
    ranked_placements,
    seen_by,
    view_cells,
)
from .paths import OpponentModel, PathTable, right_chances
from .planning import TurnPlanner

__all__ = ["ExpertBot"]


class ExpertBot(Bot):
    """Exact path scoring, the potential of the hand, sampled endgames; see the module's
    documentation."""

    name = "expert"

    SIMULATIONS = 32
    """Determinizations of a sampled (endgame) decision by default."""

    def __init__(
        self,
        seed: int = 0,
        *,
        compute: Compute | None = None,
        budget: float = 0.3,
        simulations: int = SIMULATIONS,
        placements: int = 10,
        keep: int = 12,
        potential: float = 0.75,
        horizon: float = 1.5,
        deny: float = 0.5,
        endgame_deck: int = 20,
        mix: float = 0.5,
        playout_deck: int = 0,
        tempo: float = 2.0,
        tempo_deck: int = 4,
    ) -> None:
        self.seed = seed
        self.compute_mode: Compute | None = compute
        """``fixed``, ``time``, or None: ``Bot.compute`` (the environment) decides."""
        self.budget = budget
        """Seconds per decision at most, in time mode."""
        self.simulations = simulations
        """Determinizations per sampled decision: exactly this many in fixed mode, at most in time
        mode."""
        self.placements = placements
        self.keep = keep
        self.potential = potential
        self.horizon = horizon
        self.deny = deny
        self.endgame_deck = endgame_deck
        self.mix = mix
        self.playout_deck = playout_deck
        """From this many deck cards down (0: never), each determinization is played on to the end
        of the game by :class:`~arboretum_sdk.bots.planning.TurnPlanner`'s policy before it is
        scored."""
        self.tempo = tempo
        self.tempo_deck = tempo_deck
        self.last_elapsed = 0.0
        """Seconds the last decision took (time.perf_counter), by the bot's own measurement."""
        self.last_rounds = 0
        """Determinizations finished in the last decision (0 when it did not sample)."""

    # ------------------------------------------------------------------ decisions

    def choose(self, view: SeatView) -> Decision:
        start = time.perf_counter()
        allow = allowance(self, self.simulations, self.budget, self.compute_mode)
        self.last_rounds = 0
        try:
            legal = view.legal_decisions()
            if len(legal) == 1:
                return legal[0]
            if view.kind is DecisionKind.PLAY:
                cands, values = self._play_candidates(view, allow)
            else:
                cands, values = self._draw_candidates(view, legal.sources, allow)
                if self.tempo and view.players == 2:
                    bonus = [self._tempo(view, d.source) for d in cands if isinstance(d, Draw)]
                    values = [v + b for v, b in zip(values, bonus, strict=True)]
            order = sorted(range(len(cands)), key=lambda i: (-values[i], i))[: self.keep]
            if len(order) == 1 or view.deck_size > self.endgame_deck or allow.over():
                return cands[order[0]]
            kept = [cands[i] for i in order]
            sampled = self._sample(view, kept, allow)
            if sampled is None:
                return kept[0]
            mix = self.mix
            if self.tempo and view.players == 2 and view.kind is not DecisionKind.PLAY:
                sampled = [
                    v + self._tempo(view, d.source) if isinstance(d, Draw) else v
                    for v, d in zip(sampled, kept, strict=True)
                ]
            best = max(
                range(len(kept)),
                key=lambda k: ((1 - mix) * values[order[k]] + mix * sampled[k], -k),
            )
            return kept[best]
        finally:
            self.last_elapsed = time.perf_counter() - start

    def _sample(
        self, view: SeatView, cands: Sequence[Decision], allow: Allowance
    ) -> list[float] | None:
        """Per candidate, its mean margin (this seat's total minus the best other) over the
        determinizations, as if the game ended after it; None if no round finished."""
        seat = view.seat
        rng = self._rng(view)
        planner = TurnPlanner(view, replies=-1) if view.deck_size <= self.playout_deck else None
        sums = [0.0] * len(cands)
        rounds = 0
        while rounds < allow.simulations:
            det = view.determinize(rng)
            values = []
            for decision in cands:
                if allow.over():
                    break
                if planner is not None:  # played on to the end of the game
                    values.append(planner.margin(det, decision))
                    continue
                sim = det.copy()
                sim.push(decision)
                totals = final_totals(sim)
                values.append(totals[seat] - max(t for s, t in enumerate(totals) if s != seat))
            if len(values) < len(cands):  # out of time: the unfinished round is dropped
                break
            for i, v in enumerate(values):
                sums[i] += v
            rounds += 1
        self.last_rounds = rounds
        if not rounds:
            return None
        return [s / rounds for s in sums]

    def _rng(self, view: SeatView) -> random.Random:
        seed = self.seed if self.game is None else self.game.bot_seed
        hand = ".".join(str(c.id) for c in view.hand)
        piles = ".".join(str(len(p)) for p in view.discard_piles)
        key = f"expert:{seed}:{view.turn}:{view.kind.value}:{view.seat}:{hand}:{piles}"
        return random.Random(key)  # str seeds hash with SHA-512: stable across processes

    # ------------------------------------------------------------------ the heuristic

    def _potential(
        self, table: PathTable, hand: Sequence[int], chances: list[float], turns: float
    ) -> float:
        """The weighted growth the best ``turns`` cards of ``hand`` can still make on ``table``
        (each card's best placement; the last turn counted in part)."""
        if turns <= 0 or not self.potential:
            return 0.0
        gains = sorted(
            (
                max(
                    (sum(chances[s] * g for s, g in gs) for _, gs in table.useful_cells(c)),
                    default=0.0,
                )
                for c in hand
            ),
            reverse=True,
        )
        whole = int(turns)
        value = sum(gains[:whole])
        if whole < len(gains):
            value += (turns - whole) * gains[whole]
        return self.potential * value

    def _turns(self, view: SeatView) -> float:
        """Turns of potential: ``horizon`` x the turns this seat has left."""
        return view.deck_size / (2 * view.players) * self.horizon

    def _tempo(self, view: SeatView, source: int) -> float:
        """-``tempo`` when drawing from ``source`` leaves the opponent the last turn (2 players:
        the deck left after this turn, ``tempo_deck`` cards at most, each later draw from the
        deck): the opponent gets one turn more than this seat. On the first draw, the better of
        the second draw's choices."""
        after = view.deck_size - 1 if source == DECK else view.deck_size

        def value(left: int) -> float:
            if left <= 0 or left > self.tempo_deck:
                return 0.0
            return -self.tempo if ((left + 1) // 2) % 2 else 0.0

        if view.kind is DecisionKind.SECOND_DRAW or after == 0:
            return value(after)
        options = [value(after - 1)]
        if any(view.discard_piles):
            options.append(value(after))
        return max(options)

    def _draw_candidates(
        self, view: SeatView, sources: Sequence[int], allow: Allowance
    ) -> tuple[list[Decision], list[float]]:
        value_of, model = card_values(view)
        cands: list[Decision] = []
        values: list[float] = []
        for source in sources:
            if source == DECK:
                values_seen: list[float] = []
                for c in model.unseen_ids:
                    if values_seen and allow.over():  # out of time: the mean so far
                        break
                    values_seen.append(value_of(c))
                value = sum(values_seen) / len(values_seen) if values_seen else 0.0
            else:
                value = value_of(view.discard_piles[source][-1].id)
            cands.append(Draw(source))
            values.append(value)
        return cands, values

    def _play_candidates(
        self, view: SeatView, allow: Allowance
    ) -> tuple[list[Decision], list[float]]:
        species = [s.index for s in view.species]
        model = OpponentModel(view)
        table = PathTable(view_cells(view, view.seat), species)
        hand = sorted(c.id for c in view.hand)
        others = {o: PathTable(view_cells(view, o), species) for o in model.seats}
        # Out of time: the cards rated so far.
        placements = ranked_placements(table, hand, model, others, allow.over)
        if not view.discard_required:
            return (
                [Play(ALL_CARDS[c], unpack(p), None) for _, c, p in placements],
                [v for v, _, _ in placements],
            )
        nxt = (view.seat + 1) % view.players
        next_table = others.get(nxt) or PathTable(view_cells(view, nxt), species)
        next_model = OpponentModel(seen_by(view, nxt))
        next_known = [c.id for c in view.known_cards[nxt]]
        next_base = position_value(next_table, right_chances(next_known, next_model))
        turns = self._turns(view)
        deny: dict[int, float] = {}
        cands: list[Decision] = []
        values: list[float] = []
        for _, card, cell in placements[: self.placements]:
            if cands and allow.over():  # out of time: the placements valued so far
                break
            cells = dict(table.cells)
            cells[cell] = card
            after = PathTable(cells, species)
            rest = [c for c in hand if c != card]
            for discard in rest:
                kept = [c for c in rest if c != discard]
                chances = right_chances(kept, model)
                value = position_value(after, chances) - defence_value(kept, model, others)
                value += self._potential(after, kept, chances, turns)
                if discard not in deny:
                    deny[discard] = card_value(
                        next_table, next_known, discard, next_model, next_base
                    )
                cands.append(Play(ALL_CARDS[card], unpack(cell), ALL_CARDS[discard]))
                values.append(value - self.deny * max(0.0, deny[discard]))
        return cands, values
