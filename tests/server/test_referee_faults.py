"""Each fault, over real gRPC: the match finishes, the fault is recorded with its reason, the bot is
told, a control match running alongside is unaffected, and every replay verifies."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
from referee_clients import (
    RawBot,
    Strategy,
    answer,
    create_match,
    faults_in,
    get_match,
    notes_in,
    play_call,
    random_decision,
    referee,
    run_match,
    verified_replays,
)

from arboretum import Species
from arboretum_proto.v1 import bot_pb2, common_pb2, match_pb2_grpc

FAST = {"per_decision_ms": 100, "bank_ms": 200}

Check = Callable[[list[RawBot], list[dict[str, Any]], Any], None]


def run_scenario(
    tmp_path: Path,
    strategies: dict[int, Strategy],
    check: Check,
    *,
    players: int = 2,
    games: int = 1,
    run_kw: dict[int, dict[str, Any]] | None = None,
    during: Callable[[Any, str], Awaitable[None]] | None = None,
    **config: Any,
) -> None:
    """Run a faulty match and a clean control match side by side on one referee."""

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                faulty = await create_match(stub, players, games=games, seed=11, **(config or FAST))
                control = await create_match(stub, 3, games=2, seed=12)
                tasks = [
                    run_match(
                        ref.address, [t.token for t in faulty.seat_tokens], strategies, run_kw
                    ),
                    run_match(ref.address, [t.token for t in control.seat_tokens]),
                ]
                if during is not None:
                    tasks.append(during(ref, faulty.match_id))
                bots, control_bots, *_ = await asyncio.gather(*tasks)
                info = await get_match(stub, faulty.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED, info.reason
                docs = await verified_replays(stub, faulty.match_id, games)
                check(bots, docs, info)
                # the control match: finished, no fault, no note
                cinfo = await get_match(stub, control.match_id)
                assert cinfo.status == common_pb2.MATCH_STATUS_FINISHED
                assert all(s.faults == 0 for s in cinfo.summary.seats)
                for doc in await verified_replays(stub, control.match_id, 2):
                    assert not any("fault" in s for s in doc["steps"])
                for bot in control_bots:
                    assert bot.codes == [grpc.StatusCode.OK]
                    assert not bot.of_kind("fault_notice")
                # the referee is still up
                again = await create_match(stub, 2)
                assert again.match_id
        finally:
            await ref.stop()

    asyncio.run(main())


def sleepy(times: int, delay: float) -> Strategy:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        if bot.requests <= times:
            await asyncio.sleep(delay)
        return [answer(request.decision_number, random_decision(request, bot.rng))]

    return strategy


def test_timeout(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        kinds = [f["kind"] for f in faults]
        assert kinds[:3] == ["timeout"] * 3
        assert "no answer within 300 ms" in faults[0]["reason"]
        assert "no answer within 100 ms" in faults[1]["reason"]
        assert all(k == "forfeited" for k in kinds[3:])
        assert any(s["kind"] == "forfeit" and s["seat"] == 1 for s in docs[0]["steps"])
        stale = notes_in(docs[0], 1, "stale")  # late answers are dropped (noted while in game)
        assert stale and "answer for decision" in stale[0]["reason"]
        result = docs[0]["result"]["seats"][1]
        assert result["forfeited"] and result["rank"] == 2
        notices = bots[1].of_kind("fault_notice")
        assert [n.kind for n in notices] == [common_pb2.FAULT_KIND_TIMEOUT] * 3
        assert [n.faults for n in notices] == [1, 2, 3]
        assert notices[-1].forfeited and not notices[0].forfeited
        assert bots[1].requests == 3  # nothing asked after the forfeit
        assert notices[0].fallback.HasField("first_draw")
        assert info.summary.seats[1].forfeits == 1
        assert bots[1].of_kind("match_end")

    run_scenario(tmp_path, {1: sleepy(3, 0.45)}, check)


def quits_after(n: int) -> Strategy:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any] | None:
        if bot.requests >= n:
            return None  # cancel the stream: the bot is gone
        return [answer(request.decision_number, random_decision(request, bot.rng))]

    return strategy


def test_stream_error_mid_game_is_a_disconnect(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults[:3]] == ["disconnect"] * 3
        assert "no open stream" in faults[0]["reason"]
        assert "the stream" in faults[0]["reason"]
        assert notes_in(docs[0], 1, "disconnect")
        assert docs[0]["result"]["seats"][1]["forfeited"]

    run_scenario(tmp_path, {1: quits_after(4)}, check)


def test_crash_reported_by_a_runner(tmp_path: Path) -> None:
    async def report(ref: Any, match_id: str) -> None:
        # the "runner" sees the bot process of seat 1 exit once its stream is gone
        match = ref.registry.get(match_id)
        while match.seats[1].stream is not None or not match.seats[1].ever_connected:
            await asyncio.sleep(0.01)
        ref.report_crash(match_id, 1, "the bot process exited with status 1")

    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults[:3]] == ["crash"] * 3
        assert faults[0]["reason"] == "the bot process exited with status 1"
        assert docs[0]["result"]["seats"][1]["forfeited"]

    run_scenario(
        tmp_path,
        {1: quits_after(2)},
        check,
        during=report,
        per_decision_ms=2000,
        bank_ms=2000,
    )


def test_crash_before_connecting_lets_the_match_start(tmp_path: Path) -> None:
    """A runner reports that seat 1's bot process died before it ever connected: the match starts
    as soon as seat 0 is there (not after the start timeout), and seat 1's decisions fault as
    crashes at once."""

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(
                    stub, 2, seed=5, per_decision_ms=60000, bank_ms=0, start_timeout_ms=60000
                )
                ref.report_crash(created.match_id, 1, "the bot process exited with status 2")
                started = asyncio.get_running_loop().time()
                await asyncio.wait_for(
                    run_match(ref.address, [created.seat_tokens[0].token]), timeout=30
                )
                assert asyncio.get_running_loop().time() - started < 30
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED
                docs = await verified_replays(stub, created.match_id, 1)
                faults = faults_in(docs[0], 1)
                assert faults and faults[0]["kind"] == "crash"
                assert faults[0]["reason"] == "the bot process exited with status 2"
        finally:
            await ref.stop(1.0)

    asyncio.run(main())


def garbage_once(at: int) -> Strategy:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        if bot.requests == at:
            return [b"\xff\xff\xff\xff\xff"]
        return [answer(request.decision_number, random_decision(request, bot.rng))]

    return strategy


def test_undecodable_message(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults] == ["malformed"]
        assert "does not decode" in faults[0]["reason"]
        notices = bots[1].of_kind("fault_notice")
        assert len(notices) == 1 and notices[0].kind == common_pb2.FAULT_KIND_MALFORMED
        assert "does not decode" in notices[0].reason
        # the stream ended with INVALID_ARGUMENT after the notice; the bot reconnected
        assert bots[1].codes == [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.OK]
        starts = bots[1].of_kind("match_start")
        assert [s.resumed for s in starts] == [False, True]

    run_scenario(
        tmp_path,
        {1: garbage_once(2)},
        check,
        run_kw={1: {"reconnect_on_error": 1}},
        per_decision_ms=1000,
        bank_ms=2000,
    )


def malformed_answers() -> Strategy:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        number = request.decision_number
        decision = random_decision(request, bot.rng)
        if bot.requests == 1:  # a play answering a draw: wrong kind, the stream goes on
            hand = request.view.hand
            wrong = common_pb2.Decision(
                play=common_pb2.PlayDecision(card=hand[0], cell=common_pb2.Cell(), discard=hand[1])
            )
            return [answer(number, wrong)]
        if request.kind == common_pb2.DECISION_KIND_PLAY and bot.requests < 9:
            decision.play.ClearField("discard")  # discard required but missing
            return [answer(number, decision)]
        if bot.requests == 12:  # wrong protocol version: fault, then the stream ends
            message = answer(number, decision)
            message.protocol_version = 2
            return [message]
        return [answer(number, decision)]

    return strategy


def test_malformed_answers(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults[:2]] == ["malformed"] * 2
        assert "play decision but a first-draw was asked" in faults[0]["reason"]
        assert "discard is missing" in faults[1]["reason"]
        notices = bots[1].of_kind("fault_notice")
        assert notices[0].kind == common_pb2.FAULT_KIND_MALFORMED
        assert docs[0]["result"]["seats"][1]["forfeited"]

    run_scenario(
        tmp_path,
        {1: malformed_answers()},
        check,
        faults_to_forfeit=3,
        per_decision_ms=1000,
        bank_ms=2000,
    )


def test_wrong_protocol_version(tmp_path: Path) -> None:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        message = answer(request.decision_number, random_decision(request, bot.rng))
        if bot.requests == 3:
            message.protocol_version = 2
        return [message]

    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults] == ["malformed"]
        assert "protocol_version is 2" in faults[0]["reason"]
        assert bots[1].codes[0] == grpc.StatusCode.INVALID_ARGUMENT
        assert "protocol_version" in bots[1].details[0]

    run_scenario(
        tmp_path,
        {1: strategy},
        check,
        run_kw={1: {"reconnect_on_error": 1}},
        per_decision_ms=1000,
        bank_ms=2000,
    )


def illegal_plays() -> Strategy:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        decision = random_decision(request, bot.rng)
        if request.kind == common_pb2.DECISION_KIND_PLAY:
            hand = {(c.species, c.value) for c in request.view.hand}
            species, value = next(
                (s.index + 1, v)
                for s in Species
                for v in range(1, 9)
                if (s.index + 1, v) not in hand
            )
            decision.play.card.species = species  # type: ignore[assignment]
            decision.play.card.value = value
        return [answer(request.decision_number, decision)]

    return strategy


def test_illegal_card(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        faults = faults_in(docs[0], 1)
        assert [f["kind"] for f in faults[:3]] == ["illegal"] * 3
        assert "card-not-in-hand" in faults[0]["reason"]
        notices = bots[1].of_kind("fault_notice")
        assert [n.kind for n in notices] == [common_pb2.FAULT_KIND_ILLEGAL] * 3
        assert "card-not-in-hand" in notices[0].reason
        assert notices[0].fallback.HasField("play")
        assert notices[2].forfeited
        assert docs[0]["result"]["seats"][1]["rank"] == 2

    run_scenario(tmp_path, {1: illegal_plays()}, check, per_decision_ms=1000, bank_ms=2000)


def failure(number: int, error_type: str, message: str) -> bot_pb2.BotMessage:
    return bot_pb2.BotMessage(
        protocol_version=1,
        failure=bot_pb2.DecisionFailure(
            decision_number=number, error_type=error_type, message=message
        ),
    )


def test_reported_failures_fault_at_once(tmp_path: Path) -> None:
    """A ``DecisionFailure`` for the pending decision is a ``bot_error`` fault at once (the clock
    gives 5 s), its reason the bot's words on one line, cut; one for another decision, or after the
    answer, is dropped as stale."""

    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        number = request.decision_number
        decision = answer(number, random_decision(request, bot.rng))
        if bot.requests == 1:  # not pending, then after the answer: both dropped
            return [failure(number + 1000, "KeyError", "x"), decision, failure(number, "E", "")]
        if bot.requests == 2:  # 200 KB of message with control characters
            return [failure(number, "ZeroDivisionError", "line 1\n\x1b[2J" + "y" * 200_000)]
        if bot.requests == 3:
            return [failure(number, "", "")]
        return [decision]

    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        steps = [s for s in docs[0]["steps"] if s.get("seat") == 1 and "fault" in s]
        assert [s["fault"]["kind"] for s in steps] == ["bot_error"] * 2, steps
        reasons = [s["fault"]["reason"] for s in steps]
        assert reasons[0] == "the bot's code failed: ZeroDivisionError: line 1 ?[2J" + (
            "y" * (300 - len("line 1 ?[2J") - 3) + "..."
        )
        assert reasons[1] == "the bot's code failed: an error"
        assert all(s["ms"] < 5000 for s in steps), "the referee did not wait for the clock"
        stale = notes_in(docs[0], 1, "stale")
        assert len(stale) >= 2 and all("which is not pending" in n["reason"] for n in stale)
        notices = bots[1].of_kind("fault_notice")
        assert [n.kind for n in notices] == [common_pb2.FAULT_KIND_BOT_ERROR] * 2
        assert [n.reason for n in notices] == reasons
        assert not notices[-1].forfeited and info.summary.seats[1].faults == 2
        assert bots[1].codes == [grpc.StatusCode.OK]

    run_scenario(tmp_path, {1: strategy}, check, per_decision_ms=5000, bank_ms=0)


def test_stale_and_duplicate_answers(tmp_path: Path) -> None:
    async def strategy(bot: RawBot, request: bot_pb2.DecisionRequest) -> list[Any]:
        number = request.decision_number
        decision = random_decision(request, bot.rng)
        writes: list[Any] = [answer(number, decision), answer(number, decision)]  # duplicate
        if bot.requests == 1:
            writes.insert(0, answer(number + 1000, decision))  # a decision not pending
        if bot.requests == 2:
            writes.insert(0, answer(number - 1, decision))  # out of turn (not its decision)
        return writes

    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        assert not faults_in(docs[0], 1)
        stale = notes_in(docs[0], 1, "stale")
        assert len(stale) >= bots[1].requests + 2
        assert any("which is not pending" in s["reason"] for s in stale)
        assert not bots[1].of_kind("fault_notice")
        assert info.summary.seats[1].faults == 0

    run_scenario(tmp_path, {1: strategy}, check, per_decision_ms=1000, bank_ms=2000)


def test_disconnect_and_reconnect(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        bot = bots[1]
        assert not faults_in(docs[0], 1)
        kinds = [m.WhichOneof("kind") for m in bot.received]
        starts = bot.of_kind("match_start")
        assert [s.resumed for s in starts] == [False, True]
        games = bot.of_kind("game_start")
        assert [g.resumed for g in games] == [False, True]
        resumed = games[1]
        assert [e.sequence for e in resumed.events] == list(range(len(resumed.events)))
        requests = bot.of_kind("decision_request")
        # the request pending at the drop is sent again, same number, time already spent
        dropped = requests[4]
        index = kinds.index("match_start", 1)
        assert kinds[index : index + 3] == ["match_start", "game_start", "decision_request"]
        again = requests[5]
        assert again.decision_number == dropped.decision_number
        assert again.clock.elapsed_ms >= 30
        assert not again.events  # the resumed GameStart carried them all
        assert notes_in(docs[0], 1, "disconnect") and notes_in(docs[0], 1, "reconnect")
        assert bot.codes == [grpc.StatusCode.CANCELLED, grpc.StatusCode.OK]

    run_scenario(
        tmp_path,
        {},
        check,
        run_kw={1: {"reconnect_after": 5}},
        per_decision_ms=1000,
        bank_ms=3000,
    )


def test_series_on_one_connection(tmp_path: Path) -> None:
    def check(bots: list[RawBot], docs: list[dict[str, Any]], info: Any) -> None:
        from arboretum import derive_game_seed

        for bot in bots:
            kinds = [m.WhichOneof("kind") for m in bot.received]
            assert kinds.count("match_start") == 1
            assert kinds.count("game_start") == 3 and kinds.count("game_end") == 3
            ends = bot.of_kind("game_end")
            assert [e.result.game_index for e in ends] == [0, 1, 2]
            assert [e.result.seed for e in ends] == [derive_game_seed(11, i) for i in range(3)]
            assert bot.of_kind("match_end")[0].match_seed == 11
            assert bot.codes == [grpc.StatusCode.OK]
        assert [d["seed"] for d in docs] == [str(derive_game_seed(11, i)) for i in range(3)]
        assert info.summary.games_finished == 3
        assert random  # keep the import used

    run_scenario(tmp_path, {}, check, players=4, games=3, per_decision_ms=1000, bank_ms=2000)


def test_a_stream_the_bot_half_closes_mid_match_ends_with_a_status(tmp_path: Path) -> None:
    """docs/referee.md: a bot that half-closes its stream before the match ends is disconnected,
    and its call ends at once with CANCELLED and the reason; the match plays on without it."""

    async def main() -> None:
        ref = await referee(tmp_path)
        try:
            async with grpc.aio.insecure_channel(ref.address) as channel:
                stub = match_pb2_grpc.MatchServiceStub(channel)
                created = await create_match(stub, 2, per_decision_ms=100, bank_ms=100)
                tokens = [t.token for t in created.seat_tokens]
                other = RawBot(ref.address, tokens[1], seed=1)
                playing = asyncio.create_task(other.run())
                call = play_call(channel, tokens[0])
                first = await asyncio.wait_for(call.read(), 10)
                assert first.WhichOneof("kind") == "match_start"
                # Half-close once game 0 has started, so that its replay holds the note (a
                # stream gone before a game starts leaves only the game's faults).
                started = await asyncio.wait_for(call.read(), 10)
                assert started.WhichOneof("kind") == "game_start"
                await call.done_writing()
                # Whatever the referee sends meanwhile, the call ends, and soon.
                async with asyncio.timeout(10):
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        while await call.read() is not grpc.aio.EOF:
                            pass
                assert await call.code() == grpc.StatusCode.CANCELLED
                assert "half-closed" in (await call.details() or "")
                await asyncio.wait_for(playing, 60)
                info = await get_match(stub, created.match_id)
                assert info.status == common_pb2.MATCH_STATUS_FINISHED
                doc = (await verified_replays(stub, created.match_id, 1))[0]
                assert notes_in(doc, 0, "disconnect")
                assert faults_in(doc, 0)  # seat 0's decisions timed out
        finally:
            await ref.stop()

    asyncio.run(main())
