"""``arena play``: the local runner. Real bot processes play a match on a referee on loopback.

It uses the league's referee and match code and its seat rotation; only the sandbox is missing::

    arena play random greedy --games 10 --seed 7
    arena play ./mybot.py random random --games 5 --per-decision-ms 200 --bank-ms 2000

**Rotations.** With P bots, ``--games N`` means N deals, each played in all P cyclic seat
rotations, N·P games in all. Rotation r is its own match of N games (bot ``(s + r) mod P`` sits at
seat s), played by fresh bot processes; every rotation has the same match seed, so the deals are
the same.

**Processes.** The referee runs in this process (asyncio, listening on ``127.0.0.1``, a free port).
Each seat of each match is its own process,
``python -m arboretum_sdk.cli bot run BOT --server ADDR``, with its seat token in the environment
(``ARENA_TOKEN``), and its output in
``<replays>/<match id>/bot-<seat>.log``. A bot process that exits before its match ends is reported
to the referee as a crash (its decisions then fault with ``crash`` at once, and the referee's fault
policy plays the rest), and the runner names it in its report. With ``--server`` the runner uses a
referee that is already running (admin token from ``ARENA_ADMIN_TOKEN``); crashes then show as
``disconnect`` faults.

**Before the matches** each author's bot is loaded once in a child process of its own, within the
start timeout (``--start-timeout-ms``): a bot that does not load (a syntax error, no ``Bot`` class,
a class missing ``choose_play``, ...) or whose import blocks is an error naming it, before any
match. One Ctrl-C (SIGINT) stops the runner at any moment, and every process it started with it.

**Output.** A progress line on stderr; per bot, over all its games: wins (a shared first place
counts as a fraction), mean score, mean rank, faults, forfeits; for each bot that faulted, its
first fault (match, game, seat, kind and the referee's reason) and the path of its log, and its
first error (a ``bot_error``: what its code raised or returned) when that came later (the report
is :mod:`arboretum_server.playreport`); the replay
files, one per game, at ``<replays>/<match id>/game-<i>.json`` (default ``replays/play``). Bad input
(an unknown bot, a bot file without a ``Bot`` class, a wrong number of bots) is an error message and
exit status 2; a match that did not finish is exit status 1; an interrupted run, 130.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk import argtypes, clitools, eventloop
from arboretum_sdk.clitools import plural
from arboretum_sdk.info import FaultPolicy, MatchStatus, TimeControl

from .botprocs import BotProcess, bot_command, reap, start_bot
from .config import Settings
from .entrants import PlayError, check_entrants, resolve_entrants
from .errors import InvalidArgument
from .matchconfig import MatchConfig
from .playreport import (
    Entrant,
    EntrantTotals,
    FirstFault,
    MatchRun,
    PlayReport,
    note_first_faults,
)
from .runner import MatchHandle, MatchRunner

if TYPE_CHECKING:
    from .remote import RemoteMatchHandle, RemoteMatchRunner

__all__ = [
    "DEFAULT_REPLAYS",
    "Entrant",
    "FirstFault",
    "LocalSession",
    "MatchRun",
    "PlayError",
    "PlayOptions",
    "PlayReport",
    "bot_command",
    "check_entrants",
    "play",
    "register",
    "rotation_seats",
]

log = logging.getLogger(__name__)

DEFAULT_REPLAYS = Path("replays/play")
MONITOR_S = 0.05
"""How often the runner looks at its bot processes while a match runs (its end wakes it)."""


def rotation_seats(players: int, rotation: int) -> tuple[int, ...]:
    """Which entrant sits at each seat in ``rotation``: seat s gets entrant (s + rotation) mod P."""
    return tuple((seat + rotation) % players for seat in range(players))


# ----------------------------------------------------------------------------- progress


class Progress:
    """One line on stderr, redrawn in place on a terminal; a line per finished match otherwise."""

    def __init__(self, total_games: int, enabled: bool = True) -> None:
        self.total = total_games
        self.done = 0
        self.enabled = enabled
        self.tty = enabled and sys.stderr.isatty()
        self.started = time.monotonic()
        self.label = ""

    def update(self, label: str | None = None, games: int = 0) -> None:
        if label is not None:
            self.label = label
        self.done += games
        if not self.tty:
            return
        width = 30
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (width - filled)
        rate = self.done / max(time.monotonic() - self.started, 1e-9)
        sys.stderr.write(
            f"\r[{bar}] {self.done}/{self.total} games  {rate:5.1f}/s  {self.label}\x1b[K"
        )
        sys.stderr.flush()

    def line(self, text: str) -> None:
        if not self.enabled:
            return
        if self.tty:
            sys.stderr.write("\r\x1b[K")
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        self.update()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


# ----------------------------------------------------------------------------- the runner


@dataclass(frozen=True)
class PlayOptions:
    specs: tuple[str, ...]
    games: int
    seed: int
    replays: Path = DEFAULT_REPLAYS
    per_decision_ms: int | None = None
    bank_ms: int | None = None
    faults_to_forfeit: int | None = None
    start_timeout_ms: int = 30000
    server: str | None = None
    """Use this running referee instead of starting one (admin token: ``admin_token``)."""
    admin_token: str | None = None
    progress: bool = True
    fetch_replays: bool = True
    """Write each game's replay (bot logs are always written)."""


