"""``arena play``'s report names each bot's first fault, and its first error when that came later,
with the referee's reason and the bot's log."""

from __future__ import annotations

from pathlib import Path

from arboretum_server.playreport import (
    Entrant,
    EntrantTotals,
    FirstFault,
    MatchRun,
    PlayReport,
    note_first_faults,
)


def replay(*steps: dict[str, object]) -> dict[str, object]:
    return {"steps": list(steps)}


def test_the_first_fault_of_each_bot_is_reported_with_its_log(tmp_path: Path) -> None:
    entrants = [Entrant(0, "random", "random"), Entrant(1, "/b/mine.py", "mine")]
    report = PlayReport(entrants, games=2, seed=1)
    report.totals = [EntrantTotals() for _ in entrants]
    runs = []
    for rotation, match_id in enumerate(("m-a", "m-b")):
        run = MatchRun(rotation, match_id=match_id, seats=(rotation, 1 - rotation))
        run.status = "MATCH_STATUS_FINISHED"
        run.logs = {0: tmp_path / match_id / "bot-0.log", 1: tmp_path / match_id / "bot-1.log"}
        runs.append(run)
    mine_seat = [1, 0]  # where "mine" sits in each rotation
    bad = {"kind": "malformed", "reason": "the bot raised ValueError: boom"}
    note_first_faults(runs[0], 0, replay({"seat": 0}, {"seat": 1}))
    note_first_faults(runs[0], 1, replay({"seat": 1, "fault": bad}, {"seat": 1, "fault": {}}))
    note_first_faults(runs[1], 0, replay({"seat": 0, "fault": {"kind": "timeout"}}))
    for run in runs:
        report.add(run)
    first = report.first_fault(1)
    assert first == FirstFault("m-a", 1, mine_seat[0], "malformed", bad["reason"], runs[0].logs[1])
    assert report.first_fault(0) is None, "random never faulted"
    text = report.format()
    assert (
        f"first fault of mine: match m-a game 1 seat 1: malformed: the bot raised ValueError: "
        f"boom; its log: {runs[0].logs[1]}"
    ) in text, text
    assert "first fault of random" not in text
    json_report = report.to_json()
    assert json_report["bots"][1]["first_fault"]["reason"] == bad["reason"]
    assert json_report["bots"][0]["first_fault"] is None
    assert json_report["bots"][1]["first_error"] is None, "no bot_error"
    assert "first error of" not in text


def test_the_first_error_is_shown_when_a_fault_came_before_it(tmp_path: Path) -> None:
    """A bot that timed out first and raised later: the summary shows both, the error with the
    log that holds its traceback; an error that is the first fault is shown once."""
    entrants = [Entrant(0, "/b/mine.py", "mine"), Entrant(1, "/b/other.py", "other")]
    report = PlayReport(entrants, games=1, seed=1)
    report.totals = [EntrantTotals() for _ in entrants]
    run = MatchRun(0, match_id="m-a", seats=(0, 1), status="MATCH_STATUS_FINISHED")
    run.logs = {0: tmp_path / "bot-0.log", 1: tmp_path / "bot-1.log"}
    slow = {"kind": "timeout", "reason": "no answer within 11000 ms"}
    error = {"kind": "bot_error", "reason": "the bot's code failed: KeyError: 'OA5'"}
    note_first_faults(
        run,
        0,
        replay(
            {"seat": 0, "fault": slow},
            {"seat": 1, "fault": error},
            {"seat": 0, "fault": error},
            {"seat": 1, "fault": slow},
        ),
    )
    report.add(run)
    text = report.format()
    assert (
        "first fault of mine: match m-a game 0 seat 0: timeout: no answer within 11000 ms" in text
    )
    assert (
        f"first error of mine: match m-a game 0 seat 0: bot_error: the bot's code failed: "
        f"KeyError: 'OA5'; its log: {run.logs[0]}"
    ) in text, text
    assert "first fault of other: match m-a game 0 seat 1: bot_error" in text
    assert "first error of other" not in text, "the first fault already is the error"
    bots = report.to_json()["bots"]
    assert bots[0]["first_fault"]["kind"] == "timeout"
    assert bots[0]["first_error"]["reason"] == error["reason"]
    assert bots[1]["first_error"] == bots[1]["first_fault"]
