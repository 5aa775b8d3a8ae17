"""The replay viewer's output panel, in headless Chromium at 1280 and 390 px: the bot's author
sees what the bot printed during the step shown, the steps with output are marked, and the
download link; anyone else gets no panel at all. The fixtures are tests.web.test_browser's."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from arboretum_web.demo import DemoData
from arboretum_worker import botoutput

from .test_browser import PHONE, base_url, browser, page, phone  # noqa: F401 (fixtures)
from .test_viewer import _owned_match, _sign_in

pytestmark = pytest.mark.integration


@pytest.fixture(params=["desktop", "phone"])
def view(request: pytest.FixtureRequest) -> Any:
    """The page at 1280 px, then at 390 px."""
    return request.getfixturevalue("page" if request.param == "desktop" else "phone")


def test_the_author_sees_the_output_beside_each_step(
    view: Any, r: redis.Redis, demo: DemoData
) -> None:
    mid, seat = _owned_match(r, demo, "alice")
    entries = botoutput.game_output(botoutput.get_output(r, mid, seat), 0)["steps"]
    assert entries, "the demo's bots print during every fourth decision"
    step = entries[1]["step"]
    view.goto(f"/matches/{mid}/games/0#step={step}")
    view.wait_for_selector("#replay.ready")
    assert view.locator("#step-output").count() == 0  # signed out: no panel, no request
    _sign_in(view, demo, "alice")
    view.goto(f"/matches/{mid}/games/0#step={step}")
    view.wait_for_selector("#replay.ready")
    view.wait_for_selector("#step-output[data-steps]")
    assert view.locator("#step-output").get_attribute("data-steps") == str(len(entries))
    text = view.locator("#step-output-lines").inner_text()
    assert text.splitlines() == entries[1]["lines"]
    assert view.locator("#step-output-step").inner_text() == f"step {step}"
    marked = view.locator("#step-log li.has-output")
    assert marked.count() == len(entries)
    assert [int(x) for x in marked.evaluate_all("els => els.map(e => e.dataset.i)")] == [
        e["step"] for e in entries
    ]
    # a step without output says so
    quiet = next(i for i in range(step + 1, step + 20) if i not in {e["step"] for e in entries})
    view.goto(f"/matches/{mid}/games/0#step={quiet}")
    view.reload()
    view.wait_for_selector("#step-output[data-steps]")
    assert "printed nothing" in view.locator("#step-output-lines").inner_text()
    link = view.locator("#step-output a[download]").first
    assert link.get_attribute("href") == (
        f"/api/v1/matches/{mid}/games/0/seats/{seat}/output?download=1"
    )
    width = view.evaluate("document.documentElement.scrollWidth")
    assert width <= view.viewport_size["width"]
