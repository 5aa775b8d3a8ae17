"""The screenshot script's signed-in view: it picks a seat author's token and a step where that
bot printed, so that replay-output.png shows the output panel (the site's capture itself needs
chromium and is run by hand: ``python -m arboretum_web.screenshots --pages site``; the casual
game's part is run by tests/integration/test_play_screenshots.py)."""

from __future__ import annotations

import redis

from arboretum_web.demo import DemoData
from arboretum_web.screenshots import owner_step
from arboretum_worker import botoutput, store


def test_the_owner_view_is_of_a_step_where_the_authors_bot_printed(
    r: redis.Redis, demo: DemoData
) -> None:
    picked = 0
    for mid in demo.matches:
        found = owner_step(r, demo.tokens, mid)
        seats = store.get_match(r, mid).seats
        owners = [store.get_bot(r, store.get_version(r, v).name).owner for v in seats]
        if not any(o in demo.tokens for o in owners):
            assert found is None  # no seat of a signed-up author: nothing to show
            continue
        assert found is not None
        token, step = found
        author = next(a for a, t in demo.tokens.items() if t == token)
        seat = owners.index(author)
        entries = botoutput.game_output(botoutput.get_output(r, mid, seat), 0)["steps"]
        assert step in {e["step"] for e in entries}
        picked += 1
    assert picked, "the demo has matches with an author's bot"
