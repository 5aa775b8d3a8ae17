"""League operations behind the CLI: submit bots, create, run, follow, cancel and retry leagues.

Everything here talks to Redis through :mod:`.store`, :mod:`.registry` and :mod:`.ratings`, and
to rq through one queue (``WorkerSettings.queue``, ``arena`` by default). Each scheduled match is
one rq job, :func:`arboretum_worker.jobs.run_match`, with the id ``arena-match-<match id>``,
``Retry(max=2)``, the failure callback :func:`arboretum_worker.jobs.on_match_failure` and a
timeout from :func:`arboretum_worker.settings.job_timeout`.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import matchindex, registry, store
from .schedule import DEFAULT_DEALS_PER_SERIES, round_robin
from .settings import WorkerSettings, job_timeout

__all__ = [
    "JOB_PREFIX",
    "LeagueError",
    "LeagueProgress",
    "bot_entry",
    "builtin_bot_files",
    "cancel_league",
    "create_league",
    "enqueue_matches",
    "job_id",
    "league_progress",
    "mark_finished_if_done",
    "prepare_store",
    "read_bot_files",
    "register_builtins",
    "resolve_version",
    "retry_league",
    "run_league",
    "sandbox_check",
    "sandbox_runner",
    "submit_bot",
]

log = logging.getLogger(__name__)

JOB_PREFIX = "arena-match-"
RESULT_TTL_S = 7 * 24 * 3600
FAILURE_TTL_S = 30 * 24 * 3600
_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}


class LeagueError(ValueError):
    """A league operation is refused (the message says why)."""


def job_id(match_id: str) -> str:
    return JOB_PREFIX + match_id


# --------------------------------------------------------------------------- bots


def read_bot_files(path: Path) -> dict[str, bytes] | bytes:
    """A submission's files: a ``.py`` file's bytes, or a folder's files by relative path.

    Caches and VCS folders are skipped. Reading stops as soon as the registry's size limit is
    passed (so a huge folder is refused without reading it all).
    """
    if not path.exists():
        raise registry.RegistryError(f"no such file or folder: {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise registry.RegistryError(f"{path.name}: a bot file is a .py file")
        size = path.stat().st_size
        if size > registry.MAX_TOTAL_BYTES:
            raise registry.TooLargeError(
                f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all, this one is {size}"
            )
        return path.read_bytes()
    files: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            full = Path(root, name)
            if name.endswith((".pyc", ".pyo")) or full.is_symlink() or not full.is_file():
                continue
            total += full.stat().st_size
            if total > registry.MAX_TOTAL_BYTES:
                raise registry.TooLargeError(
                    f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all; {path.name} is more"
                )
            files[full.relative_to(path).as_posix()] = full.read_bytes()
            if len(files) > registry.MAX_FILES:
                raise registry.TooLargeError(f"a bot has at most {registry.MAX_FILES} files")
    return files


def bot_entry(path: Path) -> Path:
    """What to hand the sandbox for a materialised version: its ``bot.py`` when that is its only
    file (a plain module), else the folder (imported as a package)."""
    if path.is_dir() and [p.name for p in path.iterdir()] == [registry.ENTRY_POINT]:
        return path / registry.ENTRY_POINT
    return path


def sandbox_runner(settings: WorkerSettings, limits: Any = None) -> Any:
    """The bot sandbox runner the settings ask for (``ARENA_SANDBOX``, ``ARENA_BOT_IMAGE``),
    with ``limits`` (a ``SandboxLimits``; the defaults when None)."""
    from .sandbox import DEFAULT_LIMITS, make_runner

    options: dict[str, Any] = {}
    if settings.sandbox == "docker" and settings.bot_image:
        options["image"] = settings.bot_image
    return make_runner(settings.sandbox, limits or DEFAULT_LIMITS, **options)


def sandbox_check(settings: WorkerSettings | str) -> registry.BotCheck:
    """The registry's pre-store check: ``check.check_bot`` (one real decision in the sandbox);
    raises if the bot fails it."""
    if isinstance(settings, str):
        settings = WorkerSettings(sandbox=settings)
    chosen = settings

    def check(path: Path) -> None:
        from .check import check_bot

        verdict = check_bot(bot_entry(path), runner=sandbox_runner(chosen))
        if not verdict.ok:
            raise registry.RegistryError(
                f"the bot failed its check in the sandbox: {verdict.error}"
            )

    return check


def submit_bot(
    r: Any, path: Path, name: str, settings: WorkerSettings, *, owner: str | None = None
) -> str:
    """Validate ``path`` (file or folder) in the sandbox and store it as a version of ``name``.
    A ``path`` that does not exist but is a built-in bot's name submits that built-in bot."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    if not path.exists() and str(path) in BUILTIN_BOTS:
        files: dict[str, bytes] | bytes = builtin_bot_files(str(path))
    else:
        files = read_bot_files(path)
    return registry.add_version(r, name, files, owner=owner, check=sandbox_check(settings))


