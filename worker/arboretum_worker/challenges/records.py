"""A challenge's records in Redis: the challenge, its matches, the owners' settings.

A challenge is an author's bot version against listed bots (any owner's, or built-in), or two
of the author's own versions: 2 to 4 entrants, one match per seat order (every permutation),
each match the same ``deals`` deals. It is unrated: nothing of it touches a league, a rating or
a leaderboard. Its matches run on the workers as units of the challenges queue
(:mod:`arboretum_worker.units`); :mod:`.jobs` plays them.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from .. import store

if TYPE_CHECKING:
    import redis

__all__ = [
    "BotPrefs",
    "Challenge",
    "ChallengeError",
    "ChallengeMatch",
    "ChallengeStatus",
    "NotYours",
    "bot_prefs",
    "challenge_matches",
    "challenge_visible",
    "get_challenge",
    "list_challenges",
    "match_id",
    "max_deals",
    "set_bot_prefs",
]


class ChallengeError(ValueError):
    """A challenge cannot be made or changed; the message says why, in one line."""


class NotYours(ChallengeError):
    """The author acts on a bot, challenge or test that is not theirs (HTTP 403)."""


class ChallengeStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"
    """Every match ended, and at least one of them failed."""


ENDED = (ChallengeStatus.FINISHED, ChallengeStatus.CANCELLED, ChallengeStatus.FAILED)

DEFAULT_MAX_DEALS = 20


def max_deals() -> int:
    """``ARENA_CHALLENGE_MAX_DEALS``: the most deals a challenge may ask for (default 20)."""
    text = os.environ.get("ARENA_CHALLENGE_MAX_DEALS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else DEFAULT_MAX_DEALS


def match_id(challenge_id: str, index: int) -> str:
    """The id of a challenge's match: its replays and bot logs are stored under it."""
    return f"challenge-{challenge_id}-{int(index)}"


@dataclass(frozen=True)
class Challenge:
    id: str
    author: str
    entrants: tuple[str, ...]
    """Version ids, in the first match's seat order (the author's first)."""
    names: tuple[str, ...]
    """``bot@vid8`` of each entrant."""
    owners: tuple[str, ...]
    """Each entrant's owner ("" for none: a built-in or an operator's bot)."""
    deals: int
    players: int
    seed: int
    public: bool
    """The author's choice; the results are public if every owner's bot allows it too."""
    per_decision_ms: int
    bank_ms: int
    faults_to_forfeit: int
    status: ChallengeStatus
    reason: str
    created: float
    finished: float | None
    matches: int
    done: int
    standings: tuple[dict[str, Any], ...] = field(default=())
    """Per entrant: version, name, games, wins, points, mean_rank (over the ended matches)."""

    def involved(self) -> set[str]:
        return {self.author, *(o for o in self.owners if o)}


@dataclass(frozen=True)
class ChallengeMatch:
    id: str
    index: int
    seats: tuple[str, ...]
    """Version ids, seat 0 first."""
    status: str
    ranks: tuple[tuple[int, ...], ...]
    """Per game, each seat's rank (1 = won; ties share)."""
    totals: tuple[tuple[int, ...], ...]
    failure: str


def _hash(r: redis.Redis, key: str) -> dict[str, str]:
    return {store.as_text(k): store.as_text(v) for k, v in r.hgetall(key).items()}


def challenge_matches(r: redis.Redis, challenge_id: str) -> list[ChallengeMatch]:
    raw = _hash(r, store.Keys.challenge_matches(challenge_id))
    out = []
    for index in sorted(raw, key=int):
        m = json.loads(raw[index])
        out.append(
            ChallengeMatch(
                id=match_id(challenge_id, int(index)),
                index=int(index),
                seats=tuple(m["seats"]),
                status=m["status"],
                ranks=tuple(tuple(g) for g in m.get("ranks", [])),
                totals=tuple(tuple(g) for g in m.get("totals", [])),
                failure=m.get("failure", ""),
            )
        )
    return out


def _standings(
    entrants: tuple[str, ...], names: tuple[str, ...], matches: list[ChallengeMatch]
) -> tuple[dict[str, Any], ...]:
    rows = []
    for vid, name in zip(entrants, names, strict=True):
        games = wins = 0
        points = 0
        rank_sum = 0
        for m in matches:
            if vid not in m.seats:
                continue
            seat = m.seats.index(vid)
            for ranks, totals in zip(m.ranks, m.totals, strict=False):
                games += 1
                wins += ranks[seat] == 1
                rank_sum += ranks[seat]
                points += totals[seat]
        rows.append(
            {
                "version": vid,
                "name": name,
                "games": games,
                "wins": wins,
                "points": points,
                "mean_rank": round(rank_sum / games, 3) if games else None,
            }
        )
    return tuple(rows)


