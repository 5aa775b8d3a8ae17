"""Bad input to the league's commands is one clear line (``arena: ...``), never a traceback, and
odd requests are refused rather than half done. Real redis-server; the commands as subprocesses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arboretum_worker import store

from .conftest import ARENA, Arena

pytestmark = pytest.mark.integration


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("arena: "), done.stderr
    return lines[0]


def run(
    *args: str, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args], env=env, capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_a_redis_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, REDIS_URL="redis://127.0.0.1:1/0")
    for args in (["league", "list"], ["leaderboard"], ["bot", "versions", "x"], ["demo"]):
        done = run(*args, env=env, cwd=tmp_path)
        assert done.returncode == 1, (args, done.stderr)
        line = one_error_line(done)
        assert "cannot reach Redis at redis://127.0.0.1:1/0" in line, line
        # Nothing was started before the message (the demo checks Redis first).
        assert "started" not in done.stdout, done.stdout


def test_a_password_in_the_redis_url_is_not_shown(tmp_path: Path) -> None:
    env = dict(os.environ, REDIS_URL="redis://user:sekrit@127.0.0.1:1/0")
    done = run("league", "list", env=env)
    line = one_error_line(done)
    assert "sekrit" not in done.stderr + done.stdout and "user:***@127.0.0.1" in line


def test_a_url_that_is_not_redis_names_the_schemes_accepted() -> None:
    env = dict(os.environ, REDIS_URL="http://127.0.0.1:6379")
    done = run("league", "list", env=env)
    assert done.returncode == 1
    line = one_error_line(done)
    assert "redis://" in line and "unix://" in line


def test_leaderboard_and_ratings_of_an_unknown_league_fail(arena: Arena) -> None:
    for args in (["leaderboard", "--league", "nosuch"], ["ratings", "--league", "nosuch"]):
        done = arena.run(*args, check=False)
        assert done.returncode == 1, done.stdout
        assert "no league named 'nosuch'" in one_error_line(done)


def test_cancel_refuses_a_finished_league_and_leaves_it_finished(arena: Arena) -> None:
    from arboretum_worker import league, registry

    registry.add_version(arena.r, "random", league.builtin_bot_files("random"))
    registry.add_version(arena.r, "greedy", league.builtin_bot_files("greedy"))
    arena.run("league", "create", "done", "--bots", "random", "greedy", "--seed", "1")
    store.set_league_status(arena.r, "done", store.LeagueStatus.FINISHED)
    done = arena.run("league", "cancel", "done", check=False)
    assert done.returncode == 1
    assert "league done is finished already" in one_error_line(done)
    assert store.get_league(arena.r, "done").status is store.LeagueStatus.FINISHED

    arena.run("league", "create", "open", "--bots", "random", "greedy", "--seed", "1")
    out = arena.run("league", "cancel", "open").stdout
    assert "league open: cancelled, 0 unfinished matches stopped" in out
    again = arena.run("league", "cancel", "open", check=False)
    assert "league open is cancelled already" in one_error_line(again)


def test_created_league_reports_its_seed_and_counts(arena: Arena) -> None:
    from arboretum_worker import league, registry

    registry.add_version(arena.r, "random", league.builtin_bot_files("random"))
    registry.add_version(arena.r, "greedy", league.builtin_bot_files("greedy"))
    out = arena.run(
        "league", "create", "one", "--bots", "random", "greedy", "--games-per-pairing", "1",
        "--faults-to-forfeit", "1",
    ).stdout  # fmt: skip
    assert "2 bots, 2 players, 1 deal per combination" in out
    assert "forfeit at 1 fault," in out
    seed = int(out.split("seed ", 1)[1].split()[0])
    assert store.get_league(arena.r, "one").settings.seed == seed


@pytest.mark.parametrize("command", ["simulate", "play"])
def test_replays_into_a_file_or_an_unwritable_place_is_one_line(
    tmp_path: Path, command: str
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    args = (
        ["simulate", "--players", "2", "--games", "1"]
        if command == "simulate"
        else ["play", "random", "random", "--games", "1"]
    )
    for place, words in ((a_file, "not a folder"), (a_file / "below", "Not a directory")):
        done = run(*args, "--replays", str(place), env=dict(os.environ))
        assert done.returncode == 1, done.stderr
        line = one_error_line(done)
        assert f"cannot write replays to {place}" in line and words in line, line


BOT = "from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    pass\n"


def test_submit_without_a_sandbox_is_one_line_and_stores_nothing(
    arena: Arena, tmp_path: Path
) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text(BOT)
    done = subprocess.run(
        [*ARENA, "bot", "submit", str(bot), "--name", "mine"],
        env=dict(arena.env, ARENA_SANDBOX="none"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    # the runner's warning that it has no sandbox, then the refusal
    assert lines[-1].startswith("arena: bot refused: no sandbox available (none)"), done.stderr
    assert all(line.startswith("arena: ") for line in lines), done.stderr
    assert store.get_bot(arena.r, "mine") is None


def test_submit_prints_its_result_and_nothing_of_the_check(arena: Arena, tmp_path: Path) -> None:
    bot = tmp_path / "mine.py"
    bot.write_text(BOT)
    done = arena.run("bot", "submit", str(bot), "--name", "mine")
    # no log line of the check's opponent (its match is cancelled when the check is done)
    assert done.stderr == "", done.stderr
    assert done.stdout.startswith("bot mine: new version "), done.stdout
    assert done.stdout.rstrip().endswith("; 1 version in all"), done.stdout
    again = arena.run("bot", "submit", str(bot), "--name", "mine")
    assert again.stdout.startswith("bot mine: already submitted as version "), again.stdout
    assert again.stdout.rstrip().endswith("; 1 version in all"), again.stdout
