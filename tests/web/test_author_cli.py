"""An author's ``arena`` commands against a real web server (uvicorn on the loopback, a real
redis-server behind it, the demo's league): ``arena leaderboard --server`` prints the board the
league's own command prints from Redis, and ``arena bot submit`` refuses a bad server, name or
folder before it sends anything, and names the address when the answer is not the arena's."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from arboretum_sdk.cli import main
from arboretum_sdk.submit import SubmitError, submit_bot
from arboretum_web import authors
from arboretum_web.app import WebSettings, create_app
from arboretum_web.demo import DemoData
from arboretum_web.screenshots import serve_in_thread

BOT = (
    b"from arboretum_sdk import Bot\n"
    b"class B(Bot):\n    def choose(self, view, options):\n        return options[0]\n"
)


def _arena(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as exc:  # a usage error
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("every", [False, True])
def test_the_leaderboard_through_the_server_is_the_leagues_own(
    r: redis.Redis,
    redis_server_url: str,
    demo: DemoData,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    every: bool,
) -> None:
    monkeypatch.delenv("ARENA_SERVER", raising=False)
    extra = ["--all-versions"] if every else []
    status, from_redis, _ = _arena(
        capsys, "leaderboard", "--league", "demo", "--redis-url", redis_server_url, *extra
    )
    assert status == 0 and "leaderboard of league demo" in from_redis
    assert len(from_redis.splitlines()) > 3  # the title, the headers, the rule, the rows
    app = create_app(WebSettings(), client=r)
    with serve_in_thread(app) as base:
        status, through_web, _ = _arena(
            capsys, "leaderboard", "--league", "demo", "--server", base, *extra
        )
        assert status == 0
        # the Redis command adds a note per pair an operator left out; the demo has none
        assert through_web == from_redis
        # the server from the environment, as an author sets it once; its newest league
        monkeypatch.setenv("ARENA_SERVER", base)
        status, default, _ = _arena(capsys, "leaderboard", *extra)
        assert status == 0 and default.splitlines()[0].startswith("leaderboard of league ")
        status, _, err = _arena(capsys, "leaderboard", "--league", "nope")
    assert status == 1 and err == "arena: HTTP 404: no league 'nope'\n"


def test_submit_refuses_before_sending(
    r: redis.Redis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = authors.add_author(r, "alice")
    single = tmp_path / "mine.py"
    single.write_bytes(BOT)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SubmitError, match=r"^the server is a URL starting http:// or https://"):
        submit_bot("127.0.0.1:8080", token, "mine", single)
    with pytest.raises(SubmitError, match=r"^invalid bot name 'bad/name': use 1-64 letters"):
        submit_bot("http://127.0.0.1:9", token, "bad/name", single)
    with pytest.raises(SubmitError, match=r"empty: the folder holds no files to submit"):
        submit_bot("http://127.0.0.1:9", token, "mine", empty)
    # the command: a usage error (exit 2) naming the rule, nothing sent (no server listens)
    status, _, err = _arena(
        capsys, "bot", "submit", str(single), "--name", "bad/name", "--server", "http://127.0.0.1:9",
        "--token", token,
    )  # fmt: skip
    assert status == 2
    assert "argument --name: invalid bot name 'bad/name': use 1-64 letters" in err
    app = create_app(WebSettings(), client=r)
    with serve_in_thread(app) as base:
        # an address with the API's path in it: the answer is not the arena's JSON
        with pytest.raises(SubmitError) as info:
            submit_bot(f"{base}/api/v1", token, "mine", single)
        assert info.value.status == 404
        assert str(info.value) == (
            f"HTTP 404: Not Found (POST {base}/api/v1/api/v1/bots/mine/versions: "
            f"is {base}/api/v1 the arena's address?)"
        )
        status, _, err = _arena(
            capsys, "bot", "list", "--server", f"{base}/api/v1", "--token", token
        )
    assert status == 1
    assert err == (
        f"arena: HTTP 404: Not Found (GET {base}/api/v1/api/v1/me/bots: "
        f"is {base}/api/v1 the arena's address?)\n"
    )


def test_name_rule_is_the_leagues(tmp_path: Path) -> None:
    """The SDK's rule is the one the league stores names by (one rule, in the SDK)."""
    from arboretum_sdk.argtypes import name_problem
    from arboretum_worker.keys import StoreError, validate_name

    valid = ("a", "A.b_c-9", "x" * 64)
    for name in (*valid, "", "x" * 65, "-a", "a b", "a:b", "a/b", "é"):
        problem = name_problem("bot", name)
        assert (problem is None) == (name in valid), name
        try:
            validate_name("bot", name)
        except StoreError as exc:
            assert str(exc) == problem, name
        else:
            assert problem is None, name