def register_builtins(
    r: Any, specs: Iterable[str], check: registry.BotCheck | None
) -> list[tuple[str, str]]:
    """Register, as its first version, each built-in bot named in ``specs`` (a plain name, no
    ``@``) that no submitted bot has taken, so that a league can name the built-in bots like
    submitted ones. ``check`` is the sandbox's check. Returns (name, version id) of each bot
    registered now; a name already submitted stays the submitted bot."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    done = []
    for spec in specs:
        if spec in BUILTIN_BOTS and not registry.versions(r, spec):
            done.append((spec, registry.add_version(r, spec, builtin_bot_files(spec), check=check)))
    return done


def builtin_bot_files(name: str) -> bytes:
    """A one-file bot that is the SDK's built-in bot ``name`` (so it enters a league like any)."""
    from arboretum_sdk.bots import BUILTIN_BOTS

    if name not in BUILTIN_BOTS:
        raise LeagueError(f"no built-in bot {name!r} (have {', '.join(sorted(BUILTIN_BOTS))})")
    module, cls, description = BUILTIN_BOTS[name]
    class_name = "".join(part.capitalize() for part in name.replace("-", "_").split("_")) + "League"
    return (
        f'"""The built-in {name} bot ({description}), submitted to the league."""\n\n'
        f"import arboretum_sdk.bots.{module} as builtin\n\n\n"
        f"class {class_name}(builtin.{cls}):\n"
        f"    pass\n"
    ).encode()


def resolve_version(r: Any, spec: str) -> str:
    """``NAME`` (its latest version), ``NAME@PREFIX`` or a full version id -> a version id."""
    name, _, prefix = spec.partition("@")
    if not prefix and store.get_version(r, spec) is not None:
        return spec
    versions = registry.versions(r, name)
    if not versions:
        raise LeagueError(
            f"no bot named {name!r} (submit it with: arena bot submit PATH --name {name}; the "
            "built-in bots are registered when a league names them)"
        )
    if not prefix:
        return versions[-1]
    found = [v for v in versions if v.startswith(prefix)]
    if len(found) != 1:
        raise LeagueError(
            f"{spec!r}: {'no' if not found else 'more than one'} version of {name} starts so"
        )
    return found[0]


# --------------------------------------------------------------------------- leagues


def create_league(
    r: Any,
    name: str,
    bots: Sequence[str],
    *,
    players: int,
    games_per_pairing: int,
    per_decision_ms: int = 1000,
    bank_ms: int = 10_000,
    faults_to_forfeit: int = 3,
    seed: int | None = None,
    deals_per_series: int = DEFAULT_DEALS_PER_SERIES,
    compute: str = "fixed",
) -> store.League:
    """Create a league of these bots (names, ``name@version`` or version ids)."""
    versions = [resolve_version(r, spec) for spec in bots]
    if len(set(versions)) != len(versions):
        raise LeagueError("a league lists each bot version once")
    settings = store.LeagueSettings(
        players=players,
        games_per_pairing=games_per_pairing,
        bots=tuple(versions),
        seed=int.from_bytes(os.urandom(8), "big") if seed is None else seed,
        time_control=store.TimeControl(per_decision_ms=per_decision_ms, bank_ms=bank_ms),
        fault_policy=store.FaultPolicy(faults_to_forfeit=faults_to_forfeit),
        deals_per_series=deals_per_series,
        compute=compute,
    )
    return store.create_league(r, name, settings)


