"""The pages of casual games, a person against bots (docs/web.md, "Playing the bots"):

- ``GET /play``: choose 1 to 3 opponents (the current version of every bot on the site; a
  signed-in author also every version of their own bots) and a seat; ``POST /play`` starts the
  game (the site's CSRF field), sets the person's key as the game's cookie and sends the browser
  to its table; past the casual limits, the 429 page with ``Retry-After``;
- ``GET /play/{id}``: the table (``static/play.js`` follows it, ``static/playtable.js`` draws it,
  from the JSON and event stream of :mod:`.play_api`); anyone may open it, only the key's holder
  is seated;
- ``GET /play/{id}/replay``: the finished game in the replay viewer;
- the bot page's "Games against people": the record of the bot against people and its games.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from arboretum_worker import casual, registry, store
from arboretum_worker.keys import StoreError

from . import play_api
from .identity import request_author
from .resources import redis_of
from .safety import CSRF_FIELD, LazyToken, check_csrf

if TYPE_CHECKING:
    import redis

__all__ = ["PEOPLE_GAMES", "people_section", "routes"]

STATIC = Path(__file__).parent / "static"
PEOPLE_GAMES = 20
"""Games against people listed on a bot's page (the newest)."""
MAX_OPPONENTS = 3


@dataclass(frozen=True)
class Choice:
    """An opponent the form offers: the value sent, its label."""

    value: str
    label: str


def _render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    context.setdefault("author", request_author(request))
    context["csrf"] = LazyToken(request)
    context["csrf_field"] = CSRF_FIELD
    return request.app.state.templates.TemplateResponse(
        request, template, context, status_code=status_code
    )


_TITLES = {400: "Bad request", 403: "Forbidden", 404: "Not found", 429: "Too many games"}


