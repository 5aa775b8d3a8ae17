"""Challenges' pages through the real app: a challenge's page (standings, matches, each game in
the replay viewer) shown exactly when its JSON is, refused as the API refuses otherwise; the
challenger's cancel form; the list of mine or of the public ones.

A challenge's matches are played here in-process by the rules engine (real games, the built-in
greedy bot in every seat) and recorded through the worker's own challenge records; the workers'
end-to-end runs are tests/integration/test_author_work.py's."""

from __future__ import annotations

import json
import re

import redis
from starlette.testclient import TestClient

from arboretum import GameState, ReplayRecorder, derive_game_seed
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_web import authorlog, authors
from arboretum_web.demo import DemoData
from arboretum_worker import challenges, replays, store
from arboretum_worker.challenges import jobs


def play_challenge(r: redis.Redis, challenge: challenges.Challenge) -> None:
    """Play every match of the challenge and record it as its worker job does."""
    names = dict(zip(challenge.entrants, challenge.names, strict=True))
    for m in challenges.challenge_matches(r, challenge.id):
        ranks, totals = [], []
        for game in range(challenge.deals):
            state = GameState.new(challenge.players, derive_game_seed(challenge.seed, game))
            seats = [names[v] for v in m.seats]
            recorder = ReplayRecorder(state, match_id=m.id, seats=seats, game_index=game)
            bot = GreedyBot()
            while not state.is_over:
                recorder.apply(bot.choose(state.view(state.current_seat)), ms=1.0)
            replays.save_replay(r, m.id, game, json.dumps(recorder.to_json()))
            result = state.result()
            ranks.append(list(result.ranks))
            totals.append(list(result.totals))
        jobs._set_match(r, challenge.id, m.index, status="finished", ranks=ranks, totals=totals)
    jobs._end_if_done(r, challenge.id)


def _as(client: TestClient, token: str | None) -> TestClient:
    client.cookies.clear()
    if token is not None:
        client.cookies.set("arena_token", token)
    return client


def test_the_involved_authors_see_standings_and_replays_others_are_refused_as_by_the_api(
    client: TestClient, r: redis.Redis, demo: DemoData
) -> None:
    made = challenges.create_challenge(
        r, "alice", "oakheart", ["sapling"], deals=2, public=False, seed=5
    )
    play_challenge(r, made)
    played = challenges.get_challenge(r, made.id)
    assert played is not None and played.status.value == "finished"
    url = f"/challenges/{made.id}"

    for token in (demo.tokens["alice"], demo.tokens["bob"]):  # the challenger, the owner
        page = _as(client, token).get(url)
        assert page.status_code == 200, page.text
        assert 'class="board stack" id="challenge-standings"' in page.text
        assert 'href="/authors/alice"' in page.text and 'href="/authors/bob"' in page.text
    standings = re.search(r'id="challenge-standings".*?<tbody>(.*?)</tbody>', page.text, re.S)
    assert standings is not None
    rows = re.findall(r"<tr>(.*?)</tr>", standings.group(1), re.S)
    assert len(rows) == 2
    best = min(played.standings, key=lambda s: (s["mean_rank"], -s["points"]))
    cells = re.findall(r'<td class="num">([^<]*)</td>', rows[0])
    assert cells == [str(best["games"]), str(best["wins"]), str(best["points"]),
                     f"{best['mean_rank']:.2f}"]  # fmt: skip
    assert best["games"] == 4  # 2 seat orders x 2 deals
    assert "cancel-form" not in page.text  # an ended challenge is not cancelled

    # each game opens in the viewer, which loads the API's replay
    viewer = f"{url}/matches/1/games/1"
    assert f'href="{viewer}"' in page.text
    shown = client.get(viewer)
    assert shown.status_code == 200, shown.text
    src = f"/api/v1/challenges/{made.id}/matches/1/games/1/replay"
    assert f'data-src="{src}"' in shown.text
    assert client.get(src).json()["match_id"] == f"challenge-{made.id}-1"
    assert client.get(f"{url}/matches/1/games/2").status_code == 404
    assert client.get(f"{url}/matches/9/games/0").status_code == 404

    # not involved, or not signed in: the API's answers, on the page and the viewer alike
    carol = authors.add_author(r, "carol")
    for token, status in ((carol, 403), (None, 401)):
        for path in (url, viewer):
            _as(client, token)
            api = client.get(f"/api/v1/challenges/{made.id}")
            got = client.get(path)
            assert got.status_code == api.status_code == status, path
            assert api.json()["error"]["message"] in got.text
            assert "sapling" not in got.text and "standings" not in got.text
    assert _as(client, carol).get("/challenges/nosuch").status_code == 404

    # public and every owner allowing it: anyone sees it
    r.hset(store.Keys.challenge(made.id), "public", "1")
    assert _as(client, None).get(url).status_code == 200


