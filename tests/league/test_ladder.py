"""The ladder: its choice function (pure), its units, its records and its scheduler's tick on a
real redis-server, many ticks at once included (the match jobs are not run here: the end-to-end
test with workers is tests/integration/test_ladder.py)."""

from __future__ import annotations

import itertools
import threading
from collections import Counter

import numpy as np
import pytest
import redis

from arboretum_worker import registry, store
from arboretum_worker.fit import Rankings, fit
from arboretum_worker.ladder import ops, state
from arboretum_worker.ladder.choice import Belief, choose, gains, weights
from arboretum_worker.ladder.scheduler import TickReport, in_flight, tick, unit_specs
from arboretum_worker.league import builtin_bot_files
from arboretum_worker.progress import LeagueError
from arboretum_worker.settings import WorkerSettings

# --------------------------------------------------------------------------- the choice


def _belief(means: dict[str, float], var: float = 0.01) -> Belief:
    names = sorted(means)
    return Belief(names, np.array([means[n] for n in names]), np.eye(len(names)) * var)


def test_the_least_certain_pairing_is_played_first() -> None:
    # a and b are close; c is far above both: a against b is the uncertain outcome
    belief = _belief({"a": 0.0, "b": 0.1, "c": 4.0}, var=0.05)
    assert choose(belief, ["a", "b", "c"], count=1, unit_games=20) == [("a", "b")]


def test_a_known_outcome_teaches_nothing() -> None:
    belief = _belief({"a": 0.0, "b": 40.0})
    g = gains(belief, 20)
    assert g[0, 1] < 1e-12 and g[0, 0] == 0.0


def test_a_little_known_version_is_worth_more_than_a_known_one() -> None:
    names = ["a", "b", "c"]
    belief = Belief(names, np.zeros(3), np.diag([0.01, 0.01, 1.0]))
    assert choose(belief, names, count=1, unit_games=20)[0] in {("a", "c"), ("b", "c")}


def test_new_versions_come_first() -> None:
    # "d" is new (no games): every pairing with it comes before the close pairing a-b
    means = {"a": 0.0, "b": 0.0, "c": 3.0, "d": 6.0}
    belief = _belief(means, var=0.05)
    played = {"a": 500, "b": 500, "c": 500, "d": 0}
    chosen = choose(belief, list(means), count=2, unit_games=20, played=played, new_games=40)
    assert all("d" in pair for pair in chosen), chosen
    # once it has its games it is new no more: the uncertain pairing comes back
    played["d"] = 40
    later = choose(_belief(means, 0.05), list(means), count=1, unit_games=20, played=played)
    assert later == [("a", "b")]


def test_what_is_in_flight_counts_as_played() -> None:
    means = {"a": 0.0, "b": 0.05, "c": 0.1}
    alone = choose(_belief(means, 0.3), list(means), count=1, unit_games=20)
    busy = choose(
        _belief(means, 0.3), list(means), count=1, unit_games=20, in_flight=[(*alone[0], 400)]
    )
    assert busy != alone


def test_a_batch_spreads_over_pairings_and_is_deterministic() -> None:
    means = {f"v{i}": 0.3 * i for i in range(6)}
    first = choose(_belief(means, 0.5), list(means), count=6, unit_games=20)
    again = choose(_belief(means, 0.5), list(means), count=6, unit_games=20)
    assert first == again
    assert len(set(first)) > 1  # chosen units change the belief: not six of one pairing
    assert all(a < b for a, b in first)


def test_retired_or_unknown_versions_are_not_chosen() -> None:
    belief = _belief({"a": 0.0, "b": 0.0, "old": 0.0})
    chosen = choose(belief, ["a", "b"], count=3, unit_games=20, in_flight=[("a", "old", 20)])
    assert chosen == [("a", "b")] * 3
    assert choose(_belief({"a": 0.0}), ["a"], count=2, unit_games=20) == []
    assert choose(_belief({"a": 0.0, "b": 0.0}), ["a", "b"], count=0, unit_games=20) == []


