"""Casual games end to end: a scripted person plays through the module API the web uses
(``arboretum_worker.casual``) against the built-in greedy bot, on real ``arena worker``
processes (rq), the referee inside them, greedy in its sandbox and the person's relay over the
referee's real gRPC stream. Each replay verifies with the engine."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from arboretum import verify_replay
from arboretum_sdk.stdio import lines
from arboretum_worker import league, registry, replays
from arboretum_worker.casual import (
    CasualError,
    CasualGame,
    CasualSettings,
    Status,
    get_game,
    pending,
    read_feed,
    record_for_version,
    resign,
    start_game,
    submit,
)

from .conftest import BOTS, Arena

pytestmark = [pytest.mark.integration, pytest.mark.timeout(420)]

SETTINGS = CasualSettings()


def greedy(arena: Arena) -> str:
    return registry.add_version(
        arena.r, "greedy", league.builtin_bot_files("greedy"), check=league.sandbox_check("auto")
    )


def start(arena: Arena, players: int, settings: CasualSettings = SETTINGS, **kw: Any):  # type: ignore[no-untyped-def]
    kw.setdefault("address", "192.0.2.1")
    kw.setdefault("seat", None)
    return start_game(
        arena.r, opponents=["greedy"] * (players - 1), author=None, settings=settings, **kw
    )


def refused(status: int, call, *args) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(CasualError) as info:
        call(*args)
    assert info.value.status == status, str(info.value)
    return str(info.value)


def play(
    arena: Arena, game: CasualGame, key: str, *, answer: bool = True, on_request: Any = None,
    timeout: float = 180,
) -> list[dict[str, Any]]:  # fmt: skip
    """Read the game's feed to its end, answering each request with a random legal decision
    (``on_request(message)`` first, if given; it returns False to leave the request alone)."""
    r, rng = arena.r, random.Random(game.game_id)
    after, messages = "0", []
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, f"no end after {timeout} s\n" + arena.worker_logs()
        for stream_id, message in read_feed(r, game.game_id, after, block_ms=1000):
            after = stream_id
            messages.append(message)
            if message["type"] in ("match_end", "error"):
                return messages
            if message["type"] != "request" or not answer:
                continue
            if (pending(r, game.game_id) or {}).get("id") != message["id"]:
                continue  # read late: no longer pending
            if on_request is not None and on_request(message) is False:
                continue
            view = lines.view_from_json(message["view"])
            decision = rng.choice(list(view.legal_decisions()))
            submit(r, game.game_id, key, {"id": message["id"], **lines.decision_to_json(decision)})


def check_finished(arena: Arena, game: CasualGame, messages: list[dict[str, Any]]) -> dict:
    """The game is over and recorded; its replay verifies and agrees with the feed."""
    types = [m["type"] for m in messages]
    assert types[:4] == ["queued", "started", "match_start", "game_start"], types
    assert types[-2:] == ["game_end", "match_end"], types
    assert "seed" not in messages[3] and "error" not in types
    end = messages[-1]
    assert end["status"] == "finished" and end["replay"] == f"/play/{game.game_id}/replay"
    over = get_game(arena.r, game.game_id)
    assert over.status == Status.OVER and over.replay_id and over.ended
    doc = json.loads(replays.get_replay(arena.r, over.replay_id, 0) or b"{}")
    result = verify_replay(doc)
    assert list(result.ranks) == over.result["ranks"] == messages[-2]["result"]["ranks"]
    assert doc["seats"][game.person_seat]["bot"] == "person"
    assert all(s["bot"].startswith("greedy@") for s in doc["seats"] if s["bot"] != "person")
    assert pending(arena.r, game.game_id) is None
    # Every step of the replay reached the page as an event, in order (a deck draw of another
    # seat without its card), and nothing else did.
    events = [e for m in messages if m["type"] in ("request", "game_end") for e in m["events"]]
    steps = [
        {k: v for k, v in s.items() if k not in ("turn", "digest", "ms", "fault", "reason")}
        for s in doc["steps"]
        if s.get("kind") in ("draw", "play", "forfeit")
    ]
    for step in steps:
        if step.get("source") == "deck" and step["seat"] != game.person_seat:
            step["card"] = None
    assert events == steps
    return doc


def bad_decisions(arena: Arena, game: CasualGame, key: str, message: dict) -> list[str]:
    """Every bad decision on a pending request is refused in words and changes nothing (the
    request stays pending): a stale page, another seat's key, an illegal decision."""
    r, number = arena.r, message["id"]
    out = [
        refused(409, submit, r, game.game_id, key, {"id": number - 1, "draw": "deck"}),
        refused(403, submit, r, game.game_id, "another seat's key", {"id": number}),
    ]
    if message["kind"] == "play":
        hand = message["view"]["hand"]
        bad = {"id": number, "play": hand[0], "cell": [5, 5], "discard": hand[1]}
    else:
        bad = {"id": number, "draw": game.players}  # no such pile
    out.append(refused(400, submit, r, game.game_id, key, bad))
    assert pending(r, game.game_id)["id"] == number
    return out


