"""Fixtures of the web tests: a real redis-server (one per session, emptied per test), data
written through the league's own modules (registry, store, ratings) by real in-process games
(``arboretum_web.demo``), and the app under Starlette's TestClient."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from starlette.testclient import TestClient

from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData, seed_demo
from redis_server import find_redis_server, start_redis_server, stop_redis_server


@pytest.fixture(scope="session")
def redis_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if find_redis_server() is None:
        pytest.fail("redis-server is not installed (Debian: apt-get install redis-server)")
    data_dir: Path = tmp_path_factory.mktemp("redis")
    url, process = start_redis_server(data_dir, appendonly=False)
    try:
        yield url
    finally:
        stop_redis_server(process)


@pytest.fixture
def r(redis_server_url: str) -> Iterator[redis.Redis]:
    """A client (bytes replies) on an empty database."""
    client = redis.Redis.from_url(redis_server_url)
    client.flushall()
    try:
        yield client
    finally:
        client.close()


class CheckRecorder:
    """A stand-in for the sandbox's import check: records the paths, refuses ``bad`` bots."""

    def __init__(self) -> None:
        self.paths: list[Path] = []

    def __call__(self, path: Path) -> None:
        from arboretum_worker.registry import CheckFailedError

        self.paths.append(path)
        entry = path / "bot.py"  # (a bot in another language has an arena.toml instead)
        if entry.is_file() and b"raise SystemExit" in entry.read_bytes():
            raise CheckFailedError("the bot failed its check in the sandbox: SystemExit")


@pytest.fixture
def check() -> CheckRecorder:
    return CheckRecorder()


@pytest.fixture
def client(r: redis.Redis, check: CheckRecorder) -> Iterator[TestClient]:
    app = create_app(WebSettings(check=check), client=r)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="session")
def demo_snapshot(redis_server_url: str) -> tuple[DemoData, dict[bytes, bytes]]:
    """The demo data, seeded once: (what was seeded, every key's DUMP)."""
    client = redis.Redis.from_url(redis_server_url)
    try:
        client.flushall()
        data = seed_demo(client, running=True)
        dump = {key: client.dump(key) for key in client.scan_iter(count=1000)}
        client.flushall()
    finally:
        client.close()
    return data, dump


@pytest.fixture
def demo(r: redis.Redis, demo_snapshot: tuple[DemoData, dict[bytes, bytes]]) -> DemoData:
    """A two-player league of four bot versions, every match played, plus one left running
    (restored from the session's snapshot into the emptied database)."""
    data, dump = demo_snapshot
    pipe = r.pipeline()
    for key, value in dump.items():
        pipe.restore(key, 0, value)
    pipe.execute()
    return data
