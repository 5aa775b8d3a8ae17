"""Authors, tokens and remote submission (the API and the stdlib client)."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
import redis

from arboretum_sdk.submit import SubmitError, submit_bot
from arboretum_web import authors
from arboretum_web.app import WebSettings, create_app
from arboretum_web.screenshots import serve_in_thread
from arboretum_worker import registry, store

from .test_pages import csrf_of

BOT = b"from arboretum_sdk.bots.random_bot import RandomBot\n\n\nclass Mine(RandomBot):\n    pass\n"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _tar(files: dict[str, bytes], root: str = "", mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(root + path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
    return buf.getvalue()


# --------------------------------------------------------------------------- authors


def test_tokens_are_stored_hashed(r: redis.Redis) -> None:
    token = authors.add_author(r, "alice")
    assert token.startswith(authors.TOKEN_PREFIX)
    dump = b"".join(r.dump(k) or b"" for k in r.scan_iter())
    assert token.encode() not in dump
    assert authors.authenticate(r, token) == "alice"
    assert authors.authenticate(r, token + "x") is None
    assert authors.authenticate(r, "") is None
    with pytest.raises(authors.AuthorError):
        authors.add_author(r, "alice")
    new = authors.rotate_token(r, "alice")
    assert authors.authenticate(r, token) is None
    assert authors.authenticate(r, new) == "alice"
    assert authors.list_authors(r) == ["alice"]
    authors.remove_author(r, "alice")
    assert authors.authenticate(r, new) is None
    assert authors.get_author(r, "alice") is None


def test_cli_author_commands(
    redis_server_url: str, r: redis.Redis, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from arboretum_web import cli

    parser = argparse.ArgumentParser(prog="arena")
    sub = parser.add_subparsers(dest="command")
    cli.register(sub, {})
    args = parser.parse_args(["web", "author", "add", "carol", "--redis-url", redis_server_url])
    assert args.handler(args) == 0
    token = capsys.readouterr().out.strip()
    assert authors.authenticate(r, token) == "carol"
    args = parser.parse_args(["web", "author", "add", "carol", "--redis-url", redis_server_url])
    assert args.handler(args) == 1
    args = parser.parse_args(["web", "--redis-url", redis_server_url, "author", "list"])
    assert args.handler(args) == 0
    assert "carol" in capsys.readouterr().out
    args = parser.parse_args(["web", "author", "rotate", "carol", "--redis-url", redis_server_url])
    assert args.handler(args) == 0
    assert authors.authenticate(r, token) is None
    assert authors.authenticate(r, capsys.readouterr().out.strip()) == "carol"
    args = parser.parse_args(["web", "author", "remove", "carol", "--redis-url", redis_server_url])
    assert args.handler(args) == 0
    assert authors.list_authors(r) == []
    args = parser.parse_args(["web", "--host", "0.0.0.0", "--port", "9000"])
    assert (args.host, args.port, args.handler) == ("0.0.0.0", 9000, cli.cmd_serve)
    with pytest.raises(SystemExit):
        parser.parse_args(["web", "--port", "70000"])


# --------------------------------------------------------------------------- the API


def test_submit_a_file(client: Any, r: redis.Redis, check: Any) -> None:
    token = authors.add_author(r, "alice")
    resp = client.post(
        "/api/v1/bots/mine/versions", files={"file": ("mine.py", BOT)}, headers=_auth(token)
    )
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["version"] == registry.version_id({"bot.py": BOT})
    assert body["created"] is True and body["index"] == 1
    assert store.get_bot(r, "mine").owner == "alice"
    assert len(check.paths) == 1
    again = client.post(
        "/api/v1/bots/mine/versions", files={"file": ("mine.py", BOT)}, headers=_auth(token)
    )
    assert again.status_code == 200 and again.json()["created"] is False
    assert registry.versions(r, "mine") == [body["version"]]


@pytest.mark.parametrize("kind", ["tar.gz", "tar", "zip"])
def test_submit_an_archive_of_a_folder(client: Any, r: redis.Redis, kind: str) -> None:
    token = authors.add_author(r, "alice")
    files = {"bot.py": BOT, "helpers/util.py": b"X = 1\n", "__pycache__/x.pyc": b"junk"}
    if kind == "zip":
        data = _zip({"mybot/" + k: v for k, v in files.items()})
    else:
        data = _tar(files, root="mybot/", mode="w:gz" if kind == "tar.gz" else "w")
    resp = client.post(
        f"/api/v1/bots/folder/versions?filename=mybot.{kind}",
        content=data,
        headers={**_auth(token), "Content-Type": "application/octet-stream"},
    )
    assert resp.status_code == 201, resp.text
    vid = resp.json()["version"]
    assert store.get_version_files(r, vid) == {"bot.py": BOT, "helpers/util.py": b"X = 1\n"}


def test_submit_refusals(client: Any, r: redis.Redis) -> None:
    alice = authors.add_author(r, "alice")
    bob = authors.add_author(r, "bob")
    url = "/api/v1/bots/mine/versions"

    def post(token: str | None, name: str = "mine.py", data: bytes = BOT, path: str = url) -> Any:
        headers = _auth(token) if token else {}
        return client.post(path, files={"file": (name, data)}, headers=headers)

    assert post(None).status_code == 401
    assert post("arena_nope").status_code == 401
    assert post(alice).status_code == 201
    resp = post(bob, data=BOT + b"# bob's\n")
    assert resp.status_code == 403, resp.text
    assert "another author" in resp.json()["error"]["message"]
    # same files under another name: the registry refuses duplicates
    assert post(alice, path="/api/v1/bots/copy/versions").status_code == 409
    # the operator's bots (no owner) cannot be claimed
    registry.add_version(r, "house", b"class A: pass\n")
    assert post(alice, path="/api/v1/bots/house/versions").status_code == 403
    assert post(alice, path="/api/v1/bots/bad%20name/versions").status_code == 400
    assert post(alice, name="bot.txt").status_code == 400
    assert post(alice, data=b"x" * (registry.MAX_TOTAL_BYTES + 1)).status_code == 413
    no_entry = _tar({"main.py": BOT})
    resp = post(alice, name="b.tar.gz", data=no_entry)
    assert resp.status_code == 400 and "bot.py" in resp.json()["error"]["message"]
    evil = _tar({"../escape.py": BOT, "bot.py": BOT})
    assert post(alice, name="e.tar.gz", data=evil).status_code == 400
    assert post(alice, name="x.zip", data=b"PK\x03\x04garbage").status_code == 400
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for i in range(1000):
            info = tarfile.TarInfo(f"d{i}")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
    assert post(alice, name="many.tar.gz", data=buf.getvalue()).status_code == 413
    link = io.BytesIO()
    with tarfile.open(fileobj=link, mode="w") as tar:
        info = tarfile.TarInfo("bot.py")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tar.addfile(info)
    assert post(alice, name="link.tar", data=link.getvalue()).status_code == 400
    # the sandbox check's verdict
    failing = post(alice, data=b"raise SystemExit(1)\n")
    assert failing.status_code == 400 and "sandbox" in failing.json()["error"]["message"]
    # the cookie alone does not authorise a submission (no cross-site posts)
    client.cookies.set("arena_token", alice)
    assert client.post(url, files={"file": ("m.py", BOT + b"#2\n")}).status_code == 401
    client.cookies.clear()
    # a raw body without a filename: its content says what it is (here, the same bot.py)
    raw = client.post(url, content=BOT, headers={**_auth(alice), "Content-Type": "text/plain"})
    assert raw.status_code == 200 and raw.json()["created"] is False, raw.text
    assert registry.versions(r, "mine") == [registry.version_id({"bot.py": BOT})]
    # ... and a raw zip or tar without one is unpacked as an archive
    for archive in (_zip({"bot.py": BOT + b"#zip\n"}), _tar({"bot.py": BOT + b"#tgz\n"})):
        resp = client.post(url, content=archive, headers=_auth(alice))
        assert resp.status_code == 201, resp.text
        assert set(store.get_version_files(r, resp.json()["version"])) == {"bot.py"}
    too_long = client.post(
        url + "?filename=" + "a" * 300 + ".py", content=BOT, headers=_auth(alice)
    )
    assert too_long.status_code == 400 and "filename" in too_long.json()["error"]["message"]


def test_submit_uses_the_sandbox_check_by_default(r: redis.Redis) -> None:
    """Without an injected check the league's ``sandbox_check`` runs: a file without a Bot
    subclass is refused, a real bot passes."""
    from starlette.testclient import TestClient

    from arboretum_worker.sandbox import make_runner

    if not make_runner().isolating:
        pytest.skip("no isolating sandbox on this machine (bwrap or user namespaces)")
    token = authors.add_author(r, "alice")
    app = create_app(WebSettings(), client=r)
    with TestClient(app, raise_server_exceptions=False) as c:
        resp = c.post(
            "/api/v1/bots/nobot/versions",
            files={"file": ("nobot.py", b"X = 1\n")},
            headers=_auth(token),
        )
        good = c.post(
            "/api/v1/bots/good/versions", files={"file": ("good.py", BOT)}, headers=_auth(token)
        )
    assert resp.status_code == 400, resp.text
    message = resp.json()["error"]["message"]
    assert message.startswith("the bot failed its check in the sandbox: ")
    # the check names the file the sandbox runs; the answer says which of the author's it is
    assert "bot.py" in message and message.endswith(
        " (your nobot.py runs as bot.py in the sandbox)"
    )
    assert store.get_bot(r, "nobot") is None
    assert good.status_code == 201, good.text


# --------------------------------------------------------------------------- the client


def test_client_submits_a_file_and_a_folder(r: redis.Redis, tmp_path: Path, check: Any) -> None:
    token = authors.add_author(r, "alice")
    app = create_app(WebSettings(check=check), client=r)
    single = tmp_path / "single.py"
    single.write_bytes(BOT)
    folder = tmp_path / "folder"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.py").write_bytes(BOT + b"# folder\n")
    (folder / "lib" / "x.py").write_bytes(b"Y = 2\n")
    with serve_in_thread(app) as base:
        first = submit_bot(base, token, "remote", single)
        assert first.created and first.index == 1 and first.url == f"{base}/bots/remote"
        assert submit_bot(base, token, "remote", single).created is False
        second = submit_bot(base, token, "remote", folder)
        assert second.index == 2
        assert set(store.get_version_files(r, second.version)) == {"bot.py", "lib/x.py"}
        with pytest.raises(SubmitError) as info:
            submit_bot(base, "arena_bad", "remote", single)
        assert info.value.status == 401
        with pytest.raises(SubmitError) as info:
            submit_bot(base, token, "remote", tmp_path / "missing.py")
    with pytest.raises(SubmitError) as info:
        submit_bot("http://127.0.0.1:9", token, "remote", single, timeout=2)
    assert info.value.status == 0


def test_cli_submits_remotely_with_the_sdk_command(
    r: redis.Redis, tmp_path: Path, check: Any
) -> None:
    """`arena bot submit PATH --name N --server URL` as an author would run it, in a subprocess."""
    import os
    import subprocess
    import sys

    token = authors.add_author(r, "carol")
    app = create_app(WebSettings(check=check), client=r)
    bot = tmp_path / "mine.py"
    bot.write_bytes(BOT)
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "ARENA_AUTHOR_TOKEN")}
    cmd = [sys.executable, "-m", "arboretum_sdk.cli", "bot", "submit", str(bot), "--name", "cli"]
    with serve_in_thread(app) as base:
        ok = subprocess.run(
            [*cmd, "--server", base, "--token-file", str(token_file)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert ok.returncode == 0, ok.stderr
        version = registry.latest(r, "cli")
        assert version is not None and version[:12] in ok.stdout
        assert store.get_bot(r, "cli") is not None
        bad = subprocess.run(
            [*cmd, "--server", base, "--token", "arena_wrong"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert bad.returncode == 1 and "401" in bad.stderr, bad.stderr
    missing = subprocess.run(
        [*cmd, "--server", "http://127.0.0.1:9"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert missing.returncode == 2 and "no author token" in missing.stderr


def test_submit_without_a_sandbox_is_503(r: redis.Redis) -> None:
    from starlette.testclient import TestClient

    from arboretum_worker.sandbox import SandboxUnavailableError

    def no_sandbox(path: Path) -> None:
        raise SandboxUnavailableError("no bwrap, no user namespaces")

    token = authors.add_author(r, "alice")
    app = create_app(WebSettings(check=no_sandbox), client=r)
    with TestClient(app, raise_server_exceptions=False) as c:
        resp = c.post(
            "/api/v1/bots/mine/versions", files={"file": ("m.py", BOT)}, headers=_auth(token)
        )
    assert resp.status_code == 503, resp.text
    assert store.get_bot(r, "mine") is None


def test_health_without_redis() -> None:
    from starlette.testclient import TestClient

    app = create_app(WebSettings(redis_url="redis://127.0.0.1:9/0"))
    with TestClient(app, raise_server_exceptions=False) as c:
        resp = c.get("/api/v1/health")
        page = c.get("/")
    assert resp.status_code == 503 and resp.json()["error"]["status"] == 503
    assert page.status_code == 503 and "Traceback" not in page.text


def test_a_folder_with_a_manifest_and_no_bot_py_is_accepted(client: Any, r: redis.Redis) -> None:
    """A bot in another language (docs/stdio-protocol.md): its arena.toml takes bot.py's place."""
    token = authors.add_author(r, "carol")
    root = Path(__file__).resolve().parents[2] / "examples" / "javascript"
    files = {name: (root / name).read_bytes() for name in ("arena.toml", "bot.js")}
    resp = client.post(
        "/api/v1/bots/jsbot/versions?filename=jsbot.tar.gz",
        content=_tar(files, root="jsbot/"),
        headers={**_auth(token), "Content-Type": "application/octet-stream"},
    )
    assert resp.status_code == 201, resp.text
    assert store.get_version_files(r, resp.json()["version"]) == files


