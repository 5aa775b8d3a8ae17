"""The person's seat at the referee: a :class:`Relay` bot that speaks for the person through Redis.

The relay is to a person what :class:`arboretum_sdk.stdio.StdioBot` is to a program: a
:class:`~arboretum_sdk.Bot` played by the SDK's own message handling on a seat of the match, so
the clocks, the rules, the fault policy and the hidden information are the referee's own. The
referee runs in the same process (the match job's), so the seat is held there
(``MatchHandle.attach``: :mod:`arboretum_server.inprocess`) and played with
:func:`arboretum_sdk.channel.play_over`: the same serialized messages and answers as the
referee's gRPC stream, with no socket, no HTTP/2 and no event loop of the relay's own between
them (a third less of the work horse's CPU per decision: docs/benchmarks.md, "Casual games
under load"). What the seat receives goes to the game's feed
(:mod:`.feed`, the line protocol's messages); a request also becomes the record's pending request.
Each message and the record's change that goes with it (the pending request set or cleared)
are one round trip to Redis: a pipeline, the record first. The person's answers come from the
game's moves list, pushed by the web after its own checks (:func:`.games.submit`); the relay
checks each again with the engine on the referee's request
(a stale or wrong one is dropped with a ``rejected`` message) and hands the decision to the SDK,
which sends it to the referee as a bot's answer. No answer before the decision's deadline: the
relay sends none, and the referee times the decision out (a fault; the fallback plays). The relay
never decides for the person.

:class:`RelaySeat` is what the match job starts for the person's seat in place of a sandbox (the
same ``kill()``, ``output()`` and ``returncode``): a thread playing the relay on the seat, and a
thread reading the moves list, which also carries out a resignation through the match API
(``MatchHandle.resign``, on the referee's event loop). A table waits minutes for its person, so
the reader blocks for up to ``MOVES_BLOCK_S`` at a time rather than waking every second (50 open
tables woke the work horses, Redis and the caches 50 times a second for nothing:
docs/benchmarks.md, "Casual games under load"); ``kill()`` wakes it at once with a stop marker
of its own on the list, and detaches the seat (the player's thread then ends at once, also when
the match was stopped early).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from arboretum import Decision, SeatView
from arboretum_sdk.bot import Bot
from arboretum_sdk.channel import play_over
from arboretum_sdk.errors import Unanswered
from arboretum_sdk.info import FaultNotice, GameEnd, GameInfo, MatchEnd, MatchInfo
from arboretum_sdk.stdio import lines

from ..keys import Keys
from . import feed
from .games import explain_illegal, parse_answer
from .records import PERSON_NAME, CasualError, clear_pending, set_pending

if TYPE_CHECKING:
    import redis

    from arboretum_server.inprocess import InProcessSeat

__all__ = ["Relay", "RelaySeat"]

log = logging.getLogger(__name__)

_RESIGN = object()
"""In the relay's inbox: the person resigned (the seat forfeited), stop waiting."""
_STOP = object()
"""In the relay's inbox: the job is stopping the seat."""
MOVES_BLOCK_S = 30
"""How long one read of the moves list blocks while nothing is to be retried."""
RESIGN_RETRY_S = 1
"""How often a resignation is retried while the game has not started (and a read retried while
Redis is away)."""


class Relay(Bot):
    """The person's bot: see the module's docstring."""

    name = PERSON_NAME

    def __init__(self, r: redis.Redis, game_id: str, inbox: queue.Queue[Any]) -> None:
        self.r = r
        self.game_id = game_id
        self.inbox = inbox
        self.ended: MatchEnd | None = None
        self._cursor = 0

    def _feed(
        self, message: dict[str, Any], *, pending: dict[str, Any] | None = None, clear: bool = False
    ) -> None:
        """Append ``message`` to the feed, with the record's pending request set to ``pending``
        or cleared (``clear``) first, in one round trip."""
        if pending is None and not clear:
            feed.append(self.r, self.game_id, message)
            return
        pipe = self.r.pipeline(transaction=False)
        if clear:
            clear_pending(pipe, self.game_id)
        if pending is not None:
            set_pending(pipe, self.game_id, pending)
        feed.add(pipe, self.game_id, message)
        pipe.execute()

    def on_match_start(self, info: MatchInfo) -> None:
        self._feed(lines.match_start_message(info))

    def on_game_start(self, info: GameInfo) -> None:
        message = lines.game_start_message(info)
        message.pop("seed", None)  # never the seed before the end
        self._cursor = len(self.events)
        self._feed(message)

    def choose(self, view: SeatView) -> Decision:
        number, clock, game = self.decision_number, self.clock, self.game
        assert clock is not None and game is not None
        request = lines.request_message(number, game.game_index, view, clock)
        request["events"] = feed.events_to_json(self.events[self._cursor :])
        self._cursor = len(self.events)
        self._feed(request, pending=request)
        while True:
            left = clock.deadline - time.monotonic()
            if left <= 0:
                clear_pending(self.r, self.game_id)
                raise Unanswered("the person did not answer in time")
            try:
                item = self.inbox.get(timeout=left)
            except queue.Empty:
                continue
            if item is _RESIGN or item is _STOP:
                clear_pending(self.r, self.game_id)
                raise Unanswered("the person resigned" if item is _RESIGN else "stopping")
            decision = self._check(item, number, view)
            if decision is not None:
                self._feed({"type": "accepted", "id": number}, clear=True)
                return decision

    def _check(self, answer: dict[str, Any], number: int, view: SeatView) -> Decision | None:
        """The answer's decision when it answers ``number`` legally; else None, with a
        ``rejected`` message (the person may answer again)."""
        given = answer.get("id")
        if given != number:
            self._feed(
                {
                    "type": "rejected",
                    "id": given,
                    "reason": f"decision {given} is not pending (decision {number} is)",
                }
            )
            return None
        try:
            decision: Decision = parse_answer(answer, view.kind, view.discard_required)
            why = explain_illegal(view, decision)
        except CasualError as exc:
            why = str(exc)
        if why is None:
            return decision
        self.r.hdel(Keys.casual(self.game_id), "answered")
        self._feed({"type": "rejected", "id": number, "reason": why})
        return None

    def on_fault(self, notice: FaultNotice) -> None:
        self._feed(lines.fault_message(notice), clear=True)

    def on_game_end(self, result: Any, info: GameEnd) -> None:
        message = lines.game_end_message(info)
        message["events"] = feed.events_to_json(self.events[self._cursor :])
        self._cursor = len(self.events)
        self._feed(message, clear=True)

    def on_match_end(self, info: MatchEnd) -> None:
        self.ended = info  # the job writes match_end, with the stored replay's path


