"""The bot sandbox: every bot of a league match runs in a sandbox of its own.

API::

    runner = make_runner(kind="auto", limits=SandboxLimits(...))   # auto|bwrap|unshare|docker|none
    bot = runner.start(bot_path_or_builtin_name, socket_path=Path, token=str,
                       log_path=Path | None, name=str, builtin=bool)       # -> SandboxedBot
    with bot:                       # leaving the block kills the sandbox
        bot.pid; bot.wait(timeout) -> int | None; bot.returncode; bot.output() -> bytes
        bot.kill()                  # all of it, children included; idempotent; verifies

The check of a submitted bot (one real decision against a private referee) is
:func:`arboretum_worker.check.check_bot`; it uses a runner from here.

``SandboxLimits`` (memory, CPU seconds, processes, output, open files, file size, tmp size, code
size; ``limits.for_match(thinking_time_s)`` derives the CPU time from a match's clock) and the
sandbox's contents are described for bot authors in ``docs/bot-runtime.md``.

Runners: :class:`BwrapRunner` (bubblewrap), :class:`UnshareRunner` (``unshare`` namespaces where
bwrap is missing), :class:`DockerRunner` (docker SDK, the compose deployment) and
:class:`BareRunner` (``none``: no isolation, rlimits only; built-in bots only, submitted bots
raise :class:`SandboxUnavailableError`). ``make_runner("auto")`` picks the first of bwrap,
unshare, none that works here and logs its choice.

Process limit: ``RLIMIT_NPROC`` counts processes per real uid, and never limits root. When the
worker runs as root, each sandbox gets a dedicated unprivileged host uid from
:class:`UidSlotPool` (a flock'ed slot in a uid range; the locks are the machine's, in
``/run/arboretum`` or ``$ARENA_UID_LOCK_DIR``, whatever ``TMPDIR`` says), and the launcher inside
the sandbox drops to it, so the limit counts exactly that sandbox's processes. A sandbox's
cleanup kills what is in its pid namespace, never every process of its uid. When the worker is
not root, bwrap or unshare put the bot in a user namespace of its own and the launcher sets the
limit inside it: since Linux 5.14 the count is kept per (user namespace, uid), i.e. per sandbox.
"""

from __future__ import annotations

from typing import Any

from .base import (
    BUILTIN_BOTS,
    SOCKET_INSIDE,
    SandboxedBot,
    SandboxError,
    SandboxRunner,
    SandboxUnavailableError,
    UidSlotPool,
    bot_env,
    log,
    python_runtime_paths,
)
from .limits import DEFAULT_LIMITS, MiB, SandboxLimits
from .local import (
    BareRunner,
    BwrapRunner,
    UnshareRunner,
    bwrap_usable,
    unshare_problem,
    unshare_usable,
)

__all__ = [
    "BUILTIN_BOTS",
    "DEFAULT_LIMITS",
    "RUNNER_KINDS",
    "SOCKET_INSIDE",
    "BareRunner",
    "BwrapRunner",
    "MiB",
    "SandboxError",
    "SandboxLimits",
    "SandboxRunner",
    "SandboxUnavailableError",
    "SandboxedBot",
    "UidSlotPool",
    "UnshareRunner",
    "bot_env",
    "make_runner",
    "python_runtime_paths",
    "unshare_problem",
    "unshare_usable",
]

RUNNER_KINDS = ("auto", "bwrap", "unshare", "docker", "none")


def make_runner(
    kind: str = "auto", limits: SandboxLimits = DEFAULT_LIMITS, **options: Any
) -> SandboxRunner:
    """A runner of ``kind``; ``options`` go to its constructor (e.g. ``image=`` for docker)."""
    if kind not in RUNNER_KINDS:
        raise ValueError(f"unknown sandbox kind {kind!r} (one of {', '.join(RUNNER_KINDS)})")
    runner: SandboxRunner
    if kind == "auto":
        if bwrap_usable():
            runner = BwrapRunner(limits, **options)
        elif (problem := unshare_problem()) is None:
            runner = UnshareRunner(limits, **options)
        else:
            log.warning(
                "bot sandbox: bwrap does not work here, and unshare not either: %s", problem
            )
            runner = BareRunner(limits)
    elif kind == "bwrap":
        runner = BwrapRunner(limits, **options)
    elif kind == "unshare":
        runner = UnshareRunner(limits, **options)
    elif kind == "docker":
        from .docker_runner import DockerRunner

        runner = DockerRunner(limits, **options)
    else:
        runner = BareRunner(limits)
    if runner.isolating:
        log.info("bot sandbox: %s", runner.describe())
    else:
        log.warning(
            "bot sandbox: NONE available (no bwrap, no user namespaces): built-in bots run with "
            "rlimits only, submitted bots are refused"
        )
    return runner
