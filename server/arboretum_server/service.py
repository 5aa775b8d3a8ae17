"""The gRPC services, kept thin, and the interceptor for what cuts across them.

- :class:`RefereeInterceptor`: admin authentication (``x-arena-admin-token``, compared with
  :func:`hmac.compare_digest`) for the admin methods, a time limit on unary calls, the mapping of
  :class:`~arboretum_server.errors.RequestError` to gRPC statuses, and a log line per failed call.
- :class:`MatchServicer` and :class:`BotServicer` translate between protobuf and the registry and
  match objects (via :mod:`arboretum_server.edge`) and hold no game logic.

``BotService.Play`` is registered by hand (:func:`bot_service_handler`) with a request deserializer
that never raises, so that a message that does not decode reaches the match as a fault instead of
killing the call with a framework error.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc

from arboretum_proto.v1 import match_pb2, match_pb2_grpc

from . import edge
from .config import MIN_STREAM_DEADLINE_S, UNARY_TIMEOUT_S
from .errors import (
    Exhausted,
    InvalidArgument,
    MatchOver,
    NotFound,
    PermissionDenied,
    RequestError,
    Unauthenticated,
)
from .match import Match
from .messages import is_over
from .registry import Registry
from .seats import SeatStream

__all__ = [
    "ADMIN_METHODS",
    "ADMIN_TOKEN_HEADER",
    "SEAT_TOKEN_HEADER",
    "Auth",
    "BotServicer",
    "MatchServicer",
    "RefereeInterceptor",
    "bot_service_handler",
]

log = logging.getLogger(__name__)

SEAT_TOKEN_HEADER = "x-arena-token"
ADMIN_TOKEN_HEADER = "x-arena-admin-token"
BOT_SERVICE = "arboretum.v1.BotService"
MATCH_SERVICE = "arboretum.v1.MatchService"
ADMIN_METHODS = frozenset({f"/{MATCH_SERVICE}/CreateMatch", f"/{MATCH_SERVICE}/CancelMatch"})
CANCEL_WAIT_S = 5.0
END_LINGER_S = 1.0


def _metadata_values(metadata: Sequence[tuple[str, Any]] | None, key: str) -> list[str]:
    """Every value of ``key`` in ``metadata``, in the order sent."""
    return [
        value if isinstance(value, str) else value.decode("utf-8", "replace")
        for name, value in metadata or ()
        if name == key
    ]


def _metadata(metadata: Sequence[tuple[str, Any]] | None, key: str) -> str | None:
    values = _metadata_values(metadata, key)
    return values[0] if values else None


def _seat_token(metadata: Sequence[tuple[str, Any]] | None) -> str | None:
    """The one seat token of a ``Play`` call, None without one; more than one value of the
    header is refused, so that no token is taken over another by its place in the metadata."""
    values = _metadata_values(metadata, SEAT_TOKEN_HEADER)
    if len(values) > 1:
        raise Unauthenticated(
            f"Play takes exactly one seat token in the {SEAT_TOKEN_HEADER} metadata "
            f"(got {len(values)} values)"
        )
    return values[0] if values else None


class Auth:
    """Checks the admin token."""

    def __init__(self, admin_token: str) -> None:
        self._admin = admin_token.encode()

    def is_admin(self, metadata: Sequence[tuple[str, Any]] | None) -> bool:
        given = _metadata(metadata, ADMIN_TOKEN_HEADER)
        if given is None:
            return False
        return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), self._admin)


# ----------------------------------------------------------------------------- interceptor


async def _abort(context: grpc.aio.ServicerContext, error: RequestError) -> None:
    await context.abort(grpc.StatusCode[error.status], str(error))


class _Undecodable:
    """A request whose bytes did not decode: the call answers INVALID_ARGUMENT naming it (after
    the admin check, which needs no request), never gRPC's UNKNOWN for a decoding exception."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer`` that returns an :class:`_Undecodable` instead of raising."""
    if deserializer is None:
        return None
    owner = getattr(deserializer, "__self__", None)
    name = getattr(owner, "__name__", "request")

    def decode(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as exc:  # DecodeError, or anything a malformed message raises
            reason = str(exc) or type(exc).__name__
            return _Undecodable(f"the request is not a valid {name}: {reason}")

    return decode


def _wrap(method: str, behavior: Callable[..., Any], streaming_response: bool) -> Any:
    if inspect.isasyncgenfunction(behavior):

        async def wrapped_gen(
            request: Any, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            if type(request) is _Undecodable:
                log.info("%s: INVALID_ARGUMENT %s", method, request.message)
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
            try:
                async for item in behavior(request, context):
                    yield item
            except RequestError as exc:
                log.info("%s: %s %s", method, exc.status, exc)
                await _abort(context, exc)

        return wrapped_gen

    async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
        if type(request) is _Undecodable:
            log.info("%s: INVALID_ARGUMENT %s", method, request.message)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)
        try:
            if streaming_response:
                return await behavior(request, context)
            return await asyncio.wait_for(behavior(request, context), UNARY_TIMEOUT_S)
        except RequestError as exc:
            log.info("%s: %s %s", method, exc.status, exc)
            await _abort(context, exc)
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "the referee's time limit")

    return wrapped


