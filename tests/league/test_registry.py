"""Bot registry: content-addressed immutable versions (arboretum_worker.registry)."""

from __future__ import annotations

import hashlib
import stat
from pathlib import Path

import pytest
import redis

from arboretum_worker import registry, store
from arboretum_worker.registry import (
    DuplicateContentError,
    OwnerMismatchError,
    RegistryError,
    TooLargeError,
    UnknownVersionError,
)

BOT = b"from arboretum_sdk import Bot\n"


def test_version_id_is_pinned_and_order_independent() -> None:
    files = {"bot.py": BOT, "lib/util.py": b"X = 1\n"}
    vid = registry.version_id(files)
    assert vid == registry.version_id(dict(reversed(list(files.items()))))
    assert len(vid) == 64
    # The canonical listing is part of the format: changing it renames every version.
    listing = b"arboretum-bot/1\n6:bot.py\n9:print(1)\n\n8:lib/a.py\n6:A = 1\n\n"
    assert registry.version_id({"bot.py": b"print(1)\n", "lib/a.py": b"A = 1\n"}) == (
        hashlib.sha256(listing).hexdigest()
    )
    assert registry.version_id({"bot.py": b""}) == (
        "b51fb1a3f20d14492d05e44f481881e184d509495e38ae261aaf978d53647c0b"
    )
    # Moving bytes between path and content changes the id (lengths are in the listing).
    assert registry.version_id({"bot.py": b"ab", "x": b""}) != registry.version_id(
        {"bot.py": b"a", "x": b"b"}
    )


def test_add_version_is_idempotent_and_keeps_history(r: redis.Redis) -> None:
    v1 = registry.add_version(r, "alpha", BOT, owner="ann")
    assert registry.add_version(r, "alpha", {"bot.py": BOT}, owner="ann") == v1
    v2 = registry.add_version(r, "alpha", {"bot.py": BOT + b"# v2\n", "data/w.txt": b"1"})
    assert v2 != v1
    assert registry.add_version(r, "alpha", BOT) == v1  # an old version again: no new entry
    assert registry.versions(r, "alpha") == [v1, v2]
    assert registry.latest(r, "alpha") == v2
    assert registry.latest(r, "nobody") is None
    assert store.list_bots(r) == ["alpha"]
    bot = store.get_bot(r, "alpha")
    assert bot is not None and bot.owner == "ann"
    version = store.get_version(r, v2)
    assert version is not None
    assert (version.name, version.files, version.size) == ("alpha", 2, len(BOT) + 6)
    assert store.get_version_files(r, v2) == {"bot.py": BOT + b"# v2\n", "data/w.txt": b"1"}


def test_same_content_under_another_name_or_owner_is_refused(r: redis.Redis) -> None:
    registry.add_version(r, "alpha", BOT, owner="ann")
    with pytest.raises(DuplicateContentError, match="alpha"):
        registry.add_version(r, "beta", BOT)
    with pytest.raises(OwnerMismatchError):
        registry.add_version(r, "alpha", BOT + b"#", owner="bob")
    assert store.list_bots(r) == ["alpha"]
    assert store.get_bot(r, "beta") is None


