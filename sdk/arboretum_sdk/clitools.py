"""What every ``arena`` subcommand shares, whichever distribution defines it.

- :class:`ArenaParser`: the parser of every command (subparsers inherit it). A usage error prints
  the usage of the command it belongs to (``arena play``, not ``arena``), then one line
  ``arena: <problem>``, and exits with status 2.
- :class:`UserError` / :class:`UsageError`: raised by a handler for a failure the user can fix;
  ``arena`` prints ``arena: <message>`` (one line on stderr) and exits 1 (2 for a usage error).
  :func:`fail` prints such a line and returns 1, for handlers that go on to return a status.
- :func:`plural`: ``plural(1, "deal")`` is ``"1 deal"``, ``plural(2, "match", "matches")`` is
  ``"2 matches"``.
- The options several commands take, defined once so that their name, type, default, choices and
  help agree everywhere: :func:`add_seed`, :func:`add_players`, :func:`add_time_control`,
  :func:`add_redis_url`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import argtypes
from .info import DEFAULT_BANK_MS, DEFAULT_FAULTS_TO_FORFEIT, DEFAULT_PER_DECISION_MS
from .webclient import AUTHOR_TOKEN_ENV, SERVER_ENV

__all__ = [
    "EXIT_FAILURE",
    "EXIT_USAGE",
    "LEADERBOARD_HEADERS",
    "LEADERBOARD_RIGHT",
    "PREFIX",
    "ArenaParser",
    "UsageError",
    "UserError",
    "add_players",
    "add_redis_url",
    "add_seed",
    "add_server_options",
    "add_time_control",
    "fail",
    "leaderboard_cells",
    "leaderboard_text",
    "leaderboard_title",
    "output_dir",
    "output_file",
    "plural",
    "remote",
    "say_error",
    "server_of",
    "table",
]

PREFIX = "arena: "
EXIT_FAILURE = 1
EXIT_USAGE = 2


class UserError(Exception):
    """A failure the user can act on: printed as ``arena: <message>``, exit status 1."""

    status = EXIT_FAILURE


class UsageError(UserError):
    """Bad input on the command line found after parsing: ``arena: <message>``, exit status 2."""

    status = EXIT_USAGE


def say_error(message: str) -> None:
    """Print ``arena: <message>`` on stderr: one line (a message's own line breaks are folded)."""
    line = " ".join(str(message).split())
    print(f"{PREFIX}{line}", file=sys.stderr, flush=True)


def fail(message: str, status: int = EXIT_FAILURE) -> int:
    """Print ``arena: <message>`` on stderr and return ``status`` (for ``return fail(...)``)."""
    say_error(message)
    return status


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 deal"``, ``"2 deals"``; ``many`` for an irregular plural (``"matches"``)."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {many if many is not None else word + 's'}"


class ArenaParser(argparse.ArgumentParser):
    """An ``arena`` command's parser: errors name the command they belong to.

    argparse hands the arguments a subcommand does not know back to the top-level parser, which
    then reports them under the top-level usage; this parser reports them itself. A parser made
    with ``accept_extras=True`` takes whatever follows it (a placeholder for a subcommand whose
    distribution is not installed: its handler says what to install).
    """

    def __init__(self, *args: Any, accept_extras: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.accept_extras = accept_extras

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and not self.accept_extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, [] if self.accept_extras else extras

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        say_error(f"{message} (see: {self.prog} --help)")
        raise SystemExit(EXIT_USAGE)


def add_seed(parser: argparse.ArgumentParser, what: str = "match seed") -> None:
    """``--seed S``: 0 to 2**64-1; by default a random one, which the command prints."""
    parser.add_argument(
        "--seed",
        type=argtypes.seed,
        default=None,
        metavar="S",
        help=f"{what}, 0 to 2**64-1 (default: a random one, printed)",
    )


def add_players(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """``--players P``: 2, 3 or 4 seats per game (default 2 unless required)."""
    parser.add_argument(
        "--players",
        type=argtypes.players,
        default=None if required else 2,
        required=required,
        metavar="P",
        help="seats per game: 2, 3 or 4" + ("" if required else " (default 2)"),
    )


def add_time_control(parser: argparse.ArgumentParser, *, faults: bool = True) -> None:
    """``--per-decision-ms``, ``--bank-ms`` and (with ``faults``) ``--faults-to-forfeit``, with the
    referee's defaults (docs/referee.md)."""
    parser.add_argument(
        "--per-decision-ms",
        type=argtypes.positive,
        default=DEFAULT_PER_DECISION_MS,
        metavar="MS",
        help=f"free time per decision in ms (default {DEFAULT_PER_DECISION_MS})",
    )
    parser.add_argument(
        "--bank-ms",
        type=argtypes.non_negative,
        default=DEFAULT_BANK_MS,
        metavar="MS",
        help=f"time bank per seat per game in ms (default {DEFAULT_BANK_MS})",
    )
    if faults:
        parser.add_argument(
            "--faults-to-forfeit",
            type=argtypes.positive,
            default=DEFAULT_FAULTS_TO_FORFEIT,
            metavar="N",
            help=f"faults in a game that forfeit it (default {DEFAULT_FAULTS_TO_FORFEIT})",
        )


def add_redis_url(parser: argparse.ArgumentParser, *, default: Any = None) -> None:
    """``--redis-url URL``: the league's Redis (else ``$REDIS_URL``, else localhost)."""
    parser.add_argument(
        "--redis-url",
        metavar="URL",
        default=default,
        help="the league's Redis: redis://HOST:PORT/DB or unix:///PATH "
        "(default: $REDIS_URL, else redis://localhost:6379/0)",
    )


def output_dir(path: Path, what: str = "replays") -> Path:
    """Create ``path`` (and its parents) for writing ``what`` into it, or raise :class:`UserError`
    naming the problem (a file in the way, no permission): before any work is done."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserError(f"cannot write {what} to {path}: it exists and is not a folder") from None
    except OSError as exc:
        raise UserError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None
    if not path.is_dir():
        raise UserError(f"cannot write {what} to {path}: it is not a folder")
    try:
        fd, probe = tempfile.mkstemp(dir=path, prefix=".arena-probe-")
    except OSError as exc:
        raise UserError(f"cannot write {what} to {path}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    return path


def output_file(path: Path, what: str = "the output") -> Path:
    """Check that ``path`` can be written (its folder is created), or raise :class:`UserError`."""
    if path.is_dir():
        raise UserError(f"cannot write {what} to {path}: it is a folder")
    output_dir(path.parent if str(path.parent) else Path("."), what)
    return path


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """A plain-text table: the headers, a rule, the rows; the columns of ``right`` (indexes)
    right-aligned, the others left-aligned."""
    right = right or set()
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: list[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(row) for row in rows)])


LEADERBOARD_HEADERS = [
    "#", "bot", "version", "fitted", "± 95%", "lower end", "live", "elo", "games", "wins",
    "win share", "mean rank",
]  # fmt: skip
"""The columns of ``arena leaderboard``; every one but bot and version is right-aligned."""
LEADERBOARD_RIGHT = {0, 3, 4, 5, 6, 7, 8, 9, 10, 11}


def leaderboard_title(league: str, all_versions: bool) -> str:
    shown = (
        "every version, * = the bot's row"
        if all_versions
        else "each bot by its best established version"
    )
    return (
        f"leaderboard of league {league} (fitted rating, ranked by the lower end of its 95% "
        f"interval; ? = provisional; {shown})"
    )


def leaderboard_text(league: str, cells: list[list[str]], all_versions: bool) -> str:
    """``arena leaderboard``'s title and table (:func:`leaderboard_cells` each row), or its
    title and "no results yet"."""
    title = leaderboard_title(league, all_versions)
    if not cells:
        return f"{title}\nno results yet"
    return f"{title}\n{table(LEADERBOARD_HEADERS, cells, LEADERBOARD_RIGHT)}"


def leaderboard_cells(row: dict[str, Any], all_versions: bool) -> list[str]:
    """One row of ``arena leaderboard``, from a row of the web API's leaderboard (``arena
    leaderboard`` through a server; the league's own command gives its board's rows in the same
    fields)."""
    fitted = row["fitted_rating"]
    mean_rank = row["mean_rank"]
    return [
        str(row["rank"]),
        row["bot"],
        row["version"][:12] + ("*" if all_versions and row["counted"] else ""),
        "-" if fitted is None else f"{fitted:.0f}{'?' if row['provisional'] else ''}",
        "-" if fitted is None else f"± {(row['fitted_high'] - row['fitted_low']) / 2:.0f}",
        f"{row['conservative']:.0f}",
        f"{row['live_rating']:.0f}",
        f"{row['elo']:.1f}",
        str(row["games"]),
        str(row["wins"]),
        f"{row['win_share']:.1f}",
        "-" if mean_rank is None else f"{mean_rank:.2f}",
    ]


def server_of(args: argparse.Namespace) -> str | None:
    """The web server a command is sent to: ``--server``, else ``$ARENA_SERVER``, else None."""
    return getattr(args, "server", None) or os.environ.get(SERVER_ENV) or None


def remote(args: argparse.Namespace) -> bool:
    """Whether the command goes to a web server (``--server`` or ``$ARENA_SERVER``) rather than
    to the league's Redis (every command that can do either asks this)."""
    return server_of(args) is not None


def add_server_options(
    parser: argparse.ArgumentParser, what: str = "", *, redis_too: bool = True
) -> None:
    """``--server`` and the author token; ``redis_too``: the command also runs on the league's
    Redis without them."""
    g = parser.add_argument_group(
        "through the web server (an author, no Redis)", what[0].upper() + what[1:] if what else None
    )
    g.add_argument(
        "--server",
        metavar="URL",
        help=f"the league's web server, e.g. http://arena.example:8080 (or ${SERVER_ENV})"
        + ("; without it the command reads the league's Redis" if redis_too else ""),
    )
    g.add_argument("--token", help=f"your author token (or ${AUTHOR_TOKEN_ENV})")
    g.add_argument("--token-file", type=Path, metavar="FILE", help="read the author token here")
