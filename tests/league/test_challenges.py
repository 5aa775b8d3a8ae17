"""Challenges and authors' tests refused with a clear error, nothing stored; made, queued as the
author's units, and cancelled (a real redis-server; the end-to-end runs are in
tests/integration/test_author_work.py)."""

from __future__ import annotations

import pytest
import redis
from rq import Queue

from arboretum_worker import queues, registry
from arboretum_worker.challenges import (
    ChallengeError,
    ChallengeStatus,
    NotYours,
    cancel_challenge,
    create_challenge,
    get_challenge,
    list_challenges,
    set_bot_prefs,
)
from arboretum_worker.queues import FairSettings, QuotaExceeded
from arboretum_worker.settings import WorkerSettings
from arboretum_worker.sprt import authors
from arboretum_worker.sprt.league import get_test

WS = WorkerSettings(queue="ch")


def _bot(r: redis.Redis, name: str, owner: str, text: str = "") -> str:
    files = {"bot.py": f"# {name} {text}\nfrom arboretum_sdk.bots.random_bot import *\n".encode()}
    return registry.add_version(r, name, files, owner=owner)


@pytest.fixture
def bots(r: redis.Redis) -> dict[str, str]:
    return {
        "alpha1": _bot(r, "alpha", "alice", "1"),
        "alpha2": _bot(r, "alpha", "alice", "2"),
        "beta": _bot(r, "beta", "bob"),
        "delta": _bot(r, "delta", "dora"),
    }


def _nothing_stored(r: redis.Redis) -> None:
    assert not r.keys("arena:challenge*") and not r.keys("arena:fair:unit:*")


@pytest.mark.parametrize(
    ("bot", "opponents", "deals", "error"),
    [
        ("alpha", ["zed"], 2, "no bot named 'zed'"),
        ("zed", ["beta"], 2, "no bot named 'zed'"),
        ("alpha", ["alpha"], 2, "a challenge to oneself needs two different versions: alpha@"),
        ("alpha", [], 2, "a challenge seats 2 to 4 players, not 1"),
        ("alpha", ["beta"] * 4, 2, "a challenge seats 2 to 4 players, not 5"),
        ("alpha", ["beta"], 0, "deals must be 1 to 20, not 0"),
        ("alpha", ["beta"], 50, "deals must be 1 to 20, not 50"),
        ("alpha", ["beta@ff"], 2, "'beta@ff': no version of beta starts so"),
        ("alpha", ["bad:name"], 2, "invalid bot name 'bad:name'"),
    ],
)
def test_bad_challenges_are_refused(
    r: redis.Redis, bots: dict[str, str], bot: str, opponents: list[str], deals: int, error: str
) -> None:
    with pytest.raises(ChallengeError, match=error.replace("(", r"\(")):
        create_challenge(r, "alice", bot, opponents, deals=deals, worker_settings=WS)
    _nothing_stored(r)


def test_another_authors_bot_and_a_declined_challenge(r: redis.Redis, bots: dict[str, str]) -> None:
    with pytest.raises(NotYours, match="bot 'beta' is not yours"):
        create_challenge(r, "alice", "beta", ["alpha"], worker_settings=WS)
    set_bot_prefs(r, "bob", "beta", accept_challenges=False)
    with pytest.raises(ChallengeError, match="bot 'beta' declines challenges"):
        create_challenge(r, "alice", "alpha", ["beta"], worker_settings=WS)
    # The owner's own challenges are not declined.
    create_challenge(r, "bob", "beta", ["alpha"], worker_settings=WS)


