"""The bot processes of a local match: each seat's bot as a process of its own, its seat token in
the environment and its output in ``bot-<seat>.log``, and stopping them after the match."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .playreport import Entrant

__all__ = ["BOT_EXIT_GRACE_S", "BotProcess", "bot_command", "reap", "start_bot"]

BOT_EXIT_GRACE_S = 5.0
"""How long bot processes get to exit by themselves after their match ended."""


def bot_command(spec: str, address: str) -> list[str]:
    """The command line of one bot process (its token goes in the environment); a
    ``cmd:COMMAND`` spec runs ``arena bot run --cmd COMMAND``."""
    run = [sys.executable, "-m", "arboretum_sdk.cli", "bot", "run"]
    if spec.startswith("cmd:"):
        return [*run, "--cmd", spec[4:], "--server", address]
    return [*run, spec, "--server", address]


@dataclass
class BotProcess:
    seat: int
    entrant: Entrant
    proc: subprocess.Popen[bytes]
    log_path: Path
    log_file: IO[bytes]
    exit_note: str = ""
    """Set when the process exited before its match ended."""


def start_bot(seat: int, entrant: Entrant, address: str, token: str, directory: Path) -> BotProcess:
    """The bot process of ``seat``, its output in ``bot-<seat>.log``."""
    log_path = directory / f"bot-{seat}.log"
    log_file = log_path.open("wb")
    proc = subprocess.Popen(
        bot_command(entrant.spec, address),
        env=dict(os.environ, ARENA_TOKEN=token),
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    return BotProcess(seat, entrant, proc, log_path, log_file)


async def reap(bots: list[BotProcess]) -> None:
    """Give the bots time to exit after their match end, then stop them."""
    deadline = time.monotonic() + BOT_EXIT_GRACE_S
    for bot in bots:
        while bot.proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
    for bot in bots:
        if bot.proc.poll() is None:
            bot.proc.terminate()
    for bot in bots:
        try:
            await asyncio.to_thread(bot.proc.wait, 3.0)
        except subprocess.TimeoutExpired:
            bot.proc.kill()
            await asyncio.to_thread(bot.proc.wait)
        bot.log_file.close()