def test_weights_follow_the_overlapping_neighbours() -> None:
    # a and b overlap; c is far from both: c counts little
    names = ["a", "b", "c"]
    w = weights(Belief(names, np.array([0.0, 0.05, 5.0]), np.eye(3) * 0.01))
    assert w[0] > 10 * w[2] and w[1] > 10 * w[2]


def test_the_belief_takes_the_fit_and_the_prior_for_the_unseen() -> None:
    rankings = Rankings()
    for _ in range(30):
        rankings.add(("a", "b"), (1, 2))
        rankings.add(("a", "b"), (2, 1))
    fitted = fit(rankings)
    belief = Belief.of(["a", "b", "new"], fitted)
    assert belief.versions == ["a", "b", "new"]
    assert belief.cov[2, 2] == pytest.approx(2.0) and belief.cov[0, 2] == 0.0
    assert belief.cov[0, 0] == pytest.approx(fitted.covariance[0, 0])


# --------------------------------------------------------------------------- units


def test_a_unit_is_its_deals_in_both_seat_orders() -> None:
    specs = unit_specs("lad", "x" * 64, "y" * 64, 3, 4, seed=7)
    assert len(specs) == 2
    assert {s.deals for s in specs} == {(12, 13, 14, 15)}
    assert specs[0].seats == specs[1].seats[::-1]
    assert specs[0].game_seeds == specs[1].game_seeds  # the same deals
    other = unit_specs("lad", "x" * 64, "y" * 64, 4, 4, seed=7)
    assert not {s.match_id for s in specs} & {s.match_id for s in other}
    assert set(specs[0].siblings) == {specs[1].match_id}


# --------------------------------------------------------------------------- Redis


def _settings(r: redis.Redis) -> WorkerSettings:
    port = r.connection_pool.connection_kwargs["port"]
    return WorkerSettings(redis_url=f"redis://127.0.0.1:{port}/0", queue="ladder-unit")


def _submit(r: redis.Redis, name: str, source: str = "greedy") -> str:
    files = builtin_bot_files(source)
    if name != source:
        files += f"\n# {name}\n".encode()
    return registry.add_version(r, name, files)


def test_units_are_handed_out_once_and_only_to_the_lock_holder(r: redis.Redis) -> None:
    token = state.acquire(r, "lad")
    assert token is not None
    assert state.acquire(r, "lad") is None  # taken: and the holder is told to tick again
    assert state.allocate(r, "lad", "not-the-token", ["a/b"]) is None
    assert state.allocate(r, "lad", token, ["a/b", "a/b", "a/c"]) == [0, 1, 0]
    assert state.allocate(r, "lad", token, ["a/b"]) == [2]
    assert state.release(r, "lad", token) == 2  # a tick came meanwhile: kept, tick again
    assert state.release(r, "lad", token) == 1
    assert state.release(r, "lad", token) == 0
    assert state.acquire(r, "lad") is not None


def test_a_new_version_retires_the_old_one(r: redis.Redis) -> None:
    assert state.enter(r, "lad", "bot", "v1", None) == 1
    assert state.enter(r, "lad", "bot", "v1", None) == 0
    assert state.enter(r, "lad", "bot", "v2", "v0") == -1  # not the member it thought
    assert state.enter(r, "lad", "bot", "v2", "v1") == 1
    entries = state.entries(r, "lad")
    assert entries["v1"].retired is not None and entries["v2"].active
    assert state.members(r, "lad") == {"bot": "v2"}


def _ladder(r: redis.Redis, bots: int = 4, depth: int = 6) -> tuple[WorkerSettings, list[str]]:
    settings = _settings(r)
    versions = [_submit(r, f"b{i}") for i in range(bots)]
    ops.create_ladder(r, "lad", versions, settings, depth=depth, deals_per_series=2, seed=5)
    return settings, versions