def test_size_limits(r: redis.Redis) -> None:
    too_big = {"bot.py": b"x" * (registry.MAX_TOTAL_BYTES // 2), "b": b"y" * (1 + 2**19)}
    with pytest.raises(TooLargeError, match="bytes"):
        registry.add_version(r, "alpha", too_big)
    at_limit = {"bot.py": b"x" * (registry.MAX_TOTAL_BYTES // 2), "b": b"y" * 2**19}
    registry.add_version(r, "alpha", at_limit)
    many = {f"f{i}.py": b"" for i in range(registry.MAX_FILES)}
    many["bot.py"] = BOT
    with pytest.raises(TooLargeError, match="files"):
        registry.add_version(r, "beta", many)


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"main.py": BOT},
        {"bot.py": BOT, "/etc/x": b""},
        {"bot.py": BOT, "../x": b""},
        {"bot.py": BOT, "a/../x": b""},
        {"bot.py": BOT, "a//x": b""},
        {"bot.py": BOT, "a\\x": b""},
        {"bot.py": BOT, "a/": b""},
        {"bot.py": BOT, "a": b"", "a/b": b""},
        {"bot.py": "text"},
    ],
)
def test_invalid_submissions(r: redis.Redis, files: dict[str, bytes]) -> None:
    with pytest.raises(RegistryError):
        registry.add_version(r, "alpha", files)
    assert r.dbsize() == 0


def test_materialise(r: redis.Redis, tmp_path: Path) -> None:
    files = {"bot.py": BOT, "pkg/__init__.py": b"", "pkg/data.bin": bytes(range(256))}
    vid = registry.add_version(r, "alpha", files)
    out = registry.materialise(r, vid, tmp_path / "v")
    got = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert got == files
    assert not (out / "bot.py").stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    with pytest.raises(RegistryError, match="not empty"):
        registry.materialise(r, vid, out)
    with pytest.raises(UnknownVersionError):
        registry.materialise(r, "0" * 64, tmp_path / "w")
    r.hset(store.Keys.version_files(vid), "bot.py", b"tampered")
    with pytest.raises(RegistryError, match="do not match"):
        registry.materialise(r, vid, tmp_path / "x")


def test_check_hook_runs_before_storing(r: redis.Redis) -> None:
    seen: list[set[str]] = []

    def accept(path: Path) -> None:
        seen.append({p.name for p in path.iterdir()})

    def reject(path: Path) -> None:
        raise RegistryError("bot does not import")

    with pytest.raises(RegistryError, match="does not import"):
        registry.add_version(r, "alpha", BOT, check=reject)
    assert r.dbsize() == 0
    vid = registry.add_version(r, "alpha", BOT, check=accept)
    assert seen == [{"bot.py"}]
    assert registry.add_version(r, "alpha", BOT, check=reject) == vid  # known: not re-checked


def test_a_bot_gets_at_most_its_quota_of_new_versions_a_utc_day(r: redis.Redis) -> None:
    checked: list[Path] = []
    morning = 1796205600.0  # 2026-12-02 10:00 UTC
    first = registry.add_version(r, "mine", b"x = 1\n", quota=2, now=morning, check=checked.append)
    registry.add_version(r, "mine", b"x = 2\n", quota=2, now=morning + 60, check=checked.append)
    assert registry.submissions_today(r, "mine", now=morning) == 2
    with pytest.raises(registry.QuotaExceededError) as over:
        registry.add_version(r, "mine", b"x = 3\n", quota=2, now=morning, check=checked.append)
    assert over.value.retry_after == 14 * 3600  # until midnight UTC
    assert str(over.value) == (
        "bot 'mine' has had its 2 new versions today (at most 2 a UTC day): the next one is "
        "accepted in 14 h 0 min"
    )
    assert len(checked) == 2  # refused before the check runs
    assert len(registry.versions(r, "mine")) == 2
    # files that are already a version store and count nothing, so they are never refused
    assert registry.add_version(r, "mine", b"x = 1\n", quota=2, now=morning) == first
    # the next day, and for another bot, there is room again; a quota of 0 is none
    registry.add_version(r, "mine", b"x = 3\n", quota=2, now=morning + 14 * 3600)
    registry.add_version(r, "other", b"y = 1\n", quota=2, now=morning)
    for n in range(3):
        registry.add_version(r, "free", f"z = {n}\n".encode(), quota=0, now=morning)
    assert registry.submissions_today(r, "free", now=morning) == 3
    key = store.Keys.bot_submitted("mine", "2026-12-02")
    assert 0 < r.ttl(key) <= 2 * 86400
    with pytest.raises(RegistryError, match="a quota is 0"):
        registry.add_version(r, "mine", b"x = 9\n", quota=-1)


def test_the_quota_setting_from_the_environment() -> None:
    assert registry.quota_from_env({}) == registry.DEFAULT_SUBMIT_QUOTA == 5
    assert registry.quota_from_env({"ARENA_SUBMIT_QUOTA": "12"}) == 12
    assert registry.quota_from_env({"ARENA_SUBMIT_QUOTA": "0"}) == 0
    for bad in ("-1", "five", "2.5"):
        with pytest.raises(RegistryError, match="ARENA_SUBMIT_QUOTA must be a whole number"):
            registry.quota_from_env({"ARENA_SUBMIT_QUOTA": bad})
