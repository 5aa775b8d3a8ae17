"""Screenshots of every page for the docs: ``python -m arboretum_web.screenshots [OUT_DIR]``.

Starts a private ``redis-server`` (unix socket in a temporary directory), seeds it with
:func:`arboretum_web.demo.seed_demo` (real games, played in-process), serves the app with uvicorn
on 127.0.0.1 and a free port, and captures each page with headless Chromium (Debian's
``chromium``, driven by playwright: ``pip install arboretum-web[browser]``). The default output is
``docs/screenshots`` under the current directory. Run it with ``nice``: it is a benchmark-free
but CPU-hungry job.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import redis

__all__ = [
    "CHROMIUM_ARGS",
    "capture",
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
    args = parser.parse_args(argv)
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
            for path in capture(base, args.out, best, data.running, owner):
                print(path)
        r.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
