"""Two authors drive the arena themselves, end to end: a real redis-server, a real `arena web`
process, real `arena worker` processes, and every author action made with the `arena` command
through the web server, without Redis (``REDIS_URL`` unset, ``--server`` and the author's token
only). Each action on the other author's things is refused (403) with nothing changed, and bad
input gets a clear one-line error: an unknown bot, a challenge to oneself with one version, test
bounds outside the operator's limits, a quota exceeded, a ladder not open to authors or closed."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arboretum_worker import store
from arboretum_worker.ladder import state

from .conftest import ARENA, Arena, kill_tree
from .test_league import submit_builtin

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

ALPHA = b"from arboretum_sdk.bots.greedy import GreedyBot\n\n\nclass Alpha(GreedyBot):\n    pass\n"
BETA = (
    b"from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Beta(RandomBot):\n    pass\n"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Site:
    """The arena's web server, and a way to run `arena` as each author."""

    arena: Arena
    url: str
    tokens: dict[str, Path]

    def author(
        self, who: str, *args: str, ok: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        """``arena ARGS`` as author ``who``: the server and token from the environment, no
        Redis."""
        env = {k: v for k, v in self.arena.env.items() if k != "REDIS_URL"}
        env["ARENA_SERVER"] = self.url
        env["ARENA_AUTHOR_TOKEN"] = self.tokens[who].read_text().strip()
        env["REDIS_URL"] = "redis://127.0.0.1:1/0"  # a Redis that is not there: never used
        done = subprocess.run(
            [*ARENA, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        if ok and done.returncode != 0:
            raise AssertionError(
                f"{who}: arena {' '.join(args)} exited {done.returncode}\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
            )
        return done

    def refused(self, who: str, *args: str, status: int, says: str) -> str:
        """``arena ARGS`` as ``who`` fails with one ``arena: HTTP <status>: ...`` line."""
        done = self.author(who, *args, ok=False)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"arena: HTTP {status}: "), (args, lines)
        assert says in lines[0], (args, lines[0])
        return lines[0]

    def api(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}/api/v1{path}", timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture
def site(arena: Arena, tmp_path: Path) -> Iterator[Site]:
    tokens = {}
    for who in ("alice", "bob"):
        token = arena.run("web", "author", "add", who).stdout.strip().split()[-1]
        assert token.startswith("arena_"), token
        tokens[who] = tmp_path / f"{who}.token"
        tokens[who].write_text(token + "\n")
    port = _free_port()
    log = open(tmp_path / "web.log", "wb")  # noqa: SIM115 - the process owns it
    env = {**arena.env, "ARENA_AUTHOR_MAX_MATCHES": "12"}
    web = subprocess.Popen(
        [*ARENA, "web", "--port", str(port)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(f"{url}/api/v1/health", timeout=2).close()
                break
            if time.monotonic() > deadline or web.poll() is not None:
                raise AssertionError(
                    "arena web did not start:\n" + (tmp_path / "web.log").read_text()
                )
            time.sleep(0.2)
        yield Site(arena, url, tokens)
    finally:
        kill_tree(web.pid)
        web.wait(10)


def _wait(arena: Arena, what: str, check: Any, timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n" + arena.worker_logs())
        time.sleep(0.3)


def _ladder_state(arena: Arena) -> tuple[dict[str, str], dict[str, Any]]:
    return state.members(arena.r, "lad"), {
        v: (e.bot, e.retired) for v, e in state.entries(arena.r, "lad").items()
    }


def test_two_authors_do_everything_themselves_and_nothing_to_each_other(
    site: Site, arena: Arena, tmp_path: Path
) -> None:
    # Bots: each author submits through the server (the upload checked in its sandbox).
    for who, name, source in (("alice", "alpha", ALPHA), ("bob", "beta", BETA)):
        path = tmp_path / f"{name}.py"
        path.write_bytes(source)
        out = site.author(who, "bot", "submit", str(path), "--name", name).stdout
        assert f"bot {name}: new version" in out
    path = tmp_path / "alpha2.py"
    path.write_bytes(ALPHA + b"\n# the second version\n")
    site.author("alice", "bot", "submit", str(path), "--name", "alpha")
    site.refused("bob", "bot", "submit", str(path), "--name", "alpha", status=403, says="alpha")

    listed = site.author("alice", "bot", "list").stdout
    assert "author alice: 1 bot" in listed and "alpha" in listed and "beta" not in listed
    versions = site.author("bob", "bot", "versions", "alpha").stdout.splitlines()
    assert len(versions) == 4 and versions[2].startswith("1 ") and versions[3].startswith("2 ")
    site.refused("alice", "bot", "versions", "nosuchbot", status=404, says="no bot 'nosuchbot'")

    # A ladder the operator made; authors join it once it is open to them.
    submit_builtin(arena, "random")
    submit_builtin(arena, "greedy")
    arena.start_worker()
    arena.start_worker()
    arena.wait_workers(2)
    arena.run("league", "create", "lad", "--ladder", "--bots", "random", "greedy", "--depth", "4",
              "--deals-per-series", "1")  # fmt: skip
    before = _ladder_state(arena)
    site.refused("alice", "league", "join", "lad", "alpha", status=403, says="not open to authors")
    arena.run("league", "open", "lad")
    site.refused("bob", "league", "join", "lad", "alpha", status=403, says="not yours")
    site.refused("bob", "league", "leave", "lad", "greedy", status=403, says="not yours")
    site.refused("alice", "league", "join", "lad", "nosuchbot", status=404, says="nosuchbot")
    site.refused("alice", "league", "join", "nosuchladder", "alpha", status=404, says="no league")
    assert _ladder_state(arena) == before  # nothing changed
    assert "alpha@" in site.author("alice", "league", "join", "lad", "alpha").stdout
    assert "beta@" in site.author("bob", "league", "join", "lad", "beta").stdout
    site.refused("bob", "league", "leave", "lad", "alpha", status=403, says="not yours")
    assert set(state.members(arena.r, "lad")) == {"random", "greedy", "alpha", "beta"}

    # Their bots play; each reads the matches, replays and their own bots' logs only.
    finished = store.Keys.league_status("lad", store.MatchStatus.FINISHED)

    def played(bot: str) -> list[str]:
        out = site.author("alice", "match", "list", "--bot", bot, "--status", "finished", "--ids")
        return out.stdout.split()

    _wait(arena, "alpha and beta to play", lambda: played("alpha") and played("beta"))
    assert arena.r.zcard(finished) >= 2
    match_id = played("alpha")[0]
    shown = site.author("bob", "match", "show", match_id).stdout
    assert f"match {match_id} of lad: finished" in shown and "alpha@" in shown
    site.author("alice", "match", "logs", match_id, "--bot", "alpha")
    site.refused("bob", "match", "logs", match_id, "--bot", "alpha", status=403, says="author")
    replay = tmp_path / "replay.json"
    site.author("bob", "match", "replay", match_id, "--game", "0", "-o", str(replay))
    assert json.loads(replay.read_text())["steps"]
    # One step's output, by the replay's numbers: alpha's own step, for its author only.
    doc = json.loads(replay.read_text())
    seat = next(s["seat"] for s in doc["seats"] if s["bot"].startswith("alpha@"))
    step = next(
        i for i, s in enumerate(doc["steps"]) if s["seat"] == seat and s["kind"] in ("draw", "play")
    )
    out = site.author("alice", "match", "logs", match_id, "--step", str(step)).stdout
    assert out.startswith(f"--- game 0, step {step} (turn {doc['steps'][step]['turn']}, ")
    site.refused("bob", "match", "logs", match_id, "--step", str(step), status=403, says="author")
    site.refused("alice", "match", "show", "nosuchmatch", status=404, says="no match")

    # Leaving: one's own bot only; then the operator closes the ladder.
    assert "left" in site.author("alice", "league", "leave", "lad", "alpha").stdout
    assert "alpha" not in state.members(arena.r, "lad")
    site.refused("alice", "league", "leave", "lad", "alpha", status=409, says="not in ladder")
    arena.run("league", "close", "lad")
    site.refused("alice", "league", "join", "lad", "alpha", status=409, says="closed")

    # Challenges: alpha against bob's beta, followed to its end; bob sees it, cannot cancel it.
    versions = site.author("alice", "bot", "versions", "alpha").stdout.splitlines()
    v1, v2 = (line.split()[1] for line in versions[2:4])
    done = site.author("alice", "challenge", "alpha", "beta", "--deals", "1", "--follow")
    challenge_id = done.stdout.splitlines()[0]
    assert ": finished, 2 of 2 matches played" in done.stdout, done.stdout
    assert "alpha@" in done.stdout and "beta@" in done.stdout
    seen = site.author("bob", "challenge", "--show", challenge_id).stdout
    assert f"challenge {challenge_id}: finished" in seen
    assert challenge_id in site.author("bob", "challenge", "--list").stdout
    site.refused("bob", "challenge", "--cancel", challenge_id, status=403, says="not yours")
    assert site.api(f"/challenges/{challenge_id}")["status"] == "finished"
    replay = site.api(f"/challenges/{challenge_id}/matches/0/games/0/replay")
    assert replay["steps"]
    site.refused("alice", "challenge", "alpha", "alpha", status=400, says="itself")
    site.refused("alice", "challenge", "alpha", "nosuchbot", status=404, says="nosuchbot")
    site.refused("bob", "challenge", "alpha", "beta", status=403, says="not yours")
    site.refused("alice", "bot", "prefs", "beta", "--decline-challenges", status=403,
                 says="not yours")  # fmt: skip
    assert "declines" in site.author("bob", "bot", "prefs", "beta", "--decline-challenges").stdout
    site.refused("alice", "challenge", "alpha", "beta", status=403, says="declines")
    assert "accepts" in site.author("bob", "bot", "prefs", "beta", "--accept-challenges").stdout
    site.refused("alice", "challenge", "alpha", "beta", "random", "greedy", "--deals", "1",
                 status=429, says="more than the 12")  # fmt: skip
    own = site.author("alice", "challenge", f"alpha@{v2}", f"alpha@{v1}").stdout.split()[0]
    assert "cancelled" in site.author("alice", "challenge", "--cancel", own).stdout

    # A sequential test of alice's two versions, followed to its verdict; bob cannot touch it.
    bounds = ("--elo0", "0", "--elo1", "50", "--max-pairs", "4")
    site.refused("alice", "sprt", f"alpha@{v2}", f"alpha@{v1}", "--max-pairs", "100000",
                 status=400, says="max_pairs must be 1 to")  # fmt: skip
    site.refused("bob", "sprt", f"alpha@{v2}", f"alpha@{v1}", *bounds, status=403, says="not yours")
    ran = site.author("alice", "sprt", f"alpha@{v2}", f"alpha@{v1}", *bounds)
    test_id = ran.stdout.splitlines()[0]
    assert f"test {test_id} finished" in ran.stdout, ran.stdout + ran.stderr
    test = site.api(f"/sprt/{test_id}")
    assert test["author"] == "alice" and test["pairs"] == 4 and test["matches"]
    site.refused("bob", "sprt", "--cancel", test_id, status=403, says="not yours")
    detached = site.author("alice", "sprt", f"alpha@{v2}", f"alpha@{v1}", "--max-pairs", "400",
                           "--detach")  # fmt: skip
    other = detached.stdout.split()[0]
    assert "cancelled" in site.author("alice", "sprt", "--cancel", other).stdout
    assert site.api(f"/sprt/{other}")["status"] == "cancelled"
