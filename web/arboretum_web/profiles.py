"""Authors' pages: a public profile (``/authors/{name}``: bots, versions, ratings in each
league, recent results) and the signed-in dashboard (``/me``: what of mine is queued, running,
finished or faulted, my tests and challenges, my webhook); their JSON under ``/api/v1``; and
the webhook's endpoints (``/api/v1/me/webhook``).

A fault links to its step in the replay viewer (``/matches/{id}/games/{g}#step=N``)."""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arboretum_worker import replays, store, webhooks

from . import authors, queries
from .identity import request_author, required_author
from .resources import redis_of
from .safety import CSRF_FIELD, LazyToken, check_csrf

if TYPE_CHECKING:
    import redis

__all__ = ["api_routes", "author_profile", "dashboard", "page_routes"]

RECENT = 20
MAX_BODY = 16 * 1024
"""The largest body of ``PUT /api/v1/me/webhook``."""
"""Matches shown per list (recent results, each status of the dashboard)."""


def _owned(r: redis.Redis, name: str) -> list[queries.BotSummary]:
    return [s for s in queries.bot_summaries(r) if s.bot.owner == name]


def _exists(r: redis.Redis, name: str, bots: list[queries.BotSummary]) -> bool:
    return bool(bots) or authors.get_author(r, name) is not None


def _ratings(r: redis.Redis, fits: queries.FitCache, bots: set[str]) -> list[dict[str, Any]]:
    """The author's rows on every league's board (each bot's counted version)."""
    out = []
    for lg in store.get_leagues(r):
        if not bots & set(store.version_names(r, lg.settings.bots).values()) and (
            lg.settings.ladder is None
        ):
            continue
        for row in queries.leaderboard(r, lg.name, fits):
            if row.bot in bots:
                out.append(
                    {
                        "league": lg.name,
                        "bot": row.bot,
                        "version": row.version,
                        "rank": row.rank,
                        "rating": round(row.fit.rating if row.fit else row.elo, 1),
                        "conservative": round(row.conservative, 1),
                        "provisional": row.provisional,
                        "games": row.games,
                        "win_rate": round(row.win_rate, 4),
                    }
                )
    return out


def _matches(
    r: redis.Redis, bots: list[str], status: store.MatchStatus | None, limit: int = RECENT
) -> list[store.MatchRecord]:
    found: dict[str, store.MatchRecord] = {}
    for bot in bots:
        for rec in queries.list_matches(r, bot=bot, status=status, limit=limit)[1]:
            found[rec.id] = rec
    when = lambda m: m.finished or m.started or m.created or 0.0  # noqa: E731
    return sorted(found.values(), key=when, reverse=True)[:limit]


def _fault_link(r: redis.Redis, match_id: str, game: int, seat: int) -> str:
    url = f"/matches/{match_id}/games/{game}"
    raw = replays.get_replay(r, match_id, game)
    step = webhooks.fault_step(json.loads(raw), seat) if raw else None
    return url + (f"#step={step}" if step is not None else "")


def _row(
    r: redis.Redis, rec: store.MatchRecord, data: queries.RowData, mine: set[str], faults: bool
) -> dict[str, Any]:
    """A match as the author's pages list it: my seats, their ranks and faults."""
    result = data.results.get(rec.id)
    seats = []
    for seat, vid in enumerate(rec.seats):
        if data.names.get(vid) not in mine:
            continue
        item: dict[str, Any] = {"seat": seat, "label": data.label(vid)}
        if result is not None:
            item["ranks"] = [g.ranks[seat] for g in result.games]
            counts = [g.faults[seat] for g in result.games]
            item["faults"] = sum(counts)
            if faults and item["faults"]:
                game = next(i for i, c in enumerate(counts) if c)
                item["fault_url"] = _fault_link(r, rec.id, game, seat)
        seats.append(item)
    return {
        "id": rec.id,
        "league": rec.league,
        "status": rec.status.value,
        "opponents": [data.label(v) for v in rec.seats if data.names.get(v) not in mine],
        "mine": seats,
        "finished": rec.finished,
        "failure": rec.failure or "" if rec.status is store.MatchStatus.FAILED else "",
        "faulted": any(s.get("faults") for s in seats),
    }


def _rows(r: redis.Redis, records: list[store.MatchRecord], mine: set[str]) -> list[dict[str, Any]]:
    data = queries.row_data(r, records)
    return [_row(r, rec, data, mine, faults=True) for rec in records]


def author_profile(r: redis.Redis, name: str, fits: queries.FitCache) -> dict[str, Any]:
    """The public profile's data (404 for nobody of that name)."""
    store.validate_name("author", name)
    owned = _owned(r, name)
    if not _exists(r, name, owned):
        raise HTTPException(404, f"no author {name!r}")
    names = {s.bot.name for s in owned}
    return {
        "author": name,
        "bots": [
            {
                "name": s.bot.name,
                "created": s.bot.created,
                "versions": [
                    {"index": i, "id": v.id, "created": v.created}
                    for i, v in enumerate(s.versions, 1)
                ],
            }
            for s in owned
        ],
        "ratings": _ratings(r, fits, names),
        "recent": _rows(r, _matches(r, sorted(names), store.MatchStatus.FINISHED), names),
    }


