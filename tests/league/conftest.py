"""A real ``redis-server`` for the league tests: one per session, FLUSHALL before each test.

The server runs on a free port in a temp dir (never the Redis on 6379). Only the fixtures
live here; starting the server is ``tests/redis_server.py``, so both can move up to
``tests/conftest.py`` when other suites need Redis.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

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
def redis_url(redis_server_url: str) -> str:
    """The URL of the session's server, its database emptied for this test."""
    client = redis.Redis.from_url(redis_server_url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_server_url


@pytest.fixture
def r(redis_url: str) -> Iterator[redis.Redis]:
    """A client (bytes replies) on an empty database."""
    client = redis.Redis.from_url(redis_url)
    try:
        yield client
    finally:
        client.close()
