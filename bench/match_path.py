"""The modules one league match runs, from ``arena league run`` to the leaderboard.

docs/ARCHITECTURE.md ("One league match, hop by hop") lists them and counts them; this script is
how they are taken from the code. It starts a private redis-server, stores two bots (copies of
the built-in ``greedy``) and a league of two matches between them (one per seat order; the setup
is not counted), then runs, each in a process of its own with every function call of the project
recorded:

1. ``arena league run path`` (the operator's process),
2. ``arena worker --burst`` (the worker; a work horse per match, with the private referee and
   the live feed),
3. ``arena leaderboard --league path`` (the operator reading the board).

A module counts when a function (or method) defined in it is called: importing a module, its
class bodies and module-level code do not count (nor a comprehension that module-level code or a
class body runs: Python runs those as functions of their own). One match is the first command,
the worker's own process, the work horse of the league's first match, and the last command. The
work horse of the league's last match also marks the league finished and stores its rating fit:
what that adds is listed apart (once per league, not per match). The bots' processes (``arena bot
run`` in their sandboxes) are not recorded; the fork server's own process neither (it runs the
SDK and the bot). The engine's modules (``arboretum``) are counted apart. Usage::

    python bench/match_path.py              # the modules by package, and the count
    python bench/match_path.py --list       # one module a line
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import redis  # noqa: E402

from arboretum_worker import league, registry  # noqa: E402
from redis_server import start_redis_server, stop_redis_server  # noqa: E402

PACKAGES = {
    "arboretum_worker": "worker/arboretum_worker",
    "arboretum_server": "server/arboretum_server",
    "arboretum_sdk": "sdk/arboretum_sdk",
    "arboretum_proto": "sdk/arboretum_proto",
    "arboretum_web": "web/arboretum_web",
    "arboretum": "sdk/arboretum",
}

# Run in each recorded process: a profile hook on every thread (and every forked child: a fork
# keeps the hook) that appends a module's file to OUT the first time one of its functions runs.
# A comprehension is a function to Python; one run by a module's or a class's body (code that is
# not CO_OPTIMIZED), directly or inside another comprehension, is that body's, and does not count.
TRACER = r"""
import os, sys, threading
out, roots = os.environ["MATCH_PATH_OUT"], tuple(os.environ["MATCH_PATH_ROOTS"].split(":"))
seen = set()
CO_OPTIMIZED = 1
COMPREHENSIONS = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"}
def hook(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    name = code.co_filename
    if name in seen or not code.co_flags & CO_OPTIMIZED:
        return
    if code.co_name in COMPREHENSIONS:
        caller = frame.f_back
        while caller is not None and caller.f_code.co_name in COMPREHENSIONS:
            caller = caller.f_back
        if caller is None or not caller.f_code.co_flags & CO_OPTIMIZED:
            return
    seen.add(name)
    if name.startswith(roots):
        with open(out, "a") as fh:
            fh.write(f"{os.getpid()}\t{name}\n")
os.register_at_fork(after_in_child=seen.clear)  # a forked child records its own modules
threading.setprofile(hook)
sys.setprofile(hook)
sys.argv = ["arena", *sys.argv[1:]]
from arboretum_sdk.cli import main
sys.exit(main())
"""


def record(args: list[str], env: dict[str, str], out: Path) -> dict[int, list[str]]:
    """Run ``arena ARGS`` recorded; the modules each of its processes ran, by pid, in the order
    the processes first ran one."""
    env = dict(env, MATCH_PATH_OUT=str(out))
    proc = subprocess.run(
        [sys.executable, "-c", TRACER, *args], env=env, capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"arena {' '.join(args)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    by_pid: dict[int, list[str]] = {}
    for line in out.read_text().splitlines():
        pid, name = line.split("\t")
        by_pid.setdefault(int(pid), []).append(str(Path(name).relative_to(ROOT)))
    return by_pid


def measure() -> tuple[list[str], list[str]]:
    """The modules of one match, and what the league's last match adds."""
    tmp = Path(tempfile.mkdtemp(prefix="arena-path-", dir="/tmp"))
    url, redis_proc = start_redis_server(tmp / "redis", appendonly=False)
    roots = [str(ROOT / folder) + "/" for folder in PACKAGES.values()]
    env = dict(os.environ, REDIS_URL=url, ARENA_MATCH_ROOT=str(tmp / "m"))
    env["MATCH_PATH_ROOTS"] = ":".join(roots)
    try:
        r = redis.Redis.from_url(url)
        source = (ROOT / "sdk/arboretum_sdk/bots/greedy.py").read_bytes()
        names = []
        for i in range(2):
            registry.add_version(r, f"greedy{i}", source + f"\n# copy {i}\n".encode())
            names.append(f"greedy{i}")
        league.create_league(
            r, "path", names, players=2, games_per_pairing=1, deals_per_series=2, seed=1
        )
        operator = record(["league", "run", "path"], env, tmp / "run.txt")
        worker = list(
            record(["worker", "--burst", "--name", "path"], env, tmp / "work.txt").values()
        )
        board = record(["leaderboard", "--league", "path"], env, tmp / "board.txt")
    finally:
        stop_redis_server(redis_proc)
        shutil.rmtree(tmp, ignore_errors=True)
    horses = [mods for mods in worker[1:] if "worker/arboretum_worker/jobs.py" in mods]
    if len(horses) != 2:
        raise SystemExit(f"expected a work horse per match (2), found {len(horses)}")
    one: set[str] = set(worker[0]) | set(horses[0])
    for mods in (*operator.values(), *board.values()):
        one |= set(mods)
    return sorted(one), sorted(set(horses[1]) - one)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="one module a line")
    args = parser.parse_args()
    modules, last = measure()
    engine = [m for m in modules if m.startswith(PACKAGES["arboretum"] + "/")]
    project = [m for m in modules if m not in engine]
    if args.list:
        print("\n".join(project))
        return 0
    for package, folder in PACKAGES.items():
        if package == "arboretum":
            continue
        mine = [m[len(folder) + 1 :] for m in project if m.startswith(folder + "/")]
        if mine:
            print(f"{package} ({len(mine)}): {', '.join(mine)}")
    print(f"engine ({len(engine)}): {', '.join(m.split('/')[-1] for m in engine)}")
    print(f"modules on the path of one match, the engine aside: {len(project)}")
    print(f"the league's last match adds ({len(last)}): {', '.join(last) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
