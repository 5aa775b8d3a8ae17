"""A league end to end: real redis-server, `arena worker` processes (rq), the referee inside each
worker, bots in the sandbox, and the `arena` CLI. Short clocks and one deal keep them fast."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from arboretum import load_replay, verify_replay
from arboretum_worker import league, ratings, registry, store
from arboretum_worker.settings import seat_thinking_s

from .conftest import BOTS, Arena, kill_tree

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

CLOCK = ["--per-decision-ms", "1000", "--bank-ms", "5000", "--faults-to-forfeit", "3"]


def submit_builtin(arena: Arena, name: str) -> str:
    return registry.add_version(
        arena.r, name, league.builtin_bot_files(name), check=league.sandbox_check("auto")
    )


def test_small_league_runs_to_completion_with_two_workers(arena: Arena, tmp_path: Path) -> None:
    r = arena.r
    submit_builtin(arena, "random")
    submit_builtin(arena, "greedy")
    out = arena.run("bot", "submit", str(BOTS / "printer.py"), "--name", "printer").stdout
    assert "bot printer: new version" in out
    arena.start_worker()
    arena.start_worker()
    arena.wait_workers(2)
    arena.run(
        "league", "create", "small", "--bots", "random", "greedy", "printer",
        "--players", "2", "--games-per-pairing", "1", "--seed", "7", *CLOCK,
    )  # fmt: skip
    out = arena.run("league", "run", "small").stdout
    assert "6 match jobs enqueued on queue 'arena'" in out

    counts = arena.wait_league("small", timeout=150)
    assert counts == {"finished": 6}, arena.worker_logs()
    assert store.get_league(r, "small").status is store.LeagueStatus.FINISHED

    # 3 bots, 2 players, 1 deal in both seat orders: every bot plays 2 opponents x 2 games.
    board = ratings.standings(r, "small")
    assert len(board) == 3
    assert all(row.stats.games == 4 for row in board)
    assert sum(row.stats.win_share for row in board) == pytest.approx(6)
    assert r.zcard(store.Keys.elo_applied("small")) == 6

    # Both workers played.
    workers = {store.get_match(r, m).worker for m in store.league_matches(r, "small")}
    assert len(workers) == 2, workers

    # The batch recomputation from the stored results, in sequence order, equals the live Elo.
    settings = store.get_league(r, "small").settings
    batch = ratings.recompute(ratings.results_in_order(r, "small"), settings.elo)
    live = ratings.ratings(r, "small")
    assert batch.keys() == live.keys()
    for vid, value in live.items():
        assert abs(batch[vid] - value) < 1e-9

    text = arena.run("leaderboard").stdout
    assert "leaderboard of league small" in text
    for name in ("random", "greedy", "printer"):
        assert name in text
    status = arena.run("league", "status", "small").stdout
    assert "6/6 (100%)" in status and "6 finished" in status

    # What a bot printed, by match id; a replay by match id, verified by the engine.
    match_id = store.league_matches(r, "small")[0]
    printer_matches = [
        m for m in store.league_matches(r, "small")
        if registry.latest(r, "printer") in store.get_match(r, m).seats
    ]  # fmt: skip
    logs = arena.run("match", "logs", printer_matches[0], "--bot", "printer").stdout
    assert "printer says hello" in logs
    # The bot's log names the league's match id (the private referee takes it as its own).
    assert f"[match {printer_matches[0]} seat " in logs
    assert "printer's first decision" in logs
    # About 300 KiB printed: the first 64 KiB are kept, and the log says that the rest was cut.
    kept, marker = logs.rstrip("\n").rsplit("\n", 1)
    assert re.fullmatch(
        r"\[arena: output truncated at 65536 bytes, \d+ more bytes dropped\]", marker
    )
    assert 65536 <= len(kept.encode()) <= 65537 and int(marker.split()[-4]) > 200_000
    # The CPU limit of a league match: 1.5 x the seat's most thinking time + 15 s, where the
    # clock (1 s a decision, 5 s bank) gives a seat at most 17 turns of 3 decisions: 56 s.
    assert seat_thinking_s(2, 1, 1000, 5000) == 56
    assert "printer's cpu limit: 99 s" in logs
    target = tmp_path / "replay.json"
    arena.run("match", "replay", match_id, "--game", "0", "-o", str(target))
    doc = json.loads(target.read_text())
    assert doc["players"] == 2 and doc["match_id"] == match_id
    verify_replay(load_replay(target))

    fit = arena.run("ratings", "--league", "small").stdout
    assert (
        "Plackett-Luce fit of the results of 6 matches (6 games)" in fit and "95% interval" in fit
    )
    assert "head to head" in fit


def _slow_league(arena: Arena, name: str) -> None:
    """greedy against the slow bot (80 ms a decision), two series of two deals."""
    submit_builtin(arena, "greedy")
    arena.run("bot", "submit", str(BOTS / "slow.py"), "--name", "slow")
    arena.run(
        "league", "create", name, "--bots", "greedy", "slow", "--players", "2",
        "--games-per-pairing", "2", "--deals-per-series", "2", "--seed", "3", *CLOCK,
    )  # fmt: skip


def test_worker_killed_mid_match_is_rerun_and_counted_once(arena: Arena) -> None:
    r = arena.r
    _slow_league(arena, "kill")
    victim = arena.start_worker()
    arena.run("league", "run", "kill")

    # Wait until the victim is in the second game of a series (the slow bot's live log in the
    # match directory says so), then kill it and its work horse.
    deadline = time.monotonic() + 60
    running = None
    while running is None:
        assert time.monotonic() < deadline, arena.worker_logs()
        logs = Path(arena.env["ARENA_MATCH_ROOT"]).glob("*/seat*.log")
        if any("slow starts game 1" in p.read_text(errors="replace") for p in logs):
            running = next(
                m for m in store.league_matches(r, "kill")
                if store.get_match(r, m).status is store.MatchStatus.RUNNING
            )  # fmt: skip
        time.sleep(0.05)
    assert store.get_result(r, running) is None, "the match should still be in progress"
    kill_tree(victim.pid)
    victim.wait(10)

    arena.start_worker()
    counts = arena.wait_league("kill", timeout=150)
    record = store.get_match(r, running)
    print(f"killed match {running}: {record.status.value} after {record.attempts} attempts")
    if record.status is store.MatchStatus.FINISHED:
        assert record.attempts >= 2
        assert counts == {"finished": 2}
    else:
        assert record.status is store.MatchStatus.FAILED
        assert record.failure and "died" in record.failure

    # Counted once: one result per finished match, each applied to Elo once, game by game (the
    # killed attempt's first game is not among them: the re-run played the whole series again).
    finished = [
        m for m in store.league_matches(r, "kill")
        if store.get_match(r, m).status is store.MatchStatus.FINISHED
    ]  # fmt: skip
    assert r.zcard(store.Keys.elo_applied("kill")) == len(finished)
    for m in finished:
        assert len(store.get_result(r, m).games) == 2
    for row in ratings.standings(r, "kill"):
        assert row.stats.games == 2 * len(finished)
    settings = store.get_league(r, "kill").settings
    batch = ratings.recompute(ratings.results_in_order(r, "kill"), settings.elo)
    for vid, value in ratings.ratings(r, "kill").items():
        assert abs(batch[vid] - value) < 1e-9


def test_a_cancelled_running_match_leaves_no_match_directory(arena: Arena) -> None:
    """``arena league cancel`` stops the running match's work horse before its own ``finally``
    runs; its worker removes the match directory (the bots' files, their logs, the referee's
    socket) once the horse has ended."""
    r = arena.r
    _slow_league(arena, "stop")
    arena.start_worker()
    arena.run("league", "run", "stop")
    root = Path(arena.env["ARENA_MATCH_ROOT"])
    deadline = time.monotonic() + 60
    while not any("slow starts game" in p.read_text(errors="replace")
                  for p in root.glob("*/seat*.log")):  # fmt: skip
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.05)
    assert [p for p in root.iterdir() if p.is_dir()], "a match directory while it plays"
    out = arena.run("league", "cancel", "stop").stdout
    assert "cancelled" in out
    deadline = time.monotonic() + 30
    while left := [p for p in root.iterdir() if p.is_dir()]:
        assert time.monotonic() < deadline, (left, arena.worker_logs())
        time.sleep(0.1)
    assert store.get_league(r, "stop").status is store.LeagueStatus.CANCELLED
    assert "removed 1 match directories" in arena.worker_logs()


def test_redis_restart_with_aof_loses_no_finished_result(arena: Arena) -> None:
    r = arena.r
    submit_builtin(arena, "random")
    submit_builtin(arena, "greedy")
    arena.run(
        "league", "create", "aof", "--bots", "random", "greedy", "--players", "2",
        "--games-per-pairing", "1", *CLOCK,
    )  # fmt: skip
    arena.start_worker()
    arena.run("league", "run", "aof")
    arena.wait_league("aof", timeout=120)
    before_results = {m: r.get(store.Keys.result(m)) for m in store.league_matches(r, "aof")}
    before_ratings = ratings.ratings(r, "aof")
    assert all(before_results.values()) and len(before_ratings) == 2

    arena.restart_redis(hard=True)  # kill -9: only what the AOF holds survives

    r2 = arena.r
    after_results = {m: r2.get(store.Keys.result(m)) for m in store.league_matches(r2, "aof")}
    assert after_results == before_results
    assert ratings.ratings(r2, "aof") == before_ratings
    assert "2/2 (100%)" in arena.run("league", "status", "aof").stdout


def test_status_shows_failed_matches_with_their_reason(arena: Arena) -> None:
    r = arena.r
    submit_builtin(arena, "random")
    vid = submit_builtin(arena, "greedy")
    arena.run(
        "league", "create", "broken", "--bots", "random", "greedy", "--players", "2",
        "--games-per-pairing", "1", *CLOCK,
    )  # fmt: skip
    # A damaged store: the files of one version are gone, so no match can materialise it.
    r.delete(store.Keys.version_files(vid))
    arena.start_worker()
    arena.run("league", "run", "broken")
    counts = arena.wait_league("broken", timeout=60)
    assert counts == {"failed": 2}
    for m in store.league_matches(r, "broken"):
        assert store.get_match(r, m).attempts == 3  # Retry(max=2): three attempts in all
    out = arena.run("league", "status", "broken").stdout
    assert "failed matches (2)" in out
    assert "UnknownVersionError" in out and f"no bot version {vid!r}" in out

    out = arena.run("league", "retry", "broken").stdout
    assert "2 failed matches enqueued again" in out
    counts = arena.wait_league("broken", timeout=60)
    assert counts == {"failed": 2}


def test_submit_refuses_what_is_not_a_bot(arena: Arena, tmp_path: Path) -> None:
    done = arena.run("bot", "submit", str(BOTS / "notabot.py"), "--name", "nab", check=False)
    assert done.returncode == 1
    assert "bot refused" in done.stderr and "Bot subclass" in done.stderr

    big = tmp_path / "big.py"
    big.write_text("from arboretum_sdk import Bot\n" + "#" * (2 * 1024 * 1024) + "\n")
    done = arena.run("bot", "submit", str(big), "--name", "big", check=False)
    assert done.returncode == 1
    assert "at most" in done.stderr and "bytes" in done.stderr

    folder = tmp_path / "nobotpy"
    folder.mkdir()
    (folder / "helper.py").write_text("X = 1\n")
    done = arena.run("bot", "submit", str(folder), "--name", "folder", check=False)
    assert done.returncode == 1 and "bot.py" in done.stderr

    done = arena.run("bot", "submit", str(BOTS / "printer.py"), "--name", "printer")
    again = arena.run("bot", "submit", str(BOTS / "printer.py"), "--name", "printer")
    vid = registry.latest(arena.r, "printer")
    assert vid and vid[:12] in done.stdout and vid[:12] in again.stdout
    versions = arena.run("bot", "versions", "printer").stdout
    assert vid in versions and len(registry.versions(arena.r, "printer")) == 1
    assert os.environ.get("REDIS_URL") != arena.url
