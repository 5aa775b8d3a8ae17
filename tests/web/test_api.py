"""The JSON API, route by route, against data written by the league's own modules."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from arboretum import verify_replay
from arboretum_web.demo import DemoData
from arboretum_web.queries import deal_siblings
from arboretum_web.replays import is_complete
from arboretum_worker import fit, ratings, registry, replays, store


def _err(resp: Any, status: int) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert body["error"]["status"] == status
    message: str = body["error"]["message"]
    return message


def test_openapi_lists_every_api_route(client: Any) -> None:
    from arboretum_web import api

    doc = client.get("/api/v1/openapi.json").json()
    assert doc["openapi"].startswith("3.")
    documented = set(doc["paths"])
    for route in api.routes():
        path = "/api/v1" + route.path.replace(":int}", "}")
        assert path in documented, path
        for method in route.methods or ():
            if method != "HEAD":
                assert method.lower() in doc["paths"][path], (path, method)


def test_health(client: Any) -> None:
    assert client.get("/api/v1/health").json() == {"status": "ok"}


def test_leaderboard_matches_stored_ratings(client: Any, r: redis.Redis, demo: DemoData) -> None:
    body = client.get("/api/v1/leaderboard").json()
    assert body["league"] == "demo"
    live = ratings.ratings(r, "demo")
    fitted = {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "demo"))}
    seq = int(r.get(store.Keys.elo_seq("demo")) or 0)
    assert body["results"] == body["fitted_results"] == seq > 0
    assert body["ranked_by"] == "conservative" and body["provisional_half_width"] == 100.0
    rows = body["rows"]
    # one row per bot: every demo version is provisional (few games), so each bot's newest
    assert sorted(row["bot"] for row in rows) == ["oakheart", "random", "sapling"]
    assert [row["rank"] for row in rows] == [1, 2, 3]
    # led by the fitted rating, ranked by its interval's lower end, as `arena leaderboard`
    assert [row["conservative"] for row in rows] == sorted(
        (fitted[row["version"]].lower for row in rows), reverse=True
    )
    skills = {row.version: row.live for row in ratings.standings(r, "demo")}  # on the anchor
    for row in rows:
        vid = row["version"]
        assert row["fitted_rating"] == pytest.approx(fitted[vid].elo)
        assert row["fitted_low"] == pytest.approx(fitted[vid].lower) == row["conservative"]
        assert row["fitted_high"] == pytest.approx(fitted[vid].upper)
        assert row["provisional"] is (fitted[vid].upper - fitted[vid].lower > 200)
        assert row["provisional"] is True
        assert row["live_rating"] == skills[vid].mu
        assert row["live_low"] == skills[vid].lower < row["live_rating"] < row["live_high"]
        assert row["live_high"] == skills[vid].upper
        assert row["elo"] == pytest.approx(live[vid])
        st = ratings.stats(r, "demo", vid)
        assert row["games"] == st.games
        assert row["win_rate"] == pytest.approx(st.win_share / st.games)
        assert row["last_played"] == pytest.approx(st.last_played)
        assert row["latest"] is True and row["counted"] is True
        assert registry.latest(r, row["bot"]) == vid
    # one name per number: no field is plainly "rating"
    assert not {"rating", "rating_low", "rating_high"} & set(rows[0])


def test_leaderboard_all_versions_and_by_league(client: Any, demo: DemoData) -> None:
    body = client.get("/api/v1/leaderboard?all_versions=1").json()
    assert len(body["rows"]) == 4
    old = [row for row in body["rows"] if not row["latest"]]
    assert [(row["bot"], row["version_index"]) for row in old] == [("oakheart", 1)]
    assert [row["counted"] for row in old] == [False]  # the bot's row is its newest here
    assert sum(row["counted"] for row in body["rows"]) == 3
    same = client.get("/api/v1/leagues/demo/leaderboard?all_versions=true").json()
    assert same["rows"] == body["rows"]


def test_leaderboard_bad_parameters(client: Any, demo: DemoData) -> None:
    assert "boolean" in _err(client.get("/api/v1/leaderboard?all_versions=maybe"), 400)
    # an empty value is no boolean either (a page's form may send one: /?all= is the board)
    empty = _err(client.get("/api/v1/leaderboard?all_versions="), 400)
    assert empty == "parameter 'all_versions' is a boolean (1 or 0), not ''"
    assert _err(client.get("/api/v1/matches?limit="), 400) == (
        "parameter 'limit' is an integer, not ''"
    )
    assert client.get("/matches?page=").status_code == 200  # a page's form, as above
    assert client.get("/?all=").status_code == 200
    _err(client.get("/api/v1/leaderboard?league=nope"), 404)
    _err(client.get("/api/v1/leagues/nope/leaderboard"), 404)
    _err(client.get("/api/v1/leagues/a:b/leaderboard"), 404)


def test_leaderboard_without_leagues(client: Any) -> None:
    assert client.get("/api/v1/leaderboard").json()["rows"] == []
    assert client.get("/api/v1/leagues").json() == {"leagues": []}
    assert client.get("/api/v1/bots").json() == {"bots": []}
    assert client.get("/api/v1/matches").json()["total"] == 0


def test_leagues_and_league(client: Any, r: redis.Redis, demo: DemoData) -> None:
    leagues = client.get("/api/v1/leagues").json()["leagues"]
    assert [lg["name"] for lg in leagues] == ["demo"]
    body = client.get("/api/v1/leagues/demo").json()
    total = len(store.league_matches(r, "demo"))
    assert body["progress"]["total"] == total
    assert body["progress"]["counts"]["finished"] == total - 1
    assert body["progress"]["counts"]["running"] == 1
    assert body["status"] == "running"
    assert body["settings"]["players"] == 2
    assert len(body["standings"]) == 4
    _err(client.get("/api/v1/leagues/nope"), 404)


def test_bots_and_bot(client: Any, r: redis.Redis, demo: DemoData) -> None:
    bots = {b["name"]: b for b in client.get("/api/v1/bots").json()["bots"]}
    assert set(bots) == {"oakheart", "random", "sapling"}
    assert bots["oakheart"]["owner"] == "alice"
    assert bots["oakheart"]["versions"] == 2
    assert bots["random"]["owner"] is None
    body = client.get("/api/v1/bots/oakheart").json()
    assert [v["id"] for v in body["versions"]] == registry.versions(r, "oakheart")
    assert body["leagues"] == ["demo"]
    _err(client.get("/api/v1/bots/nobody"), 404)
    _err(client.get("/api/v1/bots/bad%20name"), 404)


def test_bot_history(client: Any, r: redis.Redis, demo: DemoData) -> None:
    body = client.get("/api/v1/bots/oakheart/history").json()
    assert body["league"] == "demo"
    for vid in registry.versions(r, "oakheart"):
        stored = ratings.history(r, "demo", vid)
        assert [e["rating"] for e in body["versions"][vid]] == [e.rating for e in stored]
        assert [e["match"] for e in body["versions"][vid]] == [e.match_id for e in stored]
    _err(client.get("/api/v1/bots/oakheart/history?league=nope"), 404)


def test_bot_head_to_head(client: Any, r: redis.Redis, demo: DemoData) -> None:
    body = client.get("/api/v1/bots/sapling/head-to-head?league=demo").json()
    mine = registry.latest(r, "sapling")
    table = fit.head_to_head(ratings.results_in_order(r, "demo"))
    assert body["rows"]
    for row in body["rows"]:
        assert row["version"] == mine
        rec = table[(mine, row["opponent"])]
        assert (row["wins"], row["losses"], row["draws"]) == (rec.wins, rec.losses, rec.draws)
        assert row["games"] == rec.games
    _err(client.get("/api/v1/bots/nobody/head-to-head"), 404)


def test_matches_filters(client: Any, r: redis.Redis, demo: DemoData) -> None:
    total = len(store.league_matches(r, "demo"))
    body = client.get("/api/v1/matches").json()
    assert body["total"] == total
    finished = client.get("/api/v1/matches?status=finished&limit=200").json()
    assert finished["total"] == total - 1
    assert all(m["status"] == "finished" for m in finished["matches"])
    running = client.get("/api/v1/matches?status=running").json()["matches"]
    assert [m["id"] for m in running] == [demo.running]
    assert running[0]["seed"] is None and running[0]["result"] is None
    rand = set(registry.versions(r, "random"))
    by_bot = client.get("/api/v1/matches?bot=random&limit=200").json()
    assert by_bot["total"] == sum(
        1 for mid in store.league_matches(r, "demo") if rand & set(store.get_match(r, mid).seats)
    )
    page = client.get("/api/v1/matches?offset=2&limit=3").json()
    assert [m["id"] for m in page["matches"]] == store.league_matches(r, "demo")[2:5]
    assert client.get("/api/v1/matches?league=demo").json()["total"] == total


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("status=done", 400),
        ("limit=0", 400),
        ("limit=1000", 400),
        ("offset=-1", 400),
        ("offset=x", 400),
        ("league=nope", 404),
        ("bot=nobody", 404),
    ],
)
def test_matches_bad_parameters(client: Any, demo: DemoData, query: str, status: int) -> None:
    _err(client.get(f"/api/v1/matches?{query}"), status)


def test_match(client: Any, r: redis.Redis, demo: DemoData) -> None:
    # a match whose deal is over: both rotations finished
    revealed = next(
        m
        for m in demo.matches
        if all(
            store.get_match(r, s).status is store.MatchStatus.FINISHED
            for s in deal_siblings(store.get_match(r, m))
        )
    )
    body = client.get(f"/api/v1/matches/{revealed}").json()
    record = store.get_match(r, revealed)
    result = store.get_result(r, revealed)
    assert body["status"] == "finished"
    assert body["seed"] == str(record.seed)
    assert [s["version"] for s in body["seats"]] == list(record.seats)
    assert body["result"]["games"][0]["totals"] == list(result.games[0].totals)
    assert body["games"][0]["replay"] == f"/api/v1/matches/{revealed}/games/0/replay"
    assert body["owned_seats"] == [] and "faults" not in body
    running = client.get(f"/api/v1/matches/{demo.running}").json()
    assert running["status"] == "running" and running["seed"] is None
    _err(client.get("/api/v1/matches/ffffffffffffffffffff"), 404)
    _err(client.get("/api/v1/matches/bad:id"), 404)


def test_replay_of_a_game_over_is_the_stored_document(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    finished = [m for m in demo.matches if client.get(f"/api/v1/matches/{m}").json()["revealed"]]
    assert finished
    mid = finished[0]
    body = client.get(f"/api/v1/matches/{mid}/games/0/replay").json()
    stored = json.loads(replays.get_replay(r, mid, 0))
    view = body.pop("view")
    assert view == {"seat": None, "hidden": False, "revealed": True, "owned_seats": []}
    assert body == stored
    verify_replay(body)
    dl = client.get(f"/api/v1/matches/{mid}/games/0/replay?download=1")
    assert dl.headers["content-disposition"].startswith("attachment;")
    assert json.loads(dl.content)["deck"] == stored["deck"]


def test_replay_of_a_game_in_progress_is_public(client: Any, demo: DemoData) -> None:
    doc = client.get(f"/api/v1/matches/{demo.running}/games/0/replay").json()
    assert doc["view"]["hidden"] is True and doc["view"]["revealed"] is False
    assert doc["seed"] is None and doc["deck"] is None
    assert "result" not in doc and "final_hands" not in doc
    assert all(card is None for hand in doc["hands"] for card in hand)
    stored = demo.replays[demo.running]
    assert doc["deck_size"] == len(stored["deck"]) - sum(len(h) for h in stored["hands"])
    for got, step in zip(doc["steps"], stored["steps"], strict=True):
        assert "digest" in step and "digest" not in got  # a digest covers the hidden cards
        public = {k: v for k, v in step.items() if k != "digest"}
        if step["kind"] == "draw" and step["source"] == "deck":
            assert got == {**public, "card": None}
        else:
            assert got == public
    assert len(json.dumps(doc)) < len(json.dumps(stored))


def test_replay_hidden_while_another_rotation_of_the_deal_runs(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    record = store.get_match(r, demo.running)
    sibling = next(m for m in deal_siblings(record) if m != demo.running)
    assert store.get_match(r, sibling).status is store.MatchStatus.FINISHED
    body = client.get(f"/api/v1/matches/{sibling}").json()
    assert body["revealed"] is False and body["seed"] is None
    doc = client.get(f"/api/v1/matches/{sibling}/games/0/replay").json()
    assert doc["deck"] is None and doc["seed"] is None
    assert all(card is None for hand in doc["hands"] for card in hand)
    assert is_complete(doc)  # the scoring and the final hands of its own game are public
    assert doc["result"] == demo.replays[sibling]["result"]


def test_replay_seat_view(client: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = next(m for m in demo.matches if client.get(f"/api/v1/matches/{m}").json()["revealed"])
    stored = demo.replays[mid]
    doc = client.get(f"/api/v1/matches/{mid}/games/0/replay?seat=1").json()
    assert doc["view"]["seat"] == 1 and doc["view"]["hidden"] is True
    assert doc["hands"][1] == stored["hands"][1]
    assert doc["hands"][0] == [None] * len(stored["hands"][0])
    for got, step in zip(doc["steps"], stored["steps"], strict=True):
        public = {k: v for k, v in step.items() if k != "digest"}  # no digest in a seat's view
        if step["kind"] == "draw" and step["source"] == "deck" and step["seat"] == 0:
            assert got == {**public, "card": None}
        else:
            assert got == public
    # the match's own seats name the bound (its 2 seats, not the 4 a match may have)
    too_far = _err(client.get(f"/api/v1/matches/{mid}/games/0/replay?seat=2"), 400)
    assert too_far == "parameter 'seat' must be from 0 to 1, not 2", too_far
    _err(client.get(f"/api/v1/matches/{mid}/games/0/replay?seat=x"), 400)
    _err(client.get(f"/api/v1/matches/{mid}/games/1/replay"), 404)
    _err(client.get(f"/api/v1/matches/{mid}/games/x/replay"), 404)


def test_replay_seat_view_of_a_game_in_progress_needs_its_author(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    record = store.get_match(r, demo.running)
    owners = [store.get_bot(r, store.get_version(r, v).name).owner for v in record.seats]
    url = f"/api/v1/matches/{demo.running}/games/0/replay"
    _err(client.get(f"{url}?seat=0"), 401)
    seat = next((i for i, o in enumerate(owners) if o), None)
    assert seat is not None
    owner = owners[seat]
    other = next(a for a in demo.tokens if a != owner)
    bad = client.get(
        f"{url}?seat={seat}", headers={"Authorization": f"Bearer {demo.tokens[other]}"}
    )
    _err(bad, 403)
    good = client.get(
        f"{url}?seat={seat}", headers={"Authorization": f"Bearer {demo.tokens[owner]}"}
    ).json()
    stored = demo.replays[demo.running]
    assert good["hands"][seat] == stored["hands"][seat]
    assert all(c is None for s, h in enumerate(good["hands"]) if s != seat for c in h)
    assert good["deck"] is None and good["seed"] is None
    assert good["view"]["owned_seats"] == [i for i, o in enumerate(owners) if o == owner]


def test_faults_are_private(client: Any, r: redis.Redis, demo: DemoData) -> None:
    mid = demo.matches[0]
    doc = json.loads(replays.get_replay(r, mid, 0))
    doc["steps"][0]["fault"] = {"kind": "timeout", "reason": "no answer within 1000 ms"}
    r.hset(store.Keys.replay(mid), "0", json.dumps(doc))
    public = client.get(f"/api/v1/matches/{mid}/games/0/replay").json()
    assert all("fault" not in step for step in public["steps"])
    seat = doc["steps"][0]["seat"]
    vid = store.get_match(r, mid).seats[seat]
    owner = store.get_bot(r, store.get_version(r, vid).name).owner
    if owner is not None:
        mine = client.get(
            f"/api/v1/matches/{mid}/games/0/replay",
            headers={"Authorization": f"Bearer {demo.tokens[owner]}"},
        ).json()
        assert mine["steps"][0]["fault"]["kind"] == "timeout"


def _owned_seat(r: redis.Redis, demo: DemoData, mid: str) -> tuple[int, str] | None:
    record = store.get_match(r, mid)
    for seat, vid in enumerate(record.seats):
        owner = store.get_bot(r, store.get_version(r, vid).name).owner
        if owner:
            return seat, owner
    return None


def test_logs_and_faults_only_for_the_author(client: Any, r: redis.Redis, demo: DemoData) -> None:
    mid, (seat, owner) = next(
        (m, found) for m in demo.matches if (found := _owned_seat(r, demo, m))
    )
    other = next(a for a in demo.tokens if a != owner)
    for kind in ("log", "faults"):
        url = f"/api/v1/matches/{mid}/seats/{seat}/{kind}"
        _err(client.get(url), 401)
        _err(client.get(url, headers={"Authorization": "Bearer arena_wrong"}), 401)
        _err(client.get(url, headers={"Authorization": f"Bearer {demo.tokens[other]}"}), 403)
        ok = client.get(url, headers={"Authorization": f"Bearer {demo.tokens[owner]}"})
        assert ok.status_code == 200, ok.text
        if kind == "log":
            assert ok.json()["log"] == replays.get_bot_log(r, mid, seat).decode()
        else:
            assert ok.json()["counts"] == [0] and ok.json()["faults"] == []
    _err(client.get(f"/api/v1/matches/{mid}/seats/7/log"), 404)
    _err(client.get("/api/v1/matches/nope/seats/0/log"), 404)


def test_a_token_not_sent_is_asked_for_and_a_wrong_one_is_not_valid(
    client: Any, r: redis.Redis
) -> None:
    from arboretum_web import authors

    token = authors.add_author(r, "alice")
    send = "send Authorization: Bearer <token> (arena web author add)"
    not_valid = "the token is not valid: it is unknown, or was rotated or removed"
    wrong = {"Authorization": "Bearer arena_wrong"}
    upload = "/api/v1/bots/mine/versions"
    files = {"file": ("mine.py", b"print(1)\n")}
    assert _err(client.get("/api/v1/me"), 401) == send
    assert _err(client.get("/api/v1/me", headers=wrong), 401) == not_valid
    assert _err(client.post(upload, files=files, headers=wrong), 401) == not_valid
    basic = {"Authorization": "Basic YWxpY2U6eA=="}
    assert _err(client.get("/api/v1/me", headers=basic), 401) == (
        "the Authorization header is not Bearer <token>"
    )
    client.cookies.set("arena_token", "arena_wrong")
    assert _err(client.get("/api/v1/me"), 401) == not_valid
    client.cookies.set("arena_token", token)
    assert client.get("/api/v1/me").json()["author"] == "alice"
    # an upload takes the header only, never the sign-in cookie
    assert _err(client.post(upload, files=files), 401) == send
    resp = client.get("/api/v1/me", headers=wrong)
    assert resp.headers["WWW-Authenticate"] == "Bearer"


def test_me(client: Any, demo: DemoData) -> None:
    _err(client.get("/api/v1/me"), 401)
    body = client.get(
        "/api/v1/me", headers={"Authorization": f"Bearer {demo.tokens['alice']}"}
    ).json()
    assert body == {"author": "alice", "bots": ["oakheart"]}


def test_unknown_api_path_is_json_404(client: Any) -> None:
    _err(client.get("/api/v1/nothing/here"), 404)


def test_leaderboard_follows_new_results_and_fits(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    first = client.get("/api/v1/leaderboard").json()
    assert client.get("/api/v1/leaderboard").json() == first  # nothing new: the same board
    seats = tuple(registry.latest(r, name) for name in ("random", "sapling"))
    result = store.MatchResult(
        "extra", "demo", seats, (store.GameOutcome((2, 1), (3, 30), (0, 0)),)
    )
    ratings.record_result(r, result)
    stale = client.get("/api/v1/leaderboard").json()
    assert stale["results"] == first["results"] + 1
    assert stale["fitted_results"] in (first["results"], first["results"] + 1)
    client.app.state.settings.fits.wait()
    fresh = client.get("/api/v1/leaderboard").json()
    assert fresh["results"] == fresh["fitted_results"] == first["results"] + 1
    fitted = {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "demo"))}
    for row in fresh["rows"]:
        assert row["fitted_rating"] == pytest.approx(fitted[row["version"]].elo)


def test_leaderboard_leaves_out_the_pairs_an_operator_excludes(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    from arboretum_worker.audit import exclusions

    client.get("/api/v1/leaderboard")
    a, b = (registry.latest(r, name) for name in ("random", "sapling"))
    assert a is not None and b is not None
    exclusions.exclude(r, "demo", a, b, by="operator")
    client.get("/api/v1/leaderboard")  # the stored fit is stale: the app makes the new one
    client.app.state.settings.fits.wait()
    rows = client.get("/api/v1/leaderboard?all_versions=1").json()["rows"]
    kept = [res for res in ratings.results_in_order(r, "demo") if not {a, b} <= set(res.seats)]
    fitted = {f.version: f for f in fit.fit_ratings(kept)}
    assert len(kept) < len(ratings.results_in_order(r, "demo"))
    for row in rows:
        assert row["fitted_rating"] == pytest.approx(fitted[row["version"]].elo)