def _error_page(
    request: Request, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    """The site's error page (as the app's error handler renders it)."""
    page = _render(
        request,
        "error.html",
        status_code=status,
        status=status,
        title=_TITLES.get(status, "Error"),
        message=message,
    )
    page.headers.update(headers or {})
    return page


def choices(r: redis.Redis, author: str | None) -> tuple[list[Choice], list[Choice]]:
    """(every bot's current version by its name, the signed-in author's own versions)."""
    public: list[Choice] = []
    own: list[Choice] = []
    for name in store.list_bots(r):
        bot = store.get_bot(r, name)
        versions = registry.versions(r, name)
        if bot is None or not versions:
            continue
        public.append(Choice(name, name))
        if author is not None and bot.owner == author:
            for index, vid in enumerate(versions, start=1):
                own.append(Choice(vid, f"{name} v{index} {vid[:8]}"))
    return public, own


def _form_page(
    request: Request,
    status_code: int = 200,
    error: str | None = None,
    chosen: list[str] | None = None,
    seat: str = "random",
) -> Response:
    r = redis_of(request)
    author = request_author(request)
    public, own = choices(r, author)
    if chosen is None:
        wanted = request.query_params.get("bot", "")
        chosen = [wanted] if wanted else []
    chosen = [*chosen, "", "", ""][:MAX_OPPONENTS]
    return _render(
        request,
        "play_new.html",
        status_code=status_code,
        public=public,
        own=own,
        chosen=chosen,
        seat=seat,
        error=error,
        limits=play_api._settings(request),
        nav="play",
    )


async def play_form(request: Request) -> Response:
    """``GET /play`` the form; ``POST /play`` starts the game."""
    if request.method == "GET":
        return await run_in_threadpool(_form_page, request)
    form = await request.form(max_files=0, max_fields=8)
    check_csrf(request, form)
    opponents = [str(v).strip() for v in form.getlist("opponent") if str(v).strip()]
    seat_text = str(form.get("seat") or "random").strip()
    try:
        seat = None if seat_text == "random" else int(seat_text) - 1
        if seat is not None and seat < 0:
            raise ValueError
    except ValueError:
        return await run_in_threadpool(
            _form_page, request, 400, f"the seat is random or a number from 1, not {seat_text!r}"
        )
    players = len(opponents) + 1
    if seat is not None and opponents and seat >= players:
        why = f"a game of {players} players has seats 1 to {players}: seat {seat + 1} is not one"
        return await run_in_threadpool(_form_page, request, 400, why, opponents, seat_text)
    author = await run_in_threadpool(request_author, request)
    r = redis_of(request)
    try:
        game, key = await run_in_threadpool(play_api.start, request, r, opponents, seat, author)
    except (casual.CasualError, StoreError) as exc:
        status = getattr(exc, "status", 400)
        if isinstance(exc, casual.CasualError) and status == 429:
            headers = {"Retry-After": play_api.retry_after(exc)}
            return _error_page(request, 429, str(exc), headers)
        return await run_in_threadpool(_form_page, request, status, str(exc), opponents, seat_text)
    response = RedirectResponse(f"/play/{game.game_id}", status_code=303)
    play_api.set_key_cookie(request, response, game, key)
    return response


def _load(request: Request) -> tuple[Any, Any] | Response:
    r = redis_of(request)
    try:
        return r, casual.get_game(r, request.path_params["game_id"])
    except (casual.CasualError, StoreError) as exc:
        return _error_page(request, getattr(exc, "status", 404), str(exc))


def _seated(r: redis.Redis, request: Request, game: Any) -> bool:
    key, _ = play_api.key_of(request, game.game_id)
    if not key:
        return False
    try:
        casual.check_key(r, game, key)
    except casual.CasualError:
        return False
    return True


PERSON = "a person"
"""The person's seat as anyone but that person sees it named (the game calls it ``you``)."""


def _names(game: Any, seated: bool) -> list[str]:
    """The seats' names as the viewer sees them: ``you`` only for the person playing."""
    return [
        name if seat != game.person_seat or seated else PERSON
        for seat, name in enumerate(game.names)
    ]


def table_page(request: Request) -> Response:
    loaded = _load(request)
    if isinstance(loaded, Response):
        return loaded
    r, game = loaded
    seated = _seated(r, request, game)
    data = {**play_api.game_json(r, game), "names": _names(game, seated)}
    return _render(
        request,
        "play.html",
        game=data,
        seated=seated,
        bots=_seat_bots(r, game),
        play_js=(STATIC / "play.js").is_file(),
        nav="play",
    )


def _seat_bots(r: redis.Redis, game: Any) -> list[str | None]:
    """Per seat, the bot's name for a link to its page (None for the person)."""
    names = store.version_names(r, [v for v in game.seats if v])
    return [names.get(v) if v else None for v in game.seats]


def replay_page(request: Request) -> Response:
    loaded = _load(request)
    if isinstance(loaded, Response):
        return loaded
    r, game = loaded
    try:
        play_api.stored_replay(r, game, request_author(request))
    except casual.CasualError as exc:
        return _error_page(request, exc.status, str(exc))
    seated = _seated(r, request, game)
    return _render(
        request,
        "play_replay.html",
        game={**play_api.game_json(r, game), "names": _names(game, seated)},
        bots=_seat_bots(r, game),
        match={"id": game.game_id},
        # the person who played it opens on their seat's view; anyone else on all of it
        seat=game.person_seat if seated else None,
        replay_src=f"/play/{game.game_id}/replay.json",
        analysis_src=f"/play/{game.game_id}/analysis",
        nav="play",
    )


def people_section(
    r: redis.Redis, versions: list[str], limit: int = PEOPLE_GAMES
) -> dict[str, Any]:
    """A bot's record against people (its wins, a draw half, and its games, over all its
    versions) and its newest games, each with its replay's link."""
    wins, games = 0.0, 0
    found: dict[str, Any] = {}
    for vid in versions:
        w, g = casual.record_for_version(r, vid)
        wins, games = wins + w, games + g
        for game in casual.games_for_version(r, vid, 0, limit):
            found[game.game_id] = game
    newest = sorted(found.values(), key=lambda g: -(g.ended or g.created))[:limit]
    rows = []
    for game in newest:
        person = game.person_seat
        ranks = (game.result or {}).get("ranks") or []
        rows.append(
            {
                "id": game.game_id,
                "ended": game.ended,
                "players": game.players,
                "names": _names(game, seated=False),
                "person_seat": person,
                "person_rank": ranks[person] if person < len(ranks) else None,
                "replay": f"/play/{game.game_id}/replay" if game.replay_id else None,
            }
        )
    return {"wins": wins, "games": games, "rows": rows}


def routes() -> list[Route]:
    return [
        Route("/play", play_form, methods=["GET", "POST"]),
        Route("/play/{game_id}", table_page),
        Route("/play/{game_id}/replay", replay_page),
        *play_api.routes(),
    ]
