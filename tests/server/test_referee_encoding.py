"""The referee's fast paths give exactly what the plain ones give.

- ``edge.referee_message_bytes`` encodes a decision request straight to wire bytes: they must be the
  bytes ``referee_message(request).SerializeToString()`` gives, for 2 to 4 players, with faults,
  forfeits, banks, redacted draws and large decision numbers.
- ``_Game.board`` reuses a seat's public state until that seat's state changes: the board must equal
  one built from scratch at every step.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from arboretum import DECK, DecisionKind, Draw, random_decision
from arboretum_server import edge
from arboretum_server.match import Match, MatchConfig, _Game
from arboretum_server.messages import (
    ClockState,
    DecisionRequest,
    Fault,
    FaultKind,
    FaultNotice,
    Forfeit,
)


def _play(seed: int) -> int:
    rng = random.Random(seed)
    players = rng.choice([2, 3, 4])
    match = Match("m", MatchConfig(players=players, match_seed=seed), ["t"] * players)
    game = _Game(match, rng.randrange(4))
    state = game.state
    cursors = [0] * players
    number = rng.randrange(1 << 40) if seed % 2 else 0
    checked = 0
    while not state.is_over:
        seat = state.current_seat
        kind = state.decision_kind
        if rng.random() < 0.05:
            game.faults[seat] += 1
            game.changed(seat)
            fault = Fault(rng.choice(list(FaultKind)), kind, number, game.faults[seat])
            match._emit(game, seat, state.turn + 1, fault)
        if rng.random() < 0.01:
            match._emit(game, seat, state.turn + 1, Forfeit(rng.randrange(1, 4)))
        if rng.random() < 0.3:
            game.clocks[seat].bank_left_ms = rng.choice([0, 5, 200, 10**6])
            game.changed(seat)
        legal = state.legal_decisions()
        number += 1
        request = DecisionRequest(
            number=number,
            kind=kind,
            game_index=game.index,
            view=game.view(seat),
            events=game.events_for(seat, cursors[seat]),
            clock=ClockState(rng.choice([1, 2000]), rng.choice([0, 7, 10**5]), rng.choice([0, 3])),
            discard_required=kind is DecisionKind.PLAY and state.discard_required,
            legal_sources=tuple(legal.sources),
            legal_cells=legal.cell_options() if kind is DecisionKind.PLAY else (),
        )
        cursors[seat] = len(game.events)
        cached = request.view.board
        game.changed()
        assert game.board() == cached
        expected = edge.referee_message(request).SerializeToString()
        assert edge.referee_message_bytes(request) == expected
        checked += 1
        match._apply(game, seat, random_decision(state.view(seat), rng), ms=None)
    return checked


@pytest.mark.parametrize("seed", range(12))
def test_decision_requests_encode_like_protobuf(seed: int) -> None:
    async def main() -> int:  # the match needs a running loop for its events
        return _play(seed)

    assert asyncio.run(main()) > 50


def test_other_messages_are_serialized_by_protobuf() -> None:
    notice = FaultNotice(
        decision_number=3,
        game_index=0,
        decision_kind=DecisionKind.FIRST_DRAW,
        kind=FaultKind.TIMEOUT,
        reason="late",
        fallback=Draw(DECK),
        faults=1,
        forfeited=False,
    )
    expected = edge.referee_message(notice).SerializeToString()
    assert edge.referee_message_bytes(notice) == expected
