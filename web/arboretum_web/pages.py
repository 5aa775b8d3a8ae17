"""The HTML pages (Jinja2 templates in ``templates/``; plain CSS and JS in ``static/``)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from arboretum_sdk.clitools import plural
from arboretum_worker import replays, store
from arboretum_worker.board import PROVISIONAL_HALF_WIDTH

from . import authors, challengepages, now, playpages, queries, sprt, sprtgames
from .audit import audit_context, exclusion_notes
from .chart import llr_chart, rating_chart
from .config import default_check
from .faults import seat_faults
from .identity import AUTH_COOKIE, request_author
from .ladder import ladder_json
from .outcomes import OUTCOMES, elo_changes, has_outcome, seat_marks
from .resources import (
    bool_param,
    bot_json,
    int_param,
    league_param,
    load_bot,
    load_league,
    load_match,
    match_json,
    owned_seats,
    redis_of,
    require_seat_owner,
    status_param,
)
from .safety import CSRF_FIELD, LazyToken, check_csrf
from .uploads import form_file, read_form, store_upload

if TYPE_CHECKING:
    import redis

__all__ = ["install_filters", "routes"]

PAGE_SIZE = 50


def _when(ts: float | None) -> str:
    if not ts:
        return "-"
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _ago(ts: float | None) -> str:
    if not ts:
        return "never"
    seconds = dt.datetime.now(dt.UTC).timestamp() - ts
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit} ago"
    return "just now"


def _size(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} B"


def install_filters(templates: Jinja2Templates) -> None:
    env = templates.env
    env.filters["when"] = _when
    env.filters["ago"] = _ago
    env.filters["size"] = _size
    env.filters["short"] = lambda vid: (vid or "")[:8]
    env.filters["pct"] = lambda v: f"{100 * v:.0f}%"
    # the pairs left out of a league's fit, for the leaderboard's note
    env.globals["excluded_pairs"] = lambda request, league: exclusion_notes(
        redis_of(request), league
    )
    env.filters["plural"] = plural  # {{ n|plural('match', 'matches') }}: "1 match", "2 matches"


def _render(request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
    templates: Jinja2Templates = request.app.state.templates
    context.setdefault("author", request_author(request))
    context["csrf"] = LazyToken(request)
    context["csrf_field"] = CSRF_FIELD
    return templates.TemplateResponse(request, template, context, status_code=status_code)


def _league_names(r: redis.Redis) -> list[str]:
    return [lg.name for lg in store.get_leagues(r)]


def leaderboard_page(request: Request) -> Response:
    r = redis_of(request)
    name = league_param(request)
    all_versions = bool_param(request, "all", blank_is_false=True)
    board = (
        queries.leaderboard_of(r, name, request.app.state.settings.fits, all_versions=all_versions)
        if name
        else None
    )
    return _render(
        request,
        "leaderboard.html",
        league=name,
        leagues=_league_names(r),
        rows=board.rows if board else [],
        board=board,
        provisional_width=PROVISIONAL_HALF_WIDTH,
        all_versions=all_versions,
        nav="leaderboard",
    )


def bots_page(request: Request) -> Response:
    return _render(request, "bots.html", bots=queries.bot_summaries(redis_of(request)), nav="bots")


def bot_page(request: Request) -> Response:
    r = redis_of(request)
    bot = load_bot(r, request.path_params["name"])
    data = bot_json(r, bot)
    versions = [v["id"] for v in data["versions"]]
    league = request.query_params.get("league")
    if league:
        league = load_league(r, league).name
    else:
        league = data["leagues"][0] if data["leagues"] else None
    history = queries.bot_history(r, league, versions) if league else {}
    index = {v["id"]: v["index"] for v in data["versions"]}
    labels = {vid: f"v{index[vid]} {vid[:8]}" for vid in versions}
    initial = 1500.0
    if league:
        lg = store.get_league(r, league)
        initial = lg.settings.elo.initial if lg else initial
    series = {vid: [e.rating for e in entries] for vid, entries in history.items()}
    h2h = queries.bot_h2h(r, league, versions) if league else []
    mine = request_author(request) is not None and request_author(request) == bot.owner
    uploaded = None
    if mine and request.query_params.get("uploaded") in index:
        vid = request.query_params["uploaded"]
        uploaded = next(v for v in data["versions"] if v["id"] == vid)
        uploaded = {**uploaded, "known": request.query_params.get("known") == "1"}
    return _render(
        request,
        "bot.html",
        bot=data,
        league=league,
        chart=Markup(rating_chart(series, labels, initial=initial)),
        chart_narrow=Markup(rating_chart(series, labels, initial=initial, narrow=True)),
        h2h=h2h,
        labels=labels,
        tests=[t for t in sprt.test_summaries(r) if bot.name in (t["new"]["bot"], t["old"]["bot"])],
        mine=mine,
        uploaded=uploaded,
        people=playpages.people_section(r, versions),
        nav="bots",
    )


def leagues_page(request: Request) -> Response:
    r = redis_of(request)
    leagues = [
        (lg, queries.league_state(r, lg.name, counts_only=True)) for lg in store.get_leagues(r)
    ]
    return _render(request, "leagues.html", leagues=leagues, nav="leagues")


def league_page(request: Request) -> Response:
    r = redis_of(request)
    lg = load_league(r, request.path_params["name"])
    progress = queries.league_state(r, lg.name)
    if lg.settings.ladder is not None:
        data = ladder_json(r, lg, request.app.state.settings.fits)
        return _render(
            request, "ladder.html", league=lg, progress=progress, ladder=data, nav="leagues"
        )
    rows = queries.leaderboard(r, lg.name, request.app.state.settings.fits, all_versions=True)
    return _render(
        request,
        "league.html",
        league=lg,
        progress=progress,
        rows=rows,
        bots=queries.version_labels(r, lg.settings.bots),
        nav="leagues",
    )


def audit_page(request: Request) -> Response:
    """The operator's audit of a league: pairs whose results depart from the fit, and the pairs
    left out of it (:mod:`.audit`)."""
    r = redis_of(request)
    lg = load_league(r, request.path_params["name"])
    return _render(request, "audit.html", league=lg, nav="leagues", **audit_context(r, lg))


def matches_page(request: Request) -> Response:
    r = redis_of(request)
    league = request.query_params.get("league") or None
    if league:
        load_league(r, league)
    bot = request.query_params.get("bot") or None
    if bot:
        load_bot(r, bot)
    status = status_param(request)
    page = int_param(request, "page", 1, 1, blank_is_default=True) or 1
    outcome = request.query_params.get("outcome") or None
    if outcome is not None and (outcome not in OUTCOMES or bot is None):
        raise HTTPException(
            400, f"outcome is one of {', '.join(OUTCOMES)}, with a bot chosen; got {outcome!r}"
        )
    window = (0, MAX_FILTERED) if outcome else ((page - 1) * PAGE_SIZE, PAGE_SIZE)
    total, records = queries.list_matches(
        r, league=league, bot=bot, status=status, offset=window[0], limit=window[1]
    )
    data = queries.row_data(r, records)
    if outcome is not None:
        records = [m for m in records if _has_outcome(request, m, data, bot, outcome)]
        total = len(records)
        records = records[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    rows = [match_json(request, m, brief=True, data=data) for m in records]
    for row, m in zip(rows, records, strict=True):
        row["marks"] = seat_marks(data.results.get(m.id), owned_seats(request, m), len(m.seats))
    pages = max(1, -(-total // PAGE_SIZE))
    if page > pages and total:
        raise HTTPException(404, f"page {page} is past the last page ({pages})")
    return _render(
        request,
        "matches.html",
        rows=rows,
        total=total,
        page=page,
        pages=pages,
        league=league,
        bot=bot,
        outcome=outcome or "",
        outcomes=OUTCOMES,
        status=status.value if status else "",
        leagues=_league_names(r),
        bots=store.list_bots(r),
        statuses=[s.value for s in store.MatchStatus],
        nav="matches",
    )


MAX_FILTERED = 5000
"""The most matches of a bot the outcome filter reads (newest first)."""


def _has_outcome(
    request: Request, m: store.MatchRecord, data: Any, bot: str | None, outcome: str
) -> bool:
    seats = [i for i, vid in enumerate(m.seats) if data.names.get(vid) == bot]
    owned = owned_seats(request, m) if outcome == "faulted" else set()
    return has_outcome(data.results.get(m.id), seats, outcome, owned)


def match_page(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    data = match_json(request, record)
    running = record.status in (store.MatchStatus.QUEUED, store.MatchStatus.RUNNING)
    live_url = f"/api/v1/matches/{record.id}/live" if running else None
    faults = {seat: seat_faults(r, record.id, seat) for seat in data["owned_seats"]}
    result = data["result"]
    elo = elo_changes(r, record, len(result["games"])) if result else None
    return _render(
        request,
        "match.html",
        match=data,
        live_url=live_url,
        faults=faults,
        elo=elo,
        nav="matches",
    )


def replay_page(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    game = request.path_params["game"]
    if replays.get_replay(r, record.id, game) is None:
        raise HTTPException(404, f"match {record.id} has no replay of game {game}")
    seat = int_param(request, "seat", None, 0, len(record.seats) - 1, blank_is_default=True)
    data = match_json(request, record)
    return _render(request, "replay.html", match=data, game=game, seat=seat, nav="matches")


def log_page(request: Request) -> Response:
    r = redis_of(request)
    record = load_match(r, request.path_params["match_id"])
    seat = request.path_params["seat"]
    require_seat_owner(request, record, seat)
    text = replays.get_bot_log(r, record.id, seat).decode("utf-8", errors="replace")
    data = match_json(request, record)
    faults = seat_faults(r, record.id, seat)
    return _render(
        request, "log.html", match=data, seat=seat, log=text, faults=faults, nav="matches"
    )


async def login_page(request: Request) -> Response:
    if request.method == "GET":
        return _render(request, "login.html", error=None, nav="login")
    form = await request.form(max_files=0, max_fields=4)
    check_csrf(request, form)
    token = str(form.get("token") or "").strip()
    author = authors.authenticate(redis_of(request), token)
    if author is None:
        error = "the token is not valid: it is unknown, or was rotated or removed"
        return _render(request, "login.html", status_code=401, error=error, nav="login")
    response = RedirectResponse("/bots", status_code=303)
    response.set_cookie(
        AUTH_COOKIE,
        token,
        httponly=True,
        samesite="strict",
        secure=request.app.state.settings.secure_cookies,
        max_age=30 * 86400,
    )
    return response


async def logout(request: Request) -> Response:
    form = await request.form(max_files=0, max_fields=4)
    check_csrf(request, form)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(AUTH_COOKIE)
    return response


def _owned_bots(r: redis.Redis, author: str) -> list[str]:
    return [n for n in store.list_bots(r) if (b := store.get_bot(r, n)) and b.owner == author]


async def upload_page(request: Request) -> Response:
    """The upload form of a signed-in author (the API's submission, from the browser)."""
    author = request_author(request)
    if author is None:
        raise HTTPException(401, "sign in with your author token to upload a bot")
    r = redis_of(request)
    bots = await run_in_threadpool(_owned_bots, r, author)
    if request.method == "GET":
        chosen = request.query_params.get("name", "")
        return _render(request, "upload.html", bots=bots, name=chosen, error=None, nav="upload")
    form = await read_form(request)
    check_csrf(request, form)
    name = str(form.get("name") or "").strip()
    try:
        try:
            store.validate_name("bot", name)
        except store.StoreError as exc:
            raise HTTPException(400, str(exc)) from None
        filename, data = await form_file(form)
        check = request.app.state.check or default_check(request.app.state.settings)
        result = await store_upload(request, author, name, filename, data, check)
    except HTTPException as exc:
        if exc.status_code == 503:
            raise
        page = _render(
            request,
            "upload.html",
            status_code=exc.status_code,
            bots=bots,
            name=name,
            error=str(exc.detail),
            nav="upload",
        )
        page.headers.update(exc.headers or {})
        return page
    where = f"/bots/{result.bot}?uploaded={result.version}"
    if not result.created:
        where += "&known=1"  # the same files as a version it had: none was added
    return RedirectResponse(where, status_code=303)


def sprt_list_page(request: Request) -> Response:
    return _render(request, "sprts.html", tests=sprt.test_summaries(redis_of(request)), nav="sprt")


def sprt_page(request: Request) -> Response:
    r = redis_of(request)
    data = sprt.test_json(r, sprt.load_test(r, request.path_params["test_id"]), history=True)
    history, lower, upper = data["llr_history"], data["lower_bound"], data["upper_bound"]
    return _render(
        request,
        "sprt.html",
        test=data,
        games=sprtgames.test_games(r, data["id"]),
        chart=Markup(llr_chart(history, lower, upper)),
        chart_narrow=Markup(llr_chart(history, lower, upper, narrow=True)),
        nav="sprt",
    )


def routes() -> list[Route]:
    return [
        Route("/", leaderboard_page),
        Route("/bots", bots_page),
        Route("/bots/{name}", bot_page),
        Route("/leagues", leagues_page),
        Route("/leagues/{name}", league_page),
        Route("/leagues/{name}/audit", audit_page),
        Route("/matches", matches_page),
        Route("/matches/{match_id}", match_page),
        Route("/matches/{match_id}/games/{game:int}", replay_page),
        Route("/matches/{match_id}/seats/{seat:int}/log", log_page),
        Route("/sprt", sprt_list_page),
        Route("/sprt/{test_id}", sprt_page),
        Route("/login", login_page, methods=["GET", "POST"]),
        Route("/upload", upload_page, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        *now.routes(),
        *sprtgames.routes(),
        *challengepages.routes(),
    ]