def _denied(handler: Any, message: str) -> Any:
    async def deny(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.PERMISSION_DENIED, message)

    if handler.unary_unary is not None:
        return handler._replace(unary_unary=deny)
    if handler.unary_stream is not None:
        return handler._replace(unary_stream=deny)
    if handler.stream_unary is not None:
        return handler._replace(stream_unary=deny)
    return handler._replace(stream_stream=deny)


class RefereeInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Admin authentication, unary time limits and error mapping for the arena's services."""

    def __init__(self, auth: Auth) -> None:
        self.auth = auth

    async def intercept_service(
        self,
        continuation: Callable[[Any], Awaitable[Any]],
        details: Any,
    ) -> Any:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(("/" + BOT_SERVICE, "/" + MATCH_SERVICE)):
            return handler
        if method.startswith("/" + MATCH_SERVICE):
            handler = handler._replace(request_deserializer=_lenient(handler.request_deserializer))
        if method in ADMIN_METHODS and not self.auth.is_admin(details.invocation_metadata):
            log.info("%s: PERMISSION_DENIED (no valid admin token)", method)
            return _denied(
                handler,
                f"{method.rsplit('/', 1)[-1]} needs the admin token "
                f"in the {ADMIN_TOKEN_HEADER} metadata",
            )
        for field in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
            behavior = getattr(handler, field)
            if behavior is not None:
                streaming = field != "unary_unary"
                return handler._replace(**{field: _wrap(method, behavior, streaming)})
        return handler


# ----------------------------------------------------------------------------- match service


