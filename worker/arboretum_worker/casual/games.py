"""What the web server does with a casual game: start it, read it, and speak for its person.

Every refusal is a :class:`~.records.CasualError` with its HTTP status and a message in words
(none names a hidden card). A decision is validated here with the engine on the seat's pending
view before it is pushed on the game's moves list; the game's relay validates it again on the
referee's own request (:mod:`.relay`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arboretum import DecisionKind, Draw, IllegalDecisionError, NotationError, Play, SeatView
from arboretum.decisions import PLAY
from arboretum.grid import pack
from arboretum.legal import check_draw, check_play
from arboretum_sdk.stdio import lines

from .. import registry, store
from ..keys import Keys, StoreError
from ..queues import QueueKind, queue_name
from ..settings import job_timeout
from . import feed
from .records import (
    CasualError,
    CasualGame,
    CasualSettings,
    Status,
    read_game,
    record_fields,
)

if TYPE_CHECKING:
    import redis

__all__ = [
    "JOB_PREFIX",
    "check_key",
    "explain_illegal",
    "get_game",
    "parse_answer",
    "pending",
    "release",
    "resign",
    "start_game",
    "submit",
]

JOB_PREFIX = "arena-casual-"
RETRY_AFTER_S = 30
YOU = "you"
_RESULT_TTL_S = 24 * 3600
_FAILURE_TTL_S = 7 * 24 * 3600

# KEYS: the address's games, the queued games, the record. ARGV: game id, now, stale before,
# per address, max queued, record JSON, key digest, address digest, the address set's lifetime.
_ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return -1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return -2 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[9])
redis.call('HSET', KEYS[3], 'game', ARGV[6], 'key', ARGV[7], 'address', ARGV[8])
return 1
"""