def get_challenge(r: redis.Redis, challenge_id: str) -> Challenge | None:
    try:
        h = _hash(r, store.Keys.challenge(challenge_id))
    except store.StoreError:
        return None
    if not h:
        return None
    entrants = tuple(json.loads(h["entrants"]))
    names = tuple(json.loads(h["names"]))
    matches = challenge_matches(r, challenge_id)
    return Challenge(
        id=h["id"],
        author=h["author"],
        entrants=entrants,
        names=names,
        owners=tuple(json.loads(h["owners"])),
        deals=int(h["deals"]),
        players=int(h["players"]),
        seed=int(h["seed"]),
        public=h.get("public") == "1",
        per_decision_ms=int(h["per_decision_ms"]),
        bank_ms=int(h["bank_ms"]),
        faults_to_forfeit=int(h["faults_to_forfeit"]),
        status=ChallengeStatus(h["status"]),
        reason=h.get("reason", ""),
        created=float(h["created"]),
        finished=float(h["finished"]) if h.get("finished") else None,
        matches=int(h["matches"]),
        done=sum(1 for m in matches if m.status in ("finished", "failed", "cancelled")),
        standings=_standings(entrants, names, matches),
    )


def list_challenges(r: redis.Redis, author: str | None = None, limit: int = 100) -> list[Challenge]:
    """Newest first: ``author``'s (made or involved in), or everyone's."""
    key = store.Keys.author_challenges(author) if author else store.Keys.CHALLENGES
    ids = [store.as_text(c) for c in r.zrevrange(key, 0, max(0, limit - 1))]
    found = (get_challenge(r, c) for c in ids)
    return [c for c in found if c is not None]


# --------------------------------------------------------------------------- owners' settings


@dataclass(frozen=True)
class BotPrefs:
    accept_challenges: bool = True
    public_results: bool = True


def bot_prefs(r: redis.Redis, bot: str) -> BotPrefs:
    h = _hash(r, store.Keys.bot_prefs(bot))
    return BotPrefs(
        accept_challenges=h.get("accept_challenges", "1") == "1",
        public_results=h.get("public_results", "1") == "1",
    )


def set_bot_prefs(
    r: redis.Redis,
    author: str | None,
    bot: str,
    *,
    accept_challenges: bool | None = None,
    public_results: bool | None = None,
) -> BotPrefs:
    """Change a bot's settings; ``author`` must own it (None: the operator)."""
    record = store.get_bot(r, bot)
    if record is None:
        raise ChallengeError(f"no bot named {bot!r}")
    if author is not None and record.owner != author:
        raise NotYours(f"bot {bot!r} is not yours")
    changes = {}
    if accept_challenges is not None:
        changes["accept_challenges"] = "1" if accept_challenges else "0"
    if public_results is not None:
        changes["public_results"] = "1" if public_results else "0"
    if changes:
        r.hset(store.Keys.bot_prefs(bot), mapping=changes)  # type: ignore[arg-type]
    return bot_prefs(r, bot)


def challenge_visible(r: redis.Redis, challenge: Challenge, viewer: str | None) -> bool:
    """Whether ``viewer`` (an author, or None for anyone) may see the challenge's results and
    replays: the authors involved always; anyone when the challenger made it public and no
    other owner's bot keeps its results private."""
    if viewer is not None and viewer in challenge.involved():
        return True
    if not challenge.public:
        return False
    for name, owner in zip(challenge.names, challenge.owners, strict=True):
        private = not bot_prefs(r, name.partition("@")[0]).public_results
        if owner and owner != challenge.author and private:
            return False
    return True


def end_challenge(
    r: redis.Redis, challenge_id: str, status: ChallengeStatus, reason: str = ""
) -> bool:
    """Mark the challenge ended (once). Whether this call ended it."""
    key = store.Keys.challenge(challenge_id)
    with r.pipeline() as pipe:
        while True:
            try:
                pipe.watch(key)
                current = pipe.hget(key, "status")
                if current is None or ChallengeStatus(store.as_text(current)) in ENDED:
                    pipe.reset()
                    return False
                pipe.multi()
                ended = {"status": status.value, "reason": reason, "finished": repr(time.time())}
                pipe.hset(key, mapping=ended)  # type: ignore[arg-type]
                pipe.execute()
                return True
            except Exception as exc:
                if type(exc).__name__ != "WatchError":
                    raise
