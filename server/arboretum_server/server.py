"""Starting and stopping the referee: the gRPC server, health, reflection, signals.

In-process use, inside a running asyncio loop::

    referee = await start_referee(Settings(listen=("127.0.0.1:0",)))
    ...  # referee.address, referee.admin_token, referee.registry
    await referee.stop()

Match drivers in the referee's process (the local runner, the league worker) go through
:class:`~arboretum_server.runner.MatchRunner`, which starts one of these and drives its matches.

From synchronous code, :class:`RefereeThread` runs one on its own loop in a background thread.
``arena serve`` calls :func:`serve`, which also turns SIGTERM/SIGINT into a drain (see
:meth:`Referee.shutdown`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from arboretum_proto.v1 import match_pb2_grpc
from arboretum_sdk import eventloop

from .config import (
    KEEPALIVE_TIME_MS,
    KEEPALIVE_TIMEOUT_MS,
    MAX_RECEIVE_BYTES,
    MAX_SEND_BYTES,
    MIN_CLIENT_PING_INTERVAL_MS,
    Settings,
)
from .errors import BindError, NotFound, RefereeError, SettingsError
from .registry import Registry
from .service import (
    BOT_SERVICE,
    MATCH_SERVICE,
    Auth,
    BotServicer,
    MatchServicer,
    RefereeInterceptor,
    bot_service_handler,
)

__all__ = ["Referee", "RefereeThread", "check_free", "serve", "start_referee"]

log = logging.getLogger(__name__)

STOP_GRACE_S = 5.0
MAX_UNREQUESTED_TIME_S = 600
"""``grpc.server_max_unrequested_time_in_server`` (seconds): how long gRPC keeps a call that the
server has not picked up yet before it cancels it (default 30 s). The grpc.aio server takes one new
call per event-loop turn, so a referee busy with hundreds of matches can be slower than 30 s to take
a burst of ``Play`` streams; cancelled, those bots would never reach their match."""


class Referee:
    """A running referee. Create it with :func:`start_referee`."""

    def __init__(
        self,
        server: grpc.aio.Server,
        registry: Registry,
        health_servicer: Any,
        addresses: tuple[str, ...],
        admin_token: str,
        admin_token_file: Path | None,
    ) -> None:
        self.server = server
        self.registry = registry
        self.health = health_servicer
        self.addresses = addresses
        self.admin_token = admin_token
        self.admin_token_file = admin_token_file
        self._stopped = False

    @property
    def address(self) -> str:
        """The first listen address, with the real port when port 0 was asked."""
        return self.addresses[0]

    @property
    def settings(self) -> Settings:
        return self.registry.settings

    def report_crash(self, match_id: str, seat: int, reason: str = "") -> None:
        """For a runner that launched a bot process: the process of ``seat`` exited. (A match
        driver in this process uses :class:`~arboretum_server.runner.MatchHandle`.)"""
        match = self.registry.get(match_id)
        if not 0 <= seat < len(match.seats):
            raise NotFound(f"match {match_id} has no seat {seat}")
        match.report_crash(seat, reason)

    def report_restart(self, match_id: str, seat: int) -> None:
        """For a runner that launched a bot process: a fresh process replaces the seat's crashed
        one, so the seat is only disconnected until it connects (its clock runs, no fault)."""
        match = self.registry.get(match_id)
        if not 0 <= seat < len(match.seats):
            raise NotFound(f"match {match_id} has no seat {seat}")
        match.report_restart(seat)

    async def shutdown(self, drain_timeout: float | None = None) -> None:
        """Drain, then stop: health goes NOT_SERVING, no new match is accepted, games in flight
        finish (up to ``drain_timeout``, default the settings') or are stopped with a recorded
        reason, and the server stops."""
        if self._stopped:
            return
        timeout = self.settings.drain_timeout_s if drain_timeout is None else drain_timeout
        log.info("shutting down: health NOT_SERVING, draining for up to %.0f s", timeout)
        self.registry.draining = True
        await self.health.enter_graceful_shutdown()
        await self.registry.drain(timeout)
        await self.stop(STOP_GRACE_S)

    async def stop(self, grace: float | None = STOP_GRACE_S) -> None:
        """Stop now: health NOT_SERVING, live matches cancelled, then ``server.stop(grace)``."""
        if self._stopped:
            return
        self._stopped = True
        self.registry.draining = True
        with contextlib.suppress(Exception):
            await self.health.enter_graceful_shutdown()
        await self.registry.close()
        await self.server.stop(grace)
        log.info("referee stopped")

    async def wait_for_termination(self) -> None:
        await self.server.wait_for_termination()


def _admin_token_file(settings: Settings, token: str) -> Path:
    """Write a generated admin token to its file (mode 0600, created afresh); its path."""
    if settings.admin_token_file is not None:
        path = settings.admin_token_file
    elif settings.replay_dir is not None:
        path = settings.replay_dir / "admin-token"
    else:
        path = Path(tempfile.gettempdir()) / f"arena-admin-token-{os.getpid()}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token + "\n")
    except OSError as exc:
        raise SettingsError(f"cannot write the admin token file {path}: {exc}") from None
    log.info(
        "ARENA_ADMIN_TOKEN is not set: generated an admin token, written to %s (mode 0600)", path
    )
    return path


def check_free(address: str) -> None:
    """Raise :class:`BindError`, saying why, if ``address`` cannot be bound.

    Asked before gRPC binds: gRPC's own failure does not say why, and its C core writes a log
    line of its own to stderr. A probe socket binds as gRPC's listener does (``SO_REUSEADDR``,
    no ``SO_REUSEPORT``); the address is free when one of the host's addresses binds, as gRPC
    listens on those it can bind. Port 0 is left to gRPC, and of a unix socket only its folder
    is checked."""
    if address.startswith("unix:"):
        folder = Path(address.removeprefix("unix:")).parent
        if not folder.is_dir():
            raise BindError(f"cannot listen on {address}: there is no folder {folder}")
        return
    host, _, port = address.rpartition(":")
    if not port.isdigit() or int(port) == 0:
        return
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        found = socket.getaddrinfo(
            host or None, int(port), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise BindError.of(address, exc) from None
    failure: OSError | None = None
    for family, kind, proto, _, sockaddr in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                failure = failure or exc
            else:
                return
    if failure is not None:
        raise BindError.of(address, failure)


def _bind(server: grpc.aio.Server, address: str) -> str:
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if address.startswith("unix:"):
        if port == 0:
            raise BindError(f"cannot listen on {address}")
        return address
    if port == 0:
        raise BindError(f"cannot listen on {address} (is the port in use?)")
    host = address.rpartition(":")[0]
    return f"{host}:{port}"


async def start_referee(settings: Settings, *, admin: bool = True) -> Referee:
    """Start a referee in the running asyncio loop; raises BindError if an address is taken
    (before anything is written: a generated admin token's file only once the addresses are
    bound). ``admin=False``: no admin service (``MatchService``), for a referee that only its
    own process drives, through the match API."""
    for address in settings.listen:
        check_free(address)
    admin_token = settings.admin_token or secrets.token_urlsafe(32)
    registry = Registry(settings)
    auth = Auth(admin_token)
    server = grpc.aio.server(
        interceptors=[RefereeInterceptor(auth)],
        options=[
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
            ("grpc.max_send_message_length", MAX_SEND_BYTES),
            ("grpc.keepalive_time_ms", KEEPALIVE_TIME_MS),
            ("grpc.keepalive_timeout_ms", KEEPALIVE_TIMEOUT_MS),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", MIN_CLIENT_PING_INTERVAL_MS),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.server_max_unrequested_time_in_server", MAX_UNREQUESTED_TIME_S),
        ],
    )
    server.add_generic_rpc_handlers((bot_service_handler(BotServicer(registry)),))
    if admin:
        match_pb2_grpc.add_MatchServiceServicer_to_server(MatchServicer(registry, auth), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    if settings.reflection:
        from grpc_reflection.v1alpha import reflection

        reflection.enable_server_reflection(
            (BOT_SERVICE, MATCH_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
    bound: list[str] = []
    try:
        for address in settings.listen:
            bound.append(_bind(server, address))
        token_file = None if settings.admin_token else _admin_token_file(settings, admin_token)
    except RefereeError:
        await server.stop(None)
        for address in bound:  # leave no socket file behind
            if address.startswith("unix:"):
                with contextlib.suppress(OSError):
                    Path(address.removeprefix("unix:")).unlink()
        raise
    addresses = tuple(bound)
    await server.start()
    for service in ("", BOT_SERVICE, MATCH_SERVICE) if admin else ("", BOT_SERVICE):
        await health_servicer.set(service, health_pb2.HealthCheckResponse.SERVING)
    log.info("referee listening on %s", ", ".join(addresses))
    return Referee(server, registry, health_servicer, addresses, admin_token, token_file)


def serve(settings: Settings, *, ready: Callable[[Referee], None] | None = None) -> int:
    """Run a referee until SIGTERM or SIGINT, then drain and stop. Returns the exit status;
    raises :class:`BindError` or :class:`SettingsError` when the referee cannot start.

    The loop is uvloop's when it is installed, unless ``ARENA_EVENT_LOOP=asyncio`` (see
    :mod:`arboretum_sdk.eventloop`)."""
    return eventloop.run(_serve(settings, ready))


async def _serve(settings: Settings, ready: Callable[[Referee], None] | None) -> int:
    referee = await start_referee(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if ready is not None:
        ready(referee)
    await stop.wait()
    log.info("signal received: draining")
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.remove_signal_handler(sig)
    await referee.shutdown()
    return 0


class RefereeThread:
    """A referee on its own event loop in a background thread, for synchronous callers::

    with RefereeThread(Settings(listen=("127.0.0.1:0",))) as referee:
        ...  # referee.address, referee.admin_token
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.loop = eventloop.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="referee", daemon=True)
        self.referee: Referee | None = None

    def start(self) -> Referee:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(start_referee(self.settings), self.loop)
        try:
            self.referee = future.result(timeout=30)
        except BaseException:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=5)
            raise
        return self.referee

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the referee's loop and return its result."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=30)

    def stop(self, grace: float = 1.0) -> None:
        if self.referee is not None:
            future = asyncio.run_coroutine_threadsafe(self.referee.stop(grace), self.loop)
            future.result(timeout=grace + 30)
            self.referee = None
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.loop.close()

    def __enter__(self) -> Referee:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