def test_a_challenge_is_queued_as_the_authors_units_and_cancelled(
    r: redis.Redis, bots: dict[str, str]
) -> None:
    c = create_challenge(r, "alice", "alpha", ["beta", "delta"], deals=3, worker_settings=WS)
    assert (c.players, c.matches, c.deals, c.status) == (3, 6, 3, ChallengeStatus.QUEUED)
    assert c.entrants == (bots["alpha2"], bots["beta"], bots["delta"])
    assert c.involved() == {"alice", "bob", "dora"}
    assert [x.id for x in list_challenges(r, "dora")] == [c.id]
    assert list_challenges(r, "carol") == []
    # One unit released (one slot per author), five waiting.
    assert Queue("ch-challenges", connection=r).job_ids == [f"arena-challenge-{c.id}-0"]
    usage = queues.author_usage(r, "alice")
    assert (usage.active_matches, usage.pending_units, usage.running_units) == (6, 5, 1)
    with pytest.raises(NotYours):
        cancel_challenge(r, "bob", c.id)
    with pytest.raises(ChallengeError, match="no challenge 'nope'"):
        cancel_challenge(r, "alice", "nope")
    assert cancel_challenge(r, "alice", c.id).status is ChallengeStatus.CANCELLED
    assert Queue("ch-challenges", connection=r).job_ids == []
    assert queues.author_usage(r, "alice").active_matches == 0
    got = get_challenge(r, c.id)
    assert got is not None and got.status is ChallengeStatus.CANCELLED


def test_two_own_versions_and_the_match_quota(r: redis.Redis, bots: dict[str, str]) -> None:
    fair = FairSettings(max_matches=7)
    old = f"alpha@{bots['alpha1'][:8]}"
    c = create_challenge(r, "alice", "alpha", [old], worker_settings=WS, fair=fair)
    assert c.matches == 2 and c.owners == ("alice", "alice")
    before = set(r.keys("arena:challenge*"))
    with pytest.raises(QuotaExceeded, match="alice has 2 matches queued or running") as caught:
        create_challenge(r, "alice", "alpha", ["beta", "delta"], worker_settings=WS, fair=fair)
    assert caught.value.retry_after > 0 and "the limit is 7" in str(caught.value)
    assert set(r.keys("arena:challenge*")) == before
    with pytest.raises(QuotaExceeded, match="more than the 7 an author may have"):
        create_challenge(r, "bob", "beta", ["alpha", "delta", old], worker_settings=WS, fair=fair)


@pytest.mark.parametrize(
    ("new", "old", "bounds", "error"),
    [
        ("alpha", "alpha@", {"max_pairs": 5000}, "max_pairs must be 1 to 2000, not 5000"),
        ("alpha", "alpha@", {"elo1": 2}, "elo1 - elo0 must be at least 5 (got 2)"),
        ("alpha", "alpha@", {"elo1": 900}, "elo1 must be within ±400 Elo, not 900"),
        ("alpha", "alpha@", {"alpha": 0.001}, "alpha must be 0.01 to below 0.5, not 0.001"),
        ("alpha", "zed", {}, "no bot named 'zed'"),
        ("alpha", "alpha", {}, "NEW and OLD are the same version"),
    ],
)
def test_bad_author_tests_are_refused(
    r: redis.Redis, bots: dict[str, str], new: str, old: str, bounds: dict[str, float], error: str
) -> None:
    if old == "alpha@":
        old += bots["alpha1"][:8]
    kwargs = {"max_pairs": 100, **bounds}
    with pytest.raises(authors.TestError, match=error.replace("(", r"\(").replace(")", r"\)")):
        authors.create_author_test(r, "alice", new, old, worker_settings=WS, **kwargs)  # type: ignore[arg-type]
    assert not r.keys("arena:sprt*")


def test_an_author_tests_only_their_own_versions(r: redis.Redis, bots: dict[str, str]) -> None:
    with pytest.raises(NotYours, match="bot 'beta' is not yours: a test compares two of your own"):
        authors.create_author_test(r, "alice", "alpha", "beta", max_pairs=10, worker_settings=WS)
    old = f"alpha@{bots['alpha1'][:8]}"
    test = authors.create_author_test(r, "alice", "alpha", old, max_pairs=10, worker_settings=WS)
    assert test.author == "alice" and test.settings.max_pairs == 10
    assert Queue("ch-tests", connection=r).job_ids == [f"arena-sprt-{test.id}-0"]
    assert queues.author_usage(r, "alice").pending_units == 1  # the window's second batch
    stored = get_test(r, test.id)
    assert stored is not None and stored.author == "alice"
