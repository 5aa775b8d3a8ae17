"""The line-protocol bridge with real child processes: every way a child can misbehave.

``tests/stdio/bots/faulty.py MODE`` is a stdio bot (no SDK) that answers its second request
wrongly, as MODE says, and every other one with the first legal option. Each case plays it
against ``random`` with ``arena play "cmd:python3 faulty.py MODE" random`` (real referee, real
bridge processes, real children): the fault is in the replay with the bridge's reason, the
match finishes, the replays verify, and the child's own text never reaches the referee (it is
in the bot's log only).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from e2e.support import Played, faults_in, play, seat_of, verify

pytestmark = pytest.mark.integration

FAULTY = Path(__file__).parent / "bots" / "faulty.py"
SECRET = "SECRET-TEXT"


def run(tmp_path: Path, mode: str, *extra: str) -> Played:
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAULTY))} {mode}"
    return play(
        tmp_path,
        f"cmd:{command}",
        "random",
        games=1,
        extra=("--faults-to-forfeit", "10", *extra),
    )


def finished(played: Played) -> None:
    assert played.report, played.stdout + played.stderr
    assert all(m["status"] == "MATCH_STATUS_FINISHED" for m in played.report["matches"]), (
        played.report
    )
    checked = verify(played.replays())
    assert checked.returncode == 0, checked.stdout + checked.stderr


# mode -> (fault kind, words of the reason)
ONE_FAULT = {
    "not_json": ("malformed", "the line is not JSON (Expecting value at column 1)"),
    "list": ("malformed", "the line is a JSON list, not an object"),
    "no_id": ("malformed", 'the answer\'s "id" is missing or not an integer'),
    "wrong_id": ("malformed", "but the request's id is"),
    "wrong_kind": ("malformed", 'was asked, but the answer has "play"'),
    "bad_card": ("malformed", 'the answer\'s "draw" is neither "deck" nor a seat number'),
    "unknown_key": ("malformed", "the answer has a key the protocol does not define"),
    "overlong": ("malformed", "the line is longer than the 4096 bytes a line may have"),
    "illegal": ("illegal", ""),
    "out_of_turn": ("malformed", "while no decision was asked (out of turn)"),
}


@pytest.mark.parametrize("mode", sorted(ONE_FAULT))
def test_a_bad_line_is_one_fault_with_a_clear_reason_and_the_match_goes_on(
    tmp_path: Path, mode: str
) -> None:
    kind, words = ONE_FAULT[mode]
    played = run(tmp_path, mode)
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, mode)
        doc = played.replay(rotation, 0)
        faults = faults_in(doc, seat)
        assert [f["kind"] for f in faults] == [kind], faults
        assert words in faults[0]["reason"], faults[0]
        assert SECRET not in faults[0]["reason"]
        assert faults_in(doc, 1 - seat) == []
        log = played.log(rotation, seat)
        assert f"MISBEHAVING: {mode}" in log
        assert f"FAULT {kind}:" in log, "the child was told of its fault"
        if mode in ("unknown_key", "out_of_turn"):
            assert SECRET in log, "the bridge's log quotes the line"
    assert played.bot(mode)["crashes"] == 0


def test_a_child_that_never_answers_hits_the_clock_and_its_late_answer_is_dropped(
    tmp_path: Path,
) -> None:
    played = run(tmp_path, "silent", "--per-decision-ms", "300", "--bank-ms", "0")
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "silent")
        faults = faults_in(played.replay(rotation, 0), seat)
        assert [f["kind"] for f in faults] == ["timeout"], faults
        log = played.log(rotation, seat)
        assert "did not answer within 300 ms" in log
        assert "dropped a late answer" in log


@pytest.mark.parametrize("mode", ["crash", "close_stdout"])
def test_a_child_that_exits_or_closes_stdout_is_a_crash(tmp_path: Path, mode: str) -> None:
    played = run(tmp_path, mode)
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, mode)
        faults = faults_in(played.replay(rotation, 0), seat)
        assert faults and {f["kind"] for f in faults} <= {"crash", "forfeited"}, faults
        assert faults[0]["kind"] == "crash"
        log = played.log(rotation, seat)
        expected = (
            "the bot's command exited with status 7"
            if mode == "crash"
            else "the bot's command closed its stdout"
        )
        assert expected in log
        match = played.report["matches"][rotation]
        assert [c["seat"] for c in match["crashes"]] == [seat]
        assert "status 3" in match["crashes"][0]["note"]
    assert played.bot(mode)["crashes"] == 2


def test_a_child_that_floods_stderr_is_capped_and_never_blocked(tmp_path: Path) -> None:
    played = run(tmp_path, "flood")
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "flood")
        assert faults_in(played.replay(rotation, 0), seat) == []
        log = played.log(rotation, seat)
        assert "the bot's stderr is cut at 1048576 bytes" in log
        assert "bytes of the bot's stderr dropped" in log
        assert len(log) < 1024 * 1024 + 64 * 1024


def test_a_well_behaved_child_has_no_fault_and_its_token_is_not_passed_on(
    tmp_path: Path,
) -> None:
    """The child sees no seat token: it reaches the referee only through the bridge."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, runpy, sys\n"
        "print('TOKEN', os.environ.get('ARENA_TOKEN'), file=sys.stderr, flush=True)\n"
        f"sys.argv = ['faulty.py', 'none']\nrunpy.run_path({str(FAULTY)!r}, run_name='__main__')\n"
    )
    played = play(
        tmp_path / "replays", f"cmd:{shlex.quote(sys.executable)} {probe}", "random", games=1
    )
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "probe.py")
        assert faults_in(played.replay(rotation, 0), seat) == []
        assert "TOKEN None" in played.log(rotation, seat)


def test_a_child_that_exits_at_once_stops_its_bridge_before_the_match_starts(
    tmp_path: Path,
) -> None:
    """The bridge does not wait for a decision to notice: it exits (status 3) as soon as its
    child does, so the runner reports the crash at once and the match is played without it."""
    quits = tmp_path / "quits.py"
    quits.write_text("import sys\nprint('bye', file=sys.stderr)\nsys.exit(4)\n")
    played = play(
        tmp_path / "replays", f"cmd:{shlex.quote(sys.executable)} {quits}", "random", games=1
    )
    finished(played)
    for rotation in range(2):
        seat = seat_of(played, rotation, "quits.py")
        faults = faults_in(played.replay(rotation, 0), seat)
        assert faults and {f["kind"] for f in faults} <= {"crash", "forfeited"}, faults
        log = played.log(rotation, seat)
        assert "bye" in log
        assert "arena: the bot's command exited with status 4 before the match ended" in log
        match = played.report["matches"][rotation]
        assert "status 3 before the match started" in match["crashes"][0]["note"]
