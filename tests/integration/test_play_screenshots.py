"""The docs' screenshots of a casual game (``python -m arboretum_web.screenshots --pages play``):
the script starts ``arena demo --serve``, plays a whole game against greedy through the table in
Chromium and writes its pages. It drives the table's controls, so it must follow them."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from arboretum_web.screenshots import capture_play

from .casual_browser import chromium

pytestmark = pytest.mark.integration


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_screenshot_script_plays_a_casual_game_and_shoots_its_pages(tmp_path: Path) -> None:
    with chromium():  # a skip without Chromium or playwright (a failure in CI)
        pass
    written = capture_play(tmp_path)
    sizes = {path.name: _png_size(path) for path in written}
    assert list(sizes) == ["play.png", "play-table.png", "phone-play-table.png", "play-scoring.png"]
    assert sizes["phone-play-table.png"][0] == 390
    assert {sizes[name][0] for name in sizes if not name.startswith("phone")} == {1280}
    # the whole page, not the window: the scoring is under the seats' arboretums
    assert sizes["play-scoring.png"][1] > sizes["play.png"][1] == 860
