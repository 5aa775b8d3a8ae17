"""Riding out a Redis outage: the worker's Redis client waits for Redis instead of failing.

redis-py retries a command whose connection failed as the client's ``Retry`` says; its default
gives up after ten attempts (a few seconds), and rq's worker then quits on the error. The league
worker's client (:func:`client`) retries forever instead, with exponential backoff and jitter
(0.1 s doubling up to :data:`BACKOFF_CAP_S`), for every command of the worker, of its work horse
(the match job uses the worker's connection) and of its pubsub thread. So an outage of any length
only pauses them: the command that met it is sent again once Redis answers, and the caller never
sees the error.

It says so once per outage per process: one warning when Redis stops answering (``Redis at URL
is unreachable (the error); retrying until it answers``), and one line when it answers again
(``Redis at URL answers again after 12.3 s``). The work horse keeps quiet (its worker, which
heartbeats every few seconds, reports the same outage).

A command sent again after its connection broke may have run once already (Redis died after
running it, before its reply arrived; with the AOF its effect survived). The league's own writes
are written so that this changes nothing (the result is recorded first-writer-wins, replays are
``HSETNX``, a bot's log is one ``SET``); rq's bookkeeping may count a job twice in a worker's
statistics, or queue a retried job twice (its second run finds the result and does nothing).

:meth:`Outage.give_up_after` bounds the waiting when the worker stops: a stopping worker does
not wait more than a few seconds for Redis to register its end.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from .settings import redact_url

__all__ = ["BACKOFF_CAP_S", "Outage", "OutageRetry", "client"]

log = logging.getLogger("arboretum_worker.outage")

T = TypeVar("T")

BACKOFF_BASE_S = 0.1
BACKOFF_CAP_S = 2.0
"""The longest wait between two attempts: Redis is used again at most this long after it is back."""
CONNECT_TIMEOUT_S = 5.0
"""How long one connection attempt may take (a host that drops packets, not one that refuses)."""


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]


class Outage:
    """What one process knows about the current outage of its Redis (shared by its threads)."""

    def __init__(self, url: str, *, logger: logging.Logger = log) -> None:
        self.url = redact_url(url)
        self.log = logger
        self.owner = os.getpid()
        self.since: float | None = None
        self.count = 0
        """Outages (announced ones) that ended in this process."""
        self.last_seconds: float | None = None
        """How long the last one lasted."""
        self.ended: float | None = None
        """When the last one ended (``time.monotonic()``)."""
        self._deadline: float | None = None
        self._announced = False
        self._lock = threading.Lock()

    @property
    def down(self) -> bool:
        return self.since is not None

    def _level(self, level: int) -> int:
        # The work horse is a fork of its worker: its worker reports the outage.
        return level if os.getpid() == self.owner else logging.DEBUG

    def failed(self, error: BaseException, failures: int = 1) -> bool:
        """A command met ``error`` (its ``failures``-th in a row); False when the caller should
        give up (see give_up_after).

        The outage is announced when a command fails again: one broken connection that opens
        again at once (a pooled one, closed by a server restarted since) is no outage."""
        with self._lock:
            if self.since is None:
                self.since = time.monotonic()
            if not self._announced and failures >= 2:
                self._announced = True
                self.log.log(
                    self._level(logging.WARNING),
                    "Redis at %s is unreachable (%s); retrying until it answers",
                    self.url,
                    _one_line(error),
                )
            return self._deadline is None or time.monotonic() < self._deadline

    def recovered(self) -> None:
        """Redis answered a command (called after each reply; cheap when all is well)."""
        if self.since is None:
            return
        with self._lock:
            if self.since is None:
                return
            seconds = time.monotonic() - self.since
            announced, self._announced = self._announced, False
            self.since = None
            if not announced:
                return
            self.count += 1
            self.last_seconds = seconds
            self.ended = time.monotonic()
            self.log.log(
                self._level(logging.INFO),
                "Redis at %s answers again after %.1f s",
                self.url,
                seconds,
            )

    def give_up_after(self, seconds: float) -> None:
        """From now on, a command waits at most ``seconds`` more for Redis, then fails."""
        self._deadline = time.monotonic() + seconds


class OutageRetry(Retry):
    """A redis-py ``Retry`` that retries forever and reports each failure to an :class:`Outage`.

    redis-py copies a client's ``Retry`` into each of its connections; this one stays shared (its
    copy is itself), so that the process has one view of the outage. The outage ends when Redis
    answers a command (:class:`_Answering`), not when a connection opens: a restarted server
    accepts connections while it loads its AOF, and answers ``LOADING`` until it is done.
    """

    def __init__(self, outage: Outage) -> None:
        super().__init__(
            ExponentialWithJitterBackoff(base=BACKOFF_BASE_S, cap=BACKOFF_CAP_S),
            retries=-1,
            supported_errors=(RedisConnectionError, RedisTimeoutError, socket.timeout),
        )
        self.outage = outage

    def __deepcopy__(self, memo: dict[int, Any]) -> OutageRetry:
        return self

    def __copy__(self) -> OutageRetry:
        return self

    def call_with_retry(
        self,
        do: Callable[[], T],
        fail: Callable[..., Any],
        is_retryable: Callable[[Exception], bool] | None = None,
        with_failure_count: bool = False,
    ) -> T:
        failures = 0
        while True:
            try:
                return do()
            except self._supported_errors as error:
                if is_retryable is not None and not is_retryable(error):
                    raise
                failures += 1
                if with_failure_count:
                    fail(error, failures)
                else:
                    fail(error)
                if not self.outage.failed(error, failures):
                    raise
                time.sleep(self._backoff.compute(failures))


class _Answering:
    """Mixed into the client's connection class: a reply read to a command ends the outage
    (not one read while the connection says hello, which a loading server answers too)."""

    retry: Any
    _greeting = False

    def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        self._greeting = True
        try:
            super().on_connect_check_health(*args, **kwargs)  # type: ignore[misc]
        finally:
            self._greeting = False

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        response = super().read_response(*args, **kwargs)  # type: ignore[misc]
        if not self._greeting and isinstance(self.retry, OutageRetry):
            self.retry.outage.recovered()
        return response


@functools.cache
def _answering(base: type) -> type:
    return type(f"Answering{base.__name__}", (_Answering, base), {})


def client(url: str, outage: Outage | None = None) -> redis.Redis:
    """A client of the Redis at ``url`` whose commands wait out any outage (see the module)."""
    from redis.connection import Connection, parse_url

    outage = outage or Outage(url)
    base = parse_url(url).get("connection_class", Connection)
    return redis.Redis.from_url(
        url,
        retry=OutageRetry(outage),
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        connection_class=_answering(base),
    )


def outage_of(r: redis.Redis) -> Outage | None:
    """The :class:`Outage` of a client made by :func:`client` (None for any other client)."""
    retry = r.connection_pool.connection_kwargs.get("retry")
    return retry.outage if isinstance(retry, OutageRetry) else None


def without_retry(r: redis.Redis) -> redis.Redis:
    """A client of the same Redis whose commands fail at once when it is unreachable."""
    from redis.backoff import NoBackoff

    pool = r.connection_pool
    kwargs = dict(pool.connection_kwargs)
    kwargs["retry"] = Retry(NoBackoff(), 0)
    return redis.Redis(
        connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs)
    )
