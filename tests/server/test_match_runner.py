"""The in-process match API (``arboretum_server.runner``) and its gRPC twin (``remote``), against
a real referee and real bot processes (``arena bot run random``, as ``arena play`` starts them).

Each test drives a match only through the API: create, wait, outcome, replays, crash and restart
reports, resignation, the spectator subscription."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from referee_clients import ADMIN_TOKEN, RawBot, answer, faults_in, random_decision, run_match

from arboretum import verify_replay
from arboretum.replay import result_to_json
from arboretum_sdk.info import FaultPolicy, GameEnd, MatchStatus, TimeControl
from arboretum_server import InvalidArgument, MatchConfig, NotFound, Settings
from arboretum_server.local import bot_command
from arboretum_server.remote import RemoteMatchRunner
from arboretum_server.runner import MatchHandle, MatchRunner, SpectatorEvent


@asynccontextmanager
async def runner(**changes: Any) -> AsyncIterator[MatchRunner]:
    settings = Settings(listen=("127.0.0.1:0",), admin_token=ADMIN_TOKEN, **changes)
    started = await MatchRunner.start(settings)
    try:
        yield started
    finally:
        await started.stop(1.0)


@contextmanager
def bots(address: str, tokens: dict[int, str]) -> Iterator[dict[int, subprocess.Popen[bytes]]]:
    """The built-in random bot in a process of its own for each seat given."""
    procs = {
        seat: subprocess.Popen(
            bot_command("random", address),
            env=dict(os.environ, ARENA_TOKEN=token),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for seat, token in tokens.items()
    }
    try:
        yield procs
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()


def config(games: int, **changes: Any) -> MatchConfig:
    values: dict[str, Any] = {
        "players": 2,
        "match_seed": 11,
        "game_count": games,
        "seat_names": ("a", "b"),
        "time_control": TimeControl(per_decision_ms=5000, bank_ms=5000),
    }
    values.update(changes)
    return MatchConfig(**values)


def check_replays(games: tuple[GameEnd, ...], texts: list[str]) -> list[dict[str, Any]]:
    """Each replay verifies, and gives its game's seed, ranks and totals."""
    assert len(texts) == len(games)
    docs = []
    for game, text in zip(games, texts, strict=True):
        doc = json.loads(text)
        assert doc["game_index"] == game.game_index and doc["seed"] == str(game.seed)
        result = verify_replay(doc)
        assert result.ranks == game.result.ranks and result.totals == game.result.totals
        docs.append(doc)
    return docs


async def finish(handle: MatchHandle, timeout: float = 60) -> None:
    assert await handle.wait(timeout), "the match did not end"


def test_create_wait_outcome_replays() -> None:
    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(config(3), match_id="api-1")
            assert handle.match_id == "api-1" and len(handle.tokens) == 2
            assert not await handle.wait(0.01) and not handle.over
            with bots(handle.address, dict(enumerate(handle.tokens))):
                await finish(handle)
            outcome = handle.outcome()
            assert outcome.status is MatchStatus.FINISHED and outcome.finished
            assert [g.game_index for g in outcome.games] == [0, 1, 2]
            assert all(g.faults == (0, 0) and g.seat_names == ("a", "b") for g in outcome.games)
            assert all(sorted(g.result.ranks)[0] == 1 for g in outcome.games)
            check_replays(outcome.games, await handle.replays())
            assert handle.report_crash(0, "too late") is False, "the match is over"
            with pytest.raises(NotFound):
                handle.report_crash(2)

    asyncio.run(main())


def test_a_match_longer_than_the_referee_allows_is_refused() -> None:
    async def main() -> None:
        async with runner(max_games=2) as matches:
            with pytest.raises(InvalidArgument, match="at most 2"):
                await matches.create(config(3))

    asyncio.run(main())


def test_watch_sees_every_game_and_the_end() -> None:
    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(config(2))
            watch = handle.watch()
            with bots(handle.address, dict(enumerate(handle.tokens))):
                seen = [message async for message in watch]
            assert all(isinstance(e, SpectatorEvent) for e in seen)
            assert seen[0].type == "start" and seen[0].fields["games"] == 2
            assert sum(e.type == "game" for e in seen) == 2
            ends = [e.fields for e in seen if e.type == "game_end"]
            games = handle.outcome().games
            assert [e["result"] for e in ends] == [result_to_json(g.result) for g in games]
            assert [e["game"] for e in ends] == [0, 1]
            assert seen[-1].type == "end" and seen[-1].fields["games_finished"] == 2
            assert not watch.overflowed

    asyncio.run(main())


