"""``check_bot``: the check a submitted bot passes before it is stored, judged by the worker.

The bot is started in its sandbox exactly as in a league match (``arena bot run /bot/<name>
--server unix:/run/arena/referee.sock``, the seat token in ``ARENA_TOKEN``), against a private
referee (``arboretum_server``, in this process, on a unix socket in a private folder): a
two-seat match whose other seat is the built-in random bot, played by this process. The bot
must start, connect with its token and answer its first decision, a draw of seat 0, legally and
in time. The verdict is read from the referee (the game's replay and the match's state), never
from anything the bot prints or returns: code run at import cannot forge it. Then the match is
cancelled and everything is stopped.

A bot started from a manifest (``arena.toml`` with ``command = ...``) goes through the same
exchange: ``arena bot run`` starts its command and bridges its lines, and the check judges the
decision the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arboretum_sdk.info import DEFAULT_BANK_MS, DEFAULT_PER_DECISION_MS, FaultPolicy, TimeControl

from .sandbox import SandboxedBot, SandboxRunner, SandboxUnavailableError

if TYPE_CHECKING:
    from arboretum_server.runner import MatchHandle

__all__ = ["BotCheck", "bot_size", "check_bot"]

SOCKET_NAME = "referee.sock"
CHECK_CLOCK_MS = (DEFAULT_PER_DECISION_MS, DEFAULT_BANK_MS)
"""Per-decision time and bank of the check's one decision (every match's defaults)."""
_POLL_S = 0.02
_QUOTE = 300


@dataclass(frozen=True, slots=True)
class BotCheck:
    """The verdict on a submitted bot.

    ``ok``: it started in the sandbox, connected to the referee and answered its first decision
    legally in time; ``decision`` is that decision as the referee applied it (for example
    ``draw deck``). Else ``error`` says why. ``output`` is what the bot printed during the
    check (capped), ``returncode`` its exit status if it ended by itself.
    """

    ok: bool
    error: str | None
    size_bytes: int
    output: bytes = b""
    returncode: int | None = None
    decision: str | None = None


def bot_size(path: Path) -> int:
    """Bytes of a bot file, or of every regular file under a bot folder (symlinks not followed)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            if not os.path.islink(p):
                total += os.lstat(p).st_size
    return total


def _shape_problem(path: Path) -> str | None:
    if not path.exists():
        return f"not found: {path.name}"
    if path.is_file():
        return None if path.suffix == ".py" else "a bot file must end in .py"
    if (path / "arena.toml").is_file():
        from arboretum_sdk.errors import BotLoadError

        try:
            manifest = importlib.import_module("arboretum_sdk.stdio.manifest")
        except ImportError:  # an SDK without manifests: arena bot run will say what is wrong
            return None
        try:
            manifest.read_manifest(path)
        except BotLoadError as exc:
            return str(exc)
        return None
    if not ((path / "bot.py").is_file() or (path / "__init__.py").is_file()):
        return "a bot folder must hold bot.py or __init__.py (or an arena.toml)"
    return None


def check_bot(
    bot_path: Path | str, *, runner: SandboxRunner | None = None, timeout: float = 30.0
) -> BotCheck:
    """Check a submitted bot: its shape and size here, then one real decision in a sandbox.

    ``timeout`` bounds the bot's start (imports included) until it connects; its decision then
    has the check's clock (:data:`CHECK_CLOCK_MS`: 1 s plus a 10 s bank).
    """
    if runner is None:
        from .sandbox import make_runner

        runner = make_runner()
    path = Path(bot_path)
    problem = _shape_problem(path)
    if problem is not None:
        return BotCheck(False, problem, bot_size(path) if path.exists() else 0)
    size = bot_size(path)
    limit = runner.limits.code_size_bytes
    if size > limit:
        return BotCheck(False, f"bot is {size} bytes, more than the {limit} allowed", size)
    if not runner.isolating:  # refused before a referee starts (as runner.start would refuse it)
        raise SandboxUnavailableError(
            f"no sandbox available ({runner.describe()}): refusing to run a submitted bot; "
            "install bubblewrap or enable user namespaces"
        )
    from arboretum_sdk import eventloop

    folder = Path(tempfile.mkdtemp(prefix="arena-check-"))
    try:
        return eventloop.run(_exchange(path, size, runner, folder, timeout))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def _exchange(
    path: Path, size: int, runner: SandboxRunner, folder: Path, timeout: float
) -> BotCheck:
    from arboretum_server import MatchConfig
    from arboretum_server.runner import MatchRunner

    socket_path = folder / SOCKET_NAME
    referee = await MatchRunner.start_private(socket_path)
    bot: SandboxedBot | None = None
    opponent: asyncio.Future[Any] | None = None
    quiet: _OpponentNotices | None = None
    try:
        per_decision_ms, bank_ms = CHECK_CLOCK_MS
        handle = await referee.create(
            MatchConfig(
                players=2,
                match_seed=secrets.randbits(64),
                time_control=TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
                fault_policy=FaultPolicy(),
                seat_names=("checked bot", "random"),
                start_timeout_ms=int(timeout * 1000) + 5000,
            )
        )
        quiet = _OpponentNotices(handle.match_id, str(socket_path))
        _CLIENT_LOG.addFilter(quiet)
        opponent = asyncio.ensure_future(
            asyncio.to_thread(_play_random, f"unix:{socket_path}", handle.tokens[1])
        )
        bot = await asyncio.to_thread(
            runner.start,
            path,
            socket_path=socket_path,
            token=handle.tokens[0],
            name=f"check-{path.name}",
        )
        verdict = await _judge(handle, bot, timeout)
        await handle.cancel("check done")  # (it may have ended by itself: a crash forfeits)
    finally:
        if bot is not None:
            await asyncio.to_thread(bot.kill)
        await referee.stop(1.0)
        if opponent is not None:
            await asyncio.wait([opponent], timeout=10)
        if quiet is not None:
            _CLIENT_LOG.removeFilter(quiet)
    assert bot is not None
    output = bot.output()
    dropped = bot.output_dropped
    returncode = bot.returncode if verdict.exited else None
    if dropped:
        cap = runner.limits.output_bytes
        error = (
            f"the bot printed {cap + dropped} bytes during the check, more than the {cap} bytes "
            "of output the check accepts (a league match keeps the first ARENA_OUTPUT_CAP bytes "
            "of a bot's output, 64 KiB by default)"
        )
        return BotCheck(False, error, size, output, returncode)
    if verdict.error is not None:
        return BotCheck(False, verdict.error, size, output, returncode)
    return BotCheck(True, None, size, output, returncode, verdict.decision)