def test_the_challenger_cancels_with_the_form_and_nobody_else(
    client: TestClient, r: redis.Redis, demo: DemoData
) -> None:
    made = challenges.create_challenge(r, "alice", "oakheart", ["sapling"], deals=1, seed=3)
    url = f"/challenges/{made.id}"
    bob_page = _as(client, demo.tokens["bob"]).get(url)
    assert bob_page.status_code == 200 and "cancel-form" not in bob_page.text
    csrf = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', bob_page.text)
    assert csrf is not None
    refused = client.post(f"{url}/cancel", data={"csrf": csrf.group(1)})
    assert refused.status_code == 403 and "not yours" in refused.text
    assert challenges.get_challenge(r, made.id).status.value == "queued"  # type: ignore[union-attr]

    page = _as(client, demo.tokens["alice"]).get(url).text
    assert 'id="cancel-form"' in page and 'class="status queued"' in page
    found = re.search(r'name="csrf" value="([A-Za-z0-9_-]+)"', page)
    assert found is not None
    assert client.post(f"{url}/cancel", data={}).status_code == 403  # no token, no post
    assert challenges.get_challenge(r, made.id).status.value == "queued"  # type: ignore[union-attr]
    done = client.post(f"{url}/cancel", data={"csrf": found.group(1)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == url
    assert challenges.get_challenge(r, made.id).status.value == "cancelled"  # type: ignore[union-attr]
    after = client.get(url).text
    assert 'class="status cancelled"' in after and "cancel-form" not in after
    logged = [(e.action, e.target) for e in authorlog.read(r, "alice")]
    assert ("challenge.cancel", made.id) in logged
    nosuch = client.post("/challenges/nosuch/cancel", data={"csrf": found.group(1)})
    assert nosuch.status_code == 404


def test_the_list_is_mine_when_signed_in_else_the_public_ones(
    client: TestClient, r: redis.Redis, demo: DemoData
) -> None:
    public = challenges.create_challenge(r, "alice", "oakheart", ["sapling"], deals=1, seed=1)
    private = challenges.create_challenge(
        r, "alice", "oakheart", ["random"], deals=1, public=False, seed=2
    )
    anyone = _as(client, None).get("/challenges").text
    assert f'href="/challenges/{public.id}"' in anyone and private.id not in anyone
    alice = _as(client, demo.tokens["alice"]).get("/challenges").text
    assert 'class="board stack" id="challenges"' in alice
    assert public.id in alice and private.id in alice
    bob = _as(client, demo.tokens["bob"]).get("/challenges").text  # sapling's owner
    assert public.id in bob and private.id not in bob
    carol = _as(client, authors.add_author(r, "carol")).get("/challenges").text
    assert "No challenges." in carol
    # the dashboard's rows open the page
    dashboard = _as(client, demo.tokens["alice"]).get("/me").text
    assert f'href="/challenges/{public.id}"' in dashboard and 'href="/challenges"' in dashboard


def test_an_author_reads_their_bots_output_beside_a_challenges_steps(
    client: TestClient, r: redis.Redis, demo: DemoData
) -> None:
    """The viewer of a challenge's game shows each signed-in author their own seats' output per
    step (as a league game's does), from the API's ``.../seats/{seat}/output``: theirs only."""
    from arboretum_web.demo import _demo_output

    made = challenges.create_challenge(
        r, "alice", "oakheart", ["sapling"], deals=1, public=False, seed=5
    )
    play_challenge(r, made)
    owner = dict(zip(made.entrants, made.owners, strict=True))
    for m in challenges.challenge_matches(r, made.id):
        doc = json.loads(replays.get_replay(r, m.id, 0) or b"{}")
        for seat, vid in enumerate(m.seats):
            _demo_output(r, m.id, seat, owner[vid], doc)
    m = challenges.challenge_matches(r, made.id)[1]
    seat_of = {owner[vid]: seat for seat, vid in enumerate(m.seats)}
    viewer = f"/challenges/{made.id}/matches/1/games/0"
    api = f"/api/v1/challenges/{made.id}/matches/1/games/0/seats/"
    for who in ("alice", "bob"):
        page = _as(client, demo.tokens[who]).get(viewer).text
        assert f'data-base="{api}" data-seats="{seat_of[who]}"' in page, who
        assert "stepoutput.js" in page
        mine = client.get(f"{api}{seat_of[who]}/output")
        assert mine.status_code == 200, mine.text
        body = mine.json()
        assert body["match"] == m.id and body["seat"] == seat_of[who] and body["steps"]
        assert all(f"[{who}] considering" in e["lines"][0] for e in body["steps"])
        other = client.get(f"{api}{1 - seat_of[who]}/output")
        assert other.status_code == 403, other.text
        assert (
            client.get(f"{api}{seat_of[who]}/output?download=1").headers["content-disposition"]
            == f'attachment; filename="{m.id}-game0-seat{seat_of[who]}-output.json"'
        )
    assert _as(client, demo.tokens["alice"]).get(f"{api}5/output").status_code == 404
    no_game = f"/api/v1/challenges/{made.id}/matches/1/games/3/seats/{seat_of['alice']}/output"
    assert client.get(no_game).status_code == 404
    assert _as(client, None).get(f"{api}0/output").status_code == 401
    # a public challenge's viewer, for someone with no seat in it: no output section
    r.hset(store.Keys.challenge(made.id), "public", "1")
    carol = authors.add_author(r, "carol")
    page = _as(client, carol).get(viewer)
    assert page.status_code == 200 and 'id="step-output"' not in page.text