def test_a_crash_report_faults_the_seat_and_a_restart_brings_it_back() -> None:
    """Seat 1's process is reported crashed before it connects (the match starts at once; its
    first game's decisions fault as crashes and it forfeits), then restarting: a fresh process
    connects during game 1 and plays it without a fault."""

    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(
                config(2, start_timeout_ms=60000, fault_policy=FaultPolicy(faults_to_forfeit=2))
            )
            with bots(handle.address, {0: handle.tokens[0]}):
                assert handle.report_crash(1, "the bot process exited with status 3")
                while handle.status is MatchStatus.WAITING:  # it starts without seat 1 now
                    await asyncio.sleep(0.01)
                assert handle.report_restart(1)  # (the crash still costs the game in progress)
                while not handle.outcome().games:
                    assert not await handle.wait(0.05), "the match ended in its first game"
                with bots(handle.address, {1: handle.tokens[1]}):
                    await finish(handle)
            outcome = handle.outcome()
            assert outcome.finished and len(outcome.games) == 2
            first, second = outcome.games
            assert first.faults[1] == 2 and first.result.seats[1].forfeited
            assert second.faults == (0, 0) and not second.result.seats[1].forfeited
            docs = check_replays(outcome.games, await handle.replays())
            faults = [s["fault"] for s in docs[0]["steps"] if s.get("seat") == 1 and "fault" in s]
            assert faults[0] == {"kind": "crash", "reason": "the bot process exited with status 3"}

    asyncio.run(main())


def test_the_remote_runner_has_the_same_interface() -> None:
    """The gRPC client plays the same match as the in-process API: the same games, results and
    replays; it cannot report a crash (another process)."""

    async def main() -> None:
        async with runner() as matches:
            local = await matches.create(config(2, match_seed=99))
            with bots(local.address, dict(enumerate(local.tokens))):
                await finish(local)
            remote_runner = RemoteMatchRunner(matches.address, ADMIN_TOKEN)
            try:
                remote = await remote_runner.create(config(2, match_seed=99))
                assert remote.report_crash(0) is False
                with bots(remote.address, dict(enumerate(remote.tokens))):
                    assert await remote.wait(60)
                outcome = remote.outcome()
                assert outcome.status is MatchStatus.FINISHED
                assert outcome.games == local.outcome().games
                check_replays(outcome.games, await remote.replays())
                with pytest.raises(InvalidArgument, match="game_count"):
                    await remote_runner.create(config(2000))
            finally:
                await remote_runner.stop()

    asyncio.run(main())


def test_a_seat_resigns_and_the_fallback_plays_its_turns() -> None:
    """Seat 0 never connects; its first decision waits on its clock until it resigns: then it is
    settled at once by the fallback, as are all its turns after, and it ranks last. Resigning
    again, before the game or after the match, changes nothing."""

    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(
                config(1, start_timeout_ms=200, time_control=TimeControl(60_000, 60_000))
            )
            assert handle.resign(0) is False, "no game in progress yet"
            with bots(handle.address, {1: handle.tokens[1]}):
                while handle.status is not MatchStatus.RUNNING:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)  # seat 0's first draw is pending, on its clock
                assert handle.resign(0, "resigned by the test")
                assert handle.resign(0) is False, "resigned already"
                await finish(handle, timeout=30)  # far less than one of seat 0's decisions
            outcome = handle.outcome()
            assert outcome.finished
            (game,) = outcome.games
            assert game.result.seats[0].forfeited and not game.result.seats[1].forfeited
            assert game.result.ranks == (2, 1) and game.faults == (0, 0)
            (doc,) = check_replays(outcome.games, await handle.replays())
            forfeits = [
                {k: v for k, v in s.items() if k != "digest"}
                for s in doc["steps"]
                if s.get("kind") == "forfeit"
            ]
            assert forfeits == [
                {"turn": 0, "seat": 0, "kind": "forfeit", "reason": "resigned by the test"}
            ]
            seat0 = [s for s in doc["steps"] if s.get("seat") == 0 and s.get("kind") != "forfeit"]
            assert seat0 and all(s["fault"]["kind"] == "forfeited" for s in seat0)
            assert handle.resign(0) is False and handle.resign(1) is False, "the match is over"
            with pytest.raises(NotFound):
                handle.resign(2)

    asyncio.run(main())


