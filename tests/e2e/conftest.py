"""End-to-end tests: ``arena play`` and ``arena serve`` as subprocesses, real bot processes, real
sockets on loopback. Every test module here is marked ``integration``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .support import Server


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    srv = Server()
    try:
        yield srv
    finally:
        srv.stop()