# KEYS: the record, the moves list. ARGV: decision id, the move's JSON.
_PUSH = """
local pending = redis.call('HGET', KEYS[1], 'pending_id')
if pending ~= ARGV[1] then return -1 end
if redis.call('HGET', KEYS[1], 'answered') == ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'answered', ARGV[1])
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _resolve(r: redis.Redis, opponent: object, author: str | None) -> tuple[str, str]:
    """An opponent (a bot's name: its current version; or a version id) -> (version id, name)."""
    if not isinstance(opponent, str) or not opponent.strip():
        raise CasualError(400, "an opponent is a bot's name or a version id (a string)")
    opponent = opponent.strip()
    try:
        bot = store.get_bot(r, opponent)
        if bot is not None:
            vid = registry.latest(r, opponent)
            if vid is None:
                raise CasualError(400, f"bot {opponent!r} has no version to play")
            return vid, bot.name
        version = store.get_version(r, opponent)
    except StoreError:
        version = None
    if version is None:
        raise CasualError(400, f"no bot or bot version {opponent[:80]!r}")
    if registry.latest(r, version.name) == version.id:
        return version.id, version.name
    owner = store.get_bot(r, version.name)
    if author is None or owner is None or owner.owner != author:
        raise CasualError(
            403,
            f"version {version.id[:12]} is not the current version of bot {version.name!r}: "
            "only the bot's author may play its other versions",
        )
    return version.id, f"{version.name}@{version.id[:8]}"


def start_game(
    r: redis.Redis,
    *,
    opponents: Sequence[str],
    seat: int | None,
    address: str,
    author: str | None,
    settings: CasualSettings,
) -> tuple[CasualGame, str]:
    """Start a casual game of a person against ``opponents`` (1 to 3 bot names or version ids;
    one may come more than once), the person in ``seat`` (0-based; None: a random seat).
    Returns the game and the person's key, which is stored only as its SHA-256."""
    if isinstance(opponents, str) or not isinstance(opponents, Sequence):
        raise CasualError(400, "opponents is a list of 1 to 3 bots")
    if not 1 <= len(opponents) <= 3:
        raise CasualError(
            400, f"a casual game has 1 to 3 opponents (2 to 4 players), not {len(opponents)}"
        )
    players = len(opponents) + 1
    if seat is None:
        seat = secrets.randbelow(players)
    elif type(seat) is not int or not 0 <= seat < players:
        raise CasualError(
            400, f"seat must be 0 to {players - 1} in a game of {players} players, or none"
        )
    resolved = [_resolve(r, o, author) for o in opponents]
    seats: list[str] = []
    names: list[str] = []
    for s in range(players):
        vid, name = ("", YOU) if s == seat else resolved.pop(0)
        seats.append(vid)
        names.append(name)
    game = CasualGame(
        game_id=secrets.token_hex(8),
        players=players,
        person_seat=seat,
        seats=tuple(seats),
        names=tuple(names),
        status=Status.QUEUED,
        created=time.time(),
        author=author,
        per_decision_ms=settings.per_decision_ms,
        bank_ms=settings.bank_ms,
        faults_to_forfeit=settings.faults_to_forfeit,
    )
    key = secrets.token_urlsafe(24)
    timeout = game_timeout(game)
    code = r.register_script(_ADMIT)(
        keys=[
            Keys.casual_address(_digest(address)),
            Keys.CASUAL_QUEUED,
            Keys.casual(game.game_id),
        ],
        args=[
            game.game_id,
            game.created,
            game.created - timeout,
            settings.per_address,
            settings.max_queued,
            record_fields(game)["game"],
            _digest(key),
            _digest(address),
            timeout,
        ],
    )
    if code == -1:
        raise CasualError(
            429,
            f"too many casual games from your address: at most {settings.per_address} queued or "
            "playing at once; finish or resign one first",
            retry_after=RETRY_AFTER_S,
        )
    if code == -2:
        raise CasualError(
            429,
            f"the casual queue is full ({settings.max_queued} games waiting for a free table); "
            "try again in a moment",
            retry_after=RETRY_AFTER_S,
        )
    feed.append(r, game.game_id, {"type": "queued"})
    try:
        _enqueue(r, game, settings, timeout)
    except Exception:
        release(r, game.game_id)
        raise
    return game, key


def game_timeout(game: CasualGame) -> int:
    """The job timeout of a casual game: its one game on the clocks, plus the start-up margin."""
    return job_timeout(game.players, 1, game.per_decision_ms, game.bank_ms)


def _enqueue(r: redis.Redis, game: CasualGame, settings: CasualSettings, timeout: int) -> None:
    from rq import Callback, Queue

    queue = Queue(queue_name(QueueKind.CASUAL, settings.queue), connection=r)
    queue.enqueue(
        "arboretum_worker.casual.job.casual_game",
        game.game_id,
        job_id=JOB_PREFIX + game.game_id,
        job_timeout=timeout,
        on_failure=Callback("arboretum_worker.casual.job.on_casual_failure"),
        result_ttl=_RESULT_TTL_S,
        failure_ttl=_FAILURE_TTL_S,
        description=f"casual game {game.game_id}",
    )


def release(r: redis.Redis, game_id: str, *, queued_only: bool = False) -> None:
    """The game no longer counts against its address's and the queue's limits (``queued_only``:
    only the queue's: it left the queue to be played)."""
    digest = None if queued_only else r.hget(Keys.casual(game_id), "address")
    pipe = r.pipeline(transaction=False)
    if digest is not None:
        pipe.zrem(Keys.casual_address(_text(digest)), game_id)
    pipe.zrem(Keys.CASUAL_QUEUED, game_id)
    pipe.execute()


_NO_SUCH_GAME = "no such casual game (a finished game's page is kept for a while)"


def _is_game_id(game_id: object) -> bool:
    return isinstance(game_id, str) and game_id.isalnum() and len(game_id) <= 64


def get_game(r: redis.Redis, game_id: str) -> CasualGame:
    """The game, or :class:`CasualError` 404."""
    game = read_game(r, game_id) if _is_game_id(game_id) else None
    if game is None:
        raise CasualError(404, _NO_SUCH_GAME)
    return game


def check_key(r: redis.Redis, game: CasualGame, key: str | None) -> None:
    """:class:`CasualError` 403 unless ``key`` is the game's person key (compared in constant
    time, as SHA-256 digests)."""
    _check_key(r.hget(Keys.casual(game.game_id), "key"), key)


def _seat_of(
    r: redis.Redis, game_id: str, key: str | None, *fields: str
) -> tuple[CasualGame, list[Any]]:
    """The game once ``key`` is its person key, and the record's ``fields``, in one round trip:
    404 no such game, 403 wrong key."""
    if not _is_game_id(game_id):
        raise CasualError(404, _NO_SUCH_GAME)
    stored_key, raw_game, *values = r.hmget(Keys.casual(game_id), "key", "game", *fields)
    if raw_game is None:  # no record: no such game, or it expired (its kept summary: over)
        game = get_game(r, game_id)
    else:
        game = CasualGame.from_json(json.loads(_text(raw_game)))
    _check_key(stored_key, key)
    return game, values


def seat_game(r: redis.Redis, game_id: str, key: str | None) -> CasualGame:
    """The game for its person, ``key`` being its person key (one round trip): 404 no such game,
    403 wrong key."""
    return _seat_of(r, game_id, key)[0]


def _check_key(stored: Any, key: str | None) -> None:
    given = _digest(key) if isinstance(key, str) and key else ""
    if stored is None or not hmac.compare_digest(given.encode(), _text(stored).encode()):
        raise CasualError(403, "this is not your seat: the game's key is missing or wrong")


def pending(r: redis.Redis, game_id: str) -> dict[str, Any] | None:
    """The request the person has to answer now (its ``request`` message), or None."""
    raw = r.hget(Keys.casual(game_id), "pending")
    return None if raw is None else json.loads(_text(raw))


_ALIASES = {"source": "draw", "card": "play"}


def parse_answer(answer: object, kind: DecisionKind, discard_required: bool) -> Draw | Play:
    """The decision of an answer in the line protocol's form (``source`` and ``card`` are taken
    for ``draw`` and ``play``); :class:`CasualError` 400 naming what is wrong."""
    if not isinstance(answer, dict):
        raise CasualError(400, "a decision is a JSON object")
    obj = {_ALIASES.get(str(k), str(k)): v for k, v in answer.items()}
    try:
        decision = lines.decision_from_json(obj, kind, discard_required)
    except lines.LineError as exc:
        raise CasualError(400, exc.reason) from None
    return decision  # type: ignore[return-value]


def explain_illegal(view: SeatView, decision: Draw | Play) -> str | None:
    """Why ``decision`` is illegal on ``view`` (the engine's words), or None when it is legal."""
    if not view.my_turn:
        return "it is not your turn"
    try:
        if isinstance(decision, Draw):
            piles = [[c.id for c in pile] for pile in view.discard_piles]
            phase = PLAY if view.kind is DecisionKind.PLAY else 0
            check_draw(phase, decision.source, view.players, [0] * view.deck_size, piles)
        else:
            arb = view.arboretum
            check_play(
                PLAY if view.kind is DecisionKind.PLAY else 0,
                decision,
                [c.id for c in view.hand],
                {pack(c.x, c.y): card.id for c, card in arb.items()},
                {pack(c.x, c.y) for c in arb.legal_cells()},
                view.discard_required,
            )
    except (IllegalDecisionError, NotationError) as exc:
        return str(exc)
    return None if view.is_legal(decision) else "illegal decision"


def submit(r: redis.Redis, game_id: str, key: str | None, answer: dict[str, Any]) -> None:
    """The person's answer (``{"id": N, ...}``, the line protocol's answer) to the pending
    request of game ``game_id``: checked, then pushed for the relay. 404 no such game, 403 wrong
    key, 410 over, 409 not the pending request (a stale page, or not the person's turn), 400
    malformed or illegal.

    The game's record (its key, its current state and the pending request) is read in one round
    trip, the push in another (a decision is a casual game's most frequent request)."""
    game, (raw_pending,) = _seat_of(r, game_id, key, "pending")
    if game.over:
        raise CasualError(410, "the game is over")
    if not isinstance(answer, dict):
        raise CasualError(400, "a decision is a JSON object")
    number = answer.get("id")
    if type(number) is not int:
        raise CasualError(400, 'the decision has no "id" (the number of the request it answers)')
    request = None if raw_pending is None else json.loads(_text(raw_pending))
    if request is None:
        raise CasualError(409, "no decision of yours is pending: it is not your turn")
    if number != request["id"]:
        raise CasualError(
            409,
            f"this page is stale: decision {request['id']} is pending, not {number} "
            "(reload the page)",
        )
    view = lines.view_from_json(request["view"])
    decision = parse_answer(answer, view.kind, bool(request.get("discard_required")))
    why = explain_illegal(view, decision)
    if why is not None:
        raise CasualError(400, why)
    move = {"type": "answer", "answer": {"id": number, **lines.decision_to_json(decision)}}
    pushed = r.register_script(_PUSH)(
        keys=[Keys.casual(game.game_id), Keys.casual_moves(game.game_id)],
        args=[str(number), json.dumps(move, separators=(",", ":"))],
    )
    if pushed == 0:
        raise CasualError(409, f"decision {number} was answered already")
    if pushed != 1:
        raise CasualError(409, f"decision {number} is no longer pending (reload the page)")


def resign(r: redis.Redis, game_id: str, key: str | None) -> None:
    """The person gives up game ``game_id``: their seat forfeits (ranks last) and the bots play
    on. 404 no such game, 403 wrong key, 410 over; resigning twice changes nothing."""
    game, _ = _seat_of(r, game_id, key)
    if game.over:
        raise CasualError(410, "the game is over")
    if r.hsetnx(Keys.casual(game.game_id), "resigned", "1"):
        r.rpush(Keys.casual_moves(game.game_id), json.dumps({"type": "resign"}))
