"""A league's settings: its players, deals, bots, seed, clock and fault policy, Elo, series
length, compute mode and, for a continuous ladder, the ladder's; checked when built, stored as
JSON in the league's record (:mod:`arboretum_worker.store` re-exports them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, get_args

from arboretum_sdk.bot import Compute
from arboretum_sdk.clitools import plural
from arboretum_sdk.info import FaultPolicy, TimeControl
from arboretum_worker.keys import StoreError

from .schedule import DEFAULT_DEALS_PER_SERIES, ScheduleError, check_deals_per_series

__all__ = ["COMPUTE_MODES", "EloSettings", "LadderSettings", "LeagueSettings"]


@dataclass(frozen=True, slots=True)
class EloSettings:
    initial: float = 1500.0
    k: float = 32.0


@dataclass(frozen=True, slots=True)
class LadderSettings:
    """What makes a league a continuous ladder (docs/league.md, "Ladders")."""

    depth: int = 8
    """Matches the scheduler keeps queued or running (a unit of a pairing is two matches)."""
    new_games: int = 40
    """A version is new, and its pairings come first, until it has this many games."""

    def __post_init__(self) -> None:
        if type(self.depth) is not int or not 1 <= self.depth <= 1000:
            raise StoreError(
                f"ladder depth must be a whole number from 1 to 1000, not {self.depth!r}"
            )
        if type(self.new_games) is not int or not 0 <= self.new_games <= 100_000:
            raise StoreError(
                f"ladder new_games must be a whole number from 0 to 100000, not {self.new_games!r}"
            )


COMPUTE_MODES: tuple[str, ...] = get_args(Compute)
"""The values of ``LeagueSettings.compute``: the SDK's compute modes (``ARENA_COMPUTE``)."""


@dataclass(frozen=True, slots=True)
class LeagueSettings:
    players: int
    games_per_pairing: int
    """Deals per combination of bots; each is played in all ``players`` seat rotations."""
    bots: tuple[str, ...]
    """Version ids taking part."""
    seed: int
    """League seed; every match seed derives from it (schedule.match_seed)."""
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: FaultPolicy = field(default_factory=FaultPolicy)
    elo: EloSettings = field(default_factory=EloSettings)
    deals_per_series: int = DEFAULT_DEALS_PER_SERIES
    """Most deals one match (a series: one seating, the same bot processes) plays. Leagues
    stored before series existed have none in their JSON and read as 1 (one game per match)."""
    compute: str = "fixed"
    """The bots' compute mode, ``ARENA_COMPUTE`` in their sandbox: ``fixed`` (a searching bot
    spends a fixed number of simulations, so a game re-runs bit for bit) or ``time`` (a wall-clock
    budget). Leagues stored before the setting existed read as ``time``, what they played with."""
    ladder: LadderSettings | None = None
    """Set for a continuous ladder (2 players; ``games_per_pairing`` unused); None for a round
    robin (absent from its JSON)."""

    def __post_init__(self) -> None:
        if self.players not in (2, 3, 4):
            raise StoreError(f"players must be 2, 3 or 4, not {self.players!r}")
        if self.games_per_pairing < 1:
            raise StoreError(f"games_per_pairing must be 1 or more, not {self.games_per_pairing}")
        try:
            check_deals_per_series(self.deals_per_series)
        except ScheduleError as exc:
            raise StoreError(str(exc)) from None
        if len(set(self.bots)) != len(self.bots):
            raise StoreError("a league lists each bot version once")
        if len(self.bots) < self.players:
            raise StoreError(f"{plural(len(self.bots), 'bot')} cannot fill {self.players} seats")
        if not 0 <= self.seed < 1 << 64:
            raise StoreError("the league seed is an integer from 0 to 2**64-1")
        if self.time_control.per_decision_ms <= 0 or self.time_control.bank_ms < 0:
            raise StoreError("time control: per_decision_ms > 0 and bank_ms >= 0")
        if self.fault_policy.faults_to_forfeit < 1:
            raise StoreError("fault policy: faults_to_forfeit >= 1")
        if self.compute not in COMPUTE_MODES:
            choices = " or ".join(COMPUTE_MODES)
            raise StoreError(f"compute must be {choices}, not {self.compute!r}")
        if self.ladder is not None and self.players != 2:
            raise StoreError(
                f"a ladder pairs two bots per game: players must be 2, not {self.players}"
            )

    def to_json(self) -> str:
        extra: dict[str, Any] = {}
        if self.ladder is not None:
            extra["ladder"] = {"depth": self.ladder.depth, "new_games": self.ladder.new_games}
        return json.dumps(
            {
                **extra,
                "players": self.players,
                "games_per_pairing": self.games_per_pairing,
                "bots": list(self.bots),
                "seed": self.seed,
                "time_control": {
                    "per_decision_ms": self.time_control.per_decision_ms,
                    "bank_ms": self.time_control.bank_ms,
                },
                "fault_policy": {"faults_to_forfeit": self.fault_policy.faults_to_forfeit},
                "elo": {"initial": self.elo.initial, "k": self.elo.k},
                "deals_per_series": self.deals_per_series,
                "compute": self.compute,
            },
            sort_keys=True,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> LeagueSettings:
        d = json.loads(text)
        return cls(
            players=int(d["players"]),
            games_per_pairing=int(d["games_per_pairing"]),
            bots=tuple(d["bots"]),
            seed=int(d["seed"]),
            time_control=TimeControl(**d.get("time_control", {})),
            fault_policy=FaultPolicy(**d.get("fault_policy", {})),
            elo=EloSettings(**d.get("elo", {})),
            deals_per_series=int(d.get("deals_per_series", 1)),
            compute=str(d.get("compute", "time")),
            ladder=LadderSettings(**d["ladder"]) if d.get("ladder") else None,
        )