def _contests(r: redis.Redis, author: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The author's challenges and tests, when the worker has them."""
    challenges: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    try:
        ch = importlib.import_module("arboretum_worker.challenges")
        for c in ch.list_challenges(r, author, limit=RECENT):
            challenges.append(
                {
                    "id": c.id,
                    "status": c.status.value,
                    "entrants": list(c.names),
                    "done": c.done,
                    "matches": c.matches,
                    "created": c.created,
                    "reason": c.reason,
                }
            )
    except ImportError:
        pass
    try:
        sprt_authors = importlib.import_module("arboretum_worker.sprt.authors")
        for t in sprt_authors.list_author_tests(r, author)[:RECENT]:
            tests.append(
                {
                    "id": t.id,
                    "status": t.status.value,
                    "new": queries.version_label(r, t.new),
                    "old": queries.version_label(r, t.old),
                    "verdict": t.verdict.value if t.verdict else None,
                }
            )
    except ImportError:
        pass
    return challenges, tests


def dashboard(r: redis.Redis, author: str) -> dict[str, Any]:
    """The signed-in author's dashboard data."""
    owned = _owned(r, author)
    bots = sorted(s.bot.name for s in owned)
    mine = set(bots)
    out: dict[str, Any] = {"author": author, "bots": bots}
    for status in (
        store.MatchStatus.QUEUED,
        store.MatchStatus.RUNNING,
        store.MatchStatus.FINISHED,
        store.MatchStatus.FAILED,
    ):
        out[status.value] = _rows(r, _matches(r, bots, status), mine)
    out["faulted"] = [m for m in out["finished"] if m["faulted"]]
    out["challenges"], out["tests"] = _contests(r, author)
    hook = webhooks.get_webhook(r, author)
    out["webhook"] = {
        "url": hook.url if hook else None,
        "deliveries": webhooks.deliveries(r, author, 10),
    }
    return out


# --------------------------------------------------------------------------- pages


def _render(request: Request, template: str, **context: Any) -> Response:
    context.setdefault("author", request_author(request))
    context["csrf"] = LazyToken(request)
    context["csrf_field"] = CSRF_FIELD
    return request.app.state.templates.TemplateResponse(request, template, context)


async def profile_page(request: Request) -> Response:
    r = redis_of(request)
    data = await run_in_threadpool(
        author_profile, r, request.path_params["name"], request.app.state.settings.fits
    )
    return _render(request, "author.html", profile=data, nav="bots")


async def dashboard_page(request: Request) -> Response:
    author = required_author(request)
    data = await run_in_threadpool(dashboard, redis_of(request), author)
    return _render(request, "dashboard.html", dash=data, nav="me")


async def dashboard_webhook(request: Request) -> Response:
    """The dashboard's webhook form: set it (the page then shows the secret, once) or remove it."""
    author = required_author(request)
    form = await request.form(max_files=0, max_fields=4)
    check_csrf(request, form)
    r = redis_of(request)
    secret = error = None
    if form.get("action") == "remove":
        webhooks.clear_webhook(r, author)
    else:
        try:
            secret = webhooks.set_webhook(r, author, str(form.get("url") or "").strip())
        except webhooks.WebhookError as exc:
            error = str(exc)
    data = await run_in_threadpool(dashboard, r, author)
    page = _render(
        request, "dashboard.html", dash=data, nav="me", webhook_secret=secret, webhook_error=error
    )
    if error:
        page.status_code = 400
    return page


# --------------------------------------------------------------------------- API


async def profile_api(request: Request) -> JSONResponse:
    r = redis_of(request)
    data = await run_in_threadpool(
        author_profile, r, request.path_params["name"], request.app.state.settings.fits
    )
    return JSONResponse(data)


async def dashboard_api(request: Request) -> JSONResponse:
    author = required_author(request, bearer=True)
    return JSONResponse(await run_in_threadpool(dashboard, redis_of(request), author))


async def _small_body(request: Request) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise HTTPException(413, f"the body is over {MAX_BODY} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _url_of(raw: bytes) -> str:
    """The URL of a ``{"url": "..."}`` body (400 for anything else)."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(body, dict) or set(body) != {"url"} or not isinstance(body["url"], str):
        raise HTTPException(400, 'send {"url": "https://..."} and nothing else')
    return str(body["url"])


async def webhook_api(request: Request) -> JSONResponse:
    """``GET`` the author's webhook and latest deliveries, ``PUT {"url"}`` to set it (the
    signing secret is in this answer only), ``DELETE`` to remove it."""
    author = required_author(request, bearer=True)
    r = redis_of(request)
    if request.method == "PUT":
        url = _url_of(await _small_body(request))
        try:
            secret = webhooks.set_webhook(r, author, url)
        except webhooks.WebhookError as exc:
            raise HTTPException(400, str(exc)) from None
        return JSONResponse({"url": url, "secret": secret})
    if request.method == "DELETE":
        if not webhooks.clear_webhook(r, author):
            raise HTTPException(404, "you have no webhook")
        return JSONResponse({"url": None})
    hook = webhooks.get_webhook(r, author)
    return JSONResponse(
        {
            "url": hook.url if hook else None,
            "events": list(webhooks.EVENTS),
            "deliveries": webhooks.deliveries(r, author),
        }
    )


def page_routes() -> list[Route]:
    return [
        Route("/authors/{name}", profile_page),
        Route("/me", dashboard_page),
        Route("/me/webhook", dashboard_webhook, methods=["POST"]),
    ]


def api_routes() -> list[Route]:
    return [
        Route("/authors/{name}", profile_api),
        Route("/me/dashboard", dashboard_api),
        Route("/me/webhook", webhook_api, methods=["GET", "PUT", "DELETE"]),
    ]
