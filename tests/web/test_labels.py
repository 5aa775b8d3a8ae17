"""Every rating number says which rating it is; a sequential test names its versions and a bot's
page links its tests; the rating chart's legend is drawn under the plot, never over its lines."""

from __future__ import annotations

import re
from typing import Any

import redis

from arboretum_web.chart import rating_chart
from arboretum_web.demo import DemoData

from .test_sprt import _finished_test


def test_rating_columns_are_named(client: Any, demo: DemoData) -> None:
    board = client.get("/").text
    for name in ("Fitted rating (95%)", "Live rating", "Live Elo"):
        assert f">{name}</th>" in board, name
    assert re.search(r"<th[^>]*>Elo</th>", board) is None
    league = client.get(f"/leagues/{demo.league}").text
    assert ">Live Elo</th>" in league and ">Fitted rating (95%)</th>" in league
    assert "Live Elo history" in client.get("/bots/oakheart").text


def test_a_test_names_its_versions_and_its_bots_link_it(client: Any, r: redis.Redis) -> None:
    test = _finished_test(r)
    page = client.get(f"/sprt/{test.id}").text
    h1 = re.search(r"<h1>(.*?)</h1>", page, re.S)
    assert h1
    text = re.sub(r"<[^>]+>", "", h1.group(1))
    assert f"greedy@{test.new[:8]} vs random@{test.old[:8]}" in text
    assert "Elo, NEW \u2212 OLD (95%)" in client.get("/sprt").text
    for bot in ("greedy", "random"):
        section = client.get(f"/bots/{bot}").text.split('id="bot-tests"')[1]
        assert f'href="/sprt/{test.id}"' in section.split("</section>")[0]


def test_the_chart_legend_is_under_the_plot() -> None:
    series = {"a" * 40: [1500.0 + i for i in range(30)], "b" * 40: [1500.0 - i for i in range(30)]}
    labels = {"a" * 40: "v1 aaaaaaaa", "b" * 40: "v2 bbbbbbbb"}
    for narrow in (False, True):
        svg = rating_chart(series, labels, narrow=narrow)
        lowest_axis = max(float(y) for y in re.findall(r'class="axis"[^>]* y="([0-9.]+)"', svg))
        legend = [float(y) for y in re.findall(r'class="legend"[^>]* y="([0-9.]+)"', svg)]
        assert len(legend) == 2 and min(legend) > lowest_axis, (legend, lowest_axis)
        height = float(re.search(r'viewBox="0 0 [0-9.]+ ([0-9.]+)"', svg).group(1))
        assert max(legend) <= height


def test_a_test_links_its_games_to_the_viewer(client: Any, r: redis.Redis, demo: DemoData) -> None:
    import json

    from arboretum_worker import replays, store

    test = _finished_test(r)
    assert "keeps no games" in client.get(f"/sprt/{test.id}").text
    # an author's test keeps its matches (arboretum_worker.sprt.authors.record_match)
    match_id = f"sprt-{test.id}-0-1"
    doc = replays.get_replay(r, demo.matches[0], 0) or b""
    replays.save_replay(r, match_id, 0, doc)
    entry = {"batch": 0, "seating": 1, "seats": [test.old, test.new], "ranks": [[1, 2]],
             "replays": True}  # fmt: skip
    r.hset(store.Keys.sprt(test.id, "matches"), match_id, json.dumps(entry))
    page = client.get(f"/sprt/{test.id}").text
    viewer = f"/sprt/{test.id}/matches/{match_id}/games/0"
    assert f'href="{viewer}"' in page and "NEW in seat 1" in page
    shown = client.get(viewer)
    src = f"/api/v1/sprt/{test.id}/matches/{match_id}/games/0/replay"
    assert shown.status_code == 200 and f'data-src="{src}"' in shown.text
    assert client.get(src).json()["steps"] == json.loads(doc)["steps"]
    assert client.get(f"/sprt/{test.id}/matches/{match_id}/games/1").status_code == 404
    assert client.get(f"/sprt/{test.id}/matches/nope/games/0").status_code == 404


def test_a_tests_author_reads_the_bots_output_beside_its_steps(
    client: Any, r: redis.Redis, demo: DemoData
) -> None:
    """An author's test plays two of their own versions: its games' viewer shows both seats'
    output per step to that author, and to nobody else."""
    import json

    from arboretum_web import authors
    from arboretum_web.demo import _demo_output
    from arboretum_worker import replays, store

    test = _finished_test(r)
    r.hset(store.Keys.sprt(test.id), "author", "alice")
    match_id = f"sprt-{test.id}-0-1"
    raw = replays.get_replay(r, demo.matches[0], 0) or b""
    replays.save_replay(r, match_id, 0, raw)
    for seat in (0, 1):
        _demo_output(r, match_id, seat, f"seat{seat}", json.loads(raw))
    entry = {"batch": 0, "seating": 1, "seats": [test.old, test.new], "ranks": [[1, 2]],
             "replays": True}  # fmt: skip
    r.hset(store.Keys.sprt(test.id, "matches"), match_id, json.dumps(entry))
    viewer = f"/sprt/{test.id}/matches/{match_id}/games/0"
    api = f"/api/v1/sprt/{test.id}/matches/{match_id}/games/0/seats/"
    client.cookies.set("arena_token", demo.tokens["alice"])
    assert f'data-base="{api}" data-seats="0,1"' in client.get(viewer).text
    for seat in (0, 1):
        body = client.get(f"{api}{seat}/output").json()
        assert body["seat"] == seat and body["steps"]
        assert all(f"[seat{seat}] considering" in e["lines"][0] for e in body["steps"])
    client.cookies.set("arena_token", authors.add_author(r, "carol"))
    assert 'id="step-output"' not in client.get(viewer).text
    assert client.get(f"{api}0/output").status_code == 403
