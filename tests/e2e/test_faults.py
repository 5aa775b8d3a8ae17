"""Faulty bots as real processes written with the SDK (``tests/e2e/bots/``), through ``arena play``.

In each case the match finishes, the fault is in the replay with its reason, the later games are
clean, and the replays verify. The last test runs faulty matches next to a clean one on one shared
``arena serve``: the clean match is unaffected and the referee stays up. (The wire-level faults,
with raw stubs, are the referee's own tests.)
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .support import (
    ARENA,
    BOTS,
    Played,
    Server,
    faults_in,
    notes_in,
    pids_in,
    play,
    seat_of,
    verify,
)

pytestmark = pytest.mark.integration


def check_finished_and_verified(played: Played) -> None:
    assert played.returncode == 0, played.stdout + played.stderr
    assert played.report["ok"], played.report
    assert all(m["status"] == "MATCH_STATUS_FINISHED" for m in played.report["matches"])
    checked = verify(played.replays())
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_bot_too_slow_and_a_bot_that_plays_a_card_it_does_not_hold(tmp_path: Path) -> None:
    """One match, two faulty bots: ``slow`` sleeps past its deadline once in game 0 (a timeout),
    ``cheater`` plays a card it does not hold once in game 0 (an illegal decision)."""
    played = play(
        tmp_path,
        str(BOTS / "slow.py"),
        str(BOTS / "cheater.py"),
        games=2,
        extra=("--per-decision-ms", "1000", "--bank-ms", "500"),
    )
    check_finished_and_verified(played)
    for rotation in range(2):
        slow, cheater = seat_of(played, rotation, "slow"), seat_of(played, rotation, "cheater")
        game0 = played.replay(rotation, 0)
        timeouts = faults_in(game0, slow)
        assert timeouts and timeouts[0]["kind"] == "timeout", timeouts
        assert timeouts[0]["reason"], "a fault is recorded with its reason"
        assert notes_in(game0, "stale"), "the late answer is dropped and noted"
        illegal = faults_in(game0, cheater)
        assert [f["kind"] for f in illegal] == ["illegal"], illegal
        assert "hand" in illegal[0]["reason"].lower(), illegal[0]["reason"]
        assert faults_in(played.replay(rotation, 1)) == [], "the next game is clean"
    assert played.bot("slow")["faults"] >= 2
    assert played.bot("cheater")["faults"] == 2
    assert played.bot("cheater")["forfeits"] == 0
    # The report names each bot's first fault, why, and where its log is.
    first = played.bot("cheater")["first_fault"]
    assert first["kind"] == "illegal" and "hand" in first["reason"].lower(), first
    assert first["match_id"] == played.report["matches"][0]["match_id"] and first["game"] == 0
    assert Path(first["log"]).is_file() and Path(first["log"]).name == f"bot-{first['seat']}.log"
    assert played.bot("slow")["first_fault"]["kind"] == "timeout"


def test_a_bot_that_crashes_mid_game_is_reported_and_the_match_finishes(tmp_path: Path) -> None:
    played = play(
        tmp_path, str(BOTS / "crasher.py"), "random", games=3, extra=("--per-decision-ms", "2000")
    )
    check_finished_and_verified(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "crasher")
        assert faults_in(played.replay(rotation, 0)) == [], "the games before the crash are clean"
        crashed = played.replay(rotation, 1)
        faults = faults_in(crashed, seat)
        assert faults and faults[0]["kind"] == "crash", faults
        assert "exited" in faults[0]["reason"]
        assert crashed["result"]["seats"][seat]["forfeited"]
        assert [s for s in crashed["steps"] if s["kind"] == "forfeit" and s["seat"] == seat]
        assert faults_in(crashed, 1 - seat) == [], "the opponent is unaffected"
        # The process is gone, so the rest of the match is played by the fallback; it still ends.
        later = played.replay(rotation, 2)
        assert {f["kind"] for f in faults_in(later, seat)} <= {"crash", "forfeited"}
        assert faults_in(later, 1 - seat) == []
        match = played.report["matches"][rotation]
        assert [c["seat"] for c in match["crashes"]] == [seat]
        assert "status 3" in match["crashes"][0]["note"]
    assert played.bot("crasher")["crashes"] == 2
    assert played.bot("crasher")["forfeits"] == 4
    assert played.bot("random")["faults"] == 0
    assert "exited with status 3" in json.dumps(played.report)


def test_a_bot_that_disconnects_and_reconnects_resumes_its_seat(tmp_path: Path) -> None:
    played = play(
        tmp_path,
        str(BOTS / "reconnector.py"),
        "random",
        games=2,
        extra=("--per-decision-ms", "1000", "--bank-ms", "8000"),
    )
    check_finished_and_verified(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "reconnector")
        doc = played.replay(rotation, 0)
        assert [n["seat"] for n in notes_in(doc, "disconnect")] == [seat]
        assert [n["seat"] for n in notes_in(doc, "reconnect")] == [seat]
        assert faults_in(doc, seat) == [], "it came back within its clock: no fault"
        assert faults_in(played.replay(rotation, 1)) == []
        log = played.log(rotation, seat)
        assert "dropping the connection" in log and "match start resumed=True" in log, log
        assert len(set(pids_in(log))) == 1, "the same process reconnected"
    assert played.bot("reconnector")["faults"] == 0
    assert played.bot("reconnector")["crashes"] == 0


def test_faulty_matches_leave_a_concurrent_match_and_the_referee_unaffected(
    tmp_path: Path, server: Server
) -> None:
    def start(name: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [
                *ARENA,
                "play",
                *args,
                "--server",
                server.address,
                "--replays",
                str(tmp_path / name),
                "--json",
                "--quiet",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **server.env},
        )

    runs = {
        "clean": start("clean", "random", "greedy", "--games", "3", "--per-decision-ms", "5000"),
        "crash": start(
            "crash",
            str(BOTS / "crasher.py"),
            "random",
            "--games",
            "3",
            "--per-decision-ms",
            "300",
            "--bank-ms",
            "0",
        ),
        "cheat": start(
            "cheat", str(BOTS / "cheater.py"), "random", "--games", "2", "--per-decision-ms", "5000"
        ),
    }
    reports = {}
    for name, proc in runs.items():
        out, err = proc.communicate(timeout=110)
        assert proc.returncode == 0, (name, err)
        reports[name] = json.loads(out)
    assert server.alive(), "the referee must stay up"

    clean = reports["clean"]
    assert clean["ok"] and all(b["faults"] == 0 and b["forfeits"] == 0 for b in clean["bots"])
    clean_replays = [Path(p) for m in clean["matches"] for p in m["replays"]]
    assert len(clean_replays) == 6
    for path in clean_replays:
        assert faults_in(json.loads(path.read_text())) == []
    crash = reports["crash"]
    assert crash["ok"]
    crasher = next(b for b in crash["bots"] if b["bot"] == "crasher")
    # Over the network (a referee this runner did not start) a crash shows as a disconnect.
    assert crasher["crashes"] == 2 and crasher["forfeits"] >= 2
    kinds = {
        f["kind"]
        for m in crash["matches"]
        for p in m["replays"]
        for f in faults_in(json.loads(Path(p).read_text()))
    }
    assert "disconnect" in kinds
    assert reports["cheat"]["ok"]
    all_replays = [Path(p) for r in reports.values() for m in r["matches"] for p in m["replays"]]
    checked = verify(all_replays)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    # The referee still answers: its health service says SERVING.
    assert health(server.address) == "SERVING"


def health(address: str) -> str:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=10
        )
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
