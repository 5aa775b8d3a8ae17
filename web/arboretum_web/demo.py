"""Demo data for the web viewer: real games played in-process, stored through the league's modules.

:func:`seed_demo` submits a few bots (through the registry, as content-hash versions, two of them
owned by authors), schedules a league (``schedule.round_robin`` + ``store.create_matches``),
plays every match in this process with the SDK's built-in policies (the engine's
:class:`arboretum.ReplayRecorder` writes the replays), records each result with
``ratings.record_result`` and stores the replay and a bot log. Optionally one more match is left
*running* with a partial replay, to show what a game in progress looks like.

No referee, sandbox or worker is involved: it is a fixture for tests and screenshots, not a league.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arboretum import GameState, ReplayRecorder, SeatView, derive_game_seed
from arboretum.decisions import Decision
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot
from arboretum_sdk.output import MARK
from arboretum_worker import botoutput, ratings, registry, replays, store
from arboretum_worker.schedule import MatchSpec, balanced_games_per_pairing, round_robin

from . import authors

if TYPE_CHECKING:
    import redis

__all__ = ["DemoData", "play_match", "publish_live", "seed_demo"]

Policy = Callable[[SeatView], Decision]


def _mixed(greedy_share: float, seed: int) -> Policy:
    greedy, rand, rng = GreedyBot(), RandomBot(seed), random.Random(seed)
    return lambda view: (greedy if rng.random() < greedy_share else rand).choose(view)


@dataclass(frozen=True)
class DemoBot:
    name: str
    owner: str | None
    source: str
    policy: Callable[[int], Policy]
    """A fresh policy for a game, from a seed."""


def _source(title: str, base: tuple[str, str]) -> str:
    return (
        f'"""{title}"""\n\nimport arboretum_sdk.bots.{base[0]} as builtin\n\n\n'
        f"class DemoBot(builtin.{base[1]}):\n    pass\n"
    )


DEMO_BOTS: tuple[DemoBot, ...] = (
    DemoBot(
        "oakheart",
        "alice",
        _source("Oakheart v1: greedy half the time.", ("greedy", "GreedyBot")),
        lambda seed: _mixed(0.5, seed),
    ),
    DemoBot(
        "oakheart",
        "alice",
        _source("Oakheart v2: always greedy.", ("greedy", "GreedyBot")),
        lambda seed: GreedyBot().choose,
    ),
    DemoBot(
        "sapling",
        "bob",
        _source("Sapling: greedy, with a random move one time in four.", ("greedy", "GreedyBot")),
        lambda seed: _mixed(0.75, seed),
    ),
    DemoBot(
        "random",
        None,
        _source("The built-in random bot.", ("random_bot", "RandomBot")),
        lambda seed: RandomBot(seed).choose,
    ),
)


@dataclass
class DemoData:
    league: str
    versions: dict[str, str] = field(default_factory=dict)
    """version id -> bot name."""
    tokens: dict[str, str] = field(default_factory=dict)
    """author -> token."""
    matches: list[str] = field(default_factory=list)
    """Finished match ids, in the order played."""
    running: str | None = None
    """A match left running (with a partial replay), if asked for."""
    replays: dict[str, dict[str, Any]] = field(default_factory=dict)
    """match id -> the replay document of its game 0."""


def _label(r: redis.Redis, vid: str) -> str:
    version = store.get_version(r, vid)
    return f"{version.name}@{vid[:8]}" if version else vid[:12]


def play_match(
    r: redis.Redis,
    spec: MatchSpec,
    policies: dict[str, Callable[[int], Policy]],
    *,
    stop_after: int | None = None,
    finished: float | None = None,
) -> dict[str, Any]:
    """Play the match's one game in-process; record it unless stopped after ``stop_after`` steps.

    Returns the replay document (partial, ``"complete": false``, when stopped).
    """
    seed = derive_game_seed(spec.seed, 0)
    state = GameState.new(len(spec.seats), seed)
    recorder = ReplayRecorder(
        state, match_id=spec.match_id, seats=[_label(r, v) for v in spec.seats], game_index=0
    )
    seat_policies = [policies[v](seed + i) for i, v in enumerate(spec.seats)]
    store.start_match_attempt(r, spec.match_id, "web-demo")
    steps = 0
    while not state.is_over:
        if stop_after is not None and steps >= stop_after:
            doc = recorder.partial_json()
            replays.save_replay(r, spec.match_id, 0, json.dumps(doc))
            return doc
        seat = state.current_seat
        recorder.apply(seat_policies[seat](state.view(seat)), ms=round(random.uniform(0.2, 3), 3))
        steps += 1
    doc = recorder.to_json()
    doc["match_seed"] = str(spec.seed)
    result = state.result()
    outcome = store.MatchResult(
        match_id=spec.match_id,
        league=spec.league,
        seats=spec.seats,
        games=(store.GameOutcome(result.ranks, result.totals, (0,) * len(spec.seats)),),
        finished=time.time() if finished is None else finished,
    )
    league = store.get_league(r, spec.league)
    ratings.record_result(r, outcome, league.settings.elo if league else None)
    replays.save_replay(r, spec.match_id, 0, json.dumps(doc))
    for seat, vid in enumerate(spec.seats):
        text = f"[{_label(r, vid)}] seat {seat}: match {spec.match_id} over, "
        text += f"total {result.totals[seat]}\n"
        replays.append_bot_log(r, spec.match_id, seat, text.encode())
        _demo_output(r, spec.match_id, seat, _label(r, vid), doc)
    return doc


def _demo_output(r: redis.Redis, match_id: str, seat: int, label: str, doc: dict[str, Any]) -> None:
    """Output per decision, as a bot that prints during every fourth of its decisions leaves
    it: marker lines split by the league's own module (botoutput.py)."""
    nonce = "0123456789abcdef"
    steps = botoutput.decision_steps([doc])
    text = f"[{label}] ready\n"
    mine = [n for n, at in sorted(steps.items()) if at.seat == seat]
    for k, number in enumerate(mine):
        if k % 4 == 3:
            step = doc["steps"][steps[number].step]
            what = step.get("card") or step.get("source")
            text += f"\n{MARK}{nonce} {number}\n[{label}] considering {what}\n"
            text += f"[{label}] {k + 1} decisions so far\n\n{MARK}{nonce}\n"
    botoutput.save_output(r, match_id, seat, botoutput.split_output(text, nonce, steps, seat).doc)


