"""What an author does with ``arena`` and a web server, no Redis: ``--server URL`` (or
``$ARENA_SERVER``) and the author token (``--token-file``, ``--token`` or
``$ARENA_AUTHOR_TOKEN``) send a command to the arena's web API (:mod:`.webclient`).

The league's commands (``arena bot versions``, ``arena match ...``, ``arena league join|leave``,
``arena sprt``) call the handlers here when given a server; ``arena bot list --server`` lists the
author's bots; ``arena challenge`` is registered here (:func:`register`). A refusal is one
``arena: HTTP <status>: <the server's message>`` line and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from . import argtypes, clitools
from .clitools import UsageError, UserError, add_server_options, plural, server_of
from .webclient import AUTHOR_TOKEN_ENV, SERVER_ENV, WebClient, WebError, quote, read_token

__all__ = [
    "bot_list",
    "bot_versions",
    "client_of",
    "fetch_match",
    "leaderboard",
    "league_join",
    "league_leave",
    "match_list",
    "match_logs",
    "match_replay",
    "match_show",
    "register",
    "sprt",
    "web_call",
]

POLL_S = 1.0
"""How often ``--follow`` asks the server."""


def client_of(args: argparse.Namespace, *, token_required: bool = True) -> WebClient:
    server = server_of(args)
    if server is None:
        raise UsageError(f"give --server URL (or set {SERVER_ENV})")
    try:
        token = read_token(getattr(args, "token", None), getattr(args, "token_file", None))
        if token is None and token_required:
            raise UsageError(
                f"no author token; give --token-file FILE, --token T or set {AUTHOR_TOKEN_ENV}"
            )
        return WebClient(server, token)
    except WebError as exc:
        raise UsageError(str(exc)) from None


def web_call(fn: Callable[[], Any]) -> Any:
    """``fn()``, a request to the web server; its refusal becomes one ``arena:`` line."""
    try:
        return fn()
    except WebError as exc:
        raise UserError(str(exc)) from None


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stamp)) if stamp else "-"


# --------------------------------------------------------------------------- bots


def bot_list(args: argparse.Namespace) -> int:
    client = client_of(args)
    data = web_call(lambda: client.get("/me/bots"))
    bots = data["bots"]
    if not bots:
        print(f"author {data['author']}: no bots yet (arena bot submit PATH --name NAME)")
        return 0
    print(f"author {data['author']}: {plural(len(bots), 'bot')}")
    rows = [
        [b["name"], str(b["versions"]), (b["latest"] or "-")[:12], _when(b["created"])]
        for b in bots
    ]
    print(clitools.table(["bot", "versions", "latest", "created (UTC)"], rows))
    return 0


def bot_versions(args: argparse.Namespace) -> int:
    client = client_of(args, token_required=False)
    data = web_call(lambda: client.get(f"/bots/{quote(args.name)}/versions"))
    rows = [
        [
            str(v["index"]),
            v["id"][:12],
            _when(v["created"]),
            str(v["files"]),
            str(v["size"]),
            v["id"],
        ]
        for v in data["versions"]
    ]
    print(clitools.table(["#", "version", "submitted (UTC)", "files", "bytes", "id"], rows))
    return 0


# --------------------------------------------------------------------------- matches


def _seats(match: dict[str, Any]) -> str:
    return " vs ".join(s["label"] or s["version"][:12] for s in match["seats"])


def match_list(args: argparse.Namespace) -> int:
    client = client_of(args, token_required=False)
    params = {"league": args.league, "bot": args.bot, "status": args.status, "limit": args.limit}
    data = web_call(lambda: client.get("/matches", **params))
    if args.ids:
        for m in data["matches"]:
            print(m["id"])
        return 0
    print(plural(data["total"], "match", "matches"))
    rows = [[m["id"], m["league"], m["status"], _seats(m)] for m in data["matches"]]
    if rows:
        print(clitools.table(["match", "league", "status", "seats (seat 0 first)"], rows))
    return 0


def fetch_match(client: WebClient, match_id: str) -> dict[str, Any]:
    """A match's JSON from the web server (``GET /matches/ID``)."""
    return dict(web_call(lambda: client.get(f"/matches/{quote(match_id)}")))


