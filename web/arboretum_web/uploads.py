"""Storing an uploaded bot, for the API (``POST /api/v1/bots/{name}/versions``) and the upload page.

The body is read with a bound (:func:`read_body`, :func:`read_form`). The work, unpacking
(:mod:`.submission`), the import check in the sandbox and the store, runs in worker threads
behind an :class:`UploadGate`: at most ``concurrency`` uploads at once, at most ``queue`` more
waiting (then 503 with ``Retry-After``), on a thread limiter of their own, so the pages and the
API keep their threads and their share of the CPU. While an upload is being worked on, its
client is watched: when it goes, unpacking stops at the next chunk and nothing is stored.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request

from arboretum_worker import registry, store
from arboretum_worker.sandbox import SandboxError

from .submission import (
    MAX_UPLOAD_BYTES,
    SubmissionError,
    UploadCancelled,
    unpack_upload,
    upload_kind,
)

__all__ = [
    "Submitted",
    "UploadGate",
    "form_file",
    "read_body",
    "read_form",
    "store_upload",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

_FORM_SLACK = 64 * 1024
"""What a multipart body may add to the file (boundaries, headers, the other fields)."""
_WATCH_INTERVAL_S = 0.05


class UploadGate:
    """Bounded concurrency for the uploads of one app."""

    def __init__(self, concurrency: int = 2, queue: int = 32) -> None:
        self.limiter = anyio.CapacityLimiter(concurrency)
        self.queue = queue

    def busy(self) -> bool:
        return self.limiter.statistics().tasks_waiting >= self.queue


@dataclass(frozen=True, slots=True)
class Submitted:
    bot: str
    version: str
    index: int | None
    created: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "version": self.version,
            "index": self.index,
            "created": self.created,
            "url": f"/bots/{self.bot}",
        }


def _too_large() -> HTTPException:
    return HTTPException(413, f"an upload is at most {MAX_UPLOAD_BYTES} bytes")


def _declared_length(request: Request, slack: int) -> int | None:
    length = request.headers.get("content-length")
    if length is None:
        return None
    if not length.isdigit():
        raise HTTPException(400, "Content-Length is not a number")
    if int(length) > MAX_UPLOAD_BYTES + slack:
        raise _too_large()
    return int(length)


async def read_body(request: Request) -> bytes:
    """A raw upload, refused (413) as soon as it passes the limit."""
    _declared_length(request, 0)
    chunks = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                raise _too_large()
            chunks.append(chunk)
    except ClientDisconnect:
        raise HTTPException(400, "the upload was interrupted") from None
    return b"".join(chunks)


async def read_form(request: Request, *, max_fields: int = 4) -> FormData:
    """A multipart form with at most one file, refused (413) past the limit."""
    if _declared_length(request, _FORM_SLACK) is None:
        raise HTTPException(411, "a multipart upload needs a Content-Length")
    try:
        return await request.form(
            max_files=1, max_fields=max_fields, max_part_size=MAX_UPLOAD_BYTES
        )
    except ClientDisconnect:
        raise HTTPException(400, "the upload was interrupted") from None
    except HTTPException:
        raise
    except Exception as exc:  # multipart parse errors have several types
        raise HTTPException(400, f"malformed multipart body: {exc}") from None


async def form_file(form: FormData, field: str = "file") -> tuple[str | None, bytes]:
    upload = form.get(field)
    if not isinstance(upload, UploadFile):
        raise HTTPException(400, f"the form needs a {field!r} field holding the bot")
    data = await upload.read(MAX_UPLOAD_BYTES + 1)
    if len(data) > MAX_UPLOAD_BYTES:
        raise _too_large()
    return upload.filename or None, data


async def _run_watched(
    request: Request, gate: UploadGate, work: Callable[[Callable[[], bool]], T]
) -> T:
    """``work(should_stop)`` in a thread behind ``gate``; ``should_stop`` turns true when the
    client disconnects."""
    if gate.busy():
        raise HTTPException(
            503, "too many uploads are being checked: try again in a minute",
            headers={"Retry-After": "30"},
        )  # fmt: skip
    gone = threading.Event()

    async def watch() -> None:
        while not gone.is_set():
            if await request.is_disconnected():
                gone.set()
                return
            await anyio.sleep(_WATCH_INTERVAL_S)

    watcher = asyncio.ensure_future(watch())
    try:
        return await anyio.to_thread.run_sync(work, gone.is_set, limiter=gate.limiter)
    finally:
        gone.set()
        watcher.cancel()


async def store_upload(
    request: Request,
    author: str,
    name: str,
    filename: str | None,
    data: bytes,
    check: registry.BotCheck,
) -> Submitted:
    """Unpack, check and store ``data`` as a version of ``author``'s bot ``name``; the refusals
    are HTTP errors (400 invalid, 403 another author's, 409 another bot's files, 413 too large,
    429 over the bot's daily quota of new versions, with Retry-After, 503 no sandbox here or too
    busy)."""
    r = request.app.state.redis
    gate: UploadGate = request.app.state.uploads
    quota: int = request.app.state.settings.submit_quota

    def work(should_stop: Callable[[], bool]) -> Submitted:
        existing = store.get_bot(r, name)
        if existing is not None and existing.owner != author:
            raise HTTPException(403, f"bot {name!r} belongs to another author")
        files = unpack_upload(filename, data, should_stop)
        if should_stop():
            raise UploadCancelled
        vid = registry.version_id(registry.canonical_files(files))
        new = store.get_version(r, vid) is None
        vid = registry.add_version(r, name, files, owner=author, check=check, quota=quota)
        versions = registry.versions(r, name)
        index = versions.index(vid) + 1 if vid in versions else None
        return Submitted(bot=name, version=vid, index=index, created=new)

    try:
        return await _run_watched(request, gate, work)
    except UploadCancelled:
        log.info("upload of %s by %s: the client went away; stopped", name, author)
        raise HTTPException(400, "the client went away before the upload was checked") from None
    except registry.QuotaExceededError as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    except registry.TooLargeError as exc:
        raise HTTPException(413, str(exc)) from None
    except registry.OwnerMismatchError as exc:
        raise HTTPException(403, str(exc)) from None
    except registry.DuplicateContentError as exc:
        raise HTTPException(409, str(exc)) from None
    except registry.CheckFailedError as exc:
        single = upload_kind(filename, data) == "py"
        raise HTTPException(400, str(exc.as_submitted(filename if single else None))) from None
    except (SubmissionError, registry.RegistryError) as exc:
        raise HTTPException(400, str(exc)) from None
    except SandboxError as exc:
        log.error("upload of %s by %s: the sandbox check failed to run: %s", name, author, exc)
        raise HTTPException(503, f"the bot could not be checked here: {exc}") from None
