"""Live ratings (arboretum_worker.ratings: Elo and the Plackett-Luce live rating): atomic,
idempotent, sequenced, reproducible."""

from __future__ import annotations

import math
import multiprocessing
import random
import threading
from collections import Counter

import pytest
import redis

from arboretum_worker import live_rating, ratings
from arboretum_worker.live_rating import Skill
from arboretum_worker.ratings import EloSettings, record_result
from arboretum_worker.store import GameOutcome, Keys, MatchResult, get_result

LEAGUE = "spring"


def _game(ranks: tuple[int, ...]) -> GameOutcome:
    p = len(ranks)
    return GameOutcome(ranks, tuple(20 - r for r in ranks), (0,) * p)


def _result(match_id: str, seats: tuple[str, ...], *games: tuple[int, ...]) -> MatchResult:
    return MatchResult(match_id, LEAGUE, seats, tuple(_game(g) for g in games), finished=1.0)


def _random_ranks(rng: random.Random, p: int) -> tuple[int, ...]:
    keys = [rng.randrange(3) for _ in range(p)]  # few values: ties are common
    return tuple(1 + sum(1 for o in keys if o > k) for k in keys)


def random_results(n: int, seed: int, bots: int = 9) -> list[MatchResult]:
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(bots)]
    out = []
    for i in range(n):
        p = rng.choice((2, 3, 4))
        seats = tuple(rng.sample(names, p))
        games = [_random_ranks(rng, p) for _ in range(rng.choice((1, 1, 2, 3)))]
        out.append(_result(f"m{seed}x{i}", seats, *games))
    return out


def test_two_player_game_hand_computed(r: redis.Redis) -> None:
    assert record_result(r, _result("m1", ("a", "b"), (1, 2))).seq == 1
    assert ratings.ratings(r, LEAGUE) == {"a": 1516.0, "b": 1484.0}
    # a = 1516, b = 1484: E_b = 1 / (1 + 10 ** (32 / 400)); b wins.
    e_b = 1.0 / (1.0 + 10.0 ** (32.0 / 400.0))
    record_result(r, _result("m2", ("b", "a"), (1, 2)))
    live = ratings.ratings(r, LEAGUE)
    assert live["b"] == pytest.approx(1484.0 + 32.0 * (1.0 - e_b), abs=1e-9)
    assert live["a"] == pytest.approx(1516.0 - 32.0 * (1.0 - e_b), abs=1e-9)


def test_multiplayer_pairwise_hand_computed(r: redis.Redis) -> None:
    # Four seats at 1500, ranks 1, 2, 2, 4: K / (P - 1) = 32 / 3 per pair.
    # Seat 0 wins three pairs (+0.5 each over expectation): +16; seats 1, 2 win one, draw
    # one, lose one: 0; seat 3 loses three: -16.
    record_result(r, _result("m1", ("a", "b", "c", "d"), (1, 2, 2, 4)))
    assert ratings.ratings(r, LEAGUE) == {"a": 1516.0, "b": 1500.0, "c": 1500.0, "d": 1484.0}

    # Three seats at 1600, 1500, 1400; the last two share first place (a draw between them).
    # E(1600 vs 1500) = E(1500 vs 1400) = 1 / (1 + 10 ** -0.25) = 0.6400649998028851
    # E(1600 vs 1400) = 1 / (1 + 10 ** -0.5) = 0.7597469266479578;  K / (P - 1) = 16
    # x: 16 * (0 - 0.64006 + 0 - 0.75975) = -22.396990823213486
    # y: 16 * (1 - 0.35994 + 0.5 - 0.64006) = +8
    # z: 16 * (1 - 0.24025 + 0.5 - 0.35994) = +14.396990823213489
    r.hset(Keys.elo_ratings(LEAGUE), mapping={"x": "1600", "y": "1500", "z": "1400"})
    record_result(r, _result("m2", ("x", "y", "z"), (3, 1, 1)))
    live = ratings.ratings(r, LEAGUE)
    assert live["x"] == pytest.approx(1600 - 22.396990823213486, abs=1e-9)
    assert live["y"] == pytest.approx(1508.0, abs=1e-9)
    assert live["z"] == pytest.approx(1400 + 14.396990823213489, abs=1e-9)
    assert ratings.game_deltas([1600, 1500, 1400], [3, 1, 1], 32) == pytest.approx(
        [-22.396990823213486, 8.0, 14.396990823213489], abs=1e-12
    )


def test_same_result_twice_changes_nothing(r: redis.Redis) -> None:
    first = _result("m1", ("a", "b", "c"), (1, 2, 3), (2, 1, 3))
    assert record_result(r, first) == ratings.Applied(True, 1)
    snapshot = {k: r.dump(k) for k in r.keys("*")}
    assert record_result(r, first) == ratings.Applied(False, 1)
    # Another result for the same match (a retried worker): the first writer wins.
    other = _result("m1", ("a", "b", "c"), (3, 2, 1))
    assert record_result(r, other) == ratings.Applied(False, 1)
    assert {k: r.dump(k) for k in r.keys("*")} == snapshot
    assert get_result(r, "m1") == first
    assert record_result(r, _result("m2", ("a", "b"), (1, 2))) == ratings.Applied(True, 2)


