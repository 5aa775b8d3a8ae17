"""gRPC's transport for the arena's processes: chosen through the environment, before gRPC loads.

grpcio's EventEngine-based TCP client and listener (the ``event_engine_client`` and
``event_engine_listener`` experiments, on by default in grpcio 1.85) hand every message through
more threads than gRPC's older transport (iomgr). A match is a ping-pong of small messages (one
request and one answer per decision), and with those two experiments off the referee and the bots
each spend about 15% less CPU per game, and a 2-player series plays 15-25% more games per second
(``bench/series_throughput.py``). It is the same HTTP/2 protocol and the same channel and server
options; only gRPC's internal I/O layer differs.

gRPC reads ``GRPC_EXPERIMENTS`` once, when it is first imported, so :func:`apply` must run before
that: the ``arena`` command calls it first thing (``arena serve``, ``arena play``, ``arena bot
run``, ``arena worker``). A ``GRPC_EXPERIMENTS`` already in the environment, even empty, is left
as it is: ``GRPC_EXPERIMENTS=`` keeps gRPC's defaults. The experiment names belong to the grpcio
release pinned in ``sdk/pyproject.toml``; check them when bumping it (an unknown name makes gRPC
log ``Unknown experiment`` and is otherwise ignored).

Once gRPC has loaded, the variable has done its work. ``arena bot run`` then takes the default
that :func:`apply` set out of its environment again (:func:`settle`), so that a bot's own code
and the command of a line-protocol bot see exactly the environment their sandbox gave them.
"""

from __future__ import annotations

import os
import sys

__all__ = ["GRPC_EXPERIMENTS", "apply", "settle"]

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener"
"""The default ``GRPC_EXPERIMENTS`` of the arena's processes."""


def apply() -> bool:
    """Set the default ``GRPC_EXPERIMENTS`` unless it is set already or gRPC is already imported
    (it would not read it any more); whether it was set. Child processes inherit it."""
    global _applied
    if "GRPC_EXPERIMENTS" in os.environ or "grpc" in sys.modules:
        return False
    os.environ["GRPC_EXPERIMENTS"] = GRPC_EXPERIMENTS
    _applied = True
    return True


_applied = False


def settle() -> None:
    """Load gRPC (which reads ``GRPC_EXPERIMENTS`` then), and take out of the environment the
    default that :func:`apply` set in this process; a value that was there before is kept."""
    global _applied
    import grpc  # noqa: F401 - loading it is the point

    if _applied and os.environ.get("GRPC_EXPERIMENTS") == GRPC_EXPERIMENTS:
        del os.environ["GRPC_EXPERIMENTS"]
    _applied = False
