"""The built-in bots can be named in a league like submitted bots (docs/league.md, "Running a
league"): the first league that names one registers it, checked in the sandbox like any bot."""

from __future__ import annotations

import pytest

from arboretum_worker import registry, store

from .conftest import BOTS, Arena

pytestmark = pytest.mark.integration


def test_a_league_registers_the_builtin_bots_it_names(arena: Arena) -> None:
    arena.run("bot", "submit", str(BOTS / "printer.py"), "--name", "mybot")
    out = arena.run(
        "league", "create", "spring", "--bots", "mybot", "greedy", "random", "--seed", "42"
    ).stdout
    greedy, random_bot = registry.latest(arena.r, "greedy"), registry.latest(arena.r, "random")
    assert greedy and random_bot
    assert f"registered built-in bot greedy: version {greedy[:12]}" in out
    assert f"registered built-in bot random: version {random_bot[:12]}" in out
    league = store.get_league(arena.r, "spring")
    assert set(league.settings.bots) == {registry.latest(arena.r, "mybot"), greedy, random_bot}

    # The next league finds them registered: nothing new.
    again = arena.run("league", "create", "summer", "--bots", "greedy", "random").stdout
    assert "registered" not in again
    assert registry.versions(arena.r, "greedy") == [greedy]

    # Submitting a built-in by name works as well, and is idempotent.
    done = arena.run("bot", "submit", "search", "--name", "search").stdout
    assert "bot search: new version" in done
    assert registry.versions(arena.r, "search")
    assert (
        "registered" not in arena.run("league", "create", "x", "--bots", "search", "greedy").stdout
    )


def test_a_submitted_bot_keeps_its_name_over_a_builtin(arena: Arena) -> None:
    vid = arena.run("bot", "submit", str(BOTS / "printer.py"), "--name", "random").stdout
    out = arena.run("league", "create", "mine", "--bots", "random", "greedy").stdout
    assert "registered built-in bot greedy" in out and "built-in bot random" not in out
    assert registry.versions(arena.r, "random")[0][:12] in vid
    missing = arena.run("league", "create", "bad", "--bots", "nosuch", "greedy", check=False)
    assert missing.returncode == 1 and "no bot named 'nosuch'" in missing.stderr