OnGame = Callable[[MatchRun, Any], None]
"""``on_game(run, result)``: called as each game of a match ends (``result``: a ``GameResult``)."""


class LocalSession:
    """A referee for local matches and the bot processes of the matches played on it.

    The referee is started in this process (on loopback, a free port), or with
    ``options.server`` an already running one is used. ``arena play`` plays its rotations on one
    session; ``arena sprt`` plays its pairs on one, several matches at once::

        async with LocalSession(options) as session:
            run = await session.play_match(entrants, MatchRun(0, seats=(0, 1)), seed=7, games=2)

    Leaving the session stops every bot process still running (at once when leaving on an
    exception or a cancellation, else after :data:`.botprocs.BOT_EXIT_GRACE_S`) and then the
    referee.
    """

    def __init__(self, options: PlayOptions, *, max_games: int = 1000, keep_finished: int = 4):
        self.options = options
        self.max_games = max_games
        self.keep_finished = keep_finished
        self.runner: MatchRunner | RemoteMatchRunner | None = None
        self.reapers: list[asyncio.Task[None]] = []
        self.live: list[BotProcess] = []

    async def __aenter__(self) -> LocalSession:
        if self.options.server is None:
            self.runner = await MatchRunner.start(
                Settings(
                    listen=("127.0.0.1:0",),
                    admin_token=secrets.token_urlsafe(24),
                    max_games=self.max_games,
                    keep_finished=self.keep_finished,
                )
            )
        else:
            if not self.options.admin_token:
                raise PlayError("--server needs the referee's admin token in ARENA_ADMIN_TOKEN")
            from .remote import RemoteMatchRunner

            self.runner = RemoteMatchRunner(self.options.server, self.options.admin_token)
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is not None:
                # Interrupted or failed: stop every bot process now rather than wait for it.
                self.stop_bots()
            await asyncio.gather(*self.reapers)
        finally:
            if self.runner is not None:
                await self.runner.stop(1.0)

    def stop_bots(self) -> None:
        """Terminate every bot process of this session that is still running."""
        for bot in self.live:
            if bot.proc.poll() is None:
                bot.proc.terminate()

    async def play_match(
        self,
        entrants: list[Entrant],
        run: MatchRun,
        *,
        seed: int,
        games: int,
        progress: Progress | None = None,
        on_game: OnGame | None = None,
    ) -> MatchRun:
        """Play one match of ``games`` deals from ``seed``, the entrants seated as ``run.seats``
        says, with fresh bot processes; ``run`` is filled in and returned. The processes are left
        to exit (and then stopped) by a task, so the next match need not wait for them."""
        await _play_match(self, entrants, run, seed, games, progress or Progress(0, False), on_game)
        return run


async def play(options: PlayOptions) -> PlayReport:
    """Play every rotation and return the report. Raises :class:`PlayError` on bad input."""
    entrants = resolve_entrants(options.specs)
    await check_entrants(entrants, options.start_timeout_ms)
    players = len(entrants)
    report = PlayReport(entrants, options.games, options.seed)
    report.totals = [EntrantTotals() for _ in entrants]
    started = time.monotonic()
    progress = Progress(options.games * players, options.progress)
    async with LocalSession(
        options, max_games=max(options.games, 1000), keep_finished=players
    ) as session:
        try:
            for rotation in range(players):
                run = MatchRun(rotation, seats=rotation_seats(players, rotation))
                names = " vs ".join(entrants[i].name for i in run.seats)
                progress.update(f"match {rotation + 1}/{players}: {names}")
                await session.play_match(
                    entrants, run, seed=options.seed, games=options.games, progress=progress
                )
                report.add(run)
                for seat, _ in run.crashes:
                    report.totals[run.seats[seat]].crashes += 1
                status = run.status.removeprefix("MATCH_STATUS_").lower()
                progress.line(
                    f"match {rotation + 1}/{players} ({names}): {status}, "
                    f"{plural(len(run.results), 'game')}, {run.seconds:.1f} s, id {run.match_id}"
                )
        finally:
            progress.close()
    report.seconds = time.monotonic() - started
    return report


