"""Challenges' pages: ``/challenges`` (the signed-in author's, else the public ones),
``/challenges/{id}`` (the challenger, entrants and owners, settings, standings, each match's
seat order, status and ranks), each game in the replay viewer at
``/challenges/{id}/matches/{index}/games/{game}`` (which loads the API's
``.../replay``), and the challenger's cancel form.

A page is shown exactly when the API's JSON is (the API's own check,
``contest_api.load_challenge``: the authors involved, or anyone when
:func:`arboretum_worker.challenges.challenge_visible`), with the same 404/401/403 otherwise.
A challenge's matches have no league match record, so their games open here, not at
``/matches/{id}``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arboretum_worker import challenges as ch
from arboretum_worker import replays

from . import authorlog
from .contest_api import (
    REFUSED,
    challenge_json,
    challenge_match,
    load_challenge,
    owned_challenge_seats,
    refusal,
)
from .identity import request_author, required_author
from .resources import redis_of
from .safety import CSRF_FIELD, LazyToken, check_csrf

if TYPE_CHECKING:
    import redis

__all__ = ["challenge_page_data", "routes"]

LISTED = 50
"""Challenges on the list page."""
_OPEN = (ch.ChallengeStatus.QUEUED, ch.ChallengeStatus.RUNNING)


def _render(request: Request, template: str, **context: Any) -> Response:
    context.setdefault("author", request_author(request))
    context["csrf"] = LazyToken(request)
    context["csrf_field"] = CSRF_FIELD
    return request.app.state.templates.TemplateResponse(request, template, context)


def _rank_key(row: dict[str, Any]) -> tuple[bool, float, int]:
    mean = row["mean_rank"]
    return (mean is None, mean or 0.0, -row["points"])


def challenge_page_data(r: redis.Redis, c: ch.Challenge) -> dict[str, Any]:
    """The API's JSON of the challenge, with each seat's bot named and each game's viewer link;
    the standings best first (lowest mean rank, then most points)."""
    data = challenge_json(r, c, full=True)
    label = {b["version"]: b for b in data["bots"]}
    for b in data["bots"]:
        b["bot"] = b["name"].partition("@")[0]
    for m in data["matches"]:
        m["seat_bots"] = [label.get(v, {"name": v[:12], "bot": ""}) for v in m["seats"]]
        base = f"/challenges/{c.id}/matches/{m['index']}/games"
        m["viewers"] = [(g, f"{base}/{g}") for g in m["games"]]
    data["standings"] = sorted(data["standings"], key=_rank_key)
    for s in data["standings"]:
        s["bot"] = s["name"].partition("@")[0]
    return data


def challenge_page(request: Request) -> Response:
    c = load_challenge(request)
    viewer = request_author(request)
    return _render(
        request,
        "challenge.html",
        challenge=challenge_page_data(redis_of(request), c),
        can_cancel=viewer == c.author and c.status in _OPEN,
        nav="me" if viewer in c.involved() else None,
    )


def challenges_page(request: Request) -> Response:
    """The signed-in author's challenges (made or involved in), else the public ones."""
    r = redis_of(request)
    viewer = request_author(request)
    if viewer is not None:
        found = ch.list_challenges(r, viewer, limit=LISTED)
    else:
        found = [c for c in ch.list_challenges(r, limit=LISTED) if ch.challenge_visible(r, c, None)]
    return _render(
        request,
        "challenges.html",
        challenges=[challenge_json(r, c) for c in found],
        mine=viewer is not None,
        nav="me" if viewer else None,
    )


async def cancel_page(request: Request) -> Response:
    """The challenger's cancel form (CSRF-checked); then back to the challenge's page."""
    author = required_author(request)
    form = await request.form(max_files=0, max_fields=2)
    check_csrf(request, form)
    r = redis_of(request)
    challenge_id = request.path_params["challenge_id"]
    if ch.get_challenge(r, challenge_id) is None:
        raise HTTPException(404, f"no challenge {challenge_id!r}")
    try:
        ch.cancel_challenge(r, author, challenge_id)
    except REFUSED as exc:
        raise refusal(exc) from None
    authorlog.record(r, author, "challenge.cancel", challenge_id, 200)
    return RedirectResponse(f"/challenges/{challenge_id}", status_code=303)


def game_page(request: Request) -> Response:
    c, m = challenge_match(request)
    game = request.path_params["game"]
    games = replays.replay_games(redis_of(request), m.id)
    if game not in games:
        raise HTTPException(404, f"challenge {c.id} kept no game {game} of match {m.index}")
    api = f"/api/v1/challenges/{c.id}/matches/{m.index}/games/{game}"
    return _render(
        request,
        "challenge_game.html",
        challenge_id=c.id,
        index=m.index,
        match={"id": m.id},
        game=game,
        games=games,
        seat=None,
        replay_src=f"{api}/replay",
        owned_seats=owned_challenge_seats(c, m, request_author(request)),
        output_base=f"{api}/seats/",
        nav=None,
    )


def routes() -> list[Route]:
    base = "/challenges/{challenge_id}"
    return [
        Route("/challenges", challenges_page),
        Route(base, challenge_page),
        Route(f"{base}/cancel", cancel_page, methods=["POST"]),
        Route(f"{base}/matches/{{index:int}}/games/{{game:int}}", game_page),
    ]