class MatchServicer(match_pb2_grpc.MatchServiceServicer):  # type: ignore[misc]
    def __init__(self, registry: Registry, auth: Auth) -> None:
        self.registry = registry
        self.auth = auth

    def _match(self, request: Any, name: str) -> Match:
        edge.check_version(request, name)
        return self.registry.get(edge.check_match_id(request.match_id, name))

    async def CreateMatch(
        self, request: match_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.CreateMatchResponse:
        edge.check_version(request, "CreateMatchRequest")
        if not request.HasField("config"):
            raise InvalidArgument("CreateMatchRequest.config is missing")
        config = edge.match_config_from_pb(request.config, self.registry.settings)
        match, tokens = self.registry.create(config, edge.check_new_match_id(request.match_id))
        return match_pb2.CreateMatchResponse(
            protocol_version=edge.PROTOCOL_VERSION,
            match_id=match.match_id,
            seat_tokens=[
                match_pb2.SeatToken(seat=i, name=config.seat_names[i], token=token)
                for i, token in enumerate(tokens)
            ],
        )

    async def GetMatch(
        self, request: match_pb2.GetMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.GetMatchResponse:
        match = self._match(request, "GetMatchRequest")
        return match_pb2.GetMatchResponse(
            protocol_version=edge.PROTOCOL_VERSION, match=edge.match_info_to_pb(match.info())
        )

    async def ListMatches(
        self, request: match_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.ListMatchesResponse:
        edge.check_version(request, "ListMatchesRequest")
        status = None
        if request.status:
            try:
                status = edge.wire.match_status_from_pb(request.status, "status")
            except ValueError as exc:
                raise InvalidArgument(f"ListMatchesRequest.{exc}") from None
        matches, next_token = self.registry.page(status, request.page_size, request.page_token)
        return match_pb2.ListMatchesResponse(
            protocol_version=edge.PROTOCOL_VERSION,
            matches=[edge.match_info_to_pb(m.info(with_results=False)) for m in matches],
            next_page_token=next_token,
        )

    async def WatchMatch(
        self, request: match_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[match_pb2.WatchMatchResponse]:
        match = self._match(request, "WatchMatchRequest")
        watcher = match.watch()
        try:
            while True:
                message = await watcher.queue.get()
                if message is None:
                    if watcher.overflowed:
                        raise Exhausted("the spectator did not keep up with the match")
                    return
                yield edge.watch_message(message)
        finally:
            match.unwatch(watcher)

    async def GetReplay(
        self, request: match_pb2.GetReplayRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.GetReplayResponse:
        match = self._match(request, "GetReplayRequest")
        found = match.replay(request.game_index)
        if found is None:
            raise NotFound(f"game {request.game_index} of match {match.match_id} has not started")
        doc, complete = found
        if not complete and not self.auth.is_admin(context.invocation_metadata()):
            raise PermissionDenied(
                f"game {request.game_index} is not over: its replay needs the admin token"
            )
        return match_pb2.GetReplayResponse(
            protocol_version=edge.PROTOCOL_VERSION,
            match_id=match.match_id,
            game_index=request.game_index,
            replay_json=json.dumps(doc),
            complete=complete,
        )

    async def CancelMatch(
        self, request: match_pb2.CancelMatchRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.CancelMatchResponse:
        match = self._match(request, "CancelMatchRequest")
        if is_over(match.status):
            raise MatchOver(f"match {match.match_id} is already over ({match.status.value})")
        reason = request.reason[: edge.MAX_REASON_CHARS] or "cancelled by an admin"
        match.cancel(reason)
        try:
            await asyncio.wait_for(match.done.wait(), CANCEL_WAIT_S)
        except TimeoutError:
            log.warning("match %s: cancel is taking long", match.match_id)
        return match_pb2.CancelMatchResponse(
            protocol_version=edge.PROTOCOL_VERSION, match=edge.match_info_to_pb(match.info())
        )


# ----------------------------------------------------------------------------- bot service


class BotServicer:
    """``BotService.Play``: one stream per seat and match."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def Play(self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> None:
        token = _seat_token(context.invocation_metadata())
        match, seat = self.registry.resolve(token)
        remaining = context.time_remaining()
        if remaining is not None and remaining < MIN_STREAM_DEADLINE_S:
            raise InvalidArgument(
                f"the Play deadline ({remaining:.3f} s) is too short: it must cover the whole "
                "match (set a generous deadline, or none)"
            )
        stream = match.connect(seat)
        writing = asyncio.Lock()
        reader = asyncio.create_task(self._read(requests, context, writing, match, seat, stream))
        reason = "the stream ended"
        outbox = stream.outbox
        try:
            while True:
                await outbox.wait()
                async with writing:
                    while (item := outbox.take_message()) is not None:
                        await context.write(edge.referee_bytes(item))
                    end = outbox.take_end()
                if end is not None:
                    if end.status != "OK":
                        reason = f"the referee ended the stream: {end.message}"
                        try:
                            await context.abort(grpc.StatusCode[end.status], end.message)
                        except grpc.aio.AbortError:
                            raise
                        except Exception as exc:  # its connection is gone: nobody to tell
                            log.info("match %s seat %d: stream gone before its end was sent: "
                                     "%r", match.match_id, seat, exc)  # fmt: skip
                            return
                    reason = "the match ended"
                    # Give the bot a moment to half-close, so that an answer it was writing
                    # as the match ended does not fail its call.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(reader), END_LINGER_S)
                    return
        except asyncio.CancelledError:
            reason = "the stream broke (cancelled by the bot, deadline expired or connection lost)"
            raise
        except Exception as exc:
            if not isinstance(exc, grpc.aio.AbortError):
                reason = f"the stream failed ({type(exc).__name__})"
                if is_over(match.status):  # its bot stopped with the match (killed at its end)
                    log.info("match %s seat %d: stream cut after the match: %r", match.match_id,
                             seat, exc)  # fmt: skip
                else:
                    log.exception("match %s seat %d: stream failed", match.match_id, seat)
            raise
        finally:
            reader.cancel()
            match.disconnect(seat, stream, reason)

    async def _read(
        self,
        requests: AsyncIterator[Any],
        context: grpc.aio.ServicerContext,
        writing: asyncio.Lock,
        match: Match,
        seat: int,
        stream: SeatStream,
    ) -> None:
        """Read the bot's messages into the match. What an answer makes the match send back on this
        stream (the next request of the turn) is written from here, in the same step, when no
        write is in flight: the writer task's wake-up is a hop that every round trip would pay.
        Meanwhile the outbox is held, so that the writer is not woken for nothing."""
        outbox = stream.outbox
        take = outbox.take_message
        try:
            async for message in requests:
                if stream.closed:
                    continue  # the match is over: drain until the bot half-closes
                outbox.held = True
                try:
                    match.receive(seat, stream, edge.inbound_from_bytes(message))
                    if stream.closing is not None:
                        return
                    if not writing.locked():
                        async with writing:
                            while (item := take()) is not None:
                                await context.write(edge.referee_bytes(item))
                finally:
                    outbox.release()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("match %s seat %d: reading failed: %r", match.match_id, seat, exc)
            return
        if stream.closed:
            return  # the match ended and the bot half-closed, as it should
        # The bot half-closed while its match goes on: end the call now (its status tells the bot
        # why), then leave the seat disconnected. In this order: disconnecting marks the stream
        # closed, after which nothing more is put in its outbox, the end included.
        stream.end("CANCELLED", "the bot half-closed its stream; that counts as a disconnect")
        match.disconnect(
            seat,
            stream,
            "the stream ended before the match did (the bot half-closed or cancelled it, or the "
            "connection broke)",
        )


def bot_service_handler(servicer: BotServicer) -> grpc.GenericRpcHandler:
    handlers = {
        # Raw bytes both ways: answers are read by edge.inbound_from_bytes (so that garbage is a
        # fault, not a failed call) and messages are written already serialized.
        "Play": grpc.stream_stream_rpc_method_handler(servicer.Play)
    }
    return grpc.method_handlers_generic_handler(BOT_SERVICE, handlers)
