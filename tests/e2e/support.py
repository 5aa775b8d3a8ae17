"""Helpers of the end-to-end tests: run the ``arena`` command (``play``, ``serve``, ``replay
verify``) as a subprocess and read what it wrote."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BOTS = Path(__file__).parent / "bots"
ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]
ADMIN_TOKEN = "e2e-admin-token-0123456789abcdef"


@dataclass
class Played:
    """One ``arena play`` run: its exit status, output and JSON report."""

    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def bot(self, name: str) -> dict[str, Any]:
        return next(b for b in self.report["bots"] if b["bot"] == name)

    def replays(self) -> list[Path]:
        return [Path(p) for m in self.report["matches"] for p in m["replays"]]

    def replay(self, rotation: int, game: int) -> dict[str, Any]:
        match = self.report["matches"][rotation]
        return json.loads(Path(match["replays"][game]).read_text())  # type: ignore[no-any-return]

    def log(self, rotation: int, seat: int) -> str:
        first = Path(self.report["matches"][rotation]["replays"][0])
        return (first.parent / f"bot-{seat}.log").read_text()


def arena(
    *args: str, env: dict[str, str] | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*ARENA, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
        stdin=subprocess.DEVNULL,
    )


def play(
    replays: Path,
    *bots: str,
    games: int = 1,
    seed: int = 7,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
) -> Played:
    """``arena play BOTS --games N --seed S --replays DIR --json`` and its parsed report."""
    args = [
        *bots,
        "--games",
        str(games),
        "--seed",
        str(seed),
        "--replays",
        str(replays),
        "--json",
        *extra,
    ]
    done = arena("play", *args, env=env)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        report = {}
    return Played(done.returncode, done.stdout, done.stderr, report)


def verify(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    assert paths, "no replay to verify"
    return arena("replay", "verify", *map(str, paths))


def faults_in(doc: dict[str, Any], seat: int | None = None) -> list[dict[str, Any]]:
    """The fault records of a replay's steps (optionally of one seat), with the step's seat."""
    out = []
    for step in doc["steps"]:
        if "fault" in step and (seat is None or step["seat"] == seat):
            out.append({"seat": step["seat"], **step["fault"]})
    return out


def notes_in(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [s for s in doc["steps"] if s.get("note") and s["kind"] == kind]


def seat_of(played: Played, rotation: int, bot: str) -> int:
    return played.report["matches"][rotation]["seats"].index(bot)


def pids_in(log: str) -> list[int]:
    return [int(p) for p in re.findall(r"E2E pid=(\d+)", log)]


class Server:
    """``arena serve`` in a subprocess, on a free loopback port, with a known admin token."""

    def __init__(self) -> None:
        env = dict(os.environ, ARENA_ADMIN_TOKEN=ADMIN_TOKEN)
        self.proc = subprocess.Popen(
            [*ARENA, "serve", "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        line = ""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            found = re.search(r"listening on (\S+)", line)
            if found:
                self.address = found.group(1).rstrip(",")
                return
            if not line and self.proc.poll() is not None:
                break
        self.stop()
        raise RuntimeError(f"arena serve did not start: {line!r}")

    @property
    def env(self) -> dict[str, str]:
        return {"ARENA_ADMIN_TOKEN": ADMIN_TOKEN}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
