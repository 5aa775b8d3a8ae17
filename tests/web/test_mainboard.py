"""The site's main board: the operator's choice is what ``/`` and the API's default leaderboard
show, whatever league is created after it; with none chosen, the biggest league."""

from __future__ import annotations

import argparse
from typing import Any

import pytest
import redis

from arboretum_web import cli
from arboretum_web.demo import DemoData
from arboretum_worker import league, registry


def _arena(redis_url: str, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="arena")
    cli.register(parser.add_subparsers(dest="command"), {})
    args = parser.parse_args(["web", *argv, "--redis-url", redis_url])
    return int(args.handler(args))


def _front(client: Any) -> str:
    resp = client.get("/api/v1/leaderboard")
    assert resp.status_code == 200, resp.text
    return str(resp.json()["league"])


def test_a_throwaway_league_does_not_replace_the_main_board(
    client: Any,
    r: redis.Redis,
    demo: DemoData,
    redis_server_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("random", "greedy", "lookahead"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    league.create_league(
        r, "big", ["random", "greedy", "lookahead", "oakheart", "sapling"], players=2
    )
    assert _arena(redis_server_url, "main-board", "demo") == 0
    assert capsys.readouterr().out == "main board: demo\n"
    league.create_league(r, "tiny", ["random", "greedy"], players=2)  # newest of all
    assert _front(client) == "demo"
    page = client.get("/")
    assert page.status_code == 200
    assert 'value="demo" selected' in page.text
    # deleted or never chosen: the league with the most versions, never the newest tiny one
    assert _arena(redis_server_url, "main-board", "--clear") == 0
    assert "the front page shows big" in capsys.readouterr().out
    assert _front(client) == "big"
    assert _arena(redis_server_url, "main-board") == 0
    assert capsys.readouterr().out == "no main board chosen; the front page shows big\n"
    # ?league= still picks any league
    assert client.get("/api/v1/leaderboard?league=tiny").json()["league"] == "tiny"


def test_main_board_refusals(
    r: redis.Redis, demo: DemoData, redis_server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_server_url, "main-board", "nosuch") == 1
    assert capsys.readouterr().err.strip() == "arena: no league 'nosuch'"
    assert _arena(redis_server_url, "main-board", "bad:name") == 1
    assert "invalid league name" in capsys.readouterr().err
    assert _arena(redis_server_url, "main-board", "demo", "--clear") == 2
    assert r.get("arena:main-board") is None