def test_history_and_stats(r: redis.Redis) -> None:
    record_result(r, _result("m1", ("a", "b", "c"), (1, 1, 3), (2, 1, 3)))
    record_result(r, _result("m2", ("c", "a"), (1, 2)))
    hist = ratings.history(r, LEAGUE, "a")
    assert [(h.seq, h.game, h.match_id) for h in hist] == [(1, 0, "m1"), (1, 1, "m1"), (2, 0, "m2")]
    assert hist[-1].rating == ratings.rating(r, LEAGUE, "a")
    # the history replays the pure computation step by step
    expected = ratings.recompute([_result("m1", ("a", "b", "c"), (1, 1, 3))])["a"]
    assert hist[0].rating == pytest.approx(expected, abs=1e-9)
    a = ratings.stats(r, LEAGUE, "a")
    assert (a.games, a.wins, a.shared_wins, a.win_share, a.rank_sum) == (3, 0, 1, 0.5, 5)
    b = ratings.stats(r, LEAGUE, "b")
    assert (b.games, b.wins, b.shared_wins, b.win_share) == (2, 1, 1, 1.5)
    assert (b.last_seq, b.last_played) == (1, 1.0)
    assert ratings.stats(r, LEAGUE, "nobody") == ratings.VersionStats()
    assert ratings.rating(r, LEAGUE, "nobody") == 1500.0
    board = ratings.standings(r, LEAGUE)
    assert [row.live.mu for row in board] == sorted((row.live.mu for row in board), reverse=True)
    assert {row.version: row.elo for row in board} == ratings.ratings(r, LEAGUE)


def test_recompute_from_stored_results_equals_live(r: redis.Redis) -> None:
    elo = EloSettings(initial=1400.0, k=24.0)
    results = random_results(400, seed=3)
    for res in results:
        record_result(r, res, elo)
    stored = ratings.results_in_order(r, LEAGUE)
    assert stored == results
    live = ratings.ratings(r, LEAGUE)
    again = ratings.recompute(stored, elo)
    assert live.keys() == again.keys()
    assert max(abs(live[v] - again[v]) for v in live) <= 1e-9
    # Elo is zero-sum within a pool: the mean stays at the initial rating.
    assert sum(live.values()) / len(live) == pytest.approx(1400.0, abs=1e-6)
    skills = ratings.live_ratings(r, LEAGUE)
    assert live_rating.recompute(stored) == skills  # exactly: the same floats
    for vid in skills:
        assert ratings.stats(r, LEAGUE, vid).live == skills[vid]
        assert ratings.history(r, LEAGUE, vid)[-1].live == skills[vid]


def test_live_rating_of_one_game(r: redis.Redis) -> None:
    record_result(r, _result("m1", ("a", "b", "c"), (1, 2, 3), (3, 1, 1)))
    first = live_rating.rate_game([Skill()] * 3, (1, 2, 3))
    second = live_rating.rate_game(first, (3, 1, 1))
    assert first[0].mu > first[1].mu > 1500 > first[2].mu  # the whole ranking counts
    assert all(s.sigma < live_rating.INITIAL_SIGMA for s in first)
    tied = live_rating.rate_game([Skill()] * 3, (3, 1, 1))
    assert tied[1] == tied[2] and tied[1].mu > 1500 > tied[0].mu  # a tie shares its place
    live = ratings.live_ratings(r, LEAGUE)
    assert [live[v] for v in "abc"] == second
    hist = ratings.history(r, LEAGUE, "b")
    assert [h.live for h in hist] == [first[1], second[1]]
    board = ratings.standings(r, LEAGUE)
    assert [row.version for row in board] == sorted("abc", key=lambda v: -live[v].mu)
    assert board[0].live.lower < board[0].live.mu < board[0].live.upper
    # shown on the fit's anchor: every mean shifted alike so that their mean is 1500
    shown = {row.version: row.live for row in board}
    assert math.fsum(s.mu for s in shown.values()) / 3 == pytest.approx(1500.0, abs=1e-9)
    shifts = {shown[v].mu - live[v].mu for v in "abc"}
    assert max(shifts) - min(shifts) < 1e-9 and abs(max(shifts)) > 1e-6  # not zero-sum
    assert all(shown[v].sigma == live[v].sigma for v in "abc")
    assert board[0].elo == ratings.rating(r, LEAGUE, board[0].version)
    assert board[0].stats.games == 2


