"""``arena play`` end to end: full matches between built-in bots in their own processes, replays
that verify, seat rotations over the same deals, one bot process per match, and bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .support import ARENA, BOTS, arena, pids_in, play, verify

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("bots", "games"),
    [
        (("random", "greedy"), 2),
        (("greedy", "random", "random"), 1),
        (("random", "greedy", "random", "greedy"), 1),
    ],
    ids=["2p", "3p", "4p"],
)
def test_full_match_and_its_replays_verify(
    tmp_path: Path, bots: tuple[str, ...], games: int
) -> None:
    players = len(bots)
    played = play(tmp_path, *bots, games=games, seed=11)
    assert played.returncode == 0, played.stderr
    report = played.report
    assert report["ok"] and report["seed"] == 11

    # Every deal in every cyclic seat rotation: N x P games, each bot in all of them.
    assert len(report["matches"]) == players
    assert all(m["status"] == "MATCH_STATUS_FINISHED" for m in report["matches"])
    assert all(b["games"] == games * players for b in report["bots"])
    assert sum(b["wins"] for b in report["bots"]) == pytest.approx(games * players)
    assert all(1 <= b["mean_rank"] <= players for b in report["bots"])
    assert all(b["faults"] == b["forfeits"] == b["crashes"] == 0 for b in report["bots"])
    first_seats = [m["seats"][0] for m in report["matches"]]
    assert sorted(first_seats) == sorted(b["bot"] for b in report["bots"])  # everyone starts once

    paths = played.replays()
    assert len(paths) == games * players
    assert all(
        p.name == f"game-{i}.json"
        for m in report["matches"]
        for i, p in enumerate(map(Path, m["replays"]))
    )
    assert all(p.parent.parent == tmp_path for p in paths)
    checked = verify(paths)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("ok ") == len(paths)

    # The rotations replay the same deals, with the seats rotated.
    for game in range(games):
        docs = [played.replay(r, game) for r in range(players)]
        assert len({d["seed"] for d in docs}) == 1
        assert len({tuple(d["deck"]) for d in docs}) == 1
        assert docs[0]["match_seed"] == "11"
        assert [[s["bot"] for s in d["seats"]] for d in docs] == [
            m["seats"] for m in report["matches"]
        ]


def test_one_bot_process_plays_a_whole_series(tmp_path: Path) -> None:
    """A match is a series of games on one connection: a bot process starts once per match, and
    each rotation (a separate match) has fresh processes. Also: the text report."""
    bot = str(BOTS / "pidbot.py")
    done = arena("play", bot, "random", "--games", "3", "--replays", str(tmp_path), "--quiet")
    assert done.returncode == 0, done.stderr
    assert "mean score" in done.stdout and "mean rank" in done.stdout
    assert "pidbot" in done.stdout and "random" in done.stdout
    assert str(tmp_path) in done.stdout
    matches = sorted(p for p in tmp_path.iterdir() if p.is_dir())
    assert len(matches) == 2
    per_match = []
    for match in matches:
        games = sorted(p.name for p in match.glob("game-*.json"))
        assert games == [f"game-{i}.json" for i in range(3)]
        logs = [p.read_text() for p in sorted(match.glob("bot-*.log"))]
        log = next(text for text in logs if "E2E pid=" in text)
        lines = [line for line in log.splitlines() if "E2E pid=" in line]
        assert [f"game={g} " in line for g, line in enumerate(lines)] == [True] * 3, log
        pids = pids_in(log)
        assert len(set(pids)) == 1, f"the bot process restarted within a match: {log}"
        per_match.append(pids[0])
    assert per_match[0] != per_match[1], "each rotation must have its own processes"


BAD_INPUT = {
    "one-bot": (("random",), "2, 3 or 4 players"),
    "five-bots": (("random",) * 5, "2, 3 or 4 players"),
    "unknown-name": (("random", "no-such-bot"), "no-such-bot"),
    "no-bot-class": (("random", str(BOTS / "not_a_bot.py")), "no Bot subclass"),
    "no-choose-play": (
        ("random", str(BOTS / "no_play.py")),
        "NoPlay implements choose_draw but not choose_play",
    ),
    "missing-file": (("random", "missing_file.py"), "missing_file.py"),
    "zero-games": (("random", "random", "--games", "0"), "--games"),
    "negative-seed": (("random", "random", "--seed", "-1"), "--seed"),
    "zero-clock": (("random", "random", "--per-decision-ms", "0"), "--per-decision-ms"),
}


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    """Each case (run side by side) exits with status 2 and one clear message, plays nothing."""
    procs = {
        name: subprocess.Popen(
            [*ARENA, "play", *args, "--replays", str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        for name, (args, _) in BAD_INPUT.items()
    }
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (name, out, err)
        assert BAD_INPUT[name][1] in err, (name, err)
        assert "Traceback" not in err, (name, err)
    assert not list(tmp_path.iterdir()), "nothing may be played"
