"""Making and cancelling a challenge: every check before anything is stored, then the
challenge, its matches and one unit per match in the challenger's queue (all or nothing)."""

from __future__ import annotations

import itertools
import json
import secrets
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS

from .. import store
from ..queues import FairSettings, QueueKind, QuotaExceeded, admit
from ..settings import WorkerSettings, job_timeout
from ..units import UnitSpec, cancel_units, submit
from .records import (
    ENDED,
    Challenge,
    ChallengeError,
    ChallengeStatus,
    NotYours,
    bot_prefs,
    end_challenge,
    get_challenge,
    match_id,
    max_deals,
)

if TYPE_CHECKING:
    import redis

__all__ = ["cancel_challenge", "create_challenge", "unit_id"]

JOBS = f"{__package__}.jobs"


def unit_id(challenge_id: str, index: int) -> str:
    """The rq job (and unit) id of a challenge's match."""
    return f"arena-{match_id(challenge_id, index)}"


def _resolve(r: redis.Redis, spec: str, worker_settings: WorkerSettings) -> tuple[str, str, str]:
    """``NAME`` or ``NAME@PREFIX`` -> (version id, bot name, owner); a built-in bot's name is
    registered on first use, as a league does."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    from ..bots import register_builtins, sandbox_check
    from ..league import LeagueError, resolve_version

    version = store.get_version(r, spec) if "@" not in spec and len(spec) == 64 else None
    name = version.name if version else spec.partition("@")[0]
    try:
        store.validate_name("bot", name)
    except store.StoreError as exc:
        raise ChallengeError(str(exc)) from None
    if store.get_bot(r, name) is None:
        if name not in BUILTIN_BOTS:
            raise ChallengeError(f"no bot named {name!r}")
        register_builtins(r, [name], sandbox_check(worker_settings))
    try:
        vid = resolve_version(r, spec)
    except LeagueError as exc:
        raise ChallengeError(str(exc).split(" (submit it")[0]) from None
    bot = store.get_bot(r, name)
    return vid, name, (bot.owner or "") if bot else ""


def create_challenge(
    r: redis.Redis,
    author: str,
    bot: str,
    opponents: Sequence[str],
    *,
    deals: int = 2,
    public: bool = True,
    seed: int | None = None,
    per_decision_ms: int = DEFAULT_PER_DECISION_MS,
    bank_ms: int = DEFAULT_BANK_MS,
    worker_settings: WorkerSettings | None = None,
    fair: FairSettings | None = None,
) -> Challenge:
    """Challenge ``opponents`` with ``author``'s ``bot``; the matches are queued at once.

    Raises :class:`ChallengeError` (an unknown bot, a bad count, a declined challenge, one
    version twice), :class:`NotYours` (``bot`` is another's) or
    :class:`~arboretum_worker.queues.QuotaExceeded`; nothing is stored then."""
    ws = worker_settings or WorkerSettings.from_env()
    players = 1 + len(opponents)
    if not 2 <= players <= 4:
        raise ChallengeError(f"a challenge seats 2 to 4 players, not {players}")
    limit = max_deals()
    if type(deals) is not int or not 1 <= deals <= limit:
        raise ChallengeError(f"deals must be 1 to {limit}, not {deals}")
    own_vid, own_name, own_owner = _resolve(r, bot, ws)
    if own_owner != author:
        raise NotYours(f"bot {own_name!r} is not yours: challenge with one of your own bots")
    entrants = [(own_vid, own_name, own_owner)]
    for spec in opponents:
        vid, name, owner = _resolve(r, spec, ws)
        if owner and owner != author and not bot_prefs(r, name).accept_challenges:
            raise ChallengeError(f"bot {name!r} declines challenges")
        entrants.append((vid, name, owner))
    versions = [e[0] for e in entrants]
    for vid, name, _owner in entrants:
        if versions.count(vid) > 1:
            what = "a challenge to oneself needs two different versions"
            raise ChallengeError(f"{what}: {name}@{vid[:8]} plays itself")
    orders = list(itertools.permutations(range(players)))
    fair = fair or FairSettings.from_env()
    admit(r, author, len(orders), fair)
    challenge_id = secrets.token_hex(6)
    now = time.time()
    names = [f"{name}@{vid[:8]}" for vid, name, _ in entrants]
    owners = [owner for _, _, owner in entrants]
    key = store.Keys.challenge(challenge_id)
    record = {
        "id": challenge_id,
        "author": author,
        "entrants": json.dumps(versions),
        "names": json.dumps(names),
        "owners": json.dumps(owners),
        "deals": deals,
        "players": players,
        "seed": secrets.randbits(63) if seed is None else int(seed),
        "public": "1" if public else "0",
        "per_decision_ms": per_decision_ms,
        "bank_ms": bank_ms,
        "faults_to_forfeit": DEFAULT_FAULTS_TO_FORFEIT,
        "status": ChallengeStatus.QUEUED.value,
        "created": repr(now),
        "matches": len(orders),
    }
    matches = {
        str(i): json.dumps({"seats": [versions[s] for s in order], "status": "queued"})
        for i, order in enumerate(orders)
    }
    pipe = r.pipeline()
    pipe.hset(key, mapping=record)  # type: ignore[arg-type]
    pipe.hset(store.Keys.challenge_matches(challenge_id), mapping=matches)  # type: ignore[arg-type]
    pipe.execute()
    timeout = job_timeout(players, deals, per_decision_ms, bank_ms)
    units = [
        UnitSpec(
            id=unit_id(challenge_id, i),
            func=f"{JOBS}.run_challenge_match",
            args=(challenge_id, i),
            matches=1,
            timeout=timeout,
            description=f"challenge {challenge_id}: match {i}",
            on_failure=f"{JOBS}.on_challenge_failure",
        )
        for i in range(len(orders))
    ]
    try:
        submit(r, author, QueueKind.CHALLENGES, units, ws, fair)
    except QuotaExceeded:
        r.delete(key, store.Keys.challenge_matches(challenge_id))
        raise
    pipe = r.pipeline()
    pipe.zadd(store.Keys.CHALLENGES, {challenge_id: now})
    for who in {author, *(o for o in owners if o)}:
        pipe.zadd(store.Keys.author_challenges(who), {challenge_id: now})
    pipe.execute()
    made = get_challenge(r, challenge_id)
    assert made is not None
    return made


def cancel_challenge(r: redis.Redis, author: str | None, challenge_id: str) -> Challenge:
    """Cancel a challenge: its waiting matches are dropped, its running ones stopped. Only its
    challenger (or the operator: ``author`` None) may; an ended one is left as it is."""
    challenge = get_challenge(r, challenge_id)
    if challenge is None:
        raise ChallengeError(f"no challenge {challenge_id!r}")
    if author is not None and author != challenge.author:
        raise NotYours(f"challenge {challenge_id} is not yours: only its challenger cancels it")
    if challenge.status in ENDED:
        return challenge
    if end_challenge(r, challenge_id, ChallengeStatus.CANCELLED, "cancelled"):
        cancel_units(r, [unit_id(challenge_id, i) for i in range(challenge.matches)])
        from .jobs import notify_end

        notify_end(r, challenge_id)
    after = get_challenge(r, challenge_id)
    assert after is not None
    return after
