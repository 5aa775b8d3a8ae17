"""Bots in any language: the line protocol over stdin and stdout (``docs/stdio-protocol.md``).

- :mod:`.lines`: the protocol's messages, SDK values to JSON lines and back (pure).
- :mod:`.child`: :class:`StdioBot`, a :class:`~arboretum_sdk.Bot` that runs a command as a
  child process and plays through it (``arena bot run --cmd``, ``arena play "cmd:..."``).
- :mod:`.manifest`: ``arena.toml``, the manifest that makes a folder such a bot.
- :mod:`.guard`: what keeps the seat token from the child (the bridge's memory closed to it, a
  token argument out of the bridge's command line).
"""

from __future__ import annotations

from .child import StdioBot
from .lines import MAX_LINE_BYTES, PROTOCOL, VERSION, LineError
from .manifest import MANIFEST, Manifest, read_manifest

__all__ = [
    "MANIFEST",
    "MAX_LINE_BYTES",
    "PROTOCOL",
    "VERSION",
    "LineError",
    "Manifest",
    "StdioBot",
    "read_manifest",
]
