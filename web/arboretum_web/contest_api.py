"""The JSON API of what an author asks the workers to play (``/api/v1``): challenges, and
sequential tests of two of their own versions (fishtest's tests, within the operator's limits).

A challenge or a test is created, listed, shown and cancelled here; the league's side
(:mod:`arboretum_worker.challenges`, :mod:`arboretum_worker.sprt.authors`) checks and plays it.
Its refusals become one-line JSON errors: another author's bot or challenge 403, an unknown bot
404, a bad setting 400, a limit reached 429 with ``Retry-After``.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arboretum_worker import challenges as ch
from arboretum_worker import replays, store
from arboretum_worker.queues import QuotaExceeded
from arboretum_worker.sprt import authors as tests
from arboretum_worker.sprt import league as sprt_store

from . import authorlog, sprt
from .author_api import by_method, json_body, owned_bot
from .identity import request_author, required_author
from .resources import int_param, load_bot, redis_of
from .stepoutput import output_response

if TYPE_CHECKING:
    import redis

__all__ = [
    "MAX_OPPONENTS",
    "REFUSED",
    "challenge_json",
    "challenge_match",
    "load_challenge",
    "owned_challenge_seats",
    "refusal",
    "routes",
]

MAX_OPPONENTS = 3
"""A challenge seats at most 4 bots: the author's and 3 others."""
_BUILTIN_FILL = "greedy"
"""The built-in bot that fills the seats a challenge's bots leave empty (``players``)."""


def refusal(exc: Exception) -> HTTPException:
    """The HTTP error of a refusal from the league's side."""
    if isinstance(exc, QuotaExceeded):
        return HTTPException(429, str(exc), headers={"Retry-After": str(exc.retry_after)})
    if isinstance(exc, ch.NotYours):
        return HTTPException(403, str(exc))
    text = str(exc)
    if text.startswith("no bot") or "no such" in text or text.startswith("no version"):
        return HTTPException(404, text)
    if "declines" in text:
        return HTTPException(403, text)
    return HTTPException(400, text)


REFUSED = (ch.ChallengeError, tests.TestError, QuotaExceeded, store.StoreError)


def _names(body: dict[str, Any], field: str) -> list[str]:
    value = body.get(field, [])
    if not isinstance(value, list) or not all(
        isinstance(v, str) and 0 < len(v) <= 200 for v in value
    ):
        raise HTTPException(400, f"field {field!r} is a list of bots (NAME or NAME@VERSION)")
    return list(value)


def _int(body: dict[str, Any], field: str, low: int, high: int, default: int | None) -> int | None:
    value = body.get(field, default)
    if value is None:
        return None
    if type(value) is not int or not low <= value <= high:
        raise HTTPException(400, f"field {field!r} is a whole number from {low} to {high}")
    return value


def _num(body: dict[str, Any], field: str, default: float) -> float:
    value = body.get(field, default)
    if type(value) not in (int, float) or not math.isfinite(value):
        raise HTTPException(400, f"field {field!r} is a number")
    return float(value)


def _bool(body: dict[str, Any], field: str, default: bool) -> bool:
    value = body.get(field, default)
    if not isinstance(value, bool):
        raise HTTPException(400, f"field {field!r} is true or false")
    return value


# --------------------------------------------------------------------------- challenges


def challenge_json(r: redis.Redis, c: ch.Challenge, *, full: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": c.id,
        "author": c.author,
        "status": c.status.value,
        "reason": c.reason,
        "bots": [
            {"version": v, "name": n, "owner": o or None}
            for v, n, o in zip(c.entrants, c.names, c.owners, strict=True)
        ],
        "deals": c.deals,
        "players": c.players,
        "public": c.public,
        "created": c.created,
        "finished": c.finished,
        "total": c.matches,
        "done": c.done,
        "standings": [dict(s) for s in c.standings],
        "url": f"/api/v1/challenges/{c.id}",
    }
    if full:
        data["matches"] = [
            {
                "id": m.id,
                "index": m.index,
                "seats": list(m.seats),
                "status": m.status,
                "ranks": [list(g) for g in m.ranks],
                "totals": [list(g) for g in m.totals],
                "failure": m.failure or None,
                "games": replays.replay_games(r, m.id),
            }
            for m in ch.challenge_matches(r, c.id)
        ]
    return data


