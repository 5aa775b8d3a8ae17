"""The referee's ``arena`` subcommands: ``serve``, and ``play`` from :mod:`.local`.

The SDK's ``arena`` command imports this module and calls :func:`register`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
from typing import Any

from arboretum_sdk.clitools import EXIT_USAGE, fail

__all__ = ["register"]

log = logging.getLogger(__name__)


def register(
    subparsers: Any, groups: dict[str, Any], only: str | None = None, action: str | None = None
) -> None:
    """Add the referee's subcommands to the ``arena`` parser (with ``only``, the one it names;
    ``action`` is not used: neither command has actions)."""
    if only in (None, "serve"):
        _add_serve(subparsers)

    # --- the local runner: `arena play` lives in arboretum_server.local (another module, another
    # --- owner); it registers itself here when it exists.
    if only in (None, "play") and importlib.util.find_spec(f"{__package__}.local") is not None:
        local = importlib.import_module(f"{__package__}.local")
        local.register(subparsers)


def _add_serve(subparsers: Any) -> None:
    from . import config

    p = subparsers.add_parser(
        "serve",
        help="run the referee (gRPC server)",
        description="Run the Arboretum Arena referee until SIGTERM or SIGINT, then drain: "
        "health goes NOT_SERVING, no new match is accepted, and games in flight finish "
        "(up to the drain timeout). Settings come from the environment, overridden by flags; "
        "see docs/referee.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    config.add_arguments(p)
    p.set_defaults(handler=cmd_serve, log_level="info")


def cmd_serve(args: argparse.Namespace) -> int:
    from .config import settings_from
    from .errors import BindError, SettingsError
    from .server import serve

    try:
        settings = settings_from(os.environ, args)
    except SettingsError as exc:
        return fail(f"invalid referee settings: {exc}", EXIT_USAGE)

    def ready(referee: Any) -> None:
        print(f"referee listening on {', '.join(referee.addresses)}", flush=True)
        if referee.admin_token_file is not None:
            print(f"admin token in {referee.admin_token_file}", flush=True)

    try:
        return serve(settings, ready=ready)
    except (BindError, SettingsError) as exc:  # before it listened: nothing was left behind
        return fail(str(exc))
