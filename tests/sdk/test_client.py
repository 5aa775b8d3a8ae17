"""The bot client and ``arena bot run``: errors without a referee, and a real referee end to end.

The end-to-end tests start the referee of ``arboretum_server`` in this process (on its own thread)
and run ``arena bot run`` as real subprocesses, or :func:`run_bot` in threads when the test needs to
look inside the bot.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arboretum import DECK, Decision, Draw, GameResult, SeatView, derive_bot_seed
from arboretum_sdk import (
    Bot,
    BotCrashed,
    ConnectError,
    FaultKind,
    FaultNotice,
    GameEnd,
    GameInfo,
    MatchEnd,
    MatchInfo,
    MatchStatus,
    TokenRejected,
    run_bot,
)
from arboretum_sdk.bots.greedy import GreedyBot
from arboretum_sdk.bots.random_bot import RandomBot

ADMIN_TOKEN = "sdk-test-admin-token-0123456789"
RUN = [sys.executable, "-m", "arboretum_sdk.cli", "bot", "run"]


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "arboretum_sdk.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def free_port() -> int:
    """A port with nothing listening on it (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- without a referee


def test_unreachable_server_is_a_clear_error() -> None:
    address = f"127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(ConnectError, match=f"cannot reach the referee at {address}"):
        run_bot(RandomBot(), address, "token", connect_timeout=1.0)
    assert time.monotonic() - start < 10


def test_unreachable_unix_socket(tmp_path: Path) -> None:
    with pytest.raises(ConnectError, match="cannot reach the referee"):
        run_bot(RandomBot(), f"unix:{tmp_path}/nothing.sock", "token", connect_timeout=0.5)


def test_cli_unreachable_exits_nonzero_without_traceback() -> None:
    address = f"127.0.0.1:{free_port()}"
    proc = arena(
        "bot", "run", "random", "--server", address, "--connect-timeout", "1", "--token", "t"
    )
    assert proc.returncode == 1
    assert f"arena: cannot reach the referee at {address}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_needs_a_token(tmp_path: Path) -> None:
    env = {"ARENA_TOKEN": ""}
    proc = arena("bot", "run", "random", "--server", "127.0.0.1:1", env=env)
    assert proc.returncode == 2
    assert "arena: no seat token; give --token-file FILE, --token T or set ARENA_TOKEN" in (
        proc.stderr
    )
    proc = arena(
        "bot", "run", "random", "--server", "127.0.0.1:1", "--token-file", str(tmp_path / "x")
    )
    assert proc.returncode == 2 and "cannot read the token file" in proc.stderr


def test_cli_bad_bot_exits_2_with_reason(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    proc = arena("bot", "run", str(bad), "--server", "127.0.0.1:1", "--token", "t")
    assert proc.returncode == 2
    assert "no Bot subclass found" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_list() -> None:
    proc = arena("bot", "list")
    assert proc.returncode == 0
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == ["random", "greedy", "search", "lookahead", "expert"]


# --------------------------------------------------------------------------- with a referee


@pytest.fixture
def referee(tmp_path: Path) -> Iterator[Any]:
    server = pytest.importorskip("arboretum_server")
    from arboretum_server.server import RefereeThread

    settings = server.Settings(
        listen=("127.0.0.1:0",), admin_token=ADMIN_TOKEN, replay_dir=tmp_path / "replays"
    )
    with RefereeThread(settings) as ref:
        yield ref


def create_match(address: str, players: int = 2, games: int = 1, **config: Any) -> Any:
    import grpc

    from arboretum_proto.v1 import match_pb2, match_pb2_grpc

    tc = config.pop("time_control", None)
    cfg = match_pb2.MatchConfig(
        player_count=players, game_count=games, match_seed=11, start_timeout_ms=30000, **config
    )
    if tc is not None:
        cfg.time_control.per_decision_ms, cfg.time_control.bank_ms = tc
    with grpc.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        return stub.CreateMatch(
            match_pb2.CreateMatchRequest(protocol_version=1, config=cfg),
            metadata=[("x-arena-admin-token", ADMIN_TOKEN)],
            timeout=10,
        )


def get_match(address: str, match_id: str) -> Any:
    import grpc

    from arboretum_proto.v1 import match_pb2, match_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        stub = match_pb2_grpc.MatchServiceStub(channel)
        return stub.GetMatch(
            match_pb2.GetMatchRequest(protocol_version=1, match_id=match_id), timeout=10
        ).match


@pytest.mark.integration
def test_arena_bot_run_end_to_end(referee: Any, tmp_path: Path) -> None:
    """Two `arena bot run` processes play a 2-game match against a real referee."""
    address = referee.addresses[0]
    created = create_match(address, games=2)
    token_file = tmp_path / "token1"
    token_file.write_text(created.seat_tokens[1].token + "\n")
    procs = [
        subprocess.Popen(
            [*RUN, "greedy", "--server", address],
            env={**os.environ, "ARENA_TOKEN": created.seat_tokens[0].token},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            [*RUN, "random", "--server", address, "--token-file", str(token_file), "--name", "rnd"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ),
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "match finished" in err and "Traceback" not in err
    assert "[match " in outputs[0][1] and "seat 0] greedy: match started" in outputs[0][1]
    assert "seat 1] rnd: match started" in outputs[1][1]
    match = get_match(address, created.match_id)
    from arboretum_proto.v1 import common_pb2

    assert match.status == common_pb2.MATCH_STATUS_FINISHED
    assert len(match.results) == 2
    assert all(seat.faults == 0 for seat in match.summary.seats)


@pytest.mark.integration
def test_wrong_token_is_a_clear_error(referee: Any) -> None:
    address = referee.addresses[0]
    with pytest.raises(TokenRejected, match="refused the token"):
        run_bot(RandomBot(), address, "not-a-token")
    proc = arena("bot", "run", "random", "--server", address, "--token", "not-a-token")
    assert proc.returncode == 1
    assert "arena: the referee at" in proc.stderr and "refused the token" in proc.stderr
    assert "Traceback" not in proc.stderr


class Recorder(GreedyBot):
    """Greedy, recording every hook and what it saw."""

    def __init__(self) -> None:
        self.log_: list[str] = []
        self.clocks: list[int] = []
        self.event_counts: list[int] = []
        self.faults: list[FaultNotice] = []
        self.results: list[GameResult] = []
        self.seeds: list[tuple[int, float]] = []
        self.revealed: list[int] = []

    def choose(self, view: SeatView) -> Decision:
        assert self.clock is not None and self.match is not None and self.game is not None
        self.clocks.append(self.clock.limit_ms)
        self.event_counts.append(len(self.events))
        return super().choose(view)

    def on_match_start(self, info: MatchInfo) -> None:
        self.log_.append(f"match_start {info.seat} {info.resumed}")

    def on_game_start(self, info: GameInfo) -> None:
        self.log_.append(f"game_start {info.game_index} {info.resumed}")
        self.seeds.append((info.bot_seed, self.rng.random()))

    def on_game_end(self, result: GameResult, info: GameEnd) -> None:
        self.results.append(result)
        self.revealed.append(derive_bot_seed(info.seed, self.game.seat if self.game else -1))
        self.log_.append(f"game_end {info.game_index}")

    def on_match_end(self, info: MatchEnd) -> None:
        self.log_.append(f"match_end {info.status.value}")

    def on_fault(self, notice: FaultNotice) -> None:
        self.faults.append(notice)


def play_in_threads(address: str, bots: list[Bot], tokens: list[str], **kw: Any) -> list[Any]:
    """run_bot for each bot in its own thread; returns each one's MatchEnd or exception."""
    out: list[Any] = [None] * len(bots)

    def run(i: int) -> None:
        try:
            out[i] = run_bot(bots[i], address, tokens[i], **kw.get(f"kw{i}", {}))
        except Exception as exc:
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(bots))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return out


@pytest.mark.integration
def test_hooks_clock_and_events(referee: Any) -> None:
    address = referee.addresses[0]
    created = create_match(address, players=3, games=2)
    bots: list[Bot] = [Recorder(), RandomBot(1), GreedyBot()]
    ends = play_in_threads(address, bots, [t.token for t in created.seat_tokens])
    assert all(isinstance(e, MatchEnd) and e.status is MatchStatus.FINISHED for e in ends), ends
    rec = bots[0]
    assert isinstance(rec, Recorder)
    assert rec.log_ == [
        "match_start 0 False",
        "game_start 0 False",
        "game_end 0",
        "game_start 1 False",
        "game_end 1",
        "match_end finished",
    ]
    assert rec.clocks and all(0 < c <= 11000 for c in rec.clocks)
    assert rec.event_counts[0] == 0 and max(rec.event_counts) > 50
    assert len(rec.results) == 2 and len(rec.results[0].seats) == 3
    assert rec.faults == []
    # Each game's bot seed is the one derived from the game's (revealed) seed and the seat, and
    # Bot.rng was seeded from it before on_game_start.
    assert [seed for seed, _ in rec.seeds] == rec.revealed
    assert len(set(rec.revealed)) == 2
    assert [first for _, first in rec.seeds] == [
        random.Random(seed).random() for seed in rec.revealed
    ]


class Raiser(Bot):
    def __init__(self) -> None:
        self.faults: list[FaultNotice] = []

    def choose(self, view: SeatView) -> Decision:
        raise RuntimeError("my bug")

    def on_fault(self, notice: FaultNotice) -> None:
        self.faults.append(notice)


class IllegalDrawer(Recorder):
    """Draws from its own empty pile on the first draw of the game: an ILLEGAL fault."""

    def choose(self, view: SeatView) -> Decision:
        if not self.event_counts:
            self.event_counts.append(0)
            return Draw(view.seat)
        return super().choose(view)


@pytest.mark.integration
def test_faults_reach_the_hook(referee: Any) -> None:
    address = referee.addresses[0]
    created = create_match(address, players=2, games=1)
    bot = IllegalDrawer()
    ends = play_in_threads(address, [RandomBot(2), bot], [t.token for t in created.seat_tokens])
    assert all(isinstance(e, MatchEnd) for e in ends), ends
    assert len(bot.faults) == 1
    notice = bot.faults[0]
    assert notice.kind is FaultKind.ILLEGAL and notice.faults == 1 and not notice.forfeited
    assert notice.fallback == Draw(DECK)


@pytest.mark.integration
def test_a_raising_bot_is_reported_at_once_and_plays_on(
    referee: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The client tells the referee the bot's error: each decision faults with ``bot_error`` at
    once, naming the error (no waiting for the clock: 20 s a decision here), and the bot is asked
    its next decisions."""
    address = referee.addresses[0]
    created = create_match(address, games=1, time_control=(20000, 0))
    raiser = Raiser()
    with caplog.at_level(logging.ERROR, logger="arboretum_sdk.client"):
        ends = play_in_threads(
            address, [GreedyBot(), raiser], [t.token for t in created.seat_tokens]
        )
    assert all(isinstance(e, MatchEnd) and e.status is MatchStatus.FINISHED for e in ends), ends
    text = caplog.text
    assert "the bot failed on decision" in text and "the referee is told" in text
    assert "RuntimeError: my bug" in text and "Traceback" in text
    # The bot's own error leads its traceback: nothing of the client's set-up is chained to it.
    assert "no running event loop" not in text and "During handling" not in text, text
    assert [n.kind for n in raiser.faults] == [FaultKind.BOT_ERROR] * 3, raiser.faults
    assert raiser.faults[0].reason == "the bot's code failed: RuntimeError: my bug"
    assert raiser.faults[-1].forfeited
    match = get_match(address, created.match_id)
    assert match.summary.seats[1].forfeits == 1  # 3 faults, then the fallback plays on
    (replay,) = (tmp_path / "replays").glob(f"**/{created.match_id}*/game-0.json")
    steps = json.loads(replay.read_text())["steps"]
    faulted = [s for s in steps if s.get("fault", {}).get("kind") == "bot_error"]
    assert len(faulted) == 3
    assert all(s["ms"] < 20000 for s in faulted), "the referee did not wait for the clock"


@pytest.mark.integration
def test_exit_on_error_stops_the_client(referee: Any) -> None:
    address = referee.addresses[0]
    created = create_match(address, games=1, time_control=(50, 0))
    ends = play_in_threads(
        address,
        [GreedyBot(), Raiser()],
        [t.token for t in created.seat_tokens],
        kw1={"exit_on_error": True},
    )
    assert isinstance(ends[0], MatchEnd)
    assert isinstance(ends[1], BotCrashed)


# --------------------------------------------------------------------------- reconnection


class Proxy:
    """A TCP proxy in front of the referee whose connections can be cut."""

    def __init__(self, upstream: str) -> None:
        host, _, port = upstream.rpartition(":")
        self.upstream = (host, int(port))
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self.lock:
                self.conns += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        self.listener.close()
        self.cut()


class Cutter(Recorder):
    """Cuts its own connection once, in the middle of the first game."""

    def __init__(self, proxy: Proxy) -> None:
        super().__init__()
        self.proxy = proxy
        self.decisions = 0

    def choose(self, view: SeatView) -> Decision:
        self.decisions += 1
        decision = super().choose(view)
        if self.decisions == 10:
            self.proxy.cut()
        return decision


@pytest.mark.integration
def test_reconnects_after_the_stream_breaks(referee: Any, caplog: pytest.LogCaptureFixture) -> None:
    address = referee.addresses[0]
    proxy = Proxy(address)
    try:
        created = create_match(address, games=2)
        cutter = Cutter(proxy)
        with caplog.at_level(logging.INFO, logger="arboretum_sdk.client"):
            ends = _play_split(address, proxy.address, cutter, created)
        assert all(isinstance(e, MatchEnd) and e.status is MatchStatus.FINISHED for e in ends), ends
        assert "reconnecting" in caplog.text and "resumed" in caplog.text
        # hooks are not repeated for the resumed match and game
        assert cutter.log_.count("match_start 1 False") == 1
        assert [x for x in cutter.log_ if x.startswith("game_start")] == [
            "game_start 0 False",
            "game_start 1 False",
        ]
        assert len(cutter.results) == 2
    finally:
        proxy.close()


def _play_split(address: str, proxy_address: str, cutter: Cutter, created: Any) -> list[Any]:
    """Seat 0 connects directly, seat 1 (the cutter) through the proxy."""
    out: list[Any] = [None, None]

    def run(i: int, bot: Bot, addr: str) -> None:
        try:
            out[i] = run_bot(bot, addr, created.seat_tokens[i].token, reconnect_for=15)
        except Exception as exc:
            out[i] = exc

    threads = [
        threading.Thread(target=run, args=(0, GreedyBot(), address)),
        threading.Thread(target=run, args=(1, cutter, proxy_address)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return out