def seed_demo(
    r: redis.Redis,
    *,
    league: str = "demo",
    players: int = 2,
    games_per_pairing: int | None = None,
    seed: int = 2026,
    bots: Sequence[DemoBot] = DEMO_BOTS,
    running: bool = False,
    limit: int | None = None,
) -> DemoData:
    """Create authors, bots, a league, and play its matches (``limit``: at most that many;
    ``games_per_pairing``: the balanced default of a league, (players - 1)!, unless given)."""
    data = DemoData(league=league)
    if games_per_pairing is None:  # balanced seat orders, as every league is by default
        games_per_pairing = balanced_games_per_pairing(players)
    for owner in sorted({b.owner for b in bots if b.owner}):
        if authors.get_author(r, owner) is None:
            data.tokens[owner] = authors.add_author(r, owner)
    policies: dict[str, Callable[[int], Policy]] = {}
    for bot in bots:
        vid = registry.add_version(r, bot.name, bot.source.encode(), owner=bot.owner)
        data.versions[vid] = bot.name
        policies[vid] = bot.policy
    settings = store.LeagueSettings(
        players=players,
        games_per_pairing=games_per_pairing,
        bots=tuple(data.versions),
        seed=seed,
        deals_per_series=1,
    )
    store.create_league(r, league, settings, created=time.time())
    specs = round_robin(league, list(settings.bots), players, games_per_pairing, seed)
    store.create_matches(r, specs)
    store.set_league_status(r, league, store.LeagueStatus.RUNNING)
    to_play = specs if limit is None else specs[:limit]
    for i, spec in enumerate(to_play):
        if running and i == len(to_play) - 1:
            data.replays[spec.match_id] = play_match(r, spec, policies, stop_after=23)
            data.running = spec.match_id
            publish_live(r, spec.match_id, data.replays[spec.match_id])
            continue
        data.replays[spec.match_id] = play_match(r, spec, policies)
        data.matches.append(spec.match_id)
    if len(to_play) == len(specs) and not running:
        store.set_league_status(r, league, store.LeagueStatus.FINISHED)
    return data


def publish_live(r: redis.Redis, match_id: str, doc: dict[str, Any]) -> None:
    """The live stream a worker would have published so far for a game in progress (its public
    events, from its partial replay), so that the match's page shows it live."""
    from arboretum_worker.live import LivePublisher

    from .replays import seat_view

    public = seat_view(doc, None)
    publisher = LivePublisher(r, match_id)
    events: list[dict[str, Any]] = [
        {"type": "start", "attempt": publisher.attempt, "players": doc["players"], "games": 1,
         "seats": [s["bot"] for s in doc["seats"]]},
        {"type": "game", "game": 0, "players": doc["players"], "species": doc["species"],
         "seats": doc["seats"], "deck_size": public["deck_size"]},
    ]  # fmt: skip
    for step in public["steps"]:
        if step.get("note"):
            continue
        keep = {k: v for k, v in step.items() if k not in ("ms", "fault", "reason", "digest")}
        events.append({"type": "step", "game": 0, "step": keep})
    publisher.publish(events)