def match_show(args: argparse.Namespace) -> int:
    client = client_of(args, token_required=False)
    m = fetch_match(client, args.match_id)
    print(f"match {m['id']} of {m['league']}: {m['status']} ({plural(m['attempts'], 'attempt')})")
    if m.get("failure"):
        print(f"  last failure: {m['failure']}")
    result = m.get("result")
    for seat in m["seats"]:
        line = f"  seat {seat['seat']}: {seat['label'] or seat['version'][:12]}"
        if result:
            ranks = ", ".join(str(g["ranks"][seat["seat"]]) for g in result["games"])
            totals = ", ".join(str(g["totals"][seat["seat"]]) for g in result["games"])
            line += f"  rank {ranks}  points {totals}"
        print(line)
    if m["games"]:
        games = ", ".join(str(g["game"]) for g in m["games"])
        print(f"  replays: games {games} (arena match replay {m['id']} --game I)")
    return 0


def match_logs(args: argparse.Namespace) -> int:
    client = client_of(args)
    m = fetch_match(client, args.match_id)
    seats = [
        s["seat"]
        for s in m["seats"]
        if args.bot in (str(s["seat"]), s["version"], s["bot"])
        or (len(args.bot) >= 4 and s["version"].startswith(args.bot))
    ]
    if not seats:
        raise UserError(f"no bot {args.bot!r} in match {m['id']} (seats: {_seats(m)})")
    for seat in seats:
        log = web_call(partial(client.get, f"/matches/{quote(m['id'])}/seats/{seat}/log"))
        if len(seats) > 1:
            print(f"--- seat {seat}")
        text = log["log"]
        sys.stdout.write(text if not text or text.endswith("\n") else text + "\n")
    return 0


def match_replay(args: argparse.Namespace) -> int:
    client = client_of(args, token_required=False)
    path = f"/matches/{quote(args.match_id)}/games/{args.game}/replay"
    data = web_call(lambda: client.call("GET", path, raw=True))
    if args.output is not None:
        clitools.output_file(args.output, "the replay")
        args.output.write_bytes(data)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(data.decode("utf-8", "replace"))
        if not data.endswith(b"\n"):
            sys.stdout.write("\n")
    return 0


# --------------------------------------------------------------------------- leaderboard


def leaderboard(args: argparse.Namespace) -> int:
    """``arena leaderboard`` through the web server (``GET /leaderboard``): the same board."""
    client = client_of(args, token_required=False)
    params = {"league": args.league, "all_versions": 1 if args.all_versions else None}
    data = web_call(lambda: client.get("/leaderboard", **params))
    if data["league"] is None:
        raise UserError(f"no leagues yet on {client.base}")
    rows = [clitools.leaderboard_cells(row, args.all_versions) for row in data["rows"]]
    print(clitools.leaderboard_text(data["league"], rows, args.all_versions))
    return 0


# --------------------------------------------------------------------------- ladders


def league_join(args: argparse.Namespace, bots: Sequence[str]) -> int:
    client = client_of(args)
    path = f"/leagues/{quote(args.name)}/members"
    for bot in bots:
        done = web_call(partial(client.post, path, {"bot": bot}))
        note = (
            f" (replaces {done['replaced'][:8]}, no longer scheduled)" if done["replaced"] else ""
        )
        print(f"ladder {done['league']}: {done['bot']}@{done['version'][:8]} joined{note}")
    return 0


def league_leave(args: argparse.Namespace) -> int:
    client = client_of(args)
    done = web_call(lambda: client.delete(f"/leagues/{quote(args.name)}/members/{quote(args.bot)}"))
    print(f"ladder {done['league']}: {done['bot']}@{done['version'][:8]} left (its results stay)")
    return 0


# --------------------------------------------------------------------------- challenges


def register(
    subparsers: Any,
    groups: dict[str, Any] | None = None,
    only: str | None = None,
    action: str | None = None,
) -> None:
    """``arena challenge`` (through the SDK's list of command modules, ``cli.PLUGINS``), and
    ``arena bot prefs`` when the ``bot`` group is there; with ``only``, the command it names
    (``action`` is not used: ``arena challenge`` has no actions)."""
    if only in (None, "challenge"):
        _register_challenge(subparsers)
    if groups and "bot" in groups:
        _register_prefs(groups["bot"])


