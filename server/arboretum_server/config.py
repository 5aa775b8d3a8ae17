"""The referee's settings: every knob, its environment variable, its flag and its default.

Settings come from the environment, then from ``arena serve`` flags (a flag wins), and are validated
at start-up: an invalid value stops the referee with a clear message before it listens.

- listen addresses: ``ARENA_LISTEN`` (comma separated), ``--listen`` (may repeat);
  default ``127.0.0.1:50051``
- admin token: ``ARENA_ADMIN_TOKEN`` only (never on a command line, where ``ps`` shows it);
  default: generated and written to the admin token file
- admin token file: ``ARENA_ADMIN_TOKEN_FILE``, ``--admin-token-file``; default
  ``<replay dir>/admin-token``, else ``arena-admin-token-<pid>`` in the temporary directory
- replay directory: ``ARENA_REPLAY_DIR``, ``--replay-dir``; default none (replays in memory only)
- default free time per decision, L: ``ARENA_PER_DECISION_MS``, ``--per-decision-ms``; 1000
- default bank per seat per game, B: ``ARENA_BANK_MS``, ``--bank-ms``; 10000
- default faults that forfeit a game: ``ARENA_FAULTS_TO_FORFEIT``, ``--faults-to-forfeit``; 3
- default start timeout: ``ARENA_START_TIMEOUT_MS``, ``--start-timeout-ms``; 60000
- live matches at once: ``ARENA_MAX_MATCHES``, ``--max-matches``; 256
- games per match at most: ``ARENA_MAX_GAMES``, ``--max-games``; 1000
- longest a match may run (s): ``ARENA_MAX_MATCH_S``, ``--max-match-s``; 14400 (4 h)
- drain timeout on SIGTERM (s): ``ARENA_DRAIN_TIMEOUT_S``, ``--drain-timeout-s``; 60
- finished matches kept in memory: ``ARENA_KEEP_FINISHED``, ``--keep-finished``; 1000
- server reflection: ``ARENA_REFLECTION`` (1/0), ``--reflection``; off

Fixed limits (not settings): messages received are at most 256 KiB (bot answers and requests are
tiny), messages sent at most 4 MiB (a ``MatchInfo`` or a replay); a unary call runs at most 30 s; a
``Play`` stream whose deadline is under 1 s is refused as absurd, and any stream lives at most as
long as its match (``max match s``). The referee pings idle connections every 10 s and drops a
connection that does not answer within 10 s.

A listen address is ``host:port`` (TCP; port 0 picks a free port) or ``unix:/path`` (a unix
socket). The admin token is compared in constant time; when it is generated it is written to the
admin token file with mode 0600 and only the file's path is logged.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS

from .errors import SettingsError

__all__ = [
    "MAX_RECEIVE_BYTES",
    "MAX_SEND_BYTES",
    "MIN_STREAM_DEADLINE_S",
    "UNARY_TIMEOUT_S",
    "Settings",
    "add_arguments",
    "settings_from",
]

MAX_RECEIVE_BYTES = 256 * 1024
MAX_SEND_BYTES = 4 * 1024 * 1024
UNARY_TIMEOUT_S = 30.0
MIN_STREAM_DEADLINE_S = 1.0
KEEPALIVE_TIME_MS = 10_000
KEEPALIVE_TIMEOUT_MS = 10_000
MIN_CLIENT_PING_INTERVAL_MS = 30_000


@dataclass(frozen=True)
class Settings:
    """Validated referee settings. Build with keyword arguments, or :func:`settings_from`."""

    listen: tuple[str, ...] = ("127.0.0.1:50051",)
    admin_token: str | None = field(default=None, repr=False)
    admin_token_file: Path | None = None
    replay_dir: Path | None = None
    per_decision_ms: int = DEFAULT_PER_DECISION_MS
    bank_ms: int = DEFAULT_BANK_MS
    faults_to_forfeit: int = DEFAULT_FAULTS_TO_FORFEIT
    start_timeout_ms: int = 60000
    max_matches: int = 256
    max_games: int = 1000
    max_match_s: float = 4 * 3600.0
    drain_timeout_s: float = 60.0
    keep_finished: int = 1000
    reflection: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.listen, str):
            object.__setattr__(self, "listen", (self.listen,))
        object.__setattr__(self, "listen", tuple(self.listen))
        if not self.listen:
            raise SettingsError("at least one listen address is needed")
        for address in self.listen:
            check_address(address)
        if self.admin_token is not None and len(self.admin_token) < 16:
            raise SettingsError("the admin token must have at least 16 characters")
        for name, low in (
            ("per_decision_ms", 1),
            ("bank_ms", 0),
            ("faults_to_forfeit", 1),
            ("start_timeout_ms", 1),
            ("max_matches", 1),
            ("max_games", 1),
            ("keep_finished", 0),
        ):
            value = getattr(self, name)
            if type(value) is not int or value < low:
                raise SettingsError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.per_decision_ms > 600_000 or self.bank_ms > 3_600_000:
            raise SettingsError("the clock defaults are absurd (L <= 600000 ms, B <= 3600000 ms)")
        for name in ("max_match_s", "drain_timeout_s"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise SettingsError(f"{name} must be a number > 0, got {value!r}")


def check_address(address: str) -> None:
    if address.startswith("unix:"):
        if len(address) <= len("unix:"):
            raise SettingsError(f"a unix listen address needs a path: {address!r}")
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise SettingsError(f"a listen address is host:port or unix:/path, got {address!r}")


_ENV = {
    "listen": "ARENA_LISTEN",
    "admin_token": "ARENA_ADMIN_TOKEN",
    "admin_token_file": "ARENA_ADMIN_TOKEN_FILE",
    "replay_dir": "ARENA_REPLAY_DIR",
    "per_decision_ms": "ARENA_PER_DECISION_MS",
    "bank_ms": "ARENA_BANK_MS",
    "faults_to_forfeit": "ARENA_FAULTS_TO_FORFEIT",
    "start_timeout_ms": "ARENA_START_TIMEOUT_MS",
    "max_matches": "ARENA_MAX_MATCHES",
    "max_games": "ARENA_MAX_GAMES",
    "max_match_s": "ARENA_MAX_MATCH_S",
    "drain_timeout_s": "ARENA_DRAIN_TIMEOUT_S",
    "keep_finished": "ARENA_KEEP_FINISHED",
    "reflection": "ARENA_REFLECTION",
}


def _parse(name: str, text: str, kind: Any) -> Any:
    try:
        if name == "listen":
            return tuple(a.strip() for a in text.split(",") if a.strip())
        if name == "reflection":
            lowered = text.strip().lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off", ""):
                return False
            raise ValueError(text)
        if name in ("admin_token_file", "replay_dir"):
            return Path(text) if text else None
        if name == "admin_token":
            return text or None
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
    except ValueError:
        raise SettingsError(f"{_ENV[name]}: cannot read {text!r} as {name}") from None
    return text


_KINDS = {f.name: str(f.type) for f in fields(Settings)}


def _kind(name: str) -> str:
    kind = _KINDS[name]
    if kind == "int":
        return "int"
    if kind == "float":
        return "float"
    return kind


def settings_from(
    env: Mapping[str, str] | None = None, args: argparse.Namespace | None = None
) -> Settings:
    """Settings from the environment (``os.environ`` by default), overridden by parsed flags."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    for name, var in _ENV.items():
        if var in env:
            values[name] = _parse(name, env[var], _kind(name))
    if args is not None:
        for name in _ENV:
            if name == "admin_token":
                continue
            value = getattr(args, name, None)
            if value is None or value == [] or value is False:
                continue
            values[name] = tuple(value) if name == "listen" else value
    return Settings(**values)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``arena serve`` flags (every default is None: unset flags keep the environment's)."""
    parser.add_argument(
        "--listen",
        action="append",
        metavar="ADDRESS",
        help="host:port or unix:/path; may repeat (env ARENA_LISTEN; default 127.0.0.1:50051)",
    )
    parser.add_argument(
        "--admin-token-file",
        type=Path,
        metavar="FILE",
        help="where a generated admin token is written, mode 0600 (env ARENA_ADMIN_TOKEN_FILE); "
        "set ARENA_ADMIN_TOKEN to choose the token",
    )
    parser.add_argument(
        "--replay-dir", type=Path, metavar="DIR", help="replay directory (env ARENA_REPLAY_DIR)"
    )
    from arboretum_sdk import argtypes

    positive, non_negative = argtypes.positive, argtypes.non_negative
    for flag, kind, text in (
        (
            "--per-decision-ms",
            positive,
            f"default free time per decision, L (default {DEFAULT_PER_DECISION_MS})",
        ),
        (
            "--bank-ms",
            non_negative,
            f"default bank per seat per game, B (default {DEFAULT_BANK_MS})",
        ),
        (
            "--faults-to-forfeit",
            positive,
            f"default faults that forfeit a game (default {DEFAULT_FAULTS_TO_FORFEIT})",
        ),
        ("--start-timeout-ms", positive, "default wait for all seats to connect (default 60000)"),
        ("--max-matches", positive, "live matches at once (default 256)"),
        ("--max-games", positive, "games per match at most (default 1000)"),
        ("--max-match-s", float, "longest a match may run, seconds (default 14400)"),
        ("--drain-timeout-s", float, "on SIGTERM, how long games may finish (default 60)"),
        ("--keep-finished", non_negative, "finished matches kept in memory (default 1000)"),
    ):
        env = "ARENA_" + flag[2:].upper().replace("-", "_")
        parser.add_argument(flag, type=kind, metavar="N", help=f"{text} (env {env})")
    parser.add_argument(
        "--reflection",
        action="store_true",
        default=None,
        help="enable gRPC server reflection (env ARENA_REFLECTION=1)",
    )
