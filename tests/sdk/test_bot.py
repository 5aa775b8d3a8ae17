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


def test_rng_is_seeded_per_game_from_the_bot_seed() -> None:
    class Sampler(Bot):
        def __init__(self) -> None:
            self.draws: list[float] = []

        def choose(self, view: SeatView) -> Decision:
            self.draws.append(self.rng.random())
            legal = view.legal_decisions()
            return legal[self.rng.randrange(len(legal))]

    def play(seed: int) -> tuple[list[float], list[float]]:
        bots = [Sampler(), Sampler()]
        play_game(bots, seed)
        return bots[0].draws, bots[1].draws

    first = play(11)
    assert play(11) == first  # the same game, the same random numbers
    assert first[0][:5] != first[1][:5]  # each seat has its own seed
    assert play(12)[0][:5] != first[0][:5]


def test_rng_exists_before_the_first_game() -> None:
    bot = SplitBot()
    assert isinstance(bot.rng, random.Random)
    assert bot.rng is bot.rng
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        bot.nothing  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize(
    ("value", "mode"), [(None, "time"), ("", "time"), ("time", "time"), ("FIXED", "fixed")]
)
def test_compute_mode_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str | None, mode: str
) -> None:
    if value is None:
        monkeypatch.delenv("ARENA_COMPUTE", raising=False)
    else:
        monkeypatch.setenv("ARENA_COMPUTE", value)
    assert SplitBot().compute == mode


def test_a_bad_compute_mode_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_COMPUTE", "fast")
    with pytest.raises(ValueError, match="ARENA_COMPUTE must be 'fixed' or 'time', got 'fast'"):
        SplitBot().compute  # noqa: B018