def wait_casual_workers(arena: Arena, count: int) -> None:
    from rq import Queue, Worker

    queue = Queue("arena-casual", connection=arena.r)
    deadline = time.monotonic() + 60
    while len(Worker.all(queue=queue)) < count:
        assert time.monotonic() < deadline, arena.worker_logs()
        time.sleep(0.05)


def niceness(pid: int) -> int:
    """A process's nice value (``/proc/PID/stat``, the 19th field)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[16])


def test_a_person_plays_whole_games_at_2_3_and_4_players(arena: Arena) -> None:
    """On a worker of the casual games only (ARENA_QUEUES=casual, as docker-compose runs them)."""
    vid = greedy(arena)
    arena.env["ARENA_QUEUES"] = "casual"
    worker = arena.start_worker()
    wait_casual_workers(arena, 1)
    # A worker of casual games only runs at a lower CPU priority (docs/league.md, "Casual games").
    assert niceness(worker.pid) == 10
    r = arena.r
    games = 0
    for players in (2, 3, 4):
        game, key = start(arena, players)
        assert game.players == players
        # Out of turn (nothing pending yet, or another decision): refused.
        refused(409, submit, r, game.game_id, key, {"id": 0, "draw": "deck"})
        checked: list[str] = []

        def first_request(
            message: dict[str, Any], game: CasualGame = game, key: str = key, out: list = checked
        ) -> bool:
            if not out:
                out.extend(bad_decisions(arena, game, key, message))
            return True

        messages = play(arena, game, key, on_request=first_request)
        assert "stale" in checked[0] and "not your seat" in checked[1]
        assert "illegal decision" in checked[2], checked[2]
        check_finished(arena, game, messages)
        requests = [m for m in messages if m["type"] == "request"]
        accepted = [m["id"] for m in messages if m["type"] == "accepted"]
        assert accepted == [m["id"] for m in requests] and len(requests) > 10
        assert not [m for m in messages if m["type"] in ("fault", "rejected")]
        assert any(e["seat"] != game.person_seat for m in requests for e in m["events"])
        games += players - 1
        # Over: every decision and a resignation are refused as such.
        refused(410, submit, r, game.game_id, key, {"id": requests[-1]["id"] + 1, "draw": "deck"})
        refused(410, resign, r, game.game_id, key)
    wins, count = record_for_version(r, vid)
    assert count == games and 0 <= wins <= games


def test_resigning_an_idle_page_and_the_limits(arena: Arena) -> None:
    greedy(arena)
    workers = [arena.start_worker(), arena.start_worker()]
    arena.wait_workers(2)
    assert [niceness(w.pid) for w in workers] == [0, 0]  # every queue: the league's too
    r = arena.r
    short = CasualSettings(decision_s=1.0, bank_s=0.5, per_address=2)
    idle, idle_key = start(arena, 2, short, seat=0)
    quitter, quitter_key = start(arena, 3, CasualSettings(per_address=2), seat=1)
    # The same address may have 2 games queued or playing: a third is refused.
    assert "at most 2" in refused(429, start, arena, 2, short)

    # The idle page: its decisions time out (a fault each), the second forfeits the seat, the bot
    # plays the game to its end.
    messages = play(arena, idle, idle_key, answer=False)
    faults = [m for m in messages if m["type"] == "fault"]
    assert [f["forfeited"] for f in faults] == [False, True], faults
    assert all(f["kind"] == "timeout" for f in faults)
    doc = check_finished(arena, idle, messages)
    over = get_game(r, idle.game_id)
    assert over.result["forfeited"] == [True, False] and over.result["ranks"] == [2, 1]
    assert sum(1 for s in doc["steps"] if s.get("kind") == "forfeit") == 1

    # The person who resigns during their turn: the seat forfeits at once, the bots finish.
    answered: list[int] = []

    def resign_at_third(message: dict[str, Any]) -> bool:
        answered.append(message["id"])
        if len(answered) == 3:
            resign(r, quitter.game_id, quitter_key)
            return False
        return True

    quick = play(arena, quitter, quitter_key, on_request=resign_at_third)
    assert "resigned" in [m["type"] for m in quick]
    check_finished(arena, quitter, quick)
    over = get_game(r, quitter.game_id)
    assert over.result["forfeited"][1] and over.result["ranks"][1] == 3
    assert not [m for m in quick if m["type"] == "fault"], "a resignation is not a fault"
    # The address's games are over: it may start new ones.
    game, key = start(arena, 2, short)
    resign(r, game.game_id, key)  # before it starts, or at its first chance
    end = play(arena, game, key, answer=False)
    if end[-1]["type"] == "error":  # resigned while queued: never played
        assert end[-1]["reason"] == "you resigned before the game started"
        assert get_game(r, game.game_id).status == Status.FAILED
    else:
        assert "resigned" in [m["type"] for m in end]
        assert get_game(r, game.game_id).result["forfeited"][game.person_seat]


def test_a_bot_that_stalls_forfeits_on_its_own_clock_not_the_persons(arena: Arena) -> None:
    """The bots play on the referee's default clock, the person on the game's generous one: a
    bot that stops answering mid-game times out twice within seconds (1 s a decision, its 10 s
    bank), forfeits, and the person plays the game to its end on their own clock."""
    r = arena.r
    registry.add_version(
        r,
        "staller",
        {"bot.py": (BOTS / "stalls_later.py").read_bytes()},
        check=league.sandbox_check("auto"),
    )
    arena.start_worker()
    arena.wait_workers(1)
    game, key = start_game(
        r, opponents=["staller"], author=None, settings=SETTINGS, address="192.0.2.9", seat=0
    )
    started = time.monotonic()
    forfeited_after: list[float] = []

    def note(message: dict[str, Any]) -> bool:
        if not forfeited_after and any(e.get("kind") == "forfeit" for e in message["events"]):
            forfeited_after.append(time.monotonic() - started)
        return True

    messages = play(arena, game, key, on_request=note)
    assert not [m for m in messages if m["type"] == "fault"], "the person never faulted"
    over = get_game(r, game.game_id)
    assert over.result["forfeited"] == [False, True] and over.result["ranks"] == [1, 2]
    doc = json.loads(replays.get_replay(r, over.replay_id, 0) or b"{}")
    verify_replay(doc)
    faults = [s["fault"] for s in doc["steps"] if s.get("seat") == 1 and "fault" in s]
    kinds = [f["kind"] for f in faults]  # then the fallback's turns, each marked "forfeited"
    assert kinds[:2] == ["timeout", "timeout"] and set(kinds[2:]) <= {"forfeited"}, faults
    assert "(1000 ms per decision + 10000 ms bank)" in faults[0]["reason"], faults
    person = {"per_decision_ms": SETTINGS.per_decision_ms, "bank_ms": SETTINGS.bank_ms}
    assert doc["seat_time_controls"] == [person, {"per_decision_ms": 1000, "bank_ms": 10_000}]
    assert doc["time_control"] == person
    # forfeited in seconds: 1 s + the 10 s bank, then 1 s (the person's clock is minutes)
    assert forfeited_after and forfeited_after[0] < 60, forfeited_after
