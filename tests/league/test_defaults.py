"""One clock and one fault policy by default, wherever a match is set up: ``arena play``,
``arena sprt``, ``arena league create`` (and its ladder), a league's settings built or read without
them, a sequential test stored in the league, the web's own league, and the referee (its settings
and a match created without a clock, over gRPC: tests/server/test_referee_settings.py). Each is
compared with the SDK's ``TimeControl()`` and ``FaultPolicy()``, and those with the documented
defaults (docs/protocol.md, docs/referee.md, docs/sprt.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import redis
from starlette.testclient import TestClient

from arboretum_sdk.cli import build_parser, main, needs_plugins
from arboretum_sdk.info import FaultPolicy, TimeControl
from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import seed_demo
from arboretum_worker import league, registry, store
from arboretum_worker.settings import WorkerSettings
from arboretum_worker.sprt import league as sprt
from arboretum_worker.sprt.stats import SprtSettings

ROOT = Path(__file__).resolve().parents[2]
CLOCK = TimeControl()
POLICY = FaultPolicy()


def _clock_of(tc: TimeControl, fp: FaultPolicy) -> tuple[int, int, int]:
    return tc.per_decision_ms, tc.bank_ms, fp.faults_to_forfeit


DEFAULTS = _clock_of(CLOCK, POLICY)


def test_the_defaults_are_the_documented_ones() -> None:
    protocol = (ROOT / "docs" / "protocol.md").read_text()
    found = re.search(r"When absent, the defaults are (\d+) and (\d+)\.", protocol)
    assert found, "docs/protocol.md no longer states the default time control"
    assert (CLOCK.per_decision_ms, CLOCK.bank_ms) == (int(found[1]), int(found[2]))
    referee = (ROOT / "docs" / "referee.md").read_text()
    for flag, value in zip(
        ("--per-decision-ms", "--bank-ms", "--faults-to-forfeit"), DEFAULTS, strict=True
    ):
        row = re.search(rf"^\|[^|\n]*\| `ARENA_\w+` \| `{flag}` \| (\d+) \|$", referee, re.M)
        assert row, f"docs/referee.md has no settings row for {flag}"
        assert int(row[1]) == value, flag
    sprt_doc = (ROOT / "docs" / "sprt.md").read_text()
    row = re.search(r"`--faults-to-forfeit` \| (\d+), (\d+), (\d+) \|", sprt_doc)
    assert row, "docs/sprt.md has no row for the clock"
    assert tuple(int(v) for v in row.groups()) == DEFAULTS


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "random", "random"],
        ["sprt", "greedy", "random"],
        ["league", "create", "x", "--bots", "a", "b"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_every_command_defaults_to_the_same_clock(argv: list[str]) -> None:
    args = build_parser(plugins=needs_plugins(argv)).parse_args(argv)
    assert (args.per_decision_ms, args.bank_ms, args.faults_to_forfeit) == DEFAULTS


def test_league_settings_without_a_clock_get_the_same_clock() -> None:
    built = store.LeagueSettings(players=2, games_per_pairing=1, bots=("a", "b"), seed=1)
    assert _clock_of(built.time_control, built.fault_policy) == DEFAULTS
    # A stored league's JSON without them (written by hand or by an older version) reads so too.
    text = '{"players": 2, "games_per_pairing": 1, "bots": ["a", "b"], "seed": 1}'
    read = store.LeagueSettings.from_json(text)
    assert _clock_of(read.time_control, read.fault_policy) == DEFAULTS
    # One definition: the league stores the SDK's own values.
    assert store.TimeControl is TimeControl and store.FaultPolicy is FaultPolicy


def test_created_leagues_ladders_and_tests_store_the_same_clock(
    redis_url: str, r: redis.Redis
) -> None:
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    for name, extra in (("rr", []), ("lad", ["--ladder"])):
        argv = ["league", "create", name, "--bots", "random", "greedy", *extra]
        assert main([*argv, "--redis-url", redis_url]) == 0
    for name in ("rr", "lad"):
        stored = store.get_league(r, name)
        assert stored is not None, name
        assert _clock_of(stored.settings.time_control, stored.settings.fault_policy) == DEFAULTS
    created = sprt.create_test(
        r,
        "greedy",
        "random",
        SprtSettings(elo0=0, elo1=20, max_pairs=60),
        WorkerSettings(redis_url=redis_url, queue="defaults-test"),
        seed=1,
    )
    test = sprt.get_test(r, created.id)
    assert test is not None
    assert _clock_of(test.time_control, test.fault_policy) == DEFAULTS


def test_the_webs_league_has_the_same_clock(r: redis.Redis) -> None:
    seed_demo(r, league="plain", limit=0)
    with TestClient(create_app(WebSettings(), client=r)) as client:
        settings = client.get("/api/v1/leagues/plain").json()["settings"]
    clock, policy = settings["time_control"], settings["fault_policy"]
    shown = (clock["per_decision_ms"], clock["bank_ms"], policy["faults_to_forfeit"])
    assert shown == DEFAULTS
