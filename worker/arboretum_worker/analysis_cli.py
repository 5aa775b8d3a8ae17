"""``arena match analyze MATCH [--game G] [--json]``: the operator's way to a stored game's
analysis (:mod:`.analysis_jobs`; docs/analysis.md): queue it on the workers' ``arena-analysis``
queue, or print it once done."""

from __future__ import annotations

import argparse
import json

from arboretum_sdk.clitools import fail

from .cliargs import redis_of, settings_of

__all__ = ["analyze"]


def analyze(args: argparse.Namespace) -> int:
    """Run ``arena match analyze`` (parsed by :mod:`.match_cli`)."""
    from arboretum_sdk.analysis.report import render_text

    from . import analysis_jobs, store

    r = redis_of(args)
    if store.get_match(r, args.match_id) is None:
        return fail(f"no match {args.match_id!r}")
    before = analysis_jobs.get_analysis(r, args.match_id, args.game)
    try:
        status = analysis_jobs.request_analysis(
            r, args.match_id, args.game, by="operator", settings=settings_of(args)
        )
    except store.StoreError as exc:
        return fail(str(exc))
    if status["status"] == "done":
        done = analysis_jobs.get_analysis(r, args.match_id, args.game)["analysis"]
        print(json.dumps(done, indent=1) if args.json else render_text(done))
        return 0
    if before["status"] == "failed":
        print(f"the last analysis failed: {before.get('error', '')}")
    queue = analysis_jobs.analysis_queue(settings_of(args))
    print(
        f"analysis of match {args.match_id} game {args.game}: {status['status']} on queue "
        f"{queue!r}; run this again to print it once done"
    )
    return 0
