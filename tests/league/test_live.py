"""Live games: a match played by the worker's own code (private referee, real bot processes)
publishes its events to Redis once someone watches it, and they hold exactly the public replay's
steps, final hands and scoring: no deck card, no hand, no seed, no fault detail. A match nobody
watches writes nothing; one first watched in the middle writes all of it, from its start."""

from __future__ import annotations

import json
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from arboretum import verify_replay
from arboretum_worker import live, replays
from arboretum_worker.play import MatchPlan, SeatPlan, run_play_match
from arboretum_worker.sandbox import make_runner

SLEEPY = b'''
import time

from arboretum_sdk import Bot


class Sleepy(Bot):
    """Answers at once, except its AT-th decision of each game: too late (a timeout fault)."""

    def on_game_start(self, info):
        self.count = 0

    def choose(self, view):
        self.count += 1
        if self.count == AT:
            time.sleep(1.5)
        return view.legal_decisions()[0]
'''


SAYS_WHEN_SLEEPING = b'''
import time

from arboretum_sdk import Bot


class Slow(Bot):
    """Answers at once, except its third decision of the first game: it says so, then sleeps."""

    def on_game_start(self, info):
        self.count = 0
        self.games_seen = getattr(self, "games_seen", 0) + 1

    def choose(self, view):
        self.count += 1
        if self.games_seen == 1 and self.count == 3:
            print("sleeping", flush=True)
            time.sleep(1.0)
        return view.legal_decisions()[0]
'''


def _play(
    r: redis.Redis,
    match_id: str,
    bots: list[tuple[str, bool]],
    *,
    games: int,
    forfeit_at: int = 3,
    watched: bool | None = True,
    on_start: Any = None,
    folder: Path | None = None,
) -> Any:
    """Play a match as the league's job does, with the publisher; ``bots``: (path or built-in
    name, built-in?). ``watched``: marked as watched before it starts (as the web marks a match
    it relays; None: Redis is left alone). ``on_start(seat, log path)``: called as each seat's bot
    is started. ``folder``: the match directory, kept (default: a temporary one, removed)."""
    if watched is not None:
        r.delete(live.live_key(match_id), live.watched_key(match_id))
    if watched:
        live.mark_watched(r, match_id)
    runner = make_runner("auto")
    plan = MatchPlan(
        match_id=match_id,
        seed=1234,
        players=len(bots),
        games=games,
        per_decision_ms=600,  # the other seats answer in time even on a loaded machine
        bank_ms=0,
        faults_to_forfeit=forfeit_at,
        seats=tuple(SeatPlan(name=f"bot{i}") for i in range(len(bots))),
    )

    def start_bot(seat: int, _plan: SeatPlan, socket_path: Path, token: str, log: Path) -> Any:
        bot, builtin = bots[seat]
        if on_start is not None:
            on_start(seat, log)
        return runner.start(
            bot, socket_path=socket_path, token=token, log_path=log, builtin=builtin,
            name=f"live-test-{seat}",
        )  # fmt: skip

    if folder is not None:
        return run_play_match(
            plan, folder, start_bot, deadline_s=120, output_cap=10_000,
            live=live.LivePublisher(r, match_id),
        )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="lv-") as tmp:
        return run_play_match(
            plan,
            Path(tmp),
            start_bot,
            deadline_s=120,
            output_cap=10_000,
            live=live.LivePublisher(r, match_id),
        )


def test_a_match_nobody_watches_writes_nothing(r: redis.Redis) -> None:
    outcome = _play(
        r, "live-unwatched", [("random", True), ("greedy", True)], games=2, watched=False
    )
    assert outcome.status == "finished" and len(outcome.replays) == 2
    assert not r.exists(live.live_key("live-unwatched"))


def test_the_private_referee_writes_no_replay_files(r: redis.Redis, tmp_path: Path) -> None:
    """The job fetches the replays over gRPC: the match directory gets no replay file (the
    directory is removed after the match, so one would be written for nothing), and the
    fetched replays, stored in Redis, verify, each the game of its seed."""
    folder = tmp_path / "match"
    folder.mkdir()
    outcome = _play(
        r, "no-files", [("random", True), ("greedy", True)], games=2, watched=False, folder=folder
    )
    assert outcome.status == "finished" and len(outcome.replays) == 2
    written = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert not [name for name in written if name.endswith(".json")], written
    assert any(name.startswith("seat0") for name in written), written  # the folder was used
    for game, text in zip(outcome.games, outcome.replays, strict=True):
        assert replays.save_replay(r, "no-files", game.game_index, text)  # as the job stores it
        stored = replays.get_replay(r, "no-files", game.game_index)
        assert stored is not None
        doc = json.loads(stored)
        assert doc["seed"] == str(game.seed) and doc["game_index"] == game.game_index
        result = verify_replay(doc)
        assert list(result.ranks) == list(game.result.ranks)


