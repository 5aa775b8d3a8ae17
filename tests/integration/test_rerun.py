"""League games re-run bit for bit: a small league of the built-in bots, played by `arena worker`
processes in the sandbox with the league's default fixed compute, then every match played again
by `arena match rerun` (sandbox, private referee) and compared decision by decision. The worker
starts its bots through its fork server, the re-run the plain way: the two paths play alike."""

from __future__ import annotations

import os
import re

import pytest

from arboretum_worker import store

from .conftest import BOTS, Arena

pytestmark = [pytest.mark.integration, pytest.mark.timeout(480)]

CLOCK = ["--per-decision-ms", "2000", "--bank-ms", "10000", "--faults-to-forfeit", "3"]
BUILTINS = ["random", "greedy", "search"]
"""The built-in bots whose randomness comes from their game's bot seed and whose compute is
fixed under ARENA_COMPUTE=fixed."""


def test_every_game_of_a_league_of_builtin_bots_reruns_identically(arena: Arena) -> None:
    r = arena.r
    arena.start_worker()
    arena.wait_workers(1)
    # 2 players, 2 deals per pairing packed into series of 2: every match holds 2 games.
    arena.run(
        "league", "create", "again", "--bots", *BUILTINS, "--players", "2",
        "--games-per-pairing", "2", "--deals-per-series", "2", "--seed", "12", *CLOCK,
    )  # fmt: skip
    assert store.get_league(r, "again").settings.compute == "fixed"
    arena.run("league", "run", "again")
    matches = store.league_matches(r, "again")
    counts = arena.wait_league("again", timeout=300)
    assert counts == {"finished": len(matches)}, arena.worker_logs()
    assert all(store.get_match(r, m).games == 2 for m in matches)
    # The worker (root, bwrap) started its bots through its fork server; `arena match rerun`
    # has none and starts them the plain way: the same games, decision for decision.
    if os.geteuid() == 0:
        log = (arena.tmp / "worker0.log").read_text(errors="replace")
        assert "bot fork server ready" in log and ", fork server)" in log
    for match_id in matches:
        done = arena.run("match", "rerun", match_id, timeout=200)
        out = done.stdout
        assert "game 0: identical" in out and "game 1: identical" in out, out
        assert "identical: every game re-ran decision for decision" in out


def test_a_bot_that_uses_the_os_randomness_is_caught(arena: Arena) -> None:
    r = arena.r
    arena.run("bot", "submit", str(BOTS / "oscoin.py"), "--name", "oscoin")
    arena.start_worker()
    arena.wait_workers(1)
    arena.run(
        "league", "create", "coin", "--bots", "oscoin", "random", "--players", "2",
        "--games-per-pairing", "1", "--seed", "3", *CLOCK,
    )  # fmt: skip
    arena.run("league", "run", "coin")
    match_id = store.league_matches(r, "coin")[0]
    counts = arena.wait_league("coin", timeout=200)
    assert counts == {"finished": 2}, arena.worker_logs()
    record = store.get_match(r, match_id)
    seat = [store.get_version(r, v).name for v in record.seats].index("oscoin")
    # The league's compute mode reached the bot's sandbox.
    assert (
        "oscoin's compute: fixed fixed"
        in arena.run("match", "logs", match_id, "--bot", "oscoin").stdout
    )
    done = arena.run("match", "rerun", match_id, check=False, timeout=200)
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"game 0: differs at step \d+ \(decision \d+ of \d+, turn", done.stdout)
    assert f"seat {seat} (oscoin@" in done.stdout  # the first difference is one of its own
    assert f"arena: match {match_id} did not re-run identically: game 0 differs" in done.stderr


def test_rerun_refuses_what_it_cannot_rerun(arena: Arena) -> None:
    done = arena.run("match", "rerun", "nosuchmatch", check=False)
    assert done.returncode == 1 and "arena: no match 'nosuchmatch'" in done.stderr
    arena.run(
        "league", "create", "waiting", "--bots", *BUILTINS, "--players", "2", "--seed", "1",
    )  # fmt: skip
    arena.run("league", "run", "waiting")  # no worker: the matches stay queued
    match_id = store.league_matches(arena.r, "waiting")[0]
    done = arena.run("match", "rerun", match_id, check=False)
    assert done.returncode == 1
    assert f"match {match_id} is queued: only a finished match re-runs" in done.stderr
