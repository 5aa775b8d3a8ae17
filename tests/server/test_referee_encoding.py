"""The referee's fast paths give exactly what the plain ones give.

- ``Game.request_wire`` encodes a decision request straight to wire bytes from cached pieces: they
  must be the bytes ``referee_message(request).SerializeToString()`` gives for the same request
  built as plain values, for 2 to 4 players, with faults, forfeits, banks, redacted draws and large
  decision numbers.
- ``edge.inbound_from_bytes`` reads well-formed answers straight from their bytes: it must mean
  what the protobuf path (``inbound_from_pb``) makes of the same bytes, for every answer a bot
  may send and for mangled ones.
- ``Game.board`` reuses a seat's public state until that seat's state changes: the board must equal
  one built from scratch at every step.
- A whole match, driven in-process, sends in every request the view its state gives at that moment
  (the match's caches are dropped whenever something changes).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from arboretum import ALL_CARDS, DecisionKind, Draw, Play, random_decision
from arboretum_proto.v1 import bot_pb2, game_pb2
from arboretum_sdk import wire
from arboretum_server import edge, wirebytes
from arboretum_server.game import Game
from arboretum_server.match import Match
from arboretum_server.matchconfig import MatchConfig
from arboretum_server.messages import (
    Board,
    ClockState,
    DecisionRequest,
    Fault,
    FaultKind,
    FaultPolicy,
    Forfeit,
    GameOver,
    SeatPublic,
    TimeControl,
    View,
)
from arboretum_server.seats import Failure


def _play(seed: int) -> int:
    rng = random.Random(seed)
    players = rng.choice([2, 3, 4])
    match = Match("m", MatchConfig(players=players, match_seed=seed), ["t"] * players)
    # Game indexes and decision numbers on both sides of the encoder's tables' limits.
    game = Game(match.config, match.match_id, rng.choice([0, 1, 3, 1023, 1024, 20000]))
    state = game.state
    cursors = [0] * players
    number = [0, 1000, 16_340, rng.randrange(1 << 40)][seed % 4]
    checked = 0
    while not state.is_over:
        seat = state.current_seat
        kind = state.decision_kind
        if rng.random() < 0.05:
            game.faults[seat] += 1
            game.changed(seat)
            fault = Fault(rng.choice(list(FaultKind)), kind, number, game.faults[seat])
            match.rulings.emit(game, seat, state.turn + 1, fault)
        if rng.random() < 0.01:
            match.rulings.emit(game, seat, state.turn + 1, Forfeit(rng.randrange(1, 4)))
        if rng.random() < 0.3:
            game.clocks[seat].bank_left_ms = rng.choice([0, 5, 200, 10**6])
            game.changed(seat)
        legal = state.legal_decisions()
        number += 1
        clock = ClockState(
            rng.choice([1, 2000, 60000]), rng.choice([0, 7, 10**5]), rng.choice([0, 3])
        )
        request = DecisionRequest(
            number=number,
            kind=kind,
            game_index=game.index,
            view=game.view(seat),
            events=game.events_for(seat, cursors[seat]),
            clock=clock,
            discard_required=kind is DecisionKind.PLAY and state.discard_required,
            legal_sources=tuple(legal.sources),
            legal_cells=legal.cell_options() if kind is DecisionKind.PLAY else (),
        )
        since = cursors[seat]
        triple = (clock.per_decision_ms, clock.bank_left_ms, clock.elapsed_ms)
        encoded = game.request_wire(seat, number, kind, triple, since)
        cursors[seat] = len(game.events)
        assert encoded == edge.referee_message(request).SerializeToString()
        cached = request.view.board
        game.changed()
        assert game.board() == cached
        assert game.request_wire(seat, number, kind, triple, since) == encoded  # from scratch
        checked += 1
        match.rulings.apply(game, seat, random_decision(state.view(seat), rng), ms=None)
    return checked


@pytest.mark.parametrize("seed", range(12))
def test_decision_requests_encode_like_protobuf(seed: int) -> None:
    async def main() -> int:  # the match needs a running loop for its events
        return _play(seed)

    assert asyncio.run(main()) > 50


def _answer_bytes(number: int, decision: object, kind: DecisionKind) -> bytes:
    return wire.answer_to_pb(number, decision, kind).SerializeToString()  # type: ignore[arg-type]


def _mangled(data: bytes, rng: random.Random) -> list[bytes]:
    """Variants of a serialized answer: cut, bit-flipped, with bytes inserted or appended (unknown
    fields, repeated fields), or with another version."""
    out = [data[:cut] for cut in range(len(data))]
    for _ in range(12):
        i = rng.randrange(len(data))
        out.append(data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1 :])
        out.append(data[:i] + bytes([rng.randrange(256)]) + data[i:])
    out += [
        data + b"\x18\x01",  # an unknown field
        data + data[2:],  # the answer twice (protobuf merges the two)
        b"\x08\x02" + data[2:],  # protocol version 2
        b"\x08\x81\x00" + data[2:],  # version 1 as a non-minimal varint
        data[2:] + data[:2],  # the version after the answer
    ]
    # the decision number as a non-minimal varint (a continuation byte, then a 0)
    end = 5
    while data[end] & 0x80:
        end += 1
    padded = data[5:end] + bytes([data[end] | 0x80, 0])
    out.append(data[:3] + bytes([data[3] + 1]) + b"\x08" + padded + data[end + 1 :])
    return out


@pytest.mark.parametrize("seed", range(6))
def test_answers_decode_like_protobuf(seed: int) -> None:
    """Legal decisions of random games, answered with canonical bytes, take the fast path and mean
    the same as through protobuf; so do illegal ones (a card not in hand, a missing pile), and every
    mangled variant means the same either way."""
    rng = random.Random(seed)

    def same(data: bytes) -> bool:
        fast = edge.inbound_from_bytes(data)
        assert fast == edge.inbound_from_pb(edge.decode_bot_message(data)), data
        return wirebytes.decode_answer(data) is not None

    async def main() -> int:
        players = rng.choice([2, 3, 4])
        match = Match("m", MatchConfig(players=players, match_seed=seed), ["t"] * players)
        game = Game(match.config, match.match_id, 0)
        state = game.state
        fast = 0
        number = 0
        while not state.is_over:
            seat, kind = state.current_seat, state.decision_kind
            number += rng.choice([1, 1, 1, 200, 1 << 40])
            # the request offers the legal cells: the cells answers are read with
            game.request_wire(seat, number, kind, (1000, 0, 0), 0)
            legal = state.legal_decisions()
            options = [legal[rng.randrange(len(legal))] for _ in range(4)]
            if kind is DecisionKind.PLAY:
                stranger = next(c for c in ALL_CARDS if c not in state.hand(seat))
                options.append(Play(stranger, options[0].cell, options[0].discard))
            else:
                options.append(Draw(rng.randrange(4)))  # perhaps an empty or missing pile
                same(_answer_bytes(number, Draw(rng.randrange(4, 1 << 20)), kind))
            for decision in options:
                data = _answer_bytes(number, decision, kind)
                assert same(data), decision
                fast += 1
                for variant in _mangled(data, rng):
                    same(variant)
            # The bot's report that its code failed is not read from its bytes: the protobuf
            # path reads it, with the same result, mangled or not.
            message = rng.choice(["", "boom", "line one\nline two", "x" * 1000, "\x1b[2J"])
            data = wire.failure_to_pb(number, "ValueError", message).SerializeToString()
            assert not same(data)
            failure = edge.inbound_from_bytes(data)
            assert isinstance(failure, Failure) and failure.number == number, failure
            assert failure.error_type == "ValueError" and len(failure.message) <= 300
            assert failure.message.isprintable() and "\n" not in failure.message
            for variant in _mangled(data, rng):
                same(variant)
            match.rulings.apply(game, seat, options[0], ms=None)
        return fast

    assert asyncio.run(main()) > 200


def _fresh_view(game: Game, seat: int) -> View:
    """``seat``'s view built from the game's state alone (none of the game's caches)."""
    state = game.state
    seats = tuple(
        SeatPublic(
            seat=s,
            arboretum=tuple((card, cell) for cell, card in state.arboretum(s).items()),
            discard_pile=state.discard_pile(s),
            hand_size=state.hand_sizes()[s],
            known_hand_cards=state.known_cards(s),
            bank_left_ms=game.clocks[s].bank_left_ms,
            faults=game.faults[s],
            forfeited=state.forfeited[s],
        )
        for s in range(state.players)
    )
    board = Board(game.index, state.turn + 1, state.current_seat, state.deck_size, seats)
    return View(seat, state.hand(seat), board)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_match_sends_what_its_state_says(players: int) -> None:
    """A match played in-process (no gRPC), answered with bytes: legal answers, late ones that
    cost bank time, wrong kinds, illegal cards, stale numbers, reported failures. Every request's
    view must be the one built from the state alone at that moment, and the events a seat receives
    over a game (requests and game end) must be the game's log as that seat sees it: the match's
    caches are dropped exactly when something changes."""
    rng = random.Random(players)

    async def main() -> int:
        config = MatchConfig(
            players=players,
            match_seed=players,
            game_count=2,
            time_control=TimeControl(per_decision_ms=2, bank_ms=600_000),
            fault_policy=FaultPolicy(faults_to_forfeit=4),
        )
        match = Match("m", config, ["t"] * players)
        streams = [match.connect(s) for s in range(players)]
        match.start()
        received: dict[tuple[int, int], list[game_pb2.Event]] = {}
        games: dict[int, Game] = {}
        checked = 0
        while True:
            done = match.done.is_set()  # then drain once more
            progressed = False
            for seat, stream in enumerate(streams):
                while (item := stream.outbox.take_message()) is not None:
                    progressed = True
                    if isinstance(item, GameOver):
                        key = (item.game.game_index, seat)
                        received.setdefault(key, []).extend(edge.events_to_pb(item.events))
                        continue
                    if not isinstance(item, bytes):
                        continue
                    request = bot_pb2.RefereeMessage.FromString(item).decision_request
                    game = match._game
                    assert game is not None
                    games[game.index] = game
                    received.setdefault((game.index, seat), []).extend(request.events)
                    assert request.view == edge.view_to_pb(_fresh_view(game, seat))
                    checked += 1
                    state = game.state
                    kind = state.decision_kind
                    decision = random_decision(state.view(seat), rng)
                    number = request.decision_number
                    roll = rng.random()
                    if roll < 0.05:  # the wrong kind: malformed
                        kind = DecisionKind.PLAY if kind is not DecisionKind.PLAY else kind
                        decision = decision if kind is DecisionKind.PLAY else Draw(-1)
                        if not isinstance(decision, Play):
                            decision = state.fallback_decision()
                            kind = DecisionKind.FIRST_DRAW
                    elif roll < 0.08 and isinstance(decision, Play):  # a card not in hand
                        stranger = next(c for c in ALL_CARDS if c not in state.hand(seat))
                        decision = Play(stranger, decision.cell, decision.discard)
                    elif roll < 0.11:  # a stale number first
                        stale = wire.answer_to_pb(number + 7, decision, kind).SerializeToString()
                        match.receive(seat, stream, edge.inbound_from_bytes(stale))
                    elif roll < 0.2:  # late: beyond L, from the bank
                        await asyncio.sleep(0.004)
                    data = wire.answer_to_pb(number, decision, kind).SerializeToString()
                    if 0.2 <= roll < 0.23:  # the bot's code failed: a bot_error fault
                        data = wire.failure_to_pb(number, "KeyError", "'x'").SerializeToString()
                    match.receive(seat, stream, edge.inbound_from_bytes(data))
            if done and not progressed:
                break
            if not progressed:
                await asyncio.sleep(0)
        for (index, seat), events in received.items():
            expected = edge.events_to_pb(games[index].events_for(seat))
            assert events == expected, (index, seat)
        clocks = [clock for g in games.values() for clock in g.clocks]
        assert any(clock.bank_left_ms < 600_000 for clock in clocks)
        assert any(sum(g.faults) for g in games.values())
        reported = [
            step["fault"]
            for doc in match.replays.values()
            for step in doc["steps"]
            if step.get("fault", {}).get("kind") == "bot_error"
        ]
        assert reported, "a failure the bot reports is a bot_error fault"
        assert all(f["reason"] == "the bot's code failed: KeyError: 'x'" for f in reported)
        return checked

    assert asyncio.run(main()) > 60