def _finish(r: redis.Redis, match: store.MatchRecord, rng: np.random.Generator) -> None:
    from arboretum_worker.ratings import record_result

    games = tuple(
        store.GameOutcome(
            ranks=(1, 2) if rng.random() < 0.5 else (2, 1), totals=(0, 0), faults=(0, 0)
        )
        for _ in match.deals
    )
    result = store.MatchResult(match.id, match.league, match.seats, games)
    record_result(r, result, store.EloSettings())


def test_a_tick_tops_up_to_the_depth_and_no_further(r: redis.Redis) -> None:
    settings, versions = _ladder(r, depth=6)
    report = tick(r, "lad", settings)
    assert report.status == "scheduled" and len(report.matches) == 6 and len(report.units) == 3
    assert tick(r, "lad", settings).matches == []  # full: nothing more
    flying = in_flight(r, "lad")
    assert len(flying) == 6 and all(set(m.seats) <= set(versions) for m in flying)
    assert Counter(m.games for m in flying) == {2: 6}


def test_many_schedulers_at_once_never_schedule_a_match_twice(r: redis.Redis) -> None:
    """Rounds of: finish every match in flight, then 8 threads tick at once. Every match id is
    new, every (pairing, deal, seat order) is played once, and the ladder never holds more
    than its depth plus one unit."""
    settings, _ = _ladder(r, bots=5, depth=6)
    rng = np.random.default_rng(1)
    seen: set[str] = set()
    games: set[tuple[tuple[str, ...], int]] = set()
    for _ in range(8):
        for match in in_flight(r, "lad"):
            _finish(r, match, rng)
        reports: list[TickReport] = []

        def one(out: list[TickReport] = reports) -> None:
            out.append(tick(r, "lad", settings))

        threads = [threading.Thread(target=one) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        new = [m for rep in reports for m in rep.matches]
        assert len(new) == len(set(new)) and not set(new) & seen
        seen |= set(new)
        flying = in_flight(r, "lad")
        assert 6 <= len(flying) <= 7
        for match in flying:
            for deal in match.deals:
                key = (match.seats, deal)
                assert key not in games
                games.add(key)
    assert len(store.league_matches(r, "lad")) == len(seen)


def test_a_new_version_enters_at_the_next_tick(r: redis.Redis) -> None:
    settings, versions = _ladder(r, bots=3, depth=4)
    tick(r, "lad", settings)
    newer = _submit(r, "b0", "random")
    for match in in_flight(r, "lad"):
        _finish(r, match, np.random.default_rng(2))
    report = tick(r, "lad", settings)
    assert report.entered == [newer]
    assert state.members(r, "lad")["b0"] == newer
    flying = in_flight(r, "lad")
    assert all(versions[0] not in m.seats for m in flying)
    assert sum(newer in m.seats for m in flying) == len(flying)  # new versions first


def test_pause_resume_close_and_their_errors(r: redis.Redis) -> None:
    settings, _ = _ladder(r, bots=3, depth=4)
    tick(r, "lad", settings)
    ops.pause_ladder(r, "lad")
    with pytest.raises(LeagueError, match="paused already"):
        ops.pause_ladder(r, "lad")
    for match in in_flight(r, "lad"):
        _finish(r, match, np.random.default_rng(3))
    assert tick(r, "lad", settings).status == "paused" and in_flight(r, "lad") == []
    ops.resume_ladder(r, "lad", settings)
    with pytest.raises(LeagueError, match="running already"):
        ops.resume_ladder(r, "lad", settings)
    assert len(tick(r, "lad", settings).matches) == 4
    assert ops.close_ladder(r, "lad") == 4  # the queued matches are cancelled
    with pytest.raises(LeagueError, match="closed already"):
        ops.close_ladder(r, "lad")
    with pytest.raises(LeagueError, match="closed"):
        ops.resume_ladder(r, "lad", settings)
    with pytest.raises(LeagueError, match="closed"):
        ops.pause_ladder(r, "lad")
    assert tick(r, "lad", settings).status == "closed"
    assert store.get_league(r, "lad").status is store.LeagueStatus.CLOSED


def test_a_round_robin_is_not_a_ladder(r: redis.Redis) -> None:
    from arboretum_worker.league import cancel_league, create_league, run_league

    settings, _ = _ladder(r, bots=2)
    a, b = (_submit(r, n) for n in ("rr1", "rr2"))
    create_league(r, "rr", [a, b], players=2, games_per_pairing=1)
    with pytest.raises(LeagueError, match="round robin, not a ladder"):
        ops.pause_ladder(r, "rr")
    with pytest.raises(LeagueError, match="is a ladder"):
        run_league(r, "lad", settings)
    with pytest.raises(LeagueError, match="close it"):
        cancel_league(r, "lad", settings)
    with pytest.raises(LeagueError, match="players must be 2"):
        ops.create_ladder(r, "lad3", [a, b], settings, players=3)
    with pytest.raises(LeagueError, match="name each bot once"):
        ops.create_ladder(r, "twice", [a, _submit(r, "rr1", "random")], settings)


def _played_rounds(r: redis.Redis, settings: WorkerSettings, rounds: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        tick(r, "lad", settings)
        for match in in_flight(r, "lad"):
            _finish(r, match, rng)


def test_the_table_kept_between_ticks_fits_as_every_result_does(r: redis.Redis) -> None:
    from arboretum_worker.fit import fit_ratings
    from arboretum_worker.ladder import fitdata
    from arboretum_worker.ratings import results_in_order

    settings, _ = _ladder(r, bots=4, depth=4)
    _played_rounds(r, settings, 3, seed=1)
    tick(r, "lad", settings)  # counts the last round's results into the table, stores it
    stored = fitdata.load(r, "lad")
    assert stored.seq == int(r.get(store.Keys.elo_seq("lad")) or 0) > 0
    _played_rounds(r, settings, 2, seed=2)  # more results: a tick adds only those
    data = fitdata.update(r, "lad")
    assert data.seq > stored.seq
    results = results_in_order(r, "lad")
    expected = {f.version: f for f in fit_ratings(results)}
    versions, wins = fitdata.table(r, "lad", data)
    # the fit made on the matrix is the batch fit's, from scratch and from the last maximum
    for start in ({}, data.maximum):
        got = fitdata.fit_table(versions, wins, start=start).ratings()
        assert {f.version for f in got} == set(expected)
        for f in got:
            assert f.elo == pytest.approx(expected[f.version].elo, abs=1e-3)
            assert f.stderr == pytest.approx(expected[f.version].stderr, abs=1e-3)
            assert f.games == expected[f.version].games
    # a cache: read again from every result, the table is the same
    r.delete(store.Keys.ladder("lad", "fitdata"))
    again = fitdata.update(r, "lad")
    assert again.seq == data.seq
    assert again.versions == data.versions
    assert np.array_equal(again.wins, data.wins)
    assert again.wins.sum() == sum(len(res.games) for res in results)


def test_a_read_is_bounded_and_the_next_reads_on(r: redis.Redis) -> None:
    from arboretum_worker.ladder import fitdata

    settings, _ = _ladder(r, bots=4, depth=6)
    _played_rounds(r, settings, 3, seed=4)
    total = int(r.zcard(store.Keys.elo_applied("lad")))
    assert total > 4
    whole = fitdata.update(r, "lad", limit=total)
    assert whole.behind == 0
    r.delete(store.Keys.ladder("lad", "fitdata"))
    part = fitdata.update(r, "lad", limit=3)  # the 3 oldest results, the rest left
    assert part.behind == total - 3
    assert part.wins.sum() < whole.wins.sum()
    r.set(store.Keys.ladder("lad", "fitdata"), part.to_bytes())
    rest = fitdata.update(r, "lad", limit=total)  # reads on from where it stopped
    assert rest.behind == 0 and rest.seq == whole.seq
    order = [whole.versions.index(v) for v in rest.versions]
    assert np.array_equal(rest.wins, whole.wins[np.ix_(order, order)])
    # a tick says what it left to read
    r.set(store.Keys.ladder("lad", "fitdata"), part.to_bytes())
    for match in in_flight(r, "lad"):
        _finish(r, match, np.random.default_rng(5))
    report = tick(r, "lad", settings)
    assert report.status == "scheduled"
    assert report.behind == 0  # READ_LIMIT is far above this ladder's results


def test_a_first_tick_schedules_from_what_it_read_and_the_next_read_on(
    r: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arboretum_worker.ladder import fitdata

    settings, _ = _ladder(r, bots=4, depth=6)
    _played_rounds(r, settings, 3, seed=7)
    total = int(r.zcard(store.Keys.elo_applied("lad")))
    # a tick reads more results than a round of the ladder's matches brings (depth 6), so the
    # ticks catch up, as READ_LIMIT does on a real ladder
    monkeypatch.setattr(fitdata, "READ_LIMIT", 8)
    r.delete(store.Keys.ladder("lad", "fitdata"))  # as if the ladder were big and never read
    rng = np.random.default_rng(8)
    behind = []
    for _ in range(total):
        for match in in_flight(r, "lad"):
            _finish(r, match, rng)
        report = tick(r, "lad", settings)
        assert report.status == "scheduled" and report.matches
        behind.append(report.behind)
        if report.behind == 0:
            break
    assert behind[0] > 0 and behind[-1] == 0, behind
    assert all(b < a for a, b in itertools.pairwise(behind)), behind
    data = fitdata.load(r, "lad")
    assert data.seq == int(r.get(store.Keys.elo_seq("lad")) or 0)


def test_a_stored_result_that_is_not_one_is_named(r: redis.Redis) -> None:
    from arboretum_worker.ladder import fitdata

    settings, _ = _ladder(r, bots=3, depth=2)
    _played_rounds(r, settings, 1, seed=6)
    first = store.as_text(r.zrange(store.Keys.elo_applied("lad"), 0, 0)[0])
    r.set(store.Keys.result(first), b"{not json")
    with pytest.raises(store.StoreError, match=first):
        fitdata.update(r, "lad")


def test_a_pair_left_out_of_the_fit_is_left_out_of_the_ladders_fit(r: redis.Redis) -> None:
    from arboretum_worker.audit import exclusions
    from arboretum_worker.fit import fit_ratings
    from arboretum_worker.ladder import fitdata
    from arboretum_worker.ratings import results_in_order

    settings, _ = _ladder(r, bots=4, depth=6)
    _played_rounds(r, settings, 4, seed=3)
    data = fitdata.update(r, "lad")
    results = results_in_order(r, "lad")
    met = {tuple(sorted(res.seats)) for res in results}
    a, b = sorted(met)[0]
    whole = {
        f.version: f.elo
        for f in fitdata.fit_table(*fitdata.table(r, "lad", data), start={}).ratings()
    }
    exclusions.exclude(r, "lad", a, b, "kim")
    kept = [res for res in results if set(res.seats) != {a, b}]
    expected = {f.version: f for f in fit_ratings(kept)}
    got = {
        f.version: f for f in fitdata.fit_table(*fitdata.table(r, "lad", data), start={}).ratings()
    }
    assert set(got) == set(expected)
    for v, f in got.items():
        assert f.elo == pytest.approx(expected[v].elo, abs=1e-3)
        assert f.games == expected[v].games
    assert got[a].elo != pytest.approx(whole[a], abs=1e-3)  # the fit changed
    assert tick(r, "lad", settings).status == "scheduled"
