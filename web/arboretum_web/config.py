"""The web app's settings (:class:`WebSettings`) and the default check of a submitted bot."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from arboretum_worker import registry
from arboretum_worker.casual import CasualSettings

from .queries import FitCache
from .ratelimit import RateLimits

__all__ = ["SubmitCheck", "WebSettings", "default_check"]

SubmitCheck = Callable[[Path], None]


@dataclass
class WebSettings:
    redis_url: str = "redis://localhost:6379/0"
    check: SubmitCheck | None = None
    """The check of a submitted bot (the league's sandbox check when None)."""
    sandbox: str | None = None
    """Sandbox kind for the default check (``$ARENA_SANDBOX`` when None)."""
    secure_cookies: bool = False
    upload_concurrency: int = 2
    """Uploads unpacked and checked at once (the rest wait)."""
    upload_queue: int = 32
    """Uploads that may wait for their turn; past that an upload gets 503."""
    live_delay_turns: int = 0
    """Live games are shown this many turns late (:mod:`.live`)."""
    live_max_viewers: int = 2000
    """Live streams open at once in this process; past that a viewer gets 503."""
    submit_quota: int = field(default_factory=registry.quota_from_env)
    """New versions a bot may get a UTC day (``$ARENA_SUBMIT_QUOTA``, default 5; 0: no limit);
    over it an upload gets 429 with Retry-After."""
    rate_limits: RateLimits = field(default_factory=RateLimits.from_env)
    """Requests an author (or an address) may make per window (``$ARENA_RATE_LIMITS``;
    :mod:`.ratelimit`)."""
    fits: FitCache = field(default_factory=FitCache)
    casual: CasualSettings = field(default_factory=CasualSettings.from_env)
    """Casual games: the clock of the games started here, the limits per address and of the
    queue, how long a finished game is kept (``$ARENA_CASUAL_*``, docs/play.md)."""


def default_check(settings: WebSettings) -> SubmitCheck:
    """The league's own pre-store check: ``check_bot`` inside the sandbox (as ``arena bot
    submit``)."""
    from arboretum_worker.bots import sandbox_check
    from arboretum_worker.settings import WorkerSettings

    worker = WorkerSettings.from_env()
    if settings.sandbox:
        worker = WorkerSettings(sandbox=settings.sandbox)
    return sandbox_check(worker)