async def _play_match(
    session: LocalSession,
    entrants: list[Entrant],
    run: MatchRun,
    seed: int,
    games: int,
    progress: Progress,
    on_game: OnGame | None,
) -> None:
    options = session.options
    assert session.runner is not None, "the session is not entered"
    try:
        handle = await session.runner.create(_match_config(options, entrants, run, seed, games))
    except InvalidArgument as exc:
        raise PlayError(f"the referee refused the match: {exc}") from None
    run.match_id = handle.match_id
    started = time.monotonic()
    directory = options.replays / run.match_id
    directory.mkdir(parents=True, exist_ok=True)
    bots: list[BotProcess] = []
    try:
        for seat, token in enumerate(handle.tokens):
            bots.append(
                start_bot(seat, entrants[run.seats[seat]], handle.address, token, directory)
            )
            run.logs[seat] = bots[-1].log_path
            session.live.append(bots[-1])
        await _follow(handle, bots, run, progress, on_game)
        run.seconds = time.monotonic() - started
        if options.fetch_replays:
            _write_replays(run, await handle.replays(), directory)
    except asyncio.CancelledError:
        # Stopped from outside (``arena sprt`` reached its verdict): the match is dropped.
        for bot in bots:
            if bot.proc.poll() is None:
                bot.proc.terminate()
        await handle.cancel("stopped by the runner", 2.0)
        raise
    finally:
        session.reapers.append(asyncio.create_task(reap(bots)))


def _match_config(
    options: PlayOptions, entrants: list[Entrant], run: MatchRun, seed: int, games: int
) -> MatchConfig:
    """The match of one rotation: the options' clock and fault policy, else the defaults."""
    defaults = Settings()
    return MatchConfig(
        players=len(entrants),
        match_seed=seed,
        game_count=games,
        seat_names=tuple(entrants[i].name for i in run.seats),
        start_timeout_ms=options.start_timeout_ms,
        time_control=TimeControl(
            per_decision_ms=defaults.per_decision_ms
            if options.per_decision_ms is None
            else options.per_decision_ms,
            bank_ms=defaults.bank_ms if options.bank_ms is None else options.bank_ms,
        ),
        fault_policy=FaultPolicy(
            defaults.faults_to_forfeit
            if options.faults_to_forfeit is None
            else options.faults_to_forfeit
        ),
    )


async def _follow(
    handle: MatchHandle | RemoteMatchHandle,
    bots: list[BotProcess],
    run: MatchRun,
    progress: Progress,
    on_game: OnGame | None,
) -> None:
    """Follow the match to its end: its games as they finish (progress, ``on_game``), and the
    bot processes, reporting any that exits before the end as a crash."""
    alive = list(bots)
    while True:
        over = await handle.wait(MONITOR_S)
        outcome = handle.outcome()
        run.started = run.started or outcome.status is not MatchStatus.WAITING
        for game in outcome.games[len(run.results) :]:
            run.results.append(game)
            progress.update(games=1)
            if on_game is not None:
                on_game(run, game)
        if over:
            run.status = f"MATCH_STATUS_{outcome.status.value.upper()}"
            run.reason = outcome.reason
            return
        for bot in [b for b in alive if b.proc.poll() is not None]:
            alive.remove(bot)
            _crashed(handle, bot, run)


def _crashed(handle: MatchHandle | RemoteMatchHandle, bot: BotProcess, run: MatchRun) -> None:
    code = bot.proc.returncode
    when = f"during game {len(run.results)}" if run.started else "before the match started"
    bot.exit_note = (
        f"match {run.match_id}: seat {bot.seat} ({bot.entrant.name}) exited with "
        f"status {code} {when}; see {bot.log_path}"
    )
    run.crashes.append((bot.seat, bot.exit_note))
    handle.report_crash(bot.seat, f"the bot process exited with status {code}")
    log.debug("%s", bot.exit_note)


def _write_replays(run: MatchRun, texts: list[str], directory: Path) -> None:
    for game, text in zip(run.results, texts, strict=False):
        index = game.game_index
        path = directory / f"game-{index}.json"
        with contextlib.suppress(ValueError):
            doc = json.loads(text)
            text = json.dumps(doc, indent=1)
            note_first_faults(run, index, doc)
        path.write_text(text + "\n")
        run.replays.append(path)


# ----------------------------------------------------------------------------- the command