def test_centred_shifts_every_mean_alike_to_the_anchor() -> None:
    skills = {"a": Skill(1620.0, 40.0), "b": Skill(1530.0, 60.0), "c": Skill(1365.0, 90.0)}
    out = live_rating.centred(skills)
    assert {v: s.mu for v, s in out.items()} == pytest.approx(
        {"a": 1615.0, "b": 1525.0, "c": 1360.0}
    )
    assert {v: s.sigma for v, s in out.items()} == {v: s.sigma for v, s in skills.items()}
    assert live_rating.centred({}) == {}


def test_a_seat_rated_meanwhile_makes_the_result_read_again(
    r: redis.Redis, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between reading a seat's live rating and recording, another result rates that seat: the
    script refuses the stale update, and the result is rated again from the new rating."""
    other = redis.Redis.from_url(redis_url)
    calls: list[int] = []
    plain = ratings.rate_match

    def racing(before: list[Skill], games: list[tuple[int, ...]]) -> list[list[Skill]]:
        calls.append(1)
        if len(calls) == 1:  # another worker records a result of "a" right now
            record_result(other, _result("m-other", ("a", "c"), (1, 2)))
        return plain(before, games)

    monkeypatch.setattr(ratings, "rate_match", racing)
    assert record_result(r, _result("m1", ("a", "b"), (2, 1))) == ratings.Applied(True, 2)
    other.close()
    assert len(calls) == 3  # the first try, the other result's own, the retry
    stored = ratings.results_in_order(r, LEAGUE)
    assert [res.match_id for res in stored] == ["m-other", "m1"]
    assert live_rating.recompute(stored) == ratings.live_ratings(r, LEAGUE)


def _apply_all(url: str, results: list[MatchResult]) -> list[tuple[str, bool, int]]:
    client = redis.Redis.from_url(url)
    try:
        out = []
        for res in results:
            a = record_result(client, res)
            out.append((res.match_id, a.applied, a.seq))
        return out
    finally:
        client.close()


def _check_exactly_once(
    r: redis.Redis, results: list[MatchResult], outcomes: list[tuple[str, bool, int]]
) -> None:
    applied = Counter(mid for mid, ok, _ in outcomes if ok)
    assert applied == Counter({res.match_id: 1 for res in results})
    seq_of = {mid: seq for mid, ok, seq in outcomes if ok}
    assert sorted(seq_of.values()) == list(range(1, len(results) + 1))
    assert all(seq == seq_of[mid] for mid, _, seq in outcomes)  # losers see the winner's seq
    assert int(r.get(Keys.elo_seq(LEAGUE)) or 0) == len(results)
    stored = ratings.results_in_order(r, LEAGUE)
    assert [res.match_id for res in stored] == sorted(seq_of, key=seq_of.__getitem__)
    live = ratings.ratings(r, LEAGUE)
    again = ratings.recompute(stored)
    assert max(abs(live[v] - again[v]) for v in live) <= 1e-9
    # The live rating: recomputed from the stored results in sequence order, exactly.
    assert live_rating.recompute(stored) == ratings.live_ratings(r, LEAGUE)
    games = Counter()
    for res in results:
        for v in res.seats:
            games[v] += len(res.games)
    for v, n in games.items():
        assert ratings.stats(r, LEAGUE, v).games == n
        assert len(ratings.history(r, LEAGUE, v)) == n


def test_concurrent_threads_apply_each_result_once(r: redis.Redis, redis_url: str) -> None:
    results = random_results(150, seed=11)
    chunks = []
    for t in range(8):  # every result is submitted by two threads, in different orders
        mine = [res for i, res in enumerate(results) if i % 4 == t % 4]
        random.Random(t).shuffle(mine)
        chunks.append(mine)
    outcomes: list[tuple[str, bool, int]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(len(chunks))

    def run(chunk: list[MatchResult]) -> None:
        barrier.wait()
        got = _apply_all(redis_url, chunk)
        with lock:
            outcomes.extend(got)

    threads = [threading.Thread(target=run, args=(c,)) for c in chunks]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(outcomes) == 2 * len(results)
    _check_exactly_once(r, results, outcomes)


def test_concurrent_processes_apply_each_result_once(r: redis.Redis, redis_url: str) -> None:
    results = random_results(200, seed=12)
    jobs = []
    for p in range(6):  # every result is submitted by two processes, in different orders
        mine = [res for i, res in enumerate(results) if i % 3 == p % 3]
        random.Random(p).shuffle(mine)
        jobs.append((redis_url, mine))
    with multiprocessing.get_context("fork").Pool(len(jobs)) as pool:
        parts = pool.starmap(_apply_all, jobs)
    outcomes = [o for part in parts for o in part]
    assert len(outcomes) == 2 * len(results)
    _check_exactly_once(r, results, outcomes)


def test_leagues_have_separate_pools(r: redis.Redis) -> None:
    record_result(r, _result("m1", ("a", "b"), (1, 2)))
    other = MatchResult("m2", "autumn", ("a", "b"), (_game((2, 1)),))
    assert record_result(r, other).seq == 1
    assert ratings.ratings(r, LEAGUE)["a"] == 1516.0
    assert ratings.ratings(r, "autumn")["a"] == 1484.0
