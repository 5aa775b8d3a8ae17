"""Argument types shared by every ``arena`` subcommand, whichever distribution defines it.

Each raises :class:`argparse.ArgumentTypeError` with a message naming the problem, so a bad
number is a one-line usage error (exit 2), never a traceback.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

__all__ = [
    "NAME_RULE",
    "bot_name",
    "int_range",
    "name_problem",
    "non_negative",
    "players",
    "port",
    "positive",
    "seed",
]

NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""What a bot's or a league's name may be (the league stores names by it)."""


def name_problem(kind: str, name: object) -> str | None:
    """Why ``name`` is not a valid ``kind`` name (``bot``, ``league``), or None."""
    if isinstance(name, str) and NAME_RULE.fullmatch(name):
        return None
    return (
        f"invalid {kind} name {name!r}: use 1-64 letters, digits, '_', '.' or '-', "
        "starting with a letter or digit"
    )


def bot_name(text: str) -> str:
    """A bot's name (:data:`NAME_RULE`)."""
    problem = name_problem("bot", text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def _integer(text: str, what: str = "an integer") -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def positive(text: str) -> int:
    """An integer of at least 1."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def non_negative(text: str) -> int:
    """An integer of at least 0."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argument type: an integer from ``low`` to ``high`` (both included)."""

    def parse(text: str) -> int:
        value = _integer(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {value}")
        return value

    parse.__name__ = f"integer from {low} to {high}"  # argparse names the type in some errors
    return parse


def port(text: str) -> int:
    """A TCP port: 1 to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"a port is from 1 to 65535, not {value}")
    return value


def players(text: str) -> int:
    """A player count: 2, 3 or 4."""
    value = positive(text)
    if value not in (2, 3, 4):
        raise argparse.ArgumentTypeError("Arboretum is played by 2, 3 or 4 players")
    return value


def seed(text: str) -> int:
    """A seed from 0 to 2**64-1, in decimal or with a 0x/0o/0b prefix."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer seed: {text!r}") from None
    if not 0 <= value < 1 << 64:
        raise argparse.ArgumentTypeError("a seed is an integer from 0 to 2**64-1")
    return value