_CLIENT_LOG = logging.getLogger("arboretum_sdk.client")


class _OpponentNotices(logging.Filter):
    """Drops what the check's own opponent (the random bot, in this process) logs about the check
    match, such as its end when the check cancels it: nothing the submitter needs to read."""

    def __init__(self, match_id: str, socket_path: str) -> None:
        super().__init__()
        self.tags = (f"[match {match_id} ", socket_path)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(tag in message for tag in self.tags)


def _play_random(address: str, token: str) -> None:
    """The other seat: the SDK's random bot, in this process (it ends with the match)."""
    from arboretum_sdk.bots.random_bot import RandomBot
    from arboretum_sdk.client import run_bot
    from arboretum_sdk.errors import ClientError

    with contextlib.suppress(ClientError):  # the match was cancelled, or the referee stopped
        run_bot(RandomBot(), address, token, connect_timeout=30, reconnect_for=0)


@dataclass(frozen=True, slots=True)
class _Verdict:
    error: str | None
    decision: str | None = None
    exited: bool = False


def _last_line(bot: SandboxedBot) -> str:
    lines = [x for x in bot.output().decode("utf-8", "replace").splitlines() if x.strip()]
    if not lines:
        return "it printed nothing"
    line = lines[-1].strip()
    return f"its last line: {line[:_QUOTE]}{'...' if len(line) > _QUOTE else ''}"


def _step_text(step: dict[str, Any]) -> str:
    if step.get("kind") == "draw":
        source = step.get("source", "?")
        return f"draw {source}" + (f" {step['pile']}" if source == "pile" else "")
    return f"{step.get('kind')} {step.get('card', '')} {step.get('cell', '')}".strip()


async def _judge(handle: MatchHandle, bot: SandboxedBot, timeout: float) -> _Verdict:
    """Watch the referee until seat 0's first decision is applied, the bot ends, or time is up."""
    started = time.monotonic()
    connected_at: float | None = None
    decision_s = sum(CHECK_CLOCK_MS) / 1000 + 5
    while True:
        if connected_at is None and handle.connected(0):
            connected_at = time.monotonic()
        found = handle.replay(0)
        if found is not None:
            steps = [
                s
                for s in found[0].get("steps", [])
                if s.get("seat") == 0 and s.get("kind") in ("draw", "play")
            ]
            if steps:
                first = steps[0]
                fault = first.get("fault")
                if fault:
                    return _Verdict(
                        f"its first decision was not accepted ({fault.get('kind')}): "
                        f"{fault.get('reason', '')}".rstrip(": ")
                    )
                return _Verdict(None, _step_text(first))
        code = bot.returncode
        if code is not None:
            when = "before connecting" if connected_at is None else "before its first decision"
            return _Verdict(
                f"the bot exited with status {code} {when} ({_last_line(bot)})", exited=True
            )
        now = time.monotonic()
        if connected_at is None and now - started > timeout:
            return _Verdict(
                f"the bot did not connect to the referee within {timeout:g} s of its start "
                f"(imports included; {_last_line(bot)})"
            )
        if connected_at is not None and now - connected_at > decision_s:
            return _Verdict(
                f"the bot connected but did not answer its first decision within {decision_s:g} s"
            )
        await asyncio.sleep(_POLL_S)
