"""Submit a bot to a remote Arboretum Arena from an author's machine (standard library only).

``arena bot submit PATH --name NAME --server URL --token TOKEN`` calls :func:`submit_bot`. It
needs nothing beyond the standard library, so an author with the SDK alone can submit::

    from arboretum_sdk.submit import submit_bot
    result = submit_bot("https://arena.example", token, "mybot", Path("mybot/"))
    print(result.version, result.created)

A file is sent as it is; a folder is packed into a ``.tar.gz`` in memory (caches and VCS folders
left out). The server checks it in its sandbox and answers with the content-hash version id.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .argtypes import name_problem
from .webclient import refusal

__all__ = ["SubmitError", "Submitted", "submit_bot"]

_SKIP_DIRS = {"__pycache__", ".git", ".hg", ".svn", ".mypy_cache", ".pytest_cache", ".venv"}


class SubmitError(Exception):
    """The server refused the submission or could not be reached; ``status`` is the HTTP status
    (0 when there was no answer)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Submitted:
    bot: str
    version: str
    """The version id (sha256 of the files)."""
    index: int | None
    """1 for the bot's first version."""
    created: bool
    """False when these exact files were already a version of the bot."""
    url: str
    """The bot's page on the server."""


def _pack(path: Path) -> tuple[str, bytes]:
    if path.is_file():
        return path.name, path.read_bytes()
    if not path.is_dir():
        from .bots import BUILTIN_BOTS

        if str(path) in BUILTIN_BOTS:
            raise SubmitError(
                f"no such file or folder: {path} ({path} is a built-in bot: a league that names "
                "it registers it on the league's side)"
            )
        raise SubmitError(f"no such file or folder: {path}")
    buf = io.BytesIO()
    packed = 0
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
            for name in sorted(names):
                full = Path(root, name)
                if name.endswith((".pyc", ".pyo")) or full.is_symlink() or not full.is_file():
                    continue
                tar.add(full, arcname=full.relative_to(path).as_posix(), recursive=False)
                packed += 1
    if not packed:
        raise SubmitError(
            f"{path}: the folder holds no files to submit (a folder bot has bot.py, or an "
            "arena.toml for a bot in another language)"
        )
    return f"{path.name or 'bot'}.tar.gz", buf.getvalue()


def submit_bot(
    server: str, token: str, name: str, path: str | os.PathLike[str], *, timeout: float = 120.0
) -> Submitted:
    """Upload the bot at ``path`` (a ``.py`` file or a folder with ``bot.py``) as a new version
    of bot ``name``. Raises :class:`SubmitError` with the server's message when refused
    (401 bad token, 403 another author's bot, 400 invalid or failing the import check, 409 same
    files as another bot, 413 too large); before sending anything, for a server that is not an
    http(s) URL, a name the league would refuse, or nothing to send."""
    if not server.startswith(("http://", "https://")):
        raise SubmitError(f"the server is a URL starting http:// or https://, not {server!r}")
    problem = name_problem("bot", name)
    if problem:
        raise SubmitError(problem)
    filename, data = _pack(Path(path))
    base = server.rstrip("/")
    query = urllib.parse.urlencode({"filename": filename})
    url = f"{base}/api/v1/bots/{urllib.parse.quote(name, safe='')}/versions?{query}"
    request = urllib.request.Request(
        url,
        data=data,
        method="POST",
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/octet-stream",
            "Accept": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SubmitError(f"HTTP {exc.code}: {refusal(exc, 'POST', base)}", exc.code) from None
    except (urllib.error.URLError, OSError) as exc:
        raise SubmitError(f"cannot reach {base}: {exc}") from None
    return Submitted(
        bot=body["bot"],
        version=body["version"],
        index=body.get("index"),
        created=bool(body.get("created")),
        url=urllib.parse.urljoin(base + "/", body.get("url", "").lstrip("/")),
    )
