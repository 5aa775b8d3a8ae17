"""Screenshots of every page for the docs: ``python -m arboretum_web.screenshots [OUT_DIR]``.

Starts a private ``redis-server`` (unix socket in a temporary directory), seeds it with
:func:`arboretum_web.demo.seed_demo` (real games, played in-process), serves the app with uvicorn
on 127.0.0.1 and a free port, and captures each page with headless Chromium (Debian's
``chromium``, driven by playwright: ``pip install arboretum-web[browser]``). The default output is
``docs/screenshots`` under the current directory. Run it with ``nice``: it is a benchmark-free
but CPU-hungry job.

The casual game's pages need a game played on a worker: ``--pages play`` (or ``all``, the
default) runs ``arena demo --serve`` in a temporary folder (its own Redis, the built-in bots,
casual workers; bubblewrap for the sandboxes) and plays a game against greedy through the table.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

__all__ = [
    "CHROMIUM_ARGS",
    "capture",
    "capture_play",
    "chromium_path",
    "owner_step",
    "private_redis",
    "serve_in_thread",
]

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def chromium_path() -> str | None:
    """Debian's chromium (``$CHROMIUM`` wins), or None."""
    found = os.environ.get("CHROMIUM") or shutil.which("chromium")
    return found if found and os.access(found, os.X_OK) else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    """A throwaway redis-server on a unix socket; yields its URL."""
    from arboretum_worker.demo import find_redis_server

    exe = find_redis_server()
    if exe is None:
        raise RuntimeError("redis-server not found (Debian: apt-get install redis-server)")
    with tempfile.TemporaryDirectory(prefix="arena-web-") as tmp:
        sock = Path(tmp) / "redis.sock"
        args = [exe, "--port", "0", "--unixsocket", str(sock), "--unixsocketperm", "700",
                "--save", "", "--appendonly", "no", "--dir", tmp]  # fmt: skip
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not sock.exists():
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("redis-server did not start")
                time.sleep(0.05)
            yield f"unix://{sock}"
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread on a free port; yields the base URL."""
    import uvicorn

    port = _free_port()
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="arena-web", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def _signed_in(page: Any, base: str, token: str) -> None:
    """Reload the page signed in with ``token`` (the viewer opens at the step in the URL), wait
    for the analysis and the output panel, then sign out for the pages that follow."""
    page.context.add_cookies([{"name": "arena_token", "value": token, "url": base}])
    page.reload()
    page.wait_for_selector('#replay[data-analysed="1"]')
    page.wait_for_selector("#step-output[data-steps]")
    page.context.clear_cookies()


def capture(
    base: str, out: Path, match_id: str, running: str | None, owner: tuple[str, int] | None = None
) -> list[Path]:
    """Capture each page under ``base`` into ``out``; returns the files written. ``owner``: the
    token of the author of one of ``match_id``'s seats and a step where that bot printed, to show
    the viewer signed in, with the output beside the step and the analysis."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("chromium not found (Debian: apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 860}, device_scale_factor=1)

        def shot(name: str, path: str, *, full: bool = True, before: Any = None) -> None:
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            if before is not None:
                before()
            target = out / f"{name}.png"
            page.screenshot(path=str(target), full_page=full)
            written.append(target)

        shot("leaderboard", "/")
        shot("leaderboard-all-versions", "/?all=1")
        shot("bot", "/bots/oakheart")
        shot("league", "/leagues/demo")
        shot("matches", "/matches?league=demo", full=False)
        shot("match", f"/matches/{match_id}")

        def mid_game() -> None:
            page.wait_for_selector("#replay.ready")
            for _ in range(40):
                page.keyboard.press("ArrowRight")

        def end_game() -> None:
            page.wait_for_selector("#replay.ready")
            page.keyboard.press("End")
            page.wait_for_selector("#scoring:not([hidden])")

        def seat_view() -> None:
            mid_game()
            page.select_option("#perspective", "0")

        shot("replay", f"/matches/{match_id}/games/0", before=mid_game)
        shot("replay-scoring", f"/matches/{match_id}/games/0", before=end_game)
        shot("replay-seat-view", f"/matches/{match_id}/games/0", before=seat_view)

        def analysed() -> None:
            page.wait_for_selector('#replay[data-analysed="1"]')
            mid_game()

        shot("replay-analysis", f"/matches/{match_id}/games/0", before=analysed)

        token, at = owner or ("", 0)
        output_path = f"/matches/{match_id}/games/0#step={at}"
        if token:  # signed in as a seat's author, at a step where its bot printed
            shot("replay-output", output_path, before=lambda: _signed_in(page, base, token))
        if running:

            def live() -> None:
                page.wait_for_selector("#replay.ready")
                page.keyboard.press("End")

            shot("replay-in-progress", f"/matches/{running}/games/0", before=live)
        shot("not-found", "/matches/no-such-match", full=False)
        if running:
            # the match's page follows the game live (the demo publishes its stream so far)
            shot("match-live", f"/matches/{running}", before=lambda: page.wait_for_selector(
                "#replay.ready"))  # fmt: skip

        # phones (390 px): the same pages, a few of them
        page.set_viewport_size({"width": 390, "height": 844})
        shot("phone-leaderboard", "/", full=False)

        def menu() -> None:
            page.click("#menu-toggle")

        shot("phone-menu", "/", full=False, before=menu)
        shot("phone-bot", "/bots/oakheart")
        shot("phone-matches", "/matches?league=demo", full=False)
        shot("phone-replay", f"/matches/{match_id}/games/0", before=mid_game)
        shot("phone-replay-scoring", f"/matches/{match_id}/games/0", before=end_game)
        shot("phone-replay-analysis", f"/matches/{match_id}/games/0", before=analysed)
        if token:
            shot("phone-replay-output", output_path, before=lambda: _signed_in(page, base, token))
        if running:
            shot("phone-match-live", f"/matches/{running}", before=lambda: page.wait_for_selector(
                "#replay.ready"))  # fmt: skip
        browser.close()
    return written


