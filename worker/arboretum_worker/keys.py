"""Every Redis key name of the league, and the names of its statuses.

All key names are built here, by :class:`Keys` (prefix ``arena:``); nothing else in the project
spells a key (``tests/test_architecture.py`` looks for one in the product's source, and
``tests/league/test_keys.py`` holds this table to what :class:`Keys` builds).
:mod:`arboretum_worker.store` holds the records stored under them (and re-exports everything
here).

Layout (``{x}`` is an id; names and ids never contain ``:``)::

    arena:bots                          set    bot names
    arena:bot:{name}                    hash   name, owner, created
    arena:bot:{name}:versions           list   version ids, oldest first (the name's history)
    arena:bot:{name}:submitted:{day}    string new versions stored on that UTC day (YYYY-MM-DD),
                                               expiring after two days (the daily quota)
    arena:version:{vid}                 hash   id, name, created, size, files
    arena:version:{vid}:files           hash   relative path -> file bytes
    arena:leagues                       set    league names
    arena:league:{name}                 hash   name, settings (JSON), status, created
    arena:league:{name}:matches         list   match ids in schedule order
    arena:league:{name}:status:{s}      zset   the league's matches of status s, score = position
    arena:league:{name}:retrying        zset   its queued matches that failed before
    arena:league:{name}:bot:{bot}       zset   its matches in which bot (any version) sits
    arena:league:{name}:bot:{bot}:status:{s}  zset   the same, of status s
    arena:index:version                 string layout version of the indexes (matchindex.py)
    arena:index:lock                    string held while one process builds the indexes
    arena:match:{id}                    hash   id, league, seats (JSON), deal, rotation, seed,
                                               deals, game_seeds, siblings (JSON lists),
                                               status, failure, attempts, worker, created,
                                               started, finished, position (in the league's
                                               list), bots (JSON: bot name per seat)
    arena:result:{match_id}             string the match result (JSON), written once (SET NX)
    arena:replay:{match_id}             hash   game index -> replay JSON, zlib-compressed
    arena:log:{match_id}:{seat}         string the seat's bot log (stderr), capped
    arena:output:{match_id}:{seat}      string the seat's output per decision: JSON, zlib
                                               (botoutput.py), owner-only like the log
    arena:live:{match_id}               stream the running match's public events (live.py),
                                               written while someone watches it, expiring
    arena:live-watched:{match_id}       string someone watches the match (the web, while it
                                               relays it; expiring): its worker writes the stream
    arena:elo:{league}:ratings          hash   version id -> Elo ("%.17g")
    arena:elo:{league}:seq              string last sequence number given to a result
    arena:elo:{league}:applied          zset   match id, score = its sequence number
    arena:elo:{league}:stats:{vid}      hash   games, wins, shared_wins, win_share, rank_sum,
                                               last_played, last_seq, rating, live
    arena:elo:{league}:history:{vid}    list   "seq game rating match_id mu sigma", one per game
    arena:elo:{league}:live             hash   version id -> live rating "mu sigma" (repr text)
    arena:elo:{league}:fit              hash   seq, rows (JSON), excluded (JSON): the batch fit
                                               of the results up to seq (board.py), replaced
                                               only by a fit of more results
    arena:league:{name}:ladder          hash   a ladder's members: bot name -> its version scheduled
    arena:league:{name}:ladder:versions hash   version id -> JSON {bot, joined, retired}
    arena:league:{name}:ladder:rounds   hash   pairing "a/b" (sorted ids) -> rounds handed out
    arena:league:{name}:ladder:lock     string the scheduler's lock (a token, expiring)
    arena:league:{name}:ladder:again    string a tick came while the lock was held: tick again
    arena:league:{name}:ladder:queued   string a tick job is waiting in the queue (expiring)
    arena:league:{name}:ladder:tick     string the last tick (JSON: when, what it scheduled)
    arena:league:{name}:ladder:fitdata  string the ladder's wins per pair for its fit, up to a
                                               result sequence number (ladder/fitdata.py)
    arena:league:{name}:ladder:open     string present when the operator opened the ladder to
                                               authors: they join and leave it themselves
    arena:league:{name}:excluded        hash   pair "a/b" (sorted ids) -> JSON {by, at}: its
                                               games are left out of the fit (audit/)
    arena:sprts                         zset   sequential test ids, score = created (sprt/league.py)
    arena:sprt:{id}                     hash   the test: versions, settings (JSON), status, ...
    arena:sprt:{id}:batches             hash   batch index -> its pairs (JSON), written once
    arena:sprt:{id}:order               list   batch indices in the order they were recorded
    arena:sprt:{id}:state               hash   checked (batches taken into the test), snapshot
    arena:sprt:{id}:llr                 list   the LLR after each counted pair
    arena:sprt:{id}:next                string the next batch index to hand out
    arena:sprt:{id}:successor           hash   batch index -> the batch it handed out after it
    arena:sprt:{id}:attempts            hash   batch index -> attempts started
    arena:sprt:{id}:failed              hash   batch index -> why it failed for good
    arena:sprt:{id}:matches             hash   match id -> JSON {batch, seating, seats, ranks}: an
                                               author test's matches (sprt/authors.py)
    arena:fair:unit:{id}                hash   an author's unit of work, one rq job (queues.py):
                                               author, kind, queue, func, args, matches, state, ...
    arena:fair:pending:{author}:{kind}  list   the author's units waiting for release, oldest first
    arena:fair:authors                  zset   authors with units waiting, score = last served
    arena:fair:running:{author}         set    the author's units released to rq, not ended
    arena:fair:claimed                  zset   units claimed and not yet handed to rq, score =
                                               claimed (a dispatcher that died in between)
    arena:fair:author:{author}          hash   active (matches admitted, not ended), seconds, units
    arena:fair:used:{author}:{day}      string worker seconds of the author's units that UTC day,
                                               expiring after two days (the daily budget)
    arena:fair:usage                    hash   queue kind -> decayed worker seconds; total:{kind};
                                               stamp
    arena:challenges                    zset   challenge ids, score = created (challenges/)
    arena:challenge:{id}                hash   a challenge: author, entrants, deals, status, ...
    arena:challenge:{id}:matches        hash   match index -> JSON {seats, status, ranks, failure}
    arena:author:{name}:challenges      zset   challenges the author made or is in, score = created
    arena:author:{name}:tests           zset   the author's sequential tests, score = created
    arena:bot:{name}:prefs              hash   the owner's settings: accept_challenges, public
    arena:authors                       set    author names (the web's accounts, authors.py)
    arena:author:{name}                 hash   name, created, token (SHA-256 hex of the token)
    arena:token:{sha256}                string author name
    arena:author:{name}:webhook         hash   url, secret, created: the author's webhook
                                               (arboretum_worker/webhooks.py)
    arena:author:{name}:deliveries      list   the author's latest webhook deliveries (ids), capped
    arena:webhook:{id}                  hash   one delivery: event, body, status, attempts (JSON),
                                               expiring
    arena:author:{name}:audit           stream what the author did (web authorlog.py), capped
    arena:audit-log                     stream what every author did, capped
    arena:ratelimit:{bucket}            string a rate-limit bucket's theoretical arrival time
                                               (GCRA), expiring when it is full (web ratelimit.py)
    arena:main-board                    string the league the site's front page shows
    arena:analysis:{match}:{game}       hash   a stored game's analysis: status, error, document
                                               (analysis_jobs.py)
    arena:casual:{id}                   hash   a casual game of a person against bots: players,
                                               person_seat, seats, names, status, clock, key
                                               (SHA-256 of the person's key), pending request,
                                               result, replay_id (casual/), expiring once over
    arena:casual:{id}:feed              stream the person's seat's messages (casual/feed.py),
                                               expiring with the game
    arena:casual:{id}:moves             list   the person's decisions and resignation, for the
                                               game's relay (casual/relay.py)
    arena:casual-result:{id}            string a finished casual game (JSON), kept for good
    arena:casual-address:{sha256}       zset   casual games queued or playing from one client
                                               address (its SHA-256), score = created
    arena:casual-queued                 zset   casual games waiting for a worker, score = created
    arena:casual-version:{vid}          zset   the version's games against people, score = ended
    arena:casual-version:{vid}:record   hash   games, wins: the version's record against people

rq keeps its queues and jobs under its own keys (``rq:``), which this project never spells: it
names jobs only, by id (``arena-match-{match}``, ``arena-sprt-{test}-{batch}``,
``arena-ladder-{league}-{token}``, ``arena-casual-{game}``; jobs.py, sprt/league.py,
ladder/scheduler.py, casual/job.py).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import ClassVar

from arboretum_sdk.argtypes import name_problem
from arboretum_sdk.clitools import UserError

__all__ = ["Keys", "LeagueStatus", "MatchStatus", "StoreError", "validate_name"]

_BAD_ID = re.compile(r"[:\s]")
"""What an id may not hold: a colon, or a character that ``str.isspace`` calls space."""


class StoreError(ValueError, UserError):
    """A record is malformed, missing where it must exist, or already exists; or an id or a name
    is not one the store takes. Its message is for the person who asked: ``arena`` prints it as
    one ``arena:`` line (a :class:`~arboretum_sdk.clitools.UserError`), whatever command met it."""


def validate_name(kind: str, name: str) -> str:
    """Bot and league names: 1-64 of ``A-Z a-z 0-9 _ . -``, starting with a letter or digit (the
    SDK's rule, which ``arena bot submit`` checks before it sends anything)."""
    problem = name_problem(kind, name)
    if problem:
        raise StoreError(problem)
    return name


class Keys:
    """Every Redis key of the league, built from ``PREFIX`` and one helper per entity."""

    PREFIX: ClassVar[str] = "arena:"
    BOTS: ClassVar[str] = PREFIX + "bots"
    BOT: ClassVar[str] = PREFIX + "bot:"
    VERSION: ClassVar[str] = PREFIX + "version:"
    LEAGUES: ClassVar[str] = PREFIX + "leagues"
    LEAGUE: ClassVar[str] = PREFIX + "league:"
    MATCH: ClassVar[str] = PREFIX + "match:"
    RESULT: ClassVar[str] = PREFIX + "result:"
    REPLAY: ClassVar[str] = PREFIX + "replay:"
    LOG: ClassVar[str] = PREFIX + "log:"
    OUTPUT: ClassVar[str] = PREFIX + "output:"
    ANALYSIS: ClassVar[str] = PREFIX + "analysis:"
    ELO: ClassVar[str] = PREFIX + "elo:"
    SPRTS: ClassVar[str] = PREFIX + "sprts"
    SPRT: ClassVar[str] = PREFIX + "sprt:"
    INDEX_VERSION: ClassVar[str] = PREFIX + "index:version"
    INDEX_LOCK: ClassVar[str] = PREFIX + "index:lock"
    LIVE: ClassVar[str] = PREFIX + "live:"
    LIVE_WATCHED: ClassVar[str] = PREFIX + "live-watched:"
    AUTHORS: ClassVar[str] = PREFIX + "authors"
    AUTHOR: ClassVar[str] = PREFIX + "author:"
    TOKEN: ClassVar[str] = PREFIX + "token:"
    FAIR: ClassVar[str] = PREFIX + "fair:"
    FAIR_AUTHORS: ClassVar[str] = PREFIX + "fair:authors"
    FAIR_CLAIMED: ClassVar[str] = PREFIX + "fair:claimed"
    FAIR_USAGE: ClassVar[str] = PREFIX + "fair:usage"
    CHALLENGES: ClassVar[str] = PREFIX + "challenges"
    CHALLENGE: ClassVar[str] = PREFIX + "challenge:"
    WEBHOOK: ClassVar[str] = PREFIX + "webhook:"
    AUDIT_LOG: ClassVar[str] = PREFIX + "audit-log"
    RATELIMIT: ClassVar[str] = PREFIX + "ratelimit:"
    MAIN_BOARD: ClassVar[str] = PREFIX + "main-board"
    CASUAL: ClassVar[str] = PREFIX + "casual:"
    CASUAL_RESULT: ClassVar[str] = PREFIX + "casual-result:"
    CASUAL_ADDRESS: ClassVar[str] = PREFIX + "casual-address:"
    CASUAL_QUEUED: ClassVar[str] = PREFIX + "casual-queued"
    CASUAL_VERSION: ClassVar[str] = PREFIX + "casual-version:"

    @staticmethod
    def key_for(namespace: str, id: str) -> str:
        """``namespace + id``, refusing ids that could collide with another key."""
        if not id or _BAD_ID.search(id):
            what = namespace.removeprefix(Keys.PREFIX).strip(":").rpartition(":")[2] or "id"
            raise StoreError(f"invalid {what} {id!r}: an id is not empty, holds no ':' nor space")
        return namespace + id

    @classmethod
    def bot(cls, name: str) -> str:
        return cls.key_for(cls.BOT, name)

    @classmethod
    def bot_versions(cls, name: str) -> str:
        return cls.bot(name) + ":versions"

    @classmethod
    def bot_submitted(cls, name: str, day: str) -> str:
        """The count of the bot's new versions stored on ``day`` (UTC, ``YYYY-MM-DD``)."""
        return cls.key_for(cls.bot(name) + ":submitted:", day)

    @classmethod
    def version(cls, version_id: str) -> str:
        return cls.key_for(cls.VERSION, version_id)

    @classmethod
    def version_files(cls, version_id: str) -> str:
        return cls.version(version_id) + ":files"

    @classmethod
    def league(cls, name: str) -> str:
        return cls.key_for(cls.LEAGUE, name)

    @classmethod
    def league_matches(cls, name: str) -> str:
        return cls.league(name) + ":matches"

    @classmethod
    def league_status(cls, name: str, status: str) -> str:
        return cls.key_for(cls.league(name) + ":status:", MatchStatus(status).value)

    @classmethod
    def league_retrying(cls, name: str) -> str:
        return cls.league(name) + ":retrying"

    @classmethod
    def league_excluded(cls, name: str) -> str:
        """The pairs whose games an operator left out of the league's fit."""
        return cls.league(name) + ":excluded"

    @classmethod
    def league_bot(cls, name: str, bot: str) -> str:
        return cls.key_for(cls.league(name) + ":bot:", bot)

    @classmethod
    def league_bot_status(cls, name: str, bot: str, status: str) -> str:
        return cls.league_bot(name, bot) + ":status:" + MatchStatus(status).value

    @classmethod
    def ladder(cls, name: str, part: str = "") -> str:
        """A ladder's members hash, or one of its parts (``versions``, ``rounds``, ``lock``,
        ``again``, ``queued``, ``tick``, ``fitdata``, ``open``)."""
        if part not in _LADDER_PARTS:
            raise StoreError(f"no part {part!r} of a ladder")
        key = cls.league(name) + ":ladder"
        return f"{key}:{part}" if part else key

    @classmethod
    def match(cls, match_id: str) -> str:
        return cls.key_for(cls.MATCH, match_id)

    @classmethod
    def result(cls, match_id: str) -> str:
        return cls.key_for(cls.RESULT, match_id)

    @classmethod
    def replay(cls, match_id: str) -> str:
        return cls.key_for(cls.REPLAY, match_id)

    @classmethod
    def bot_log(cls, match_id: str, seat: int) -> str:
        return cls.key_for(cls.LOG, match_id) + f":{int(seat)}"

    @classmethod
    def bot_output(cls, match_id: str, seat: int) -> str:
        """A seat's output per decision (:mod:`arboretum_worker.botoutput`)."""
        return cls.key_for(cls.OUTPUT, match_id) + f":{int(seat)}"

    @classmethod
    def analysis(cls, match_id: str, game: int) -> str:
        """A stored game's analysis: its status and document (analysis_jobs.py)."""
        return cls.key_for(cls.ANALYSIS, match_id) + f":{int(game)}"

    @classmethod
    def live(cls, match_id: str) -> str:
        """The stream of a running match's public events."""
        return cls.key_for(cls.LIVE, match_id)

    @classmethod
    def live_watched(cls, match_id: str) -> str:
        """The mark that someone watches the match."""
        return cls.key_for(cls.LIVE_WATCHED, match_id)

    @classmethod
    def elo(cls, league: str) -> str:
        return cls.key_for(cls.ELO, league)

    @classmethod
    def elo_ratings(cls, league: str) -> str:
        return cls.elo(league) + ":ratings"

    @classmethod
    def elo_seq(cls, league: str) -> str:
        return cls.elo(league) + ":seq"

    @classmethod
    def elo_applied(cls, league: str) -> str:
        return cls.elo(league) + ":applied"

    @classmethod
    def elo_live(cls, league: str) -> str:
        return cls.elo(league) + ":live"

    @classmethod
    def elo_fit(cls, league: str) -> str:
        return cls.elo(league) + ":fit"

    @classmethod
    def elo_stats(cls, league: str, version_id: str) -> str:
        return cls.key_for(cls.elo(league) + ":stats:", version_id)

    @classmethod
    def elo_history(cls, league: str, version_id: str) -> str:
        return cls.key_for(cls.elo(league) + ":history:", version_id)

    @classmethod
    def sprt(cls, test_id: str, part: str = "") -> str:
        """A sequential test's hash, or one of its parts (``batches``, ``order``, ``state``,
        ``llr``, ``next``, ``successor``, ``attempts``, ``failed``, ``matches``)."""
        if part not in _SPRT_PARTS:
            raise StoreError(f"no part {part!r} of a sequential test")
        key = cls.key_for(cls.SPRT, test_id)
        return f"{key}:{part}" if part else key

    @classmethod
    def author(cls, name: str) -> str:
        """A web author's record."""
        return cls.key_for(cls.AUTHOR, name)

    @classmethod
    def token(cls, digest: str) -> str:
        """The author of the API token with this SHA-256 (hex)."""
        return cls.key_for(cls.TOKEN, digest)

    @classmethod
    def author_webhook(cls, name: str) -> str:
        """An author's webhook: its URL and signing secret."""
        return cls.author(name) + ":webhook"

    @classmethod
    def author_deliveries(cls, name: str) -> str:
        """An author's latest webhook deliveries (ids, newest first)."""
        return cls.author(name) + ":deliveries"

    @classmethod
    def webhook_delivery(cls, delivery_id: str) -> str:
        """One webhook delivery and its attempts."""
        return cls.key_for(cls.WEBHOOK, delivery_id)

    @classmethod
    def author_audit(cls, name: str) -> str:
        """What one author did (the audit log's entries of that author)."""
        return cls.author(name) + ":audit"

    @classmethod
    def ratelimit(cls, bucket: str) -> str:
        """A rate-limit bucket's theoretical arrival time (web ratelimit.py)."""
        return cls.key_for(cls.RATELIMIT, bucket)

    @classmethod
    def fair_unit(cls, unit_id: str) -> str:
        """A unit of an author's work: one rq job (queues.py)."""
        return cls.key_for(cls.FAIR + "unit:", unit_id)

    @classmethod
    def fair_pending(cls, author: str, kind: str) -> str:
        """An author's units of one queue kind waiting for release."""
        return cls.key_for(cls.key_for(cls.FAIR + "pending:", author) + ":", kind)

    @classmethod
    def fair_running(cls, author: str) -> str:
        """An author's units released to rq and not ended."""
        return cls.key_for(cls.FAIR + "running:", author)

    @classmethod
    def fair_author(cls, author: str) -> str:
        """An author's counters: matches admitted and not ended, worker seconds, units ended."""
        return cls.key_for(cls.FAIR + "author:", author)

    @classmethod
    def fair_used(cls, author: str, day: str) -> str:
        """The worker seconds an author's units used on ``day`` (UTC, ``YYYY-MM-DD``)."""
        return cls.key_for(cls.key_for(cls.FAIR + "used:", author) + ":", day)

    @classmethod
    def challenge(cls, challenge_id: str) -> str:
        return cls.key_for(cls.CHALLENGE, challenge_id)

    @classmethod
    def challenge_matches(cls, challenge_id: str) -> str:
        return cls.challenge(challenge_id) + ":matches"

    @classmethod
    def author_challenges(cls, name: str) -> str:
        """The challenges an author made or is in."""
        return cls.author(name) + ":challenges"

    @classmethod
    def author_tests(cls, name: str) -> str:
        """An author's sequential tests."""
        return cls.author(name) + ":tests"

    @classmethod
    def bot_prefs(cls, name: str) -> str:
        """A bot owner's settings for the bot (challenges accepted, results public)."""
        return cls.bot(name) + ":prefs"

    @classmethod
    def casual(cls, game_id: str) -> str:
        """A casual game's record (casual/)."""
        return cls.key_for(cls.CASUAL, game_id)

    @classmethod
    def casual_feed(cls, game_id: str) -> str:
        """The messages of a casual game's person's seat."""
        return cls.casual(game_id) + ":feed"

    @classmethod
    def casual_moves(cls, game_id: str) -> str:
        """The person's decisions on their way to the game's relay."""
        return cls.casual(game_id) + ":moves"

    @classmethod
    def casual_result(cls, game_id: str) -> str:
        """A finished casual game, kept for good."""
        return cls.key_for(cls.CASUAL_RESULT, game_id)

    @classmethod
    def casual_address(cls, digest: str) -> str:
        """The casual games queued or playing from one client address (its SHA-256 hex)."""
        return cls.key_for(cls.CASUAL_ADDRESS, digest)

    @classmethod
    def casual_version(cls, version_id: str) -> str:
        """A bot version's games against people, by end time."""
        return cls.key_for(cls.CASUAL_VERSION, version_id)

    @classmethod
    def casual_version_record(cls, version_id: str) -> str:
        """A bot version's record against people: games, wins."""
        return cls.casual_version(version_id) + ":record"


_LADDER_PARTS = ("", "versions", "rounds", "lock", "again", "queued", "tick", "fitdata", "open")
_SPRT_PARTS = (
    "",
    "batches",
    "order",
    "state",
    "llr",
    "next",
    "successor",
    "attempts",
    "failed",
    "matches",
)


class LeagueStatus(StrEnum):
    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    PAUSED = "paused"
    """A ladder that schedules nothing new until it is resumed."""
    CLOSED = "closed"
    """A ladder that ended: nothing new is scheduled, ever; its results stay."""


class MatchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"
