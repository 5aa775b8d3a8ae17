"""Series matches end to end: real redis-server, `arena worker` processes, the private referee and
sandboxed bots. A match plays several deals in one seating with one process per seat."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from arboretum import verify_replay
from arboretum_worker import ratings, registry, replays, store

from .conftest import BOTS, Arena
from .test_league import CLOCK, submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


def test_a_series_league_plays_every_game_once_with_one_process_per_seat(arena: Arena) -> None:
    r = arena.r
    submit_builtin(arena, "random")
    submit_builtin(arena, "greedy")
    arena.run("bot", "submit", str(BOTS / "counter.py"), "--name", "counter")
    arena.start_worker()
    arena.start_worker()
    arena.run(
        "league", "create", "series", "--bots", "random", "greedy", "counter",
        "--players", "2", "--games-per-pairing", "3", "--deals-per-series", "3", "--seed", "5",
        *CLOCK,
    )  # fmt: skip
    out = arena.run("league", "run", "series").stdout
    assert "6 match jobs enqueued" in out  # 3 pairs x 2 seat orders, 3 deals each
    counts = arena.wait_league("series", timeout=180)
    assert counts == {"finished": 6}, arena.worker_logs()

    ids = store.league_matches(r, "series")
    records = {m: store.get_match(r, m) for m in ids}
    assert all(rec.deals == (0, 1, 2) and rec.games == 3 for rec in records.values())
    # Every game recorded once, Elo applied per game: 2 opponents x 2 seat orders x 3 deals.
    assert r.zcard(store.Keys.elo_applied("series")) == 6
    board = ratings.standings(r, "series")
    assert sorted(row.stats.games for row in board) == [12, 12, 12]
    for vid in registry.versions(r, "counter"):
        assert len(ratings.history(r, "series", vid)) == 12
    settings = store.get_league(r, "series").settings
    batch = ratings.recompute(ratings.results_in_order(r, "series"), settings.elo)
    for vid, value in ratings.ratings(r, "series").items():
        assert abs(batch[vid] - value) < 1e-9

    # Each game is its deal, the same in both seat orders (other matches, other processes).
    deal_seeds: dict[tuple[tuple[str, ...], int], set[int]] = defaultdict(set)
    for m, rec in records.items():
        result = store.get_result(r, m)
        assert result is not None and len(result.games) == 3
        assert set(rec.siblings or ()) == {
            o for o, other in records.items() if o != m and sorted(other.seats) == sorted(rec.seats)
        }
        for game, (deal, seed) in enumerate(zip(rec.deals, rec.game_seeds, strict=True)):
            doc = json.loads(replays.get_replay(r, m, game) or b"{}")
            verify_replay(doc)
            assert doc["seed"] == str(seed)
            deal_seeds[tuple(sorted(rec.seats)), deal].add(seed)
    assert len(deal_seeds) == 9 and all(len(seeds) == 1 for seeds in deal_seeds.values())

    # One process per seat played the whole series: one hello, three games.
    counter = registry.latest(r, "counter")
    for m, rec in records.items():
        if counter not in rec.seats:
            continue
        log = arena.run("match", "logs", m, "--bot", "counter").stdout
        assert log.count("counter says hello") == 1, log
        starts = [line for line in log.splitlines() if "starts game" in line]
        assert starts == [f"counter starts game {i}" for i in range(3)], log
    shown = arena.run("match", "show", ids[0]).stdout
    assert "deals 0-2" in shown and ("rank 1, " in shown or "rank 2, " in shown)


def test_a_crash_mid_series_costs_the_game_in_progress(arena: Arena) -> None:
    r = arena.r
    submit_builtin(arena, "greedy")
    arena.run("bot", "submit", str(BOTS / "crasher.py"), "--name", "crasher")
    arena.start_worker()
    arena.run(
        "league", "create", "crash", "--bots", "greedy", "crasher", "--players", "2",
        "--games-per-pairing", "3", "--deals-per-series", "3", "--seed", "8", *CLOCK,
    )  # fmt: skip
    arena.run("league", "run", "crash")
    counts = arena.wait_league("crash", timeout=180)
    assert counts == {"finished": 2}, arena.worker_logs()
    crasher = registry.latest(r, "crasher")
    for m in store.league_matches(r, "crash"):
        rec = store.get_match(r, m)
        seat = rec.seats.index(crasher)
        result = store.get_result(r, m)
        assert result is not None and len(result.games) == 3
        first, second, third = result.games
        log = arena.run("match", "logs", m, "--bot", "crasher").stdout
        # the game in progress is lost (its decisions fault at once: forfeited, last) ...
        assert second.ranks[seat] == 2 and second.faults[seat] >= 3, log
        # ... and a fresh process plays on: no fault in the games before and after
        assert first.faults[seat] == 0 and third.faults[seat] == 0, log
        assert log.count("crasher says hello") == 2, log
        assert "crasher exits now" in log and "a fresh process took the seat" in log
        assert "crasher starts game 2" in log  # (resumed, when it joined the game late)
    for row in ratings.standings(r, "crash"):
        assert row.stats.games == 6
