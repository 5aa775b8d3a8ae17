"""CPU of two steps of a bot's start that keep its environment and log clean (docs/benchmarks.md,
"League": "Starting a bot"), each against its baseline in the same run:

- plain bwrap: ``env -u PWD --`` between ``setpriv`` and the bot's Python (bwrap puts ``PWD`` in
  the environment): ``env -u PWD -- true`` against ``true``, both exec'd by this process;
- the fork server: ``python -m arboretum_sdk.cli`` runs the module's body in each fork (the
  server no longer imports it, which made runpy warn first in every bot's log): its body run
  in a process that has imported everything else the server imports.

    .venv/bin/python bench/sandbox_steps.py              # 300 execs, 200 module runs, 3 rounds
"""

from __future__ import annotations

import argparse
import importlib
import resource
import runpy
import shutil
import statistics
import subprocess
import sys
import time

from arboretum_worker.sandbox.zygote import PRELOAD


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def exec_cost(argv: list[str], n: int) -> float:
    """CPU-ms per run of ``argv`` (the child's CPU: fork, exec and the program)."""
    before = children_cpu()
    for _ in range(n):
        subprocess.run(argv, check=True)
    return (children_cpu() - before) / n * 1000


def module_cost(n: int) -> float:
    """CPU-ms per run of ``arboretum_sdk.cli``'s body (not as ``__main__``: no command runs)."""
    start = time.process_time()
    for _ in range(n):
        runpy.run_module("arboretum_sdk.cli", run_name="bench")
    return (time.process_time() - start) / n * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--execs", type=int, default=300, help="execs per way and round")
    parser.add_argument("--runs", type=int, default=200, help="module runs per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    true, env = shutil.which("true"), shutil.which("env")
    if true is None or env is None:
        print("sandbox_steps: true and env (coreutils) are needed", file=sys.stderr)
        return 1
    for name in PRELOAD:
        importlib.import_module(name)
    if "arboretum_sdk.cli" in sys.modules:
        print("sandbox_steps: the fork server's preload imports arboretum_sdk.cli", file=sys.stderr)
        return 1
    steps, modules = [], []
    for _ in range(args.rounds):
        base = exec_cost([true], args.execs)
        steps.append(exec_cost([env, "-u", "PWD", "--", true], args.execs) - base)
        modules.append(module_cost(args.runs))
    print(f"env -u PWD step: {statistics.median(steps):.2f} CPU-ms median of {args.rounds} rounds")
    print(f"arboretum_sdk.cli body per fork: {statistics.median(modules):.2f} CPU-ms median")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