def _register_challenge(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "challenge",
        help="challenge other bots with one of yours (through the web server)",
        description="Challenge bots with one of your own, or pit two of your versions against "
        "each other (BOT@VERSION): --deals deals, each in every seat order, with --players "
        "seats at least (the seats the bots named do not fill are played by the greedy "
        "built-in bot). Unrated; "
        "played by the league's workers in their sandbox. Its results and replays are for the "
        "authors involved (public if both allow it). A bot's owner may decline challenges "
        "(arena bot prefs). "
        "Prints the challenge's id; --follow waits for its end and prints its standings "
        "(exit status 1 when it failed or was cancelled).",
    )
    p.add_argument("bot", nargs="?", metavar="BOT", help="your bot: NAME or NAME@VERSION")
    p.add_argument(
        "opponents", nargs="*", metavar="OPPONENT", help="the bots challenged: NAME or NAME@VERSION"
    )
    p.add_argument(
        "--deals",
        type=argtypes.positive,
        default=1,
        metavar="N",
        help="deals, each played in every seat order (default 1)",
    )
    clitools.add_players(p)
    p.add_argument("--follow", action="store_true", help="wait for the end and print the result")
    p.add_argument("--cancel", metavar="ID", help="cancel a challenge of yours (no BOT then)")
    p.add_argument("--show", metavar="ID", help="show a challenge: its standings and matches")
    p.add_argument("--list", action="store_true", help="list your challenges, newest first")
    add_server_options(p, redis_too=False)
    p.set_defaults(handler=cmd_challenge)


def _register_prefs(bot_sub: Any) -> None:
    p = bot_sub.add_parser(
        "prefs",
        help="your bot's settings on a league: challenges accepted, results public",
        description="Show your bot's settings on the league's web server, or change them: "
        "decline (or accept again) challenges to it, keep the results of challenges it plays "
        "private to the authors involved (or public).",
    )
    p.add_argument("name", metavar="NAME", help="your bot's name")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--decline-challenges", action="store_true", help="challenges to this bot are refused"
    )
    g.add_argument("--accept-challenges", action="store_true", help="challenges are accepted")
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--private-results",
        action="store_true",
        help="its challenges' results are for the authors involved only",
    )
    g.add_argument("--public-results", action="store_true", help="they may be public")
    add_server_options(p, redis_too=False)
    p.set_defaults(handler=cmd_prefs)


def cmd_prefs(args: argparse.Namespace) -> int:
    client = client_of(args)
    body: dict[str, bool] = {}
    if args.decline_challenges or args.accept_challenges:
        body["accept_challenges"] = bool(args.accept_challenges)
    if args.private_results or args.public_results:
        body["public_results"] = bool(args.public_results)
    path = f"/bots/{quote(args.name)}/prefs"
    prefs = web_call(
        partial(client.call, "PUT", path, body=body) if body else partial(client.get, path)
    )
    accepts = "accepts" if prefs["accept_challenges"] else "declines"
    public = "public" if prefs["public_results"] else "private"
    print(f"bot {prefs['bot']}: {accepts} challenges, its results {public}")
    return 0


def _challenge_line(c: dict[str, Any]) -> str:
    done = c.get("done", 0)
    total = c.get("total", 0)
    return (
        f"challenge {c['id']}: {c['status']}, {done} of {plural(total, 'match', 'matches')} played"
    )


def _print_challenge(c: dict[str, Any]) -> None:
    names = {b["version"]: b["name"] for b in c["bots"]}
    print(_challenge_line(c))
    rows = [
        [
            row["name"],
            str(row["games"]),
            str(row["wins"]),
            str(row["points"]),
            "-" if row["mean_rank"] is None else f"{row['mean_rank']:.2f}",
        ]
        for row in c["standings"]
    ]
    print(clitools.table(["bot", "games", "wins", "points", "mean rank"], rows))
    for m in c.get("matches", []):
        seats = " vs ".join(names.get(v, v[:12]) for v in m["seats"])
        print(f"  match {m['index']}: {m['status']:<9} {seats}  (replays: {m['id']})")