def _create_challenge(r: redis.Redis, author: str, body: dict[str, Any]) -> dict[str, Any]:
    bot = body.get("bot")
    if not isinstance(bot, str) or not 0 < len(bot) <= 200:
        raise HTTPException(400, "field 'bot' is your bot (NAME or NAME@VERSION)")
    opponents = _names(body, "opponents")
    deals = _int(body, "deals", 1, 1000, 1)
    players = _int(body, "players", 2, 4, None)
    public = _bool(body, "public", True)
    if len(opponents) > MAX_OPPONENTS:
        raise HTTPException(400, f"a challenge seats at most 4 bots: {len(opponents) + 1} named")
    if players is not None:
        if players < len(opponents) + 1:
            raise HTTPException(
                400, f"{players} players cannot seat the {len(opponents) + 1} bots named"
            )
        opponents += [_BUILTIN_FILL] * (players - len(opponents) - 1)
    try:
        c = ch.create_challenge(r, author, bot, opponents, deals=deals or 1, public=public)
    except REFUSED as exc:
        raise refusal(exc) from None
    authorlog.record(r, author, "challenge.create", c.id, 201)
    return challenge_json(r, c, full=True)


async def create_challenge(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    body = await json_body(request, ("bot", "opponents", "deals", "players", "public"))
    data = await run_in_threadpool(_create_challenge, redis_of(request), author, body)
    return JSONResponse(data, status_code=201, headers={"Location": data["url"]})


def list_challenges(request: Request) -> JSONResponse:
    author = required_author(request)
    r = redis_of(request)
    limit = int_param(request, "limit", 50, 1, 200) or 50
    found = ch.list_challenges(r, author, limit=limit)
    return JSONResponse({"author": author, "challenges": [challenge_json(r, c) for c in found]})


def load_challenge(request: Request) -> ch.Challenge:
    r = redis_of(request)
    challenge_id = request.path_params["challenge_id"]
    c = ch.get_challenge(r, challenge_id)
    if c is None:
        raise HTTPException(404, f"no challenge {challenge_id!r}")
    viewer = request_author(request)
    if not ch.challenge_visible(r, c, viewer):
        if viewer is None:
            raise HTTPException(401, "sign in: only the authors involved may see this challenge")
        raise HTTPException(403, "only the authors involved may see this challenge")
    return c


def show_challenge(request: Request) -> JSONResponse:
    c = load_challenge(request)
    return JSONResponse(challenge_json(redis_of(request), c, full=True))


def cancel_challenge(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    r = redis_of(request)
    challenge_id = request.path_params["challenge_id"]
    if ch.get_challenge(r, challenge_id) is None:
        raise HTTPException(404, f"no challenge {challenge_id!r}")
    try:
        c = ch.cancel_challenge(r, author, challenge_id)
    except REFUSED as exc:
        raise refusal(exc) from None
    authorlog.record(r, author, "challenge.cancel", c.id, 200)
    return JSONResponse(challenge_json(r, c, full=True))


def challenge_match(request: Request) -> tuple[ch.Challenge, ch.ChallengeMatch]:
    c = load_challenge(request)
    index = request.path_params["index"]
    for m in ch.challenge_matches(redis_of(request), c.id):
        if m.index == index:
            return c, m
    raise HTTPException(404, f"challenge {c.id} has no match {index}")


def challenge_replay(request: Request) -> JSONResponse:
    _, m = challenge_match(request)
    return _stored_replay(redis_of(request), m.id, request.path_params["game"])


def owned_challenge_seats(c: ch.Challenge, m: ch.ChallengeMatch, author: str | None) -> list[int]:
    """The seats of ``m`` whose bot is ``author``'s."""
    owner = dict(zip(c.entrants, c.owners, strict=True))
    return [seat for seat, vid in enumerate(m.seats) if author and owner.get(vid) == author]


def _challenge_seat(request: Request) -> tuple[ch.ChallengeMatch, int]:
    """The path's match and seat, when the seat's bot is the signed-in author's (else 401, 403,
    or 404 for no such seat)."""
    author = required_author(request)
    c, m = challenge_match(request)
    seat = request.path_params["seat"]
    if not 0 <= seat < len(m.seats):
        raise HTTPException(404, f"match {m.id} has no seat {seat}")
    if seat not in owned_challenge_seats(c, m, author):
        raise HTTPException(403, "only the author of this seat's bot may see its log and output")
    return m, seat


def challenge_log(request: Request) -> JSONResponse:
    m, seat = _challenge_seat(request)
    text = replays.get_bot_log(redis_of(request), m.id, seat).decode("utf-8", errors="replace")
    return JSONResponse({"match": m.id, "seat": seat, "log": text})


def challenge_output(request: Request) -> Response:
    m, seat = _challenge_seat(request)
    return output_response(request, m.id, seat)


def _prefs_json(name: str, prefs: ch.BotPrefs) -> dict[str, Any]:
    return {
        "bot": name,
        "accept_challenges": prefs.accept_challenges,
        "public_results": prefs.public_results,
    }


def bot_prefs(request: Request) -> JSONResponse:
    r = redis_of(request)
    bot = load_bot(r, request.path_params["name"])
    return JSONResponse(_prefs_json(bot.name, ch.bot_prefs(r, bot.name)))


async def set_bot_prefs(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    body = await json_body(request, ("accept_challenges", "public_results"))
    changes = {k: _bool(body, k, True) for k in body}

    def run(r: redis.Redis) -> dict[str, Any]:
        bot = owned_bot(r, author, request.path_params["name"])
        try:
            prefs = ch.set_bot_prefs(r, author, bot.name, **changes)
        except REFUSED as exc:
            raise refusal(exc) from None
        return _prefs_json(bot.name, prefs)

    return JSONResponse(await run_in_threadpool(run, redis_of(request)))


# --------------------------------------------------------------------------- sequential tests


def test_json(
    r: redis.Redis, test: sprt_store.LeagueTest, *, history: bool = False
) -> dict[str, Any]:
    data = sprt.test_json(r, test, history=history)
    data["author"] = test.author or None
    if history:
        data["matches"] = [
            {
                "id": m.id,
                "batch": m.batch,
                "seating": m.seating,
                "seats": list(m.seats),
                "ranks": [list(g) for g in m.ranks],
                "games": replays.replay_games(r, m.id) if m.replays else [],
            }
            for m in tests.sprt_matches(r, test.id)
        ]
    return data


def _create_test(r: redis.Redis, author: str, body: dict[str, Any]) -> dict[str, Any]:
    new, old = body.get("new"), body.get("old")
    for field, value in (("new", new), ("old", old)):
        if not isinstance(value, str) or not 0 < len(value) <= 200:
            raise HTTPException(400, f"field {field!r} is your bot's version (NAME@VERSION)")
    max_pairs = _int(body, "max_pairs", 1, 1_000_000, None)
    if max_pairs is None:
        raise HTTPException(400, "field 'max_pairs' is required: the cap on the test's pairs")
    try:
        test = tests.create_author_test(
            r,
            author,
            str(new),
            str(old),
            elo0=_num(body, "elo0", 0.0),
            elo1=_num(body, "elo1", 10.0),
            alpha=_num(body, "alpha", 0.05),
            beta=_num(body, "beta", 0.05),
            max_pairs=max_pairs,
        )
    except REFUSED as exc:
        raise refusal(exc) from None
    authorlog.record(r, author, "test.create", test.id, 201)
    return test_json(r, test, history=True)


async def create_test(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    body = await json_body(
        request, ("new", "old", "elo0", "elo1", "alpha", "beta", "max_pairs", "batch")
    )
    _int(body, "batch", 1, 1_000_000, None)  # the operator's setting: checked, not used
    data = await run_in_threadpool(_create_test, redis_of(request), author, body)
    url = f"/api/v1/sprt/{data['id']}"
    return JSONResponse(data, status_code=201, headers={"Location": url})


def list_tests(request: Request) -> JSONResponse:
    r = redis_of(request)
    raw = request.query_params.get("mine", "")
    if raw not in ("", "0", "1"):
        raise HTTPException(400, f"parameter 'mine' is 1 or 0, not {raw!r}")
    if raw == "1":
        author = required_author(request)
        found = tests.list_author_tests(r, author)
        return JSONResponse({"tests": [test_json(r, t) for t in found]})
    return JSONResponse({"tests": sprt.test_summaries(r)})


def show_test(request: Request) -> JSONResponse:
    r = redis_of(request)
    return JSONResponse(
        test_json(r, sprt.load_test(r, request.path_params["test_id"]), history=True)
    )


def cancel_test(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    r = redis_of(request)
    test = sprt.load_test(r, request.path_params["test_id"])
    try:
        tests.cancel_author_test(r, author, test.id)
    except REFUSED as exc:
        raise refusal(exc) from None
    authorlog.record(r, author, "test.cancel", test.id, 200)
    return JSONResponse(test_json(r, sprt.load_test(r, test.id), history=True))


def _test_match(request: Request) -> tuple[sprt_store.LeagueTest, tests.TestMatch]:
    r = redis_of(request)
    test = sprt.load_test(r, request.path_params["test_id"])
    match_id = request.path_params["match_id"]
    for m in tests.sprt_matches(r, test.id):
        if m.id == match_id:
            return test, m
    raise HTTPException(404, f"test {test.id} has no match {match_id!r}")


def _stored_replay(r: redis.Redis, match_id: str, game: int) -> JSONResponse:
    raw = replays.get_replay(r, match_id, game)
    if raw is None:
        raise HTTPException(404, f"match {match_id} has no replay of game {game} kept")
    return JSONResponse(json.loads(raw), headers={"Cache-Control": "no-store"})


def test_replay(request: Request) -> JSONResponse:
    _, m = _test_match(request)
    return _stored_replay(redis_of(request), m.id, request.path_params["game"])


def _test_seat(request: Request) -> tuple[tests.TestMatch, int]:
    """The path's match and seat, when the test is the signed-in author's (both its bots are)."""
    author = required_author(request)
    test, m = _test_match(request)
    seat = request.path_params["seat"]
    if not 0 <= seat < len(m.seats):
        raise HTTPException(404, f"match {m.id} has no seat {seat}")
    if test.author != author:
        raise HTTPException(403, "only the test's author may see its bots' logs and output")
    return m, seat


def test_log(request: Request) -> JSONResponse:
    m, seat = _test_seat(request)
    text = replays.get_bot_log(redis_of(request), m.id, seat).decode("utf-8", errors="replace")
    return JSONResponse({"match": m.id, "seat": seat, "log": text})


def test_output(request: Request) -> Response:
    m, seat = _test_seat(request)
    return output_response(request, m.id, seat)


def routes() -> list[Route]:
    base = "/challenges/{challenge_id}"
    return [
        Route(
            "/challenges",
            by_method(GET=list_challenges, POST=create_challenge),
            methods=["GET", "POST"],
        ),
        Route(base, show_challenge),
        Route(f"{base}/cancel", cancel_challenge, methods=["POST"]),
        Route(f"{base}/matches/{{index:int}}/games/{{game:int}}/replay", challenge_replay),
        Route(f"{base}/matches/{{index:int}}/seats/{{seat:int}}/log", challenge_log),
        Route(
            f"{base}/matches/{{index:int}}/games/{{game:int}}/seats/{{seat:int}}/output",
            challenge_output,
        ),
        Route(
            "/bots/{name}/prefs",
            by_method(GET=bot_prefs, PUT=set_bot_prefs),
            methods=["GET", "PUT"],
        ),
        Route("/sprt", by_method(GET=list_tests, POST=create_test), methods=["GET", "POST"]),
        Route("/sprt/{test_id}", show_test),
        Route("/sprt/{test_id}/cancel", cancel_test, methods=["POST"]),
        Route("/sprt/{test_id}/matches/{match_id}/games/{game:int}/replay", test_replay),
        Route("/sprt/{test_id}/matches/{match_id}/seats/{seat:int}/log", test_log),
        Route(
            "/sprt/{test_id}/matches/{match_id}/games/{game:int}/seats/{seat:int}/output",
            test_output,
        ),
    ]
