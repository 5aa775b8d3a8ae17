"""The operator's audit page (``/leagues/{name}/audit``) and the leaderboard's note of a pair left
out of the fit: results recorded by the league's own rating path in a real Redis, one pair
colluding (the strongest bot always loses to the weakest)."""

from __future__ import annotations

import random

import redis
from starlette.testclient import TestClient

from arboretum_worker import league, registry, store
from arboretum_worker.audit import exclusions
from arboretum_worker.ratings import record_result

BOTS = ("ash", "beech", "cedar", "dogwood", "elm")


def seed(r: redis.Redis, *, thrown: bool) -> dict[str, str]:
    """League ``audited``: 5 bots 150 Elo apart, 60 games a pair; with ``thrown``, elm (the
    strongest) loses every game to ash (the weakest)."""
    ids = {b: registry.add_version(r, b, f"# {b}\n".encode()) for b in BOTS}
    league.create_league(
        r, "audited", [ids[b] for b in BOTS], players=2, games_per_pairing=1, seed=3
    )
    rng = random.Random(5)
    for rnd in range(6):
        for i, a in enumerate(BOTS):
            for j in range(i + 1, len(BOTS)):
                b = BOTS[j]
                p = 1 / (1 + 10 ** (150 * (j - i) / 400))  # the later bot is the stronger
                games = []
                for _ in range(10):
                    a_wins = a == "ash" if thrown and {a, b} == {"ash", "elm"} else rng.random() < p
                    ranks = (1, 2) if a_wins else (2, 1)
                    games.append(store.GameOutcome(ranks, (0, 0), (0, 0)))
                result = store.MatchResult(
                    f"au-{rnd}-{a}-{b}", "audited", (ids[a], ids[b]), tuple(games)
                )
                record_result(r, result)
    return ids


def test_the_audit_page_shows_the_flagged_pair_and_who_left_it_out(
    r: redis.Redis, client: TestClient
) -> None:
    ids = seed(r, thrown=True)
    elm, ash = f"elm@{ids['elm'][:8]}", f"ash@{ids['ash'][:8]}"
    page = client.get("/leagues/audited/audit")
    assert page.status_code == 200
    flagged = page.text.split('id="flagged"')[1].split("</section>")[0]
    assert f'<td>{elm} vs {ash}</td><td class="num">60</td><td class="num">0</td>' in flagged
    below = page.text.split('id="below"')[1].split("</section>")[0]
    assert f"{elm} against {ash}:" in below
    assert "No pair's games are left out." in page.text
    assert "out of the fit (by" not in client.get("/?league=audited").text

    exclusions.exclude(r, "audited", ids["elm"], ids["ash"], "kim", at=1_800_000_000.0)
    page = client.get("/leagues/audited/audit")
    assert "No pair departs from the fit beyond chance" in page.text
    pair = " and ".join(
        f"{name}@{vid[:8]}" for vid, name in sorted((ids[b], b) for b in ("ash", "elm"))
    )
    assert f"the games of {pair}: left out by kim, 2027-01-15 08:00 UTC" in page.text
    board = client.get("/?league=audited").text
    assert f"An operator left the games of {pair} out of the fit (by kim, 2027-01-15 08:00" in board


def test_honest_results_flag_nothing_and_bad_leagues_are_clear(
    r: redis.Redis, client: TestClient
) -> None:
    seed(r, thrown=False)
    page = client.get("/leagues/audited/audit")
    assert page.status_code == 200
    assert "No pair departs from the fit beyond chance (10 pairs that met, 600 games" in page.text
    assert 'id="below"' not in page.text
    assert client.get("/leagues/nope/audit").status_code == 404
    league.create_league(
        r, "empty", [registry.latest(r, "ash"), registry.latest(r, "elm")], players=2, seed=1
    )
    assert "No results yet: there is nothing to audit." in client.get("/leagues/empty/audit").text