PLAY_DESCRIPTION = """\
Play a local match: a referee on loopback, each bot its own process, every seat rotation.

    arena play random greedy --games 10 --seed 7
    arena play ./mybot.py random random --games 5 --per-decision-ms 200 --bank-ms 2000
    arena play "cmd:node bot.js" random --games 5

A bot is a built-in name, a .py file, a folder (bot.py, or an arena.toml naming a command), or
cmd:COMMAND: a program in any language speaking the line protocol on stdin and stdout
(docs/stdio-protocol.md), run in the current folder.

Rotations: with P bots, --games N means N deals, each played in all P cyclic seat rotations, N*P
games in all. Rotation r is its own match of N games (bot (s + r) mod P sits at seat s), played by
fresh bot processes; every rotation has the same match seed, so the deals are the same.

Processes: the referee runs in this process (listening on 127.0.0.1, a free port). Each seat of
each match is its own process, `arena bot run BOT --server ADDR`, with its seat token in the
environment (ARENA_TOKEN) and its output in <replays>/<match id>/bot-<seat>.log. A bot process
that exits before its match ends is reported to the referee as a crash (its decisions then fault
with `crash` at once, and the fault policy plays the rest), and the report names it. With --server
the runner uses a referee that is already running (admin token from ARENA_ADMIN_TOKEN); crashes
then show as `disconnect` faults.

Before the matches, each bot file or folder is loaded once in a child process, within
--start-timeout-ms: a bot that does not load, or whose import blocks, is an error naming it. One
Ctrl-C stops the runner at any moment, with every process it started.

Output: a progress line on stderr; per bot, over all its games: wins (a shared first place counts
as a fraction), mean score, mean rank, faults, forfeits; for each bot that faulted, its first fault
(match, game, seat, kind, the referee's reason) and the path of its log, and its first error (a
bot_error: what its code raised or returned) when that came later; one replay file per game,
at <replays>/<match id>/game-<i>.json. Bad input (an unknown bot, a bot file without a Bot class, a
wrong number of bots) is one error line and exit status 2; a match that did not finish is exit
status 1; an interrupted run, 130.
"""


def register(subparsers: Any, groups: Any = None) -> argparse.ArgumentParser:
    """Add ``arena play`` to the ``arena`` command's subparsers."""
    p = subparsers.add_parser(
        "play",
        help="play a local match between bots (real processes, a referee on loopback)",
        description=PLAY_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "bots",
        nargs="+",
        metavar="BOT",
        help="2 to 4 bots: a built-in name, a .py file/folder, or cmd:COMMAND",
    )
    p.add_argument(
        "--games",
        type=argtypes.positive,
        default=1,
        metavar="N",
        help="deals, each played in every seat rotation (default 1)",
    )
    clitools.add_seed(p)
    p.add_argument(
        "--replays",
        type=Path,
        default=DEFAULT_REPLAYS,
        metavar="DIR",
        help=f"replay directory (default {DEFAULT_REPLAYS})",
    )
    clitools.add_time_control(p)
    p.add_argument(
        "--start-timeout-ms",
        type=argtypes.positive,
        default=30000,
        metavar="MS",
        help="how long loading a bot and a match's wait for its bot processes may take "
        "(default 30000)",
    )
    p.add_argument(
        "--server",
        metavar="ADDR",
        help="use this running referee (admin token in ARENA_ADMIN_TOKEN) instead of starting one",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(handler=cmd_play)
    return p  # type: ignore[no-any-return]


def cmd_play(args: argparse.Namespace) -> int:
    options = PlayOptions(
        specs=tuple(args.bots),
        games=args.games,
        seed=args.seed if args.seed is not None else secrets.randbits(64),
        replays=args.replays,
        per_decision_ms=args.per_decision_ms,
        bank_ms=args.bank_ms,
        faults_to_forfeit=args.faults_to_forfeit,
        start_timeout_ms=args.start_timeout_ms,
        server=args.server,
        admin_token=os.environ.get("ARENA_ADMIN_TOKEN"),
        progress=not args.quiet,
    )
    if not getattr(args, "verbose", False):
        # The referee logs every match at INFO; the runner's own report is enough here.
        logging.getLogger("arboretum_server").setLevel(logging.WARNING)
    import grpc

    clitools.output_dir(args.replays)
    try:
        report = eventloop.run(play(options))
    except PlayError as exc:
        return clitools.fail(str(exc), clitools.EXIT_USAGE)
    except grpc.aio.AioRpcError as exc:
        where = options.server or "the local referee"
        return clitools.fail(f"the referee at {where} failed: {exc.code().name}: {exc.details()}")
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(report.format())
    return 0 if report.ok else 1