Resign = Callable[[], bool]
"""Forfeit the person's seat through the match API; False when no game is in progress yet."""
Attach = Callable[[], "InProcessSeat"]
"""Attach the person's seat through the match API (``MatchHandle.attach``, on the referee's
event loop) and give its channel; raises as the referee does (the match over, say)."""


class RelaySeat:
    """The person's seat as the match job runs it: the relay's client and its moves reader."""

    def __init__(self, r: redis.Redis, game_id: str, attach: Attach, resign: Resign) -> None:
        self.r = r
        self.game_id = game_id
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.relay = Relay(r, game_id, self.inbox)
        self.returncode: int | None = None
        self.error = ""
        self._resign = resign
        self._seat: InProcessSeat | None = None
        self._stop = threading.Event()
        self._stop_marker = json.dumps({"type": "stop", "marker": secrets.token_hex(8)})
        self._client = threading.Thread(
            target=self._play, args=(attach,), name=f"relay-{game_id}", daemon=True
        )
        self._reader = threading.Thread(
            target=self._read_moves, name=f"relay-moves-{game_id}", daemon=True
        )
        self._client.start()
        self._reader.start()

    def _play(self, attach: Attach) -> None:
        try:
            self._seat = seat = attach()
            try:
                if not self._stop.is_set():  # (else killed while attaching: let go at once)
                    play_over(self.relay, seat)
            finally:
                seat.detach()
        except Exception as exc:
            if not self._stop.is_set():
                log.error("casual game %s: the relay's client stopped: %s", self.game_id, exc)
                self.error = f"{type(exc).__name__}: {exc}"
                self.returncode = 1

    def _read_moves(self) -> None:
        """Read the moves list until stopped: answers go to the relay's inbox; a resignation is
        carried out (retried while the game has not started)."""
        key = Keys.casual_moves(self.game_id)
        wanted = resigned = False
        while not self._stop.is_set():
            if wanted and not resigned:
                resigned = self._try_resign()
            block = RESIGN_RETRY_S if wanted and not resigned else MOVES_BLOCK_S
            try:
                item = self.r.blpop([key], timeout=block)
            except Exception as exc:  # Redis away: the clock decides; try again
                log.warning("casual game %s: reading the moves failed: %s", self.game_id, exc)
                self._stop.wait(RESIGN_RETRY_S)
                continue
            if item is None:
                continue
            text = item[1].decode() if isinstance(item[1], bytes) else str(item[1])
            if text == self._stop_marker:
                return
            move = json.loads(text)
            if move.get("type") == "resign":
                wanted = True
            elif move.get("type") == "answer" and isinstance(move.get("answer"), dict):
                self.inbox.put(move["answer"])

    def _try_resign(self) -> bool:
        try:
            done = self._resign()
        except Exception as exc:
            log.warning("casual game %s: resigning failed: %s", self.game_id, exc)
            return False
        if done:
            feed.append(self.r, self.game_id, {"type": "resigned"})
            self.inbox.put(_RESIGN)
        return done

    def kill(self) -> None:
        """Stop both threads: the seat is detached (the player's thread ends with the match, or
        at once when the match was stopped early). The reader is woken by its stop marker; with
        Redis away, its failed read ends it."""
        self._stop.set()
        self.inbox.put(_STOP)
        seat = self._seat
        if seat is not None:
            seat.detach()
        key = Keys.casual_moves(self.game_id)
        try:
            self.r.rpush(key, self._stop_marker)
        except Exception as exc:
            log.warning("casual game %s: waking the moves reader failed: %s", self.game_id, exc)
        self._reader.join(RESIGN_RETRY_S + 5)
        with contextlib.suppress(Exception):  # (read already, unless the reader had ended)
            self.r.lrem(key, 0, self._stop_marker)
        self._client.join(5)

    def output(self) -> str:
        return self.error
