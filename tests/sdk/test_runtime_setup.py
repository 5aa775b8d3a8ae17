"""The event loop and gRPC transport choices of the arena's processes (``ARENA_EVENT_LOOP``,
``GRPC_EXPERIMENTS``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from arboretum_sdk import eventloop, grpc_setup


async def _loop_type() -> type:
    return type(asyncio.get_running_loop())


def test_asyncio_choice_is_asyncio_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, "asyncio")
    assert eventloop.loop_factory() is None
    assert eventloop.run(_loop_type()) is type(asyncio.new_event_loop())


@pytest.mark.parametrize("choice", ["", "auto", "uvloop", "UVLOOP", "something else"])
def test_uvloop_is_used_when_installed(monkeypatch: pytest.MonkeyPatch, choice: str) -> None:
    uvloop = pytest.importorskip("uvloop")
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, choice)
    assert eventloop.run(_loop_type()) is uvloop.Loop
    loop = eventloop.new_event_loop()
    try:
        assert isinstance(loop, uvloop.Loop)
    finally:
        loop.close()


def test_missing_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # makes `import uvloop` fail
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, "auto")
    assert eventloop.loop_factory() is None
    monkeypatch.setenv(eventloop.EVENT_LOOP_ENV, "uvloop")
    with pytest.raises(RuntimeError, match="uvloop is not installed"):
        eventloop.loop_factory()


def test_grpc_experiments_default(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recorded first, so that the variable apply() sets is undone after the test.
    monkeypatch.setenv("GRPC_EXPERIMENTS", "placeholder")
    monkeypatch.delenv("GRPC_EXPERIMENTS")
    if "grpc" in sys.modules:  # gRPC would not read it any more: left alone
        assert not grpc_setup.apply()
        assert "GRPC_EXPERIMENTS" not in os.environ
        monkeypatch.delitem(sys.modules, "grpc")
    assert grpc_setup.apply()
    assert os.environ["GRPC_EXPERIMENTS"] == grpc_setup.GRPC_EXPERIMENTS


def test_grpc_experiments_set_by_the_user_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRPC_EXPERIMENTS", "")
    monkeypatch.delitem(sys.modules, "grpc", raising=False)
    assert not grpc_setup.apply()
    assert os.environ["GRPC_EXPERIMENTS"] == ""


def test_settle_takes_out_only_the_default_it_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """``arena bot run`` settles once gRPC has loaded: the bot's code then finds no variable that
    its sandbox did not give it; a value the user gave stays."""
    monkeypatch.setenv("GRPC_EXPERIMENTS", "placeholder")
    monkeypatch.delenv("GRPC_EXPERIMENTS")
    monkeypatch.delitem(sys.modules, "grpc", raising=False)
    assert grpc_setup.apply()
    grpc_setup.settle()
    assert "grpc" in sys.modules and "GRPC_EXPERIMENTS" not in os.environ
    monkeypatch.setenv("GRPC_EXPERIMENTS", grpc_setup.GRPC_EXPERIMENTS)
    grpc_setup.settle()  # not set by apply(): the user's, kept
    assert os.environ["GRPC_EXPERIMENTS"] == grpc_setup.GRPC_EXPERIMENTS


def test_bot_run_parser_loads_no_http_client() -> None:
    # Every bot's ``arena bot run`` builds the SDK's parser, ``arena bot list --server`` and its
    # web client included; the HTTP client (about 10 ms of CPU per bot start) loads on a call.
    script = (
        "import sys\n"
        "from arboretum_sdk import cli\n"
        "argv = ['bot', 'run', 'bot.py', '--server', 'unix:referee.sock']\n"
        "cli.build_parser(plugins=cli.plugins_for(argv)).parse_args(argv)\n"
        "heavy = ('urllib.request', 'http.client', 'email')\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == ""