def cmd_challenge(args: argparse.Namespace) -> int:
    client = client_of(args)
    actions = [a for a in ("cancel", "show", "list") if getattr(args, a)]
    if len(actions) > 1:
        raise UsageError(f"--{actions[0]} and --{actions[1]} do not go together")
    if actions and args.bot is not None:
        raise UsageError(f"--{actions[0]} takes no bots")
    if args.cancel:
        done = web_call(lambda: client.post(f"/challenges/{quote(args.cancel)}/cancel"))
        print(f"challenge {done['id']}: {done['status']}")
        return 0
    if args.list:
        found = web_call(lambda: client.get("/challenges"))["challenges"]
        for c in found:
            bots = " vs ".join(b["name"] for b in c["bots"])
            print(f"{_challenge_line(c)}  {bots}")
        if not found:
            print("no challenges yet (arena challenge BOT OPPONENT...)")
        return 0
    if args.show:
        c = web_call(lambda: client.get(f"/challenges/{quote(args.show)}"))
    else:
        if args.bot is None:
            raise UsageError("name your bot and the bots it challenges: arena challenge BOT OPP...")
        body: dict[str, Any] = {
            "bot": args.bot,
            "opponents": list(args.opponents),
            "deals": args.deals,
        }
        # --players is the least number of seats: more than the bots named are filled by greedy
        body["players"] = max(args.players or 2, 1 + len(args.opponents))
        c = web_call(lambda: client.post("/challenges", body))
        print(c["id"])
    if args.follow:
        c = _follow(lambda: client.get(f"/challenges/{quote(c['id'])}"), _challenge_line)
    elif not args.show:
        print(f"follow it with: arena challenge --show {c['id']} --follow", file=sys.stderr)
        return 0
    _print_challenge(c)
    return 0 if c["status"] in ("finished", "queued", "running") else 1


def _follow(fetch: Callable[[], Any], line: Callable[[dict[str, Any]], str]) -> dict[str, Any]:
    """Ask ``fetch`` every :data:`POLL_S` until its status is no longer queued or running; a
    new line on stderr when it changed."""
    last = ""
    while True:
        data = dict(web_call(fetch))
        text = line(data)
        if text != last:
            print(text, file=sys.stderr, flush=True)
            last = text
        if data["status"] not in ("queued", "running"):
            return data
        time.sleep(POLL_S)


# --------------------------------------------------------------------------- sequential tests


def _test_line(t: dict[str, Any]) -> str:
    elo = "-" if t.get("elo") is None else f"{t['elo']:+.1f}"
    return (
        f"test {t['id']} {t['new']['bot']} vs {t['old']['bot']}: {t['status']}, "
        f"LLR {t['llr']:+.2f} ({t['lower_bound']:+.2f}, {t['upper_bound']:+.2f}), "
        f"{plural(t['pairs'], 'pair')}, W/D/L {t['wins']}/{t['draws']}/{t['losses']}, Elo {elo}"
    )


def sprt(args: argparse.Namespace, settings: dict[str, Any]) -> int:
    """``arena sprt`` through the web server: start a test of two of the author's versions
    (followed unless ``--detach``), or ``--follow``, ``--cancel`` or ``--list``."""
    client = client_of(args)
    if args.cancel:
        done = web_call(lambda: client.post(f"/sprt/{quote(args.cancel)}/cancel"))
        print(f"test {done['id']}: {done['status']}")
        return 0
    if args.list:
        tests = web_call(lambda: client.get("/sprt", mine=1))["tests"]
        for t in tests:
            print(_test_line(t))
        if not tests:
            print("no tests yet (arena sprt NEW OLD --server URL)")
        return 0
    test_id = args.follow
    if test_id is None:
        body = {"new": args.new, "old": args.old, **settings}
        t = web_call(lambda: client.post("/sprt", body))
        test_id = t["id"]
        print(test_id)
        print(_test_line(t), file=sys.stderr)
        if args.detach:
            print(f"follow it with: arena sprt --follow {test_id} --server URL", file=sys.stderr)
            return 0
    t = _follow(lambda: client.get(f"/sprt/{quote(test_id)}"), _test_line)
    if args.json:
        print(json.dumps(t, indent=1))
    else:
        verdict = t.get("verdict") or "-"
        print(f"test {t['id']} {t['status']}: verdict {verdict} ({t.get('reason') or '-'})")
    return 0 if t["status"] == "finished" else 1
