"""``arena league audit NAME``: the collusion audit of a league, and leaving a pair out of its
fit. Registered by :mod:`arboretum_worker.league_cli`, which passes its parser pieces in."""

from __future__ import annotations

import argparse
import getpass
from typing import TYPE_CHECKING, Any

from arboretum_sdk.clitools import fail, plural

from ..cliargs import known_league, redis_of
from ..report import version_label

if TYPE_CHECKING:
    import redis

__all__ = ["register"]


def register(lsub: Any, common: argparse.ArgumentParser) -> None:
    """``arena league audit`` (its name is ``league_cli.AUDIT_ACTIONS``)."""
    p = lsub.add_parser(
        "audit",
        parents=[common],
        help="find pairs whose results depart from the fit (collusion); leave a pair out",
        description="Test every pair of versions that met: do their head-to-head results depart "
        "from what the rest of the league's fit predicts, beyond chance (exact binomial tails, "
        "Benjamini-Hochberg over all pairs at --level)? Lists the flagged pairs and the bot that "
        "played far below its own level in each, then the pairs left out of the fit. "
        "--exclude A B leaves the games of A and B together out of the fit (arena ratings, the "
        "audit, a ladder's scheduling), recorded with who and when; --include A B counts them "
        "again (docs/league.md, Collusion audit).",
    )
    p.add_argument("name", metavar="NAME", help="the league's name")
    p.add_argument(
        "--exclude",
        nargs=2,
        metavar=("A", "B"),
        help="leave the games of these two versions together out of the fit (bot names, "
        "NAME@VERSION-PREFIX or version ids)",
    )
    p.add_argument(
        "--include",
        nargs=2,
        metavar=("A", "B"),
        help="count the games of a pair left out before in the fit again",
    )
    p.add_argument(
        "--by",
        metavar="WHO",
        help="who leaves the pair out, as recorded (default: the login name)",
    )
    p.add_argument(
        "--level",
        type=_level,
        default=0.05,
        metavar="P",
        help="the chance that an audit of an honest league flags any pair (default 0.05)",
    )
    p.set_defaults(handler=cmd_audit)


def _level(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"a level is between 0 and 1, not {text}")
    return value


def _pair(r: redis.Redis, name: str, specs: list[str], versions: set[str]) -> tuple[str, str]:
    """The two versions a pair names; a bot's name is the one of its versions that played in the
    league (its latest when several did not all play: then name one, ``NAME@PREFIX``)."""
    from .. import registry
    from ..league import resolve_version
    from ..progress import LeagueError

    ids = []
    for spec in specs:
        vid = resolve_version(r, spec)
        if vid not in versions:
            bot, at, _ = spec.partition("@")
            played = [] if at else [v for v in registry.versions(r, bot) if v in versions]
            if len(played) > 1:
                named = ", ".join(f"{bot}@{v[:8]}" for v in played)
                raise LeagueError(f"{spec!r}: {named} played in league {name}; name one of them")
            if not played:
                raise LeagueError(f"{spec!r} has no results in league {name}")
            vid = played[0]
        ids.append(vid)
    if ids[0] == ids[1]:
        raise LeagueError("a pair is two different versions")
    return ids[0], ids[1]


def cmd_audit(args: argparse.Namespace) -> int:
    from .. import store
    from ..fit import FitError, games_of
    from ..progress import LeagueError
    from ..ratings import results_in_order
    from . import exclusions
    from .stats import audit

    r = redis_of(args)
    name = known_league(r, args.name)
    results = results_in_order(r, name)
    if not results:
        return fail(f"league {name} has no results to audit yet")

    def label(vid: str) -> str:
        return version_label(r, vid)

    played = {v for result in results for v in result.seats}
    try:
        if args.exclude:
            a, b = _pair(r, name, args.exclude, played)
            done = exclusions.exclude(r, name, a, b, args.by or _login())
            print(f"league {name}: " + exclusions.note([done], label)[0])
        if args.include:
            a, b = _pair(r, name, args.include, played)
            if exclusions.include(r, name, a, b):
                print(
                    f"league {name}: the games of {label(a)} and {label(b)} count in the fit again"
                )
            else:
                print(f"league {name}: the games of {label(a)} and {label(b)} were not left out")
    except (LeagueError, store.StoreError) as exc:
        return fail(str(exc))
    excluded = exclusions.excluded(r, name)
    kept = exclusions.without(results, excluded)
    games = games_of(kept)
    if not games:
        return fail(f"league {name}: every result is left out of the fit; nothing to audit")
    try:
        result = audit(games, alpha=args.level)
    except FitError as exc:
        return fail(f"league {name}: {exc}")
    print(
        f"audit of league {name}: {plural(result.games, 'game')}, {plural(result.pairs, 'pair')} "
        f"that met, each tested against the rest of the league's fit (Benjamini-Hochberg at "
        f"{result.alpha:g})"
    )
    if not result.flagged:
        print("no pair departs from the fit beyond chance")
    else:
        print("pairs whose results depart from the fit beyond chance:")
        for t in result.flagged:
            low, high, score, expected = t.a, t.b, t.score, t.expected
            if score > expected:  # from the side of the one below its level
                low, high, score, expected = high, low, t.games - score, t.games - expected
            print(
                f"  {label(low)} vs {label(high)}: {label(low)} scored {score:g} of "
                f"{plural(t.games, 'game')}, the rest of the league predicts {expected:.1f} "
                f"(adjusted p {t.adjusted:.2g})"
            )
        print("bots far below their own level against one opponent:")
        for below in result.below:
            print(
                f"  {label(below.version)} against {label(below.opponent)}: "
                f"{below.elo:.0f} Elo below its level"
            )
    if excluded:
        print("left out of the fit:")
        for line in exclusions.note(excluded, label):
            print(f"  {line}")
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"