def test_over_the_daily_quota_an_upload_is_429_with_retry_after(
    r: redis.Redis, tmp_path: Path, check: Any
) -> None:
    """The quota of new versions a bot gets a UTC day: through the API, the upload page and the
    SDK's `arena bot submit --server` (one `arena:` line, exit 1)."""
    import os
    import subprocess
    import sys

    from starlette.testclient import TestClient

    token = authors.add_author(r, "alice")
    app = create_app(WebSettings(check=check, submit_quota=2), client=r)

    def upload(c: Any, n: int) -> Any:
        source = BOT + f"# re-roll {n}\n".encode()
        return c.post(
            "/api/v1/bots/mine/versions", files={"file": ("m.py", source)}, headers=_auth(token)
        )

    with TestClient(app, raise_server_exceptions=False) as c:
        assert [upload(c, n).status_code for n in (1, 2)] == [201, 201]
        checked = len(check.paths)
        over = upload(c, 3)
        assert over.status_code == 429, over.text
        assert 0 < int(over.headers["Retry-After"]) <= 86400
        message = over.json()["error"]["message"]
        assert message.startswith("bot 'mine' has had its 2 new versions today (at most 2 a UTC")
        assert len(check.paths) == checked  # refused before the sandbox check
        assert len(registry.versions(r, "mine")) == 2
        assert upload(c, 1).status_code == 200  # an existing version is no new version
        # the upload page says the same, with the same status
        c.cookies.set("arena_token", token)
        csrf = csrf_of(c.get("/upload").text)
        page = c.post(
            "/upload",
            data={"name": "mine", "csrf": csrf},
            files={"file": ("m.py", BOT + b"# re-roll 4\n")},
        )
        assert page.status_code == 429 and "has had its 2 new versions today" in page.text
        assert int(page.headers["Retry-After"]) > 0
    bot = tmp_path / "mine.py"
    bot.write_bytes(BOT + b"# re-roll 5\n")
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "ARENA_AUTHOR_TOKEN")}
    submit_cmd = [sys.executable, "-m", "arboretum_sdk.cli", "bot", "submit"]
    with serve_in_thread(app) as base:
        done = subprocess.run(
            [*submit_cmd, str(bot), "--name", "mine", "--server", base, "--token", token],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("arena: HTTP 429: bot 'mine' has had its 2 new versions today")
    assert len(registry.versions(r, "mine")) == 2
