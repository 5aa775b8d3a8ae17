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
