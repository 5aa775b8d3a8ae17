"""``arena league create``, ``arena ratings`` and ``arena leaderboard`` against a real Redis,
in-process: what they print, and their clear errors on bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_worker import board, fit, league, ratings, registry, store
from arboretum_worker.cliargs import redis_address


def _arena(url: str, *args: str) -> int:
    return main([*args, "--redis-url", url])


@pytest.fixture
def bots(r: redis.Redis) -> list[str]:
    for name in ("random", "greedy"):
        registry.add_version(r, name, league.builtin_bot_files(name))
    registry.add_version(r, "third", b"from arboretum_sdk.bots.random_bot import RandomBot\n")
    return ["random", "greedy", "third"]


def test_bad_leagues_are_refused_clearly(
    redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "create", "x", "--bots", "random", "--players", "2") == 1
    assert "cannot fill 2 seats" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        _arena(redis_url, "league", "create", "x", "--bots", *bots, "--games-per-pairing", "0")
    assert exc.value.code == 2
    assert "--games-per-pairing" in capsys.readouterr().err
    where = redis_address(redis.Redis.from_url(redis_url))
    for command in (
        ("ratings", "--league", "nope"),
        ("leaderboard", "--league", "nope"),
        *(("league", action, "nope") for action in ("run", "status", "cancel", "retry", "audit")),
    ):
        assert _arena(redis_url, *command) == 1, command
        assert capsys.readouterr().err == (
            f"arena: no league named 'nope' in the Redis at {where} "
            "(arena league list shows them)\n"
        ), command
    assert _arena(redis_url, "league", "create", "empty", "--bots", *bots[:2]) == 0
    capsys.readouterr()
    assert _arena(redis_url, "ratings", "--league", "empty") == 0
    assert "league empty: no results yet" in capsys.readouterr().out


def test_leaderboard_leads_with_the_fitted_rating_ranked_by_its_lower_end(
    r: redis.Redis, redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _arena(redis_url, "league", "create", "lb", "--bots", *bots, "--players", "3") == 0
    vids = [registry.latest(r, b) for b in bots]
    results = [
        store.MatchResult(
            f"m{i}", "lb", tuple(vids), (store.GameOutcome(ranks, (0,) * 3, (0,) * 3),)
        )
        for i, ranks in enumerate([(1, 2, 3), (1, 3, 2), (2, 1, 3), (1, 2, 3)])
    ]
    for result in results:
        ratings.record_result(r, result)
    capsys.readouterr()
    assert _arena(redis_url, "leaderboard", "--league", "lb") == 0
    out = capsys.readouterr().out
    assert "fitted rating, ranked by the lower end of its 95% interval" in out
    lines = out.splitlines()
    header = lines[1].split()
    assert header[:8] == ["#", "bot", "version", "fitted", "±", "95%", "lower", "end"]
    rows = [line.split() for line in lines[3:]]
    fitted = {f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "lb"))}
    live = {s.version: s for s in ratings.standings(r, "lb")}
    assert [row[1] for row in rows] == ["random", "greedy", "third"]  # random won 3 of 4
    for row, vid in zip(rows, [vids[0], vids[1], vids[2]], strict=True):
        assert row[2] == vid[:12]
        f = fitted[vid]
        assert row[3] == f"{f.elo:.0f}?"  # provisional: 4 games
        assert row[5] == f"{(f.upper - f.lower) / 2:.0f}" and row[6] == f"{f.lower:.0f}"
        assert row[7] == f"{live[vid].live.mu:.0f}" and row[8] == f"{live[vid].elo:.1f}"
    # the fit is stored with the results it covers, and made again after a new result
    assert board.stored_fit(r, "lb") == board.StoredFit(4, fitted)
    ratings.record_result(
        r,
        store.MatchResult(
            "m9", "lb", tuple(vids), (store.GameOutcome((3, 2, 1), (0,) * 3, (0,) * 3),)
        ),
    )
    assert _arena(redis_url, "leaderboard", "--league", "lb") == 0
    stored = board.stored_fit(r, "lb")
    assert stored is not None and stored.seq == 5
    assert stored.ratings == {
        f.version: f for f in fit.fit_ratings(ratings.results_in_order(r, "lb"))
    }


def test_submit_over_the_daily_quota_is_one_line(
    r: redis.Redis,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The operator's `arena bot submit` (straight to Redis) keeps the same quota; it is refused
    before the sandbox check runs."""
    monkeypatch.setenv("ARENA_SUBMIT_QUOTA", "1")
    registry.add_version(r, "mine", b"x = 1\n", quota=1)
    bot = tmp_path / "mine.py"
    bot.write_bytes(b"x = 2\n")
    assert _arena(redis_url, "bot", "submit", str(bot), "--name", "mine") == 1
    err = capsys.readouterr().err
    assert err.startswith("arena: bot refused: bot 'mine' has had its 1 new version today")
    assert err.count("\n") == 1 and len(registry.versions(r, "mine")) == 1
    monkeypatch.setenv("ARENA_SUBMIT_QUOTA", "lots")
    assert _arena(redis_url, "bot", "submit", str(bot), "--name", "mine") == 1
    assert capsys.readouterr().err == (
        "arena: ARENA_SUBMIT_QUOTA must be a whole number >= 0 (0: no quota), not 'lots'\n"
    )


def test_a_name_the_store_cannot_take_is_one_line_not_a_traceback(
    redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A space or a colon in a name reaches the store's key check (StoreError, a UserError):
    every command says so in one ``arena:`` line, naming the kind of thing, not a Redis key."""
    for command, said in (
        (("league", "status", "spring x"), "invalid league 'spring x'"),
        (("leaderboard", "--league", "a:b"), "invalid league 'a:b'"),
        (("ratings", "--league", "a:b"), "invalid league 'a:b'"),
        (("bot", "versions", "a:b"), "invalid bot 'a:b'"),
        (("match", "show", "a:b"), "invalid match 'a:b'"),
        (("match", "show", "one\ntwo"), "invalid match 'one\\ntwo'"),
    ):
        assert _arena(redis_url, *command) == 1, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"arena: {said}: "), (command, err)
        assert "arena:" not in err.removeprefix("arena: "), err  # no key named


def test_settings_of_the_other_kind_of_league_are_refused(
    redis_url: str, bots: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A ladder's settings without --ladder, a round robin's with it (both were dropped), the
    same version named twice (named now), a match list of a bot that does not exist."""
    ladder_only = "a ladder's setting; add --ladder, or leave it out"
    for extra, said in (
        (("--depth", "3"), f"--depth: {ladder_only}"),
        (("--new-games", "0"), f"--new-games: {ladder_only}"),
        (("--depth", "3", "--new-games", "5"), f"--depth and --new-games: {ladder_only}"),
        (
            ("--ladder", "--games-per-pairing", "4"),
            "--games-per-pairing: a round robin's setting; a ladder plays until it is closed",
        ),
    ):
        assert _arena(redis_url, "league", "create", "x", "--bots", *bots[:2], *extra) == 2
        assert capsys.readouterr().err == f"arena: {said}\n", extra
    assert _arena(redis_url, "league", "create", "x", "--bots", "random", "random") == 1
    assert capsys.readouterr().err == (
        "arena: a league lists each bot version once: random name the same version\n"
    )
    assert _arena(redis_url, "league", "create", "x", "--bots", *bots[:2]) == 0
    capsys.readouterr()
    assert _arena(redis_url, "match", "list", "--bot", "nosuchbot") == 1
    assert (
        capsys.readouterr().err == "arena: no bot named 'nosuchbot' (arena bot list shows them)\n"
    )