def _league(r: Any, name: str) -> store.League:
    league = store.get_league(r, name)
    if league is None:
        raise LeagueError(f"no league named {name!r}")
    return league


def _queue(r: Any, settings: WorkerSettings) -> Any:
    from rq import Queue

    return Queue(settings.queue, connection=r)


def _fetch_job(r: Any, match_id: str) -> Any:
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    try:
        return Job.fetch(job_id(match_id), connection=r)
    except NoSuchJobError:
        return None


def enqueue_matches(
    r: Any, league: store.League, match_ids: Iterable[str], settings: WorkerSettings
) -> int:
    """Enqueue these matches (one job each) unless a job for them is already waiting or running."""
    from rq import Callback, Retry

    from .jobs import on_match_failure, run_match

    queue = _queue(r, settings)
    ls = league.settings
    tc = ls.time_control
    timeout = job_timeout(ls.players, ls.deals_per_series, tc.per_decision_ms, tc.bank_ms)
    count = 0
    for match_id in match_ids:
        job = _fetch_job(r, match_id)
        if job is not None:
            status = job.get_status(refresh=True)
            if status in ("queued", "started", "scheduled", "deferred"):
                continue
            job.delete()
        queue.enqueue(
            run_match,
            match_id,
            job_id=job_id(match_id),
            job_timeout=timeout,
            retry=Retry(max=settings.retries),
            on_failure=Callback(on_match_failure),
            result_ttl=RESULT_TTL_S,
            failure_ttl=FAILURE_TTL_S,
            description=f"league {league.name}: match {match_id}",
        )
        count += 1
    return count


def _with_status(r: Any, name: str, *statuses: store.MatchStatus) -> list[str]:
    """The league's matches of these statuses, in schedule order (from the match indexes)."""
    pipe = r.pipeline(transaction=False)
    for status in statuses:
        pipe.zrange(store.Keys.league_status(name, status), 0, -1, withscores=True)
    found = [(score, store.as_text(m)) for chunk in pipe.execute() for m, score in chunk]
    return [match_id for _, match_id in sorted(found)]


def run_league(r: Any, name: str, settings: WorkerSettings) -> int:
    """Schedule the league's round robin (idempotent) and enqueue its unfinished matches."""
    league = _league(r, name)
    if league.status is store.LeagueStatus.CANCELLED:
        raise LeagueError(f"league {name!r} was cancelled")
    ls = league.settings
    specs = round_robin(
        name, ls.bots, ls.players, ls.games_per_pairing, ls.seed, ls.deals_per_series
    )
    store.create_matches(r, specs)
    pending = _with_status(r, name, store.MatchStatus.QUEUED, store.MatchStatus.RUNNING)
    store.set_league_status(r, name, store.LeagueStatus.RUNNING)
    return enqueue_matches(r, league, pending, settings)


def retry_league(r: Any, name: str, settings: WorkerSettings) -> list[str]:
    """Re-run the league's failed (and cancelled) matches; returns their ids."""
    league = _league(r, name)
    again = []
    for match_id in _with_status(r, name, store.MatchStatus.FAILED, store.MatchStatus.CANCELLED):
        if store.set_match_status(
            r, match_id, store.MatchStatus.QUEUED, failure="(retry requested)"
        ):
            again.append(match_id)
    store.set_league_status(r, name, store.LeagueStatus.RUNNING)
    enqueue_matches(r, league, again, settings)
    return again


