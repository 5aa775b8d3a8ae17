"""Resource limits of one sandboxed bot, with the league's documented defaults."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

__all__ = ["DEFAULT_LIMITS", "MiB", "SandboxLimits"]

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one bot may use during one match (see ``docs/bot-runtime.md``).

    ``memory_bytes`` caps the data segment of every process (``RLIMIT_DATA``: heap and private
    writable mappings) and, with ``address_space_slack_bytes`` on top, its address space
    (``RLIMIT_AS``); the docker runner uses it as the container's memory limit.
    """

    memory_bytes: int = 512 * MiB
    address_space_slack_bytes: int = 1024 * MiB
    cpu_seconds: int = 600
    processes: int = 32
    output_bytes: int = 1 * MiB
    open_files: int = 256
    file_size_bytes: int = 16 * MiB
    tmp_size_bytes: int = 64 * MiB
    code_size_bytes: int = 4 * MiB

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) <= 0:
                raise ValueError(f"SandboxLimits.{name} must be > 0")

    @property
    def address_space_bytes(self) -> int:
        return self.memory_bytes + self.address_space_slack_bytes

    def for_match(self, thinking_time_s: float, *, startup_s: float = 15.0) -> SandboxLimits:
        """These limits with the CPU time derived from a match's clock.

        ``thinking_time_s`` is the most time the referee can let this bot think in the whole match
        (every game's bank plus the free time of its decisions). The bot gets 1.5 times that plus
        ``startup_s`` of CPU time (imports, gRPC threads), rounded up to a whole second.
        """
        if thinking_time_s < 0:
            raise ValueError("thinking_time_s must be >= 0")
        return replace(self, cpu_seconds=math.ceil(thinking_time_s * 1.5 + startup_s))

    def rlimits(self) -> dict[str, int]:
        """The ``resource.RLIMIT_*`` names and values set (soft = hard) in every sandbox."""
        return {
            "RLIMIT_CPU": self.cpu_seconds,
            "RLIMIT_DATA": self.memory_bytes,
            "RLIMIT_AS": self.address_space_bytes,
            "RLIMIT_NPROC": self.processes,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_FSIZE": self.file_size_bytes,
            "RLIMIT_CORE": 0,
        }


DEFAULT_LIMITS = SandboxLimits()
