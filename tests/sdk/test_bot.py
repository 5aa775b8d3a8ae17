"""The Bot base class: dispatch, the NotImplementedError text, names, hooks; the local runner."""

from __future__ import annotations

import random

import pytest

from arboretum import DECK, Decision, DecisionKind, Draw, GameState, Play, SeatView
from arboretum_sdk import Bot, Clock
from arboretum_sdk.local import play_game


def view_due(kind: DecisionKind) -> SeatView:
    state = GameState.new(2, 3)
    rng = random.Random(0)
    while state.decision_kind is not kind:
        state.apply(state.legal_decisions()[rng.randrange(len(state.legal_decisions()))])
    return state.view(state.current_seat)


class SplitBot(Bot):
    def __init__(self) -> None:
        self.calls: list[DecisionKind] = []

    def choose_draw(self, view: SeatView) -> Draw:
        self.calls.append(view.kind)
        return Draw(DECK)

    def choose_play(self, view: SeatView) -> Play:
        self.calls.append(view.kind)
        play = view.legal_decisions()[0]
        assert isinstance(play, Play)
        return play


def test_default_choose_dispatches_by_kind() -> None:
    bot = SplitBot()
    for kind in (DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW, DecisionKind.PLAY):
        bot.choose(view_due(kind))
    assert bot.calls == [DecisionKind.FIRST_DRAW, DecisionKind.SECOND_DRAW, DecisionKind.PLAY]


def test_unimplemented_methods_say_what_to_implement() -> None:
    class Empty(Bot):
        pass

    with pytest.raises(NotImplementedError) as draw:
        Empty().choose(view_due(DecisionKind.FIRST_DRAW))
    assert "Empty does not say how to draw" in str(draw.value)
    assert "choose(self, view) -> Decision" in str(draw.value)
    assert "choose_draw(self, view) -> Draw" in str(draw.value)
    assert "choose_play(self, view) -> Play" in str(draw.value)
    with pytest.raises(NotImplementedError, match="Empty does not say how to play"):
        Empty().choose(view_due(DecisionKind.PLAY))

    class DrawOnly(Bot):
        def choose_draw(self, view: SeatView) -> Draw:
            return Draw(DECK)

    assert DrawOnly().choose(view_due(DecisionKind.SECOND_DRAW)) == Draw(DECK)
    with pytest.raises(NotImplementedError, match="DrawOnly does not say how to play"):
        DrawOnly().choose(view_due(DecisionKind.PLAY))


def test_game_over_view_is_not_a_decision() -> None:
    state = GameState.new(2, 1)
    rng = random.Random(1)
    while not state.is_over:
        legal = state.legal_decisions()
        state.apply(legal[rng.randrange(len(legal))])
    with pytest.raises(ValueError, match="no decision is due"):
        SplitBot().choose(state.view(0))


def test_names_and_hooks() -> None:
    class Named(Bot):
        name = "my-bot"

    class Unnamed(Bot):
        pass

    class Child(Named):
        pass

    assert Named.name == "my-bot" and Named().name == "my-bot"
    assert Unnamed().name == "Unnamed"
    assert Child().name == "Child"
    assert Bot.name == "Bot"
    bot = Unnamed()
    assert bot.clock is None and bot.events == () and bot.match is None and bot.game is None
    # the optional hooks exist and do nothing
    bot.on_match_start(None)  # type: ignore[arg-type]
    bot.on_game_start(None)  # type: ignore[arg-type]
    bot.on_game_end(None, None)  # type: ignore[arg-type]
    bot.on_match_end(None)  # type: ignore[arg-type]
    bot.on_fault(None)  # type: ignore[arg-type]
    assert "Unnamed" in repr(bot)


def test_local_game_sets_clock_and_events() -> None:
    seen: list[tuple[Clock | None, int]] = []

    class Watcher(Bot):
        def choose(self, view: SeatView) -> Decision:
            seen.append((self.clock, len(self.events)))
            assert self.game is not None and self.game.seat == view.seat
            return view.legal_decisions()[0]

    class Other(Watcher):
        pass

    result = play_game([Watcher(), Other()], seed=9)
    assert len(result.seats) == 2
    clock, _ = seen[0]
    assert clock is not None and clock.limit_ms == 11000 and clock.remaining() > 0
    assert seen[0][1] == 0 and seen[-1][1] > 0


def test_clock_arithmetic() -> None:
    clock = Clock(per_decision_ms=1000, bank_left_ms=500, elapsed_ms=200, received_at=100.0)
    assert clock.limit_ms == 1300
    assert clock.free_ms == 800
    assert clock.deadline == pytest.approx(101.3)
    assert Clock(100, 0, 400).limit_ms == 0