def cancel_league(r: Any, name: str, settings: WorkerSettings) -> int:
    """Cancel the league: waiting matches are dropped, running ones stopped. Returns how many."""
    from rq.command import send_stop_job_command

    league = _league(r, name)
    if league.status in (store.LeagueStatus.FINISHED, store.LeagueStatus.CANCELLED):
        raise LeagueError(
            f"league {name} is {league.status.value} already; there is nothing to cancel"
        )
    store.set_league_status(r, name, store.LeagueStatus.CANCELLED)
    count = 0
    for match_id in _with_status(r, name, store.MatchStatus.QUEUED, store.MatchStatus.RUNNING):
        job = _fetch_job(r, match_id)
        if job is not None:
            status = job.get_status(refresh=True)
            try:
                if status == "started":
                    send_stop_job_command(r, job.id)
                elif status in ("queued", "scheduled", "deferred"):
                    job.cancel()
            except Exception as exc:  # the job may have ended meanwhile
                log.info("match %s: could not stop its job: %s", match_id, exc)
        if store.set_match_status(
            r, match_id, store.MatchStatus.CANCELLED, failure="league cancelled"
        ):
            count += 1
    return count


PROGRESS_DETAILS = 100
"""How many failed (and retried) matches a progress lists by id; the counts cover all."""


@dataclass
class LeagueProgress:
    league: store.League
    total: int
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(match id, reason) of the first failed matches (at most ``PROGRESS_DETAILS``; their
    number is ``counts["failed"]``)."""
    retrying: list[tuple[str, str]] = field(default_factory=list)
    """(match id, reason of the last failed attempt) of the first queued matches that failed
    before (at most ``PROGRESS_DETAILS``; their number is ``retries``)."""
    retries: int = 0

    @property
    def done(self) -> int:
        return self.counts["finished"] + self.counts["failed"] + self.counts["cancelled"]

    @property
    def complete(self) -> bool:
        return self.total > 0 and self.done == self.total

    def bar(self, width: int = 40) -> str:
        if self.total == 0:
            return "[" + " " * width + "]   0/0"
        filled = int(width * self.counts["finished"] / self.total)
        failed = int(width * (self.counts["failed"] + self.counts["cancelled"]) / self.total)
        failed = min(failed, width - filled)
        rest = width - filled - failed
        pct = 100 * self.done / self.total
        return f"[{'#' * filled}{'x' * failed}{'.' * rest}] {self.done}/{self.total} ({pct:.0f}%)"

    def summary(self) -> str:
        order = ("finished", "running", "queued", "failed", "cancelled")
        return ", ".join(f"{self.counts[k]} {k}" for k in order if self.counts[k])


def _reasons(r: Any, key: str, limit: int, missing: str) -> list[tuple[str, str]]:
    ids = matchindex.members(r, key, limit)
    records = store.get_matches(r, ids)
    return [(rec.id, rec.failure or missing) for rec in records if rec is not None]


def league_progress(
    r: Any, name: str, *, details: int = PROGRESS_DETAILS, counts_only: bool = False
) -> LeagueProgress:
    """The league's counts per status (from the match indexes, whatever its size) and its
    first ``details`` failed and retried matches with their reasons (none with
    ``counts_only``)."""
    league = _league(r, name)
    total, counts = matchindex.league_counts(r, name)
    progress = LeagueProgress(league=league, total=total)
    for status, n in counts.items():
        if n:
            progress.counts[status.value] = n
    if counts_only:
        return progress
    if counts[store.MatchStatus.FAILED]:
        key = store.Keys.league_status(name, store.MatchStatus.FAILED)
        progress.failures = _reasons(r, key, details, "(no reason recorded)")
    progress.retries = int(r.zcard(store.Keys.league_retrying(name)))
    if progress.retries:
        progress.retrying = _reasons(r, store.Keys.league_retrying(name), details, "")
    return progress


def mark_finished_if_done(r: Any, name: str) -> bool:
    """Set a running league FINISHED once none of its matches is queued or running."""
    league = store.get_league(r, name)
    if league is None or league.status is not store.LeagueStatus.RUNNING:
        return False
    if not league_progress(r, name, counts_only=True).complete:
        return False
    store.set_league_status(r, name, store.LeagueStatus.FINISHED)
    return True


def prepare_store(r: Any, *, wait_s: float = 600.0) -> int:
    """Index matches stored before the match indexes existed (``matchindex.ensure_indexes``,
    one ``GET`` once done), then finish the leagues whose last match ended meanwhile. Returns
    how many matches were indexed."""
    count = matchindex.ensure_indexes(r, wait_s=wait_s)
    if count:
        for name in store.list_leagues(r):
            mark_finished_if_done(r, name)
    return count