def test_a_match_first_watched_in_its_middle_is_written_from_its_start(
    r: redis.Redis, tmp_path: Path
) -> None:
    """The mark comes while a bot sleeps in the first game's third decision (its log says so):
    the stream then holds the whole match, the events before the mark included."""
    if not make_runner("auto").isolating:
        pytest.skip("a submitted bot needs a sandbox (bwrap or user namespaces) on this machine")
    bot = tmp_path / "slow.py"
    bot.write_bytes(SAYS_WHEN_SLEEPING)
    marked: list[float] = []

    def mark_when_sleeping(log: Path) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if log.exists() and b"sleeping" in log.read_bytes():
                marked.append(time.time())
                live.mark_watched(r, "live-late")
                return
            time.sleep(0.01)

    def on_start(seat: int, log: Path) -> None:
        if seat == 0:
            threading.Thread(target=mark_when_sleeping, args=(log,), daemon=True).start()

    outcome = _play(
        r, "live-late", [(str(bot), False), ("random", True)], games=2, watched=False,
        on_start=on_start,
    )  # fmt: skip
    assert outcome.status == "finished" and marked
    events = _events(r, "live-late")
    _check_against_replays(events, outcome, 2)
    # nothing was written before the mark (a stream entry's id is its time in ms), though the
    # match had started, its first game and two of its steps played
    first_ms = int(r.xrange(live.live_key("live-late"), count=1)[0][0].split(b"-")[0])
    assert first_ms >= int(marked[0] * 1000) - 1


def _events(r: redis.Redis, match_id: str) -> list[dict[str, Any]]:
    entries = r.xrange(live.live_key(match_id))
    attempts = {fields[b"a"] for _id, fields in entries}
    assert len(attempts) == 1
    return [json.loads(fields[b"e"]) for _id, fields in entries]


def _public_steps(replay: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of a replay as a spectator may see them: no notes, no deck card, no timing, no
    fault, no reason, no digest (it covers the hidden cards)."""
    out = []
    for step in replay["steps"]:
        if step.get("note"):
            continue
        public = {k: v for k, v in step.items() if k not in ("ms", "fault", "reason", "digest")}
        if step["kind"] == "draw" and step["source"] == "deck":
            public["card"] = None
        out.append(public)
    return out


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _check_against_replays(events: list[dict[str, Any]], outcome: Any, games: int) -> None:
    assert events[0]["type"] == "start" and events[0]["games"] == games
    assert events[-1] == {"type": "end", "status": "finished", "games_finished": games}
    keys = _keys(events)
    for secret in (
        "seed",
        "match_seed",
        "hands",
        "deck",
        "fault",
        "ms",
        "reason",
        "clock",
        "digest",
    ):
        assert secret not in keys, secret
    for game in range(games):
        replay = json.loads(outcome.replays[game])
        mine = [e for e in events if e.get("game") == game]
        start, *steps, end = mine
        assert start["type"] == "game" and end["type"] == "game_end"
        assert start["species"] == replay["species"]
        assert start["seats"] == replay["seats"]
        assert start["deck_size"] == len(replay["deck"]) - sum(len(h) for h in replay["hands"])
        assert [e["step"] for e in steps] == _public_steps(replay)
        assert end["final_hands"] == replay["final_hands"]
        assert end["result"] == replay["result"]


def test_a_match_publishes_its_public_events(r: redis.Redis) -> None:
    outcome = _play(r, "live-builtins", [("random", True), ("greedy", True)], games=2)
    assert outcome.status == "finished"
    # the games alone (CreateMatch to the end) are a part of the job's whole part
    assert 0 < outcome.games_seconds < outcome.seconds
    events = _events(r, "live-builtins")
    _check_against_replays(events, outcome, 2)
    # every deck draw is a card nobody sees; the stream expires soon after the match
    draws = [e["step"] for e in events if e["type"] == "step" and e["step"]["kind"] == "draw"]
    assert any(d["source"] == "deck" for d in draws)
    assert all(d["card"] is None for d in draws if d["source"] == "deck")
    assert 0 < r.ttl(live.live_key("live-builtins")) <= live.LIVE_END_TTL_S


@pytest.mark.parametrize("at", [3, 4], ids=["on-a-play", "on-a-draw"])
def test_a_forfeit_is_published_as_the_replay_records_it(
    r: redis.Redis, tmp_path: Path, at: int
) -> None:
    """A seat that forfeits on a play (its turn ends) or on a draw: the forfeit step's turn is
    the replay's."""
    if not make_runner("auto").isolating:
        pytest.skip("a submitted bot needs a sandbox (bwrap or user namespaces) on this machine")
    bot = tmp_path / "sleepy.py"
    bot.write_bytes(SLEEPY.replace(b"AT", str(at).encode()))
    outcome = _play(r, "live-forfeit", [(str(bot), False), ("random", True)], games=1, forfeit_at=1)
    events = _events(r, "live-forfeit")
    forfeits = [e["step"] for e in events if e["type"] == "step" and e["step"]["kind"] == "forfeit"]
    assert [f["seat"] for f in forfeits] == [0]
    _check_against_replays(events, outcome, 1)


def test_publishing_stops_without_harm_when_redis_is_gone(tmp_path: Path) -> None:
    """A publisher whose Redis does not answer: the match plays on and finishes."""
    gone = redis.Redis(host="127.0.0.1", port=9, socket_connect_timeout=0.2)
    outcome = _play(
        gone, "live-no-redis", [("random", True), ("random", True)], games=1, watched=None
    )
    assert outcome.status == "finished" and len(outcome.replays) == 1
