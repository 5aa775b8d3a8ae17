"""The registry: live and recent matches by id, and seat tokens to (match, seat).

Tokens are looked up by their SHA-256 (:func:`~arboretum_server.seats.token_key`). A token stays
valid until its match ends; after that it names a finished match (``FAILED_PRECONDITION``) until the
match is dropped from memory (only the ``keep_finished`` most recent finished matches are kept).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections import OrderedDict

from .config import Settings
from .errors import (
    InvalidArgument,
    MatchExists,
    MatchOver,
    NotFound,
    Unauthenticated,
    Unavailable,
)
from .match import Match
from .matchconfig import MatchConfig
from .messages import MatchStatus, is_over
from .record import ReplayStore
from .seats import new_token, token_key

__all__ = ["Registry"]

log = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500


class Registry:
    """Every match the referee knows, newest last."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.store = ReplayStore(settings.replay_dir)
        self._matches: OrderedDict[str, Match] = OrderedDict()
        self._serial: dict[str, int] = {}
        self._next_serial = 0
        self._tokens: dict[bytes, tuple[Match, int]] = {}
        self.draining = False

    # ------------------------------------------------------------------ matches

    def create(self, config: MatchConfig, match_id: str | None = None) -> tuple[Match, list[str]]:
        """A new match, started; ``match_id`` is the id asked for (else the referee picks one)."""
        if self.draining:
            raise Unavailable("the referee is shutting down and accepts no new match")
        live = sum(1 for m in self._matches.values() if not is_over(m.status))
        if live >= self.settings.max_matches:
            raise Unavailable(f"the referee is full ({live} live matches); retry later")
        if match_id is None:
            match_id = "m-" + secrets.token_hex(8)
        elif match_id in self._matches:
            raise MatchExists(f"the referee already has a match {match_id!r}")
        tokens = [new_token() for _ in range(config.players)]
        match = Match(
            match_id,
            config,
            tokens,
            store=self.store,
            max_duration_s=self.settings.max_match_s,
            on_end=self._ended,
        )
        self._matches[match_id] = match
        self._serial[match_id] = self._next_serial
        self._next_serial += 1
        for seat, token in enumerate(tokens):
            self._tokens[token_key(token)] = (match, seat)
        match.start()
        log.info(
            "match %s: created (%d seats, %d games, %s)",
            match_id,
            config.players,
            config.game_count,
            config.time_control,
        )
        return match, tokens

    def get(self, match_id: str) -> Match:
        match = self._matches.get(match_id)
        if match is None:
            raise NotFound(f"no match {match_id!r}")
        return match

    def resolve(self, token: str | None) -> tuple[Match, int]:
        """The match and seat a token names; the match must not be over."""
        if not token:
            raise Unauthenticated("Play needs the seat token in the x-arena-token metadata")
        found = self._tokens.get(token_key(token))
        if found is None:
            raise Unauthenticated("unknown seat token")
        match, seat = found
        if is_over(match.status):
            raise MatchOver(f"match {match.match_id} is over ({match.status.value})")
        return match, seat

    def page(
        self, status: MatchStatus | None, page_size: int, page_token: str
    ) -> tuple[list[Match], str]:
        """Matches, newest first, and the token of the next page ("" on the last page)."""
        size = page_size or DEFAULT_PAGE_SIZE
        if size > MAX_PAGE_SIZE:
            raise InvalidArgument(f"page_size is {page_size} (at most {MAX_PAGE_SIZE})")
        before: int | None = None
        if page_token:
            if not page_token.isdigit() or len(page_token) > 18:
                raise InvalidArgument("page_token is not a token this referee gave")
            before = int(page_token)
        out: list[Match] = []
        for match_id in reversed(self._matches):
            serial = self._serial[match_id]
            if before is not None and serial >= before:
                continue
            match = self._matches[match_id]
            if status is not None and match.status is not status:
                continue
            if len(out) == size:
                return out, str(self._serial[out[-1].match_id])
            out.append(match)
        return out, ""

    def live(self) -> list[Match]:
        return [m for m in self._matches.values() if not is_over(m.status)]

    def _ended(self, match: Match) -> None:
        finished = [m for m in self._matches.values() if is_over(m.status)]
        excess = len(finished) - self.settings.keep_finished
        for old in finished[: max(0, excess)]:
            self._forget(old)

    def _forget(self, match: Match) -> None:
        self._matches.pop(match.match_id, None)
        self._serial.pop(match.match_id, None)
        for session in match.seats:
            self._tokens.pop(token_key(session.token), None)

    # ------------------------------------------------------------------ shutdown

    async def drain(self, timeout: float) -> None:
        """Accept no new match; let games in flight finish (up to ``timeout`` s), then stop."""
        self.draining = True
        live = self.live()
        log.info("draining: %d live matches, up to %.0f s", len(live), timeout)
        for match in live:
            match.stop_after_game("the referee is shutting down (drain)")
        if live:
            _, pending = await asyncio.wait(
                [asyncio.create_task(m.done.wait()) for m in live], timeout=timeout
            )
            for task in pending:
                task.cancel()
        for match in self.live():
            match.cancel(f"the referee is shutting down: drain timeout ({timeout:g} s) expired")
        stragglers = self.live()
        if stragglers:
            await asyncio.wait([asyncio.create_task(m.done.wait()) for m in stragglers], timeout=5)

    async def close(self) -> None:
        for match in self.live():
            match.cancel("the referee stopped")
        live = [m for m in self._matches.values() if not m.done.is_set()]
        if live:
            await asyncio.wait([asyncio.create_task(m.done.wait()) for m in live], timeout=5)
