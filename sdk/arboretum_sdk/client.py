"""The bot client: plays one match for one seat against a referee over gRPC.

:func:`run_bot` connects to ``address`` (``host:port`` or ``unix:/path``), opens ``BotService.Play``
with the seat token in the metadata ``x-arena-token`` and drives the bot: every ``DecisionRequest``
becomes an engine :class:`~arboretum.SeatView` (via :mod:`arboretum_sdk.wire`), the bot's answer
goes back with the request's decision number; ``FaultNotice``, ``GameStart``, ``GameEnd`` and
``MatchEnd`` call the bot's hooks. It returns the :class:`~arboretum_sdk.MatchEnd` once the referee
ends the match.

**Reconnection.** When the stream breaks with ``UNAVAILABLE`` after the match started, the client
opens a new stream with the same token, retrying with backoff for ``reconnect_for`` seconds (also
while the referee still answers ``ALREADY_EXISTS`` for the dead stream). The referee resumes the
seat: ``MatchStart{resumed}``, ``GameStart{resumed}`` with the game's events, and the pending
request.

**A bot that raises.** If ``choose`` raises, or returns something that is not a Draw/Play of the
asked kind, the traceback (or what it returned) goes to the log (stderr) and the client sends a
``DecisionFailure`` naming the error's type and message (on one line, cut to 300 characters) in
place of an answer: the referee faults the decision at once (``bot_error``, the reason naming the
error) and applies its fallback, without waiting for the clock, while the bot stays connected and
is asked its next decisions normally. With ``exit_on_error=True`` the client instead cancels the
stream and raises :class:`~arboretum_sdk.BotCrashed` (``arena bot run --exit-on-error`` then exits
with status 3): the seat is then disconnected and faults ``DISCONNECT`` until the match ends. A
well-formed but illegal answer is sent as is (the referee records an ``ILLEGAL`` fault); a warning
is logged first.

**On purpose.** ``choose`` may raise :class:`~arboretum_sdk.errors.Unanswered` to send nothing
(the referee times the decision out), :class:`~arboretum_sdk.errors.RefusedAnswer` to have the
referee record a ``MALFORMED`` fault with its message at once (``malformed_reason``), or
:class:`BotCrashed` to stop as ``exit_on_error`` does: the line-protocol bridge
(:mod:`arboretum_sdk.stdio`) uses the three; none is logged with a traceback.

**Output per decision.** Under the arena each decision request (and each fault notice) is
handled inside :func:`arboretum_sdk.output.framed`: what the bot prints meanwhile is framed by
marker lines naming the decision, so that the league stores it beside the replay's step.

**Before the match starts.** A stream that ends with ``CANCELLED`` or ``UNAVAILABLE`` before
``MatchStart`` never reached the match (a referee under load may cancel calls it has not picked up
yet): the client opens it again, with backoff, for up to ``connect_timeout`` seconds.

The bot runs in the thread that calls :func:`run_bot`, one decision at a time; gRPC keepalives are
handled by gRPC's own threads meanwhile. A late answer (after a timeout) is dropped by the referee.
The stream is driven by ``grpc.aio`` on a private event loop in that same thread (a private thread
when the caller already runs an event loop): each answer is written as soon as the bot returns it,
with no hand-off to another thread, and the client half-closes its side when the match ends.

A seat that the referee holds in its own process (``MatchHandle.attach``) is played without gRPC
by :func:`arboretum_sdk.channel.play_over`, with this module's message handling.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import random
import reprlib
import sys
import time
import traceback
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arboretum import DecisionKind, Draw, Event, Play, Species

from .bot import Bot
from .errors import (
    BotCrashed,
    ClientError,
    ConnectError,
    MatchUnavailable,
    RefusedAnswer,
    StreamError,
    TokenRejected,
    Unanswered,
)
from .info import MatchEnd, MatchStatus
from .output import framed

if TYPE_CHECKING:
    from .wire import EventDecoder

__all__ = ["Session", "handle_message", "run_bot"]

logger = logging.getLogger(__name__)

TOKEN_METADATA = "x-arena-token"
_BACKOFF_START = 0.1
_BACKOFF_MAX = 1.0
_NOT_TAKEN = frozenset({"CANCELLED", "UNAVAILABLE"})
"""Status codes (names) of a stream that ends before ``MatchStart``: the referee never took it."""


@dataclass
class Session:
    """What the client remembers across streams of one match."""

    bot: Bot
    started: bool = False
    ended: MatchEnd | None = None
    game_index: int | None = None
    species: tuple[Species, ...] = ()
    decoder: EventDecoder | None = None
    history: list[Event] = field(default_factory=list)
    answered: dict[int, Any] = field(default_factory=dict)
    """decision number -> the BotMessage sent, to answer again after a reconnection."""
    prefix: str = ""
    write_failed: bool = False
    """The current stream failed to send an answer: its connection broke (grpc.aio then ends the
    call with INTERNAL, where the connection's own status would have been UNAVAILABLE)."""


def run_bot(
    bot: Bot,
    address: str,
    token: str,
    *,
    connect_timeout: float = 10.0,
    reconnect_for: float = 10.0,
    exit_on_error: bool = False,
) -> MatchEnd:
    """Play one match for the seat of ``token``; returns how the match ended.

    Raises :class:`ConnectError` (unreachable), :class:`TokenRejected` (bad token),
    :class:`MatchUnavailable` (match over, or the seat already connected), :class:`StreamError`
    (the stream broke for good, or the referee broke the protocol) and :class:`BotCrashed`.
    """
    return _run_sync(
        _run_bot(
            bot,
            address,
            token,
            connect_timeout=connect_timeout,
            reconnect_for=reconnect_for,
            exit_on_error=exit_on_error,
        )
    )


def _run_sync(coro: Coroutine[Any, Any, MatchEnd]) -> MatchEnd:
    """Run ``coro`` on a new event loop in this thread (in a private thread if this one already
    runs a loop) and return its result. The loop is uvloop's when it is installed, unless
    ``ARENA_EVENT_LOOP=asyncio`` (see :mod:`arboretum_sdk.eventloop`)."""
    from . import eventloop

    # Run the loop outside of any ``except`` block: every exception raised in the match (the
    # bot's own tracebacks in its log included) would otherwise carry this lookup's RuntimeError
    # as its context ("During handling of the above exception ...").
    if not _loop_running():
        return eventloop.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arena-bot") as pool:
        return pool.submit(eventloop.run, coro).result()


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _run_bot(
    bot: Bot,
    address: str,
    token: str,
    *,
    connect_timeout: float,
    reconnect_for: float,
    exit_on_error: bool,
) -> MatchEnd:
    import grpc

    from arboretum_proto.v1 import bot_pb2_grpc

    session = Session(bot)
    channel = grpc.aio.insecure_channel(address)
    try:
        try:
            await asyncio.wait_for(channel.channel_ready(), connect_timeout)
        except TimeoutError:
            raise ConnectError(
                f"cannot reach the referee at {address} "
                f"(no connection within {connect_timeout:g} s)"
            ) from None
        stub = bot_pb2_grpc.BotServiceStub(channel)
        retry_until: float | None = None
        start_until: float | None = None
        backoff = _BACKOFF_START
        while True:
            try:
                await _play_stream(stub, token, session, exit_on_error)
            except grpc.RpcError as exc:
                if session.ended is not None:  # the stream broke after MatchEnd: nothing lost
                    return session.ended
                code = exc.code()
                details = exc.details() or ""
                if code == grpc.StatusCode.INTERNAL and session.write_failed:
                    code = grpc.StatusCode.UNAVAILABLE
                    details = f"the connection broke while sending an answer ({details})"
                if not session.started and code.name in _NOT_TAKEN:
                    # The stream never reached the match: open it again, for a bounded time.
                    now = time.monotonic()
                    if start_until is None:
                        start_until = now + connect_timeout
                        logger.warning(
                            "the referee did not take the stream (%s: %s); retrying for up to %g s",
                            code.name,
                            details,
                            connect_timeout,
                        )
                    if now < start_until:
                        await asyncio.sleep(backoff)
                        backoff = min(_BACKOFF_MAX, backoff * 2)
                        continue
                retryable = code == grpc.StatusCode.UNAVAILABLE or (
                    code == grpc.StatusCode.ALREADY_EXISTS and retry_until is not None
                )
                if session.started and retryable and session.ended is None:
                    now = time.monotonic()
                    if retry_until is None:
                        retry_until = now + reconnect_for
                        logger.warning(
                            "%sstream lost (%s: %s); reconnecting for up to %g s",
                            session.prefix,
                            code.name,
                            details,
                            reconnect_for,
                        )
                    if now < retry_until:
                        await asyncio.sleep(backoff)
                        backoff = min(_BACKOFF_MAX, backoff * 2)
                        continue
                raise _client_error(code, details, address, session) from None
            if session.ended is not None:
                return session.ended
            raise StreamError("the referee closed the stream before the match ended")
    finally:
        await channel.close()


def _is_rpc_error(exc: BaseException) -> bool:
    import grpc

    return isinstance(exc, grpc.RpcError)


def _client_error(code: Any, details: str, address: str, session: Session) -> ClientError:
    import grpc

    name = code.name if code is not None else "UNKNOWN"
    text = f"{name}: {details}" if details else name
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return TokenRejected(f"the referee at {address} refused the token ({text})")
    if code == grpc.StatusCode.FAILED_PRECONDITION:
        return MatchUnavailable(f"the match is over ({text})")
    if code == grpc.StatusCode.ALREADY_EXISTS:
        return MatchUnavailable(f"another bot is already connected for this seat ({text})")
    if code == grpc.StatusCode.UNAVAILABLE and not session.started:
        return ConnectError(f"cannot reach the referee at {address} ({text})")
    if session.started:
        return StreamError(f"the stream to the referee broke ({text})")
    return StreamError(f"the referee ended the stream ({text})")


async def _play_stream(stub: Any, token: str, session: Session, exit_on_error: bool) -> None:
    """One stream: handle the referee's messages until it closes, writing each answer at once.

    Once ``MatchEnd`` has come the client half-closes its side, so that the referee ends the call
    without waiting."""
    import grpc

    call = stub.Play(metadata=((TOKEN_METADATA, token),))
    outbox: list[Any] = []
    writing = True
    session.write_failed = False
    try:
        while True:
            message = await call.read()
            if message is grpc.aio.EOF:
                return
            handle_message(message, session, outbox, call, exit_on_error)
            if outbox:
                answers = outbox[:]
                outbox.clear()
                for answer in answers:
                    if writing:
                        writing = await _write(call, answer, session)
            if writing and session.ended is not None:
                writing = False
                await _done_writing(call)
    except BaseException as exc:
        if not _is_rpc_error(exc):
            call.cancel()
        raise


async def _write(call: Any, answer: Any, session: Session) -> bool:
    """Send an answer; False when the call is already over (how it ended is read next)."""
    import grpc

    try:
        await call.write(answer)
    except grpc.RpcError:
        session.write_failed = True
        return False
    except (asyncio.InvalidStateError, grpc.aio.UsageError):
        return False
    return True


async def _done_writing(call: Any) -> None:
    import grpc

    with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
        await call.done_writing()


def handle_message(
    message: Any, session: Session, outbox: list[Any], call: Any, exit_on_error: bool
) -> None:
    from . import wire

    bot = session.bot
    try:
        which = wire.check_protocol_version(message, "referee message")
        if which == "match_start":
            info = wire.match_start_from_pb(message.match_start)
            session.prefix = f"[match {info.match_id} seat {info.seat}] "
            first = not session.started
            session.started = True
            bot.match = info
            logger.info(
                "%s%s: %s (%d players, %d games)%s",
                session.prefix,
                bot.name,
                "resumed" if info.resumed else "match started",
                info.players,
                info.game_count,
                "" if first else " after a reconnection",
            )
            if first:
                _hook(bot.on_match_start, info, session)
        elif which == "game_start":
            game, decoder = wire.game_start_from_pb(message.game_start)
            same_game = session.game_index == game.game_index
            session.game_index = game.game_index
            session.species = game.species
            session.decoder = decoder
            session.history = list(game.events)
            bot.game = game
            bot.events = tuple(session.history)
            if not same_game:
                bot.rng = random.Random(game.bot_seed)
                logger.info("%sgame %d starts", session.prefix, game.game_index)
                _hook(bot.on_game_start, game, session)
        elif which == "decision_request":
            with framed(message.decision_request.decision_number):
                _decide(message.decision_request, session, outbox, call, exit_on_error)
        elif which == "fault_notice":
            notice = wire.fault_notice_from_pb(message.fault_notice)
            with framed(notice.decision_number):
                logger.warning("%s%s", session.prefix, notice)
                _hook(bot.on_fault, notice, session)
        elif which == "game_end":
            end = wire.game_end_from_pb(message.game_end, session.decoder)
            session.history.extend(end.events)
            bot.events = tuple(session.history)
            totals = " ".join(str(t) for t in end.result.totals)
            logger.info(
                "%sgame %d over: totals %s, ranks %s",
                session.prefix,
                end.game_index,
                totals,
                list(end.result.ranks),
            )
            _hook(bot.on_game_end, end.result, session, end)
            session.game_index = None
            session.decoder = None
        elif which == "match_end":
            match_end = wire.match_end_from_pb(message.match_end)
            session.ended = match_end
            level = logging.INFO if match_end.status is MatchStatus.FINISHED else logging.WARNING
            logger.log(
                level,
                "%smatch %s%s",
                session.prefix,
                match_end.status.value,
                f": {match_end.reason}" if match_end.reason else "",
            )
            _hook(bot.on_match_end, match_end, session)
    except wire.WireError as exc:
        call.cancel()
        raise StreamError(f"the referee sent a malformed message: {exc}") from None


def _decide(
    request: Any, session: Session, outbox: list[Any], call: Any, exit_on_error: bool
) -> None:
    from . import wire

    received = time.monotonic()
    number = request.decision_number
    if number in session.answered:  # resent after a reconnection: answer again
        outbox.append(session.answered[number])
        return
    if session.decoder is None or not session.species:
        raise wire.WireError("decision_request", "arrived outside a game")
    kind = wire.kind_from_pb(request.kind, "decision_request.kind")
    if not request.HasField("view"):
        raise wire.WireError("decision_request.view", "is missing")
    if not request.HasField("clock"):
        raise wire.WireError("decision_request.clock", "is missing")
    view = wire.seat_view_from_pb(
        request.view,
        species=session.species,
        kind=kind,
        discard_required=request.discard_required if kind is DecisionKind.PLAY else None,
        field="decision_request.view",
    )
    session.history.extend(session.decoder.feed_all(request.events, "decision_request.events"))
    bot = session.bot
    bot.events = tuple(session.history)
    bot.clock = wire.clock_from_pb(request.clock, "decision_request.clock", received_at=received)
    bot.decision_number = number
    try:
        decision = bot.choose(view)
    except RefusedAnswer as exc:
        logger.warning("%sdecision %d: %s", session.prefix, number, exc)
        refused = wire.refused_answer_to_pb(number, str(exc))
        session.answered = {number: refused}
        outbox.append(refused)
        return
    except Unanswered as exc:
        logger.warning("%sdecision %d: no answer: %s", session.prefix, number, exc)
        return
    except BotCrashed:
        call.cancel()
        raise
    except Exception as exc:
        _fail(session, outbox, call, number, kind, exit_on_error, type(exc).__name__, _text(exc))
        return
    wrong: Exception | None = None
    try:
        answer = wire.answer_to_pb(number, decision, kind)
        legal = view.is_legal(decision)  # cheaper than `decision in view.legal_decisions()`
    except Exception as exc:  # not a decision of the asked kind: say what it is
        wrong = exc
    if wrong is not None:
        expected: type = Play if kind is DecisionKind.PLAY else Draw
        message = (
            f"{type(bot).__name__}.choose returned {_short_repr(decision)} "
            f"(a {type(decision).__name__}) for a {kind.value} decision; expected a "
            f"{expected.__name__}"
        )
        if isinstance(decision, expected):
            message += f" of engine values ({wrong})"
        _fail(session, outbox, call, number, kind, exit_on_error, "TypeError", message)
        return
    if not legal:
        logger.warning(
            "%sdecision %d: the bot's answer %s is not legal; the referee will apply its fallback",
            session.prefix,
            number,
            decision,
        )
    session.answered = {number: answer}
    outbox.append(answer)
    elapsed = time.monotonic() - received
    logger.debug("%sdecision %d: %s (%.1f ms)", session.prefix, number, decision, elapsed * 1000)


def _fail(
    session: Session,
    outbox: list[Any],
    call: Any,
    number: int,
    kind: DecisionKind,
    exit_on_error: bool,
    error_type: str,
    message: str,
) -> None:
    """The bot's code failed on decision ``number``: log it (with the traceback, when it raised:
    then this is called in the ``except`` block), then tell the referee, which faults the decision
    at once (``bot_error``) and applies its fallback; or, with ``exit_on_error``, stop."""
    raised = sys.exc_info()[1] is not None
    logger.error(
        "%sthe bot failed on decision %d (%s)%s; %s%s",
        session.prefix,
        number,
        kind.value,
        "" if raised else f": {message}",
        "stopping (--exit-on-error)"
        if exit_on_error
        else "the referee is told (a bot_error fault: its fallback is applied)",
        "\n" + traceback.format_exc().rstrip() if raised else "",
    )
    if exit_on_error:
        call.cancel()
        raise BotCrashed(f"the bot failed on decision {number}; stopped") from None
    from . import wire

    failure = wire.failure_to_pb(number, error_type, message)
    session.answered = {number: failure}
    outbox.append(failure)


def _text(exc: Exception) -> str:
    """``str(exc)`` (an exception whose ``__str__`` raises says so)."""
    try:
        return str(exc)
    except Exception as again:
        return f"<its message raised {type(again).__name__}>"


_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother = 60, 80


def _short_repr(value: object) -> str:
    """``repr(value)``, short (strings and other objects cut to 60 and 80 characters, containers
    to a few items); a repr that raises says so."""
    try:
        return _REPR.repr(value)
    except Exception as exc:
        return f"<a {type(value).__name__} whose repr raised {type(exc).__name__}>"


def _hook(method: Any, arg: Any, session: Session, *more: Any) -> None:
    """Run an optional hook; an exception in it is logged, never fatal."""
    try:
        method(arg, *more)
    except Exception:
        logger.error(
            "%s%s raised (ignored):\n%s",
            session.prefix,
            getattr(method, "__qualname__", "a hook"),
            traceback.format_exc().rstrip(),
        )
