"""The key table of ``keys.py`` (its module docstring) against :class:`Keys`: every key that
``Keys`` builds is in the table, and every key of the table is one that ``Keys`` builds.

That no other module spells a key is checked on the source by ``tests/test_architecture.py``.
"""

from __future__ import annotations

import inspect
import re

from arboretum_worker import keys
from arboretum_worker.keys import Keys, MatchStatus

NAMESPACES = {"elo", "key_for"}
"""Helpers of ``Keys`` that build a prefix other keys extend, not a key: not in the table."""


def table() -> dict[str, re.Pattern[str]]:
    """The table's keys (``arena:...`` at the start of an indented line), each as a pattern in
    which ``{x}`` stands for any id."""
    doc = keys.__doc__ or ""
    found = {}
    for line in doc.splitlines():
        match = re.match(r"    (arena:\S+)\s", line)
        if match:
            key = match.group(1)
            parts = re.split(r"(\{[^}]*\})", key)
            found[key] = re.compile(
                "".join("[^:]+" if p.startswith("{") else re.escape(p) for p in parts)
            )
    return found


def built() -> dict[str, str]:
    """Every key ``Keys`` builds (an id is ``{x}``; every status and part is tried), named by the
    helper that built it."""
    out = {}
    for name, value in vars(Keys).items():
        if name.isupper() and isinstance(value, str) and not value.endswith(":"):
            out[value] = name
    for name, member in inspect.getmembers(Keys, inspect.ismethod):
        if name.startswith("_") or name in NAMESPACES:
            continue
        params = list(inspect.signature(member).parameters)
        choices: list[list[object]] = []
        for param in params:
            if param == "status":
                choices.append(list(MatchStatus))
            elif param == "part":
                parts = keys._LADDER_PARTS if name == "ladder" else keys._SPRT_PARTS
                choices.append(list(parts))
            elif param in ("seat", "game"):
                choices.append([0])
            else:
                choices.append(["{x}"])
        combos: list[list[object]] = [[]]
        for options in choices:
            combos = [[*c, o] for c in combos for o in options]
        for args in combos:
            out[member(*args)] = f"{name}{tuple(args)}"
    return out


def test_the_table_is_read() -> None:
    found = table()
    assert len(found) > 40
    assert "arena:bot:{name}:submitted:{day}" in found
    assert found["arena:match:{id}"].fullmatch("arena:match:abc")
    assert not found["arena:match:{id}"].fullmatch("arena:match:a:b")


def test_every_key_keys_builds_is_in_the_table() -> None:
    patterns = table().values()
    missing = [
        f"{key} ({helper})"
        for key, helper in built().items()
        if not any(p.fullmatch(key) for p in patterns)
    ]
    assert not missing, "keys built by Keys but not in keys.py's table:\n" + "\n".join(missing)


def test_every_key_of_the_table_is_built_by_keys() -> None:
    keys_built = list(built())
    stale = [
        key for key, pattern in table().items() if not any(pattern.fullmatch(k) for k in keys_built)
    ]
    assert not stale, "keys in keys.py's table that Keys does not build:\n" + "\n".join(stale)


def test_the_new_keys_are_built_here() -> None:
    assert Keys.live("m1") == "arena:live:m1"
    assert Keys.live_watched("m1") == "arena:live-watched:m1"
    assert Keys.AUTHORS == "arena:authors"
    assert Keys.author("ann") == "arena:author:ann"
    assert Keys.token("ab12") == "arena:token:ab12"
    assert Keys.elo_fit("spring") == "arena:elo:spring:fit"
    assert Keys.league_excluded("spring") == "arena:league:spring:excluded"
    assert Keys.bot_submitted("alpha", "2026-12-02") == "arena:bot:alpha:submitted:2026-12-02"
    assert Keys.ladder("spring", "fitdata") == "arena:league:spring:ladder:fitdata"