def test_a_seat_resigns_while_another_seat_is_to_play() -> None:
    """Seat 2 resigns while seat 0's decision is pending: its later turns are the fallback's
    (the match loop plays them), it ranks last; then seat 0 resigns too."""

    async def main() -> None:
        async with runner() as matches:
            handle = await matches.create(
                config(
                    1,
                    players=3,
                    seat_names=("a", "b", "c"),
                    start_timeout_ms=200,
                    time_control=TimeControl(60_000, 60_000),
                )
            )
            with bots(handle.address, {1: handle.tokens[1], 2: handle.tokens[2]}):
                while handle.status is not MatchStatus.RUNNING:
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)  # seat 0's first draw is pending, on its clock
                assert handle.resign(2)
                assert handle.resign(0)
                await finish(handle, timeout=30)
            (game,) = handle.outcome().games
            assert [s.forfeited for s in game.result.seats] == [True, False, True]
            assert game.result.ranks[1] == 1 and game.faults == (0, 0, 0)
            (doc,) = check_replays(handle.outcome().games, await handle.replays())
            assert [s["seat"] for s in doc["steps"] if s.get("kind") == "forfeit"] == [2, 0]
            # seat 2's decisions (not its forfeit, nor a note such as its bot's late connect)
            seat2 = [
                s
                for s in doc["steps"]
                if s.get("seat") == 2 and s.get("kind") != "forfeit" and not s.get("note")
            ]
            assert seat2 and all(s["fault"]["kind"] == "forfeited" for s in seat2)

    asyncio.run(main())


@pytest.mark.parametrize("where", ["in-process", "remote"])
def test_each_seat_may_have_a_clock_of_its_own(where: str) -> None:
    """``seat_time_controls``: a slow seat with a generous clock is never faulted while a seat
    as slow with a short clock times out on its own limit, and each seat is told its own clock
    (match start, game start, every request); the replay keeps both clocks. The same through
    the admin service (:class:`RemoteMatchRunner`)."""

    async def slow(bot: RawBot, request: Any) -> list[Any]:
        await asyncio.sleep(0.15)
        return [answer(request.decision_number, random_decision(request, bot.rng))]

    generous, short = TimeControl(5000, 60_000), TimeControl(50, 0)

    async def main() -> None:
        async with runner() as matches:
            remote = RemoteMatchRunner(matches.address, ADMIN_TOKEN) if where == "remote" else None
            try:
                handle = await (remote or matches).create(
                    config(1, seat_time_controls=(generous, short), fault_policy=FaultPolicy(1000))
                )
                played = await run_match(handle.address, list(handle.tokens), {0: slow, 1: slow})
                await finish(handle)
                game = handle.outcome().games[0]
                [doc] = check_replays(handle.outcome().games, await handle.replays())
            finally:
                if remote is not None:
                    await remote.stop()
        assert game.faults[0] == 0 and game.faults[1] == played[1].requests > 0
        assert {f["kind"] for f in faults_in(doc, 1)} == {"timeout"}
        assert all("no answer within 50 ms (50 ms per decision" in f["reason"]
                   for f in faults_in(doc, 1))  # fmt: skip
        assert doc["time_control"] == {"per_decision_ms": 5000, "bank_ms": 5000}
        assert doc["seat_time_controls"] == [
            {"per_decision_ms": 5000, "bank_ms": 60_000},
            {"per_decision_ms": 50, "bank_ms": 0},
        ]
        for bot, clock in zip(played, (generous, short), strict=True):
            told = [bot.of_kind("match_start")[0].time_control,
                    bot.of_kind("game_start")[0].setup.time_control]  # fmt: skip
            assert {(t.per_decision_ms, t.bank_ms) for t in told} == {
                (clock.per_decision_ms, clock.bank_ms)
            }
            assert {r.clock.per_decision_ms for r in bot.of_kind("decision_request")} == {
                clock.per_decision_ms
            }

    asyncio.run(main())


def test_seat_clocks_are_checked() -> None:
    with pytest.raises(ValueError, match=r"^1 seat time control for 2 seats$"):
        config(1, seat_time_controls=(TimeControl(),))
    with pytest.raises(ValueError, match=r"^seat 1's time control: per_decision_ms must be 1 to"):
        config(1, seat_time_controls=(TimeControl(), TimeControl(0, 0)))
