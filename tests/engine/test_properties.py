"""Property tests over whole random games (seeded 2/3/4-player deals, the random policy)."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arboretum import (
    DECK,
    DecisionKind,
    Draw,
    DrawEvent,
    GameState,
    Play,
    PlayEvent,
    ReplayRecorder,
    determinize,
    random_decision,
    verify_replay,
)
from arboretum.scoring import final_totals

from .layouts import assert_cards_conserved, assert_valid_path, oracle_score

game_settings = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

players_st = st.sampled_from([2, 3, 4])
seed_st = st.integers(0, 2**64 - 1)
policy_st = st.integers(0, 2**32)


@game_settings
@given(players_st, seed_st, policy_st)
def test_game_invariants_after_every_step(players: int, seed: int, policy_seed: int) -> None:
    state = GameState.new(players, seed)
    rng = random.Random(policy_seed)
    turns_played = 0
    last_draw_turn: int | None = None
    assert_cards_conserved(state)
    while not state.is_over:
        seat, turn, kind = state.current_seat, state.turn, state.decision_kind
        if kind is DecisionKind.FIRST_DRAW:
            assert state.deck_size > 0, "a turn started with an empty deck"
        assert not state.last_turn or last_draw_turn == turn
        # The fallback decision is always legal.
        state.copy().apply(state.fallback_decision())
        # The cheap accessors agree with the full ones.
        for s in range(players):
            assert state.hand_ids(s) == [c.id for c in state.hand(s)]
            assert state.hand_size(s) == state.hand_sizes()[s]
        legal = state.legal_decisions()
        assert state.draw_sources() == (legal.sources if kind is not DecisionKind.PLAY else ())
        decision = random_decision(state, rng)
        card = state.apply(decision)
        assert_cards_conserved(state)
        if isinstance(decision, Draw):
            assert card is not None and card in state.hand(seat)
            if decision.source == DECK and state.deck_size == 0:
                last_draw_turn = turn
            assert state.last_turn == (state.deck_size == 0)
            # The drawer holds 8 after one draw, 9 after two; everyone else 7.
            draws = 1 if kind is DecisionKind.FIRST_DRAW else 2
            assert state.hand_sizes()[seat] == 7 + draws
            assert all(n == 7 for s, n in enumerate(state.hand_sizes()) if s != seat)
        else:
            assert isinstance(decision, Play)
            turns_played += 1
            # Hands hold 7 between turns.
            assert state.hand_sizes() == (7,) * players
            if state.is_over:
                # The game ends exactly on the turn that drew the last deck card ...
                assert last_draw_turn == turn and state.deck_size == 0
                assert state.current_seat == seat and state.turn == turn
            else:
                # ... and not before.
                assert last_draw_turn is None and state.deck_size > 0
                assert state.current_seat == (seat + 1) % players
                assert state.turn == turn + 1
                assert state.decision_kind is DecisionKind.FIRST_DRAW
    assert turns_played == state.turn + 1
    # Every turn put one card into an arboretum.
    assert sum(len(state.arboretum(s)) for s in range(players)) == turns_played


@game_settings
@given(players_st, seed_st, policy_st)
def test_final_scores_match_the_oracle(players: int, seed: int, policy_seed: int) -> None:
    state = GameState.new(players, seed)
    state.playout(random.Random(policy_seed))
    assert state.is_over and state.deck_size == 0
    assert_cards_conserved(state)
    result = state.result()
    totals, per_species, ranks = oracle_score(state)
    assert list(result.totals) == totals == final_totals(state)
    assert list(result.ranks) == ranks
    for seat in result.seats:
        assert seat.total == sum(sp.points for sp in seat.species)
        assert [sp.species for sp in seat.species] == list(state.species)
        for sp in seat.species:
            assert sp.points == per_species[seat.seat][sp.species]
            if sp.path is not None:
                assert_valid_path(state.arboretum(seat.seat), sp.species, sp.path)
    assert result.winners == tuple(s for s in range(players) if ranks[s] == 1)
    assert result.shared == (len(result.winners) > 1)


@game_settings
@given(players_st, seed_st, policy_st, st.integers(0, 10_000), st.booleans())
def test_recorded_replays_verify_after_a_json_round_trip(
    players: int, seed: int, policy_seed: int, forfeit_at: int, use_fallbacks: bool
) -> None:
    state = GameState.new(players, seed)
    recorder = ReplayRecorder(
        state, match_id="prop", seats=[f"bot{i}" for i in range(players)], game_index=3
    )
    rng = random.Random(policy_seed)
    step = 0
    while not state.is_over:
        if step == forfeit_at % 150:
            recorder.forfeit(rng.randrange(players), "timeout")
            recorder.note(state.current_seat, "stale", "late answer")
        if use_fallbacks and rng.random() < 0.2:
            recorder.apply(
                state.fallback_decision(), ms=1.5, fault={"kind": "illegal", "reason": "x"}
            )
        else:
            recorder.apply(random_decision(state, rng), ms=rng.random() * 10)
        step += 1
    doc = json.loads(json.dumps(recorder.to_json()))
    result = verify_replay(doc)
    assert result == state.result()
    assert doc["seed"] == str(seed) and doc["players"] == players
    assert len(
        [s for s in doc["steps"] if s["kind"] in ("draw", "play")]
    ) == state.event_count - sum(state.forfeited)


@game_settings
@given(players_st, seed_st, policy_st, st.integers(0, 400), st.integers(0, 3), policy_st)
def test_a_view_ignores_cards_hidden_from_its_seat(
    players: int, seed: int, policy_seed: int, steps: int, seat_choice: int, det_seed: int
) -> None:
    """Two states that differ only in cards hidden from a seat (the deck order, the unknown cards
    of the other hands) give that seat identical views, whatever seat is due."""
    state = GameState.new(players, seed)
    rng = random.Random(policy_seed)
    for _ in range(steps):
        if state.is_over:
            break
        state.apply(random_decision(state, rng))
    seat = seat_choice % players
    other = determinize(state.view(seat), random.Random(det_seed))
    assert other.view(seat) == state.view(seat)
    # The seat may draw from a pile or play from its own hand in both states alike.
    if not state.is_over and state.current_seat == seat:
        decision = random_decision(state.view(seat), rng)
        if not (isinstance(decision, Draw) and decision.source == DECK):
            assert state.apply(decision) == other.apply(decision)
            assert other.view(seat) == state.view(seat)


@game_settings
@given(players_st, seed_st, policy_st, st.integers(0, 200), st.booleans())
def test_playout_makes_the_moves_apply_would_make(
    players: int, seed: int, policy_seed: int, steps: int, from_view: bool
) -> None:
    """``playout`` (the unvalidated fast path) only makes legal moves, and re-applying its events
    through ``apply`` gives the same game; the state it starts from is left alone by a copy."""
    state = GameState.new(players, seed)
    rng = random.Random(policy_seed)
    for _ in range(steps):
        if state.is_over:
            break
        state.apply(random_decision(state, rng))
    if from_view:
        state = determinize(state.view(state.current_seat), rng)
    start = state.copy()
    before = [state.view(s) for s in range(players)], state.deck
    rolled = state.copy()
    rolled.playout(rng)
    assert ([state.view(s) for s in range(players)], state.deck) == before  # copies are independent
    assert rolled.is_over and rolled.deck_size == 0
    assert_cards_conserved(rolled)
    assert rolled.hand_sizes() == (7,) * players
    again = start.copy()
    for event in rolled.events(None, since=start.event_count):
        if isinstance(event, DrawEvent):
            drawn = again.apply(Draw(event.source))
            assert event.card is None or drawn == event.card
        elif isinstance(event, PlayEvent):
            again.apply(Play(event.card, event.cell, event.discard))
    assert again.is_over
    assert [again.view(s) for s in range(players)] == [rolled.view(s) for s in range(players)]
    assert again.result() == rolled.result()
    assert final_totals(rolled) == list(rolled.result().totals)