@contextlib.contextmanager
def _demo_site(workdir: Path) -> Iterator[str]:
    """``arena demo --serve`` in ``workdir`` with a private Redis (``REDIS_URL`` unset), until
    its site answers; yields its URL and stops it (SIGINT, as Ctrl-C) afterwards."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    argv = [sys.executable, "-m", "arboretum_sdk.cli", "demo", "--serve", "--port", str(port),
            "--casual-workers", "1"]  # fmt: skip
    log = workdir / "demo.log"
    with open(log, "wb") as out:
        demo = subprocess.Popen(argv, cwd=workdir, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while b"play the bots:" not in log.read_bytes():
            if demo.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"arena demo --serve did not serve the site:\n{tail}")
            time.sleep(0.5)
        with urllib.request.urlopen(base + "/play", timeout=30) as resp:
            resp.read()
        yield base
    finally:
        demo.send_signal(signal.SIGINT)
        try:
            demo.wait(60)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.wait()


_PLAY_WAIT = '#play[data-stage="source"], #play[data-stage="card"], #play[data-ended="1"]'


def _choose(page: Any, rng: random.Random) -> bool:
    """Begin the pending decision with random legal choices, up to the legal cells shown for the
    chosen card; False once the game is over."""
    page.wait_for_selector(_PLAY_WAIT, timeout=240_000)
    if page.get_attribute("#play", "data-ended") == "1":
        return False
    if page.get_attribute("#play", "data-stage") == "source":
        options = page.locator("#play-prompt [data-source]")
        options.nth(rng.randrange(options.count())).click()
        return True
    cards = page.locator("#play-me .hand-cards button")
    cards.nth(rng.randrange(cards.count())).click()
    page.wait_for_selector('#play[data-stage="cell"]')
    return True


def _finish(page: Any, rng: random.Random) -> None:
    """End the decision begun by :func:`_choose`: a cell and a discard when playing, confirm."""
    if page.get_attribute("#play", "data-stage") == "cell":
        cells = page.locator("#play-me .cell-target")
        cells.nth(rng.randrange(cells.count())).click()
        if page.get_attribute("#play", "data-stage") == "discard":
            rest = page.locator("#play-me .hand-cards button:not(.chosen)")
            rest.nth(rng.randrange(rest.count())).click()
    page.wait_for_selector('#play[data-stage="confirm"]')
    page.click("#play-confirm")
    page.wait_for_selector('#play:not([data-stage="confirm"])')


def _play_a_game(page: Any, base: str, out: Path, rng: random.Random) -> list[Path]:
    """Start a game against greedy from the form, play it through, and shoot it on the way."""
    written = []

    def shot(name: str, *, full: bool = True) -> None:
        target = out / f"{name}.png"
        page.screenshot(path=str(target), full_page=full)
        written.append(target)

    page.goto(base + "/play?bot=greedy")
    page.select_option("#play-seat", "1")
    shot("play", full=False)
    page.click("#play-start")
    page.wait_for_url(re.compile(r"/play/[0-9a-f]+$"))
    for _ in range(12):  # four of the person's turns (a draw, a draw, a play each)
        if not _choose(page, rng):
            raise RuntimeError("the game ended within the person's first four turns")
        _finish(page, rng)
    while _choose(page, rng) and page.get_attribute("#play", "data-stage") != "cell":
        _finish(page, rng)  # on to a play, its card chosen
    shot("play-table")
    page.set_viewport_size({"width": 390, "height": 844})
    shot("phone-play-table")
    page.set_viewport_size({"width": 1280, "height": 860})
    _finish(page, rng)
    while _choose(page, rng):
        _finish(page, rng)
    page.wait_for_selector("#play-scoring:not([hidden])", timeout=60_000)
    page.wait_for_selector("#play-after:not([hidden])", timeout=60_000)
    shot("play-scoring")
    return written


def capture_play(out: Path, seed: int = 7) -> list[Path]:
    """The casual game's pages on a site of ``arena demo --serve``: the Play page's form, the
    table with a card chosen and its legal cells lit (desktop and phone), and the scoring
    after the game, which the script plays against greedy with random legal choices."""
    from playwright.sync_api import sync_playwright

    exe = chromium_path()
    if exe is None:
        raise RuntimeError("chromium not found (Debian: apt-get install chromium)")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    rng = random.Random(seed)
    with (
        tempfile.TemporaryDirectory(prefix="arena-play-") as tmp,
        _demo_site(Path(tmp)) as base,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            written.extend(_play_a_game(page, base, out, rng))
        finally:
            browser.close()
    return written


def _store_analysis(r: redis.Redis, match_id: str) -> None:
    """The analysis of the match's game 0, as the workers' job stores it (for the viewer)."""
    import json

    from arboretum_sdk.analysis import AnalysisConfig, analyse_replay
    from arboretum_sdk.analysis.report import analysis_json
    from arboretum_worker import replays
    from arboretum_worker.keys import Keys

    doc = json.loads(replays.get_replay(r, match_id, 0) or b"{}")
    config = AnalysisConfig()
    report = analysis_json(doc, analyse_replay(doc, None, config), config)
    r.hset(Keys.analysis(match_id, 0), mapping={"status": "done", "document": json.dumps(report)})


def owner_step(r: redis.Redis, tokens: dict[str, str], match_id: str) -> tuple[str, int] | None:
    """The token of the author of one of the match's seats, and a step of game 0 in mid-game
    where that seat's bot printed (the demo's bots print during every fourth decision)."""
    from arboretum_worker import botoutput, store

    match = store.get_match(r, match_id)
    for seat, vid in enumerate(match.seats if match else ()):
        version = store.get_version(r, vid)
        bot = store.get_bot(r, version.name) if version else None
        if bot is None or bot.owner not in tokens:
            continue
        steps = [
            e["step"]
            for e in botoutput.game_output(botoutput.get_output(r, match_id, seat), 0)["steps"]
        ]
        if steps:
            return tokens[bot.owner], min(steps, key=lambda step: abs(step - 40))
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", nargs="?", type=Path, default=Path("docs/screenshots"))
    parser.add_argument(
        "--pages",
        choices=("all", "site", "play"),
        default="all",
        help="site: the league's pages (a seeded Redis); play: the casual game's (arena demo "
        "--serve, a game played on a worker); all: both (default)",
    )
    args = parser.parse_args(argv)
    if args.pages in ("all", "site"):
        _capture_site(args.out)
    if args.pages in ("all", "play"):
        for path in capture_play(args.out):
            print(path)
    return 0


def _capture_site(out: Path) -> None:
    import redis

    from .app import WebSettings, create_app
    from .demo import seed_demo

    with private_redis() as url:
        r = redis.Redis.from_url(url)
        data = seed_demo(r, games_per_pairing=3, running=True)
        # A finished match whose every rotation is over (so its replay is fully revealed), with
        # a long game to show.
        best = max(data.matches, key=lambda m: len(data.replays[m]["steps"]))
        _store_analysis(r, best)
        owner = owner_step(r, data.tokens, best)
        app = create_app(WebSettings(redis_url=url, check=lambda path: None), client=r)
        with serve_in_thread(app) as base:
            for path in capture(base, out, best, data.running, owner):
                print(path)
        r.close()


if __name__ == "__main__":
    raise SystemExit(main())
