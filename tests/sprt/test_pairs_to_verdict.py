"""How long a test takes, as docs/sprt.md tells it: the figures of its table come back when the
documented pentanomial distributions are fed to the real statistics again, and ``arena sprt
--help`` gives the bounds the page gives (the default and the quick screen). The table is
measured by ``bench/sprt_validation.py --pairs-table``; these are a few dozen runs of its rows
that settle fast, seeded."""

from __future__ import annotations

import bisect
import itertools
import random
import re
import statistics
from pathlib import Path

import pytest

from arboretum_sdk.cli import main
from arboretum_worker.sprt.stats import SprtSettings, SprtState, Verdict

DOC = Path(__file__).resolve().parents[2] / "docs" / "sprt.md"
BENCH_DOC = DOC.with_name("benchmarks.md")
PAIRS = ((0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (1.0, 0.5), (1.0, 1.0))
"""NEW's two game scores for each pentanomial outcome, LL first."""
ROW = re.compile(
    r"^\| \[(-?\d+), (-?\d+)\] \| ([^|]+) \| ((?:[\d.]+ ){4}[\d.]+) \| ([\d.]+)% \| ([\d.]+)% \| "
    r"([\d,]+), ([\d,]+) \|$"
)


def _rows() -> list[tuple[float, float, str, list[float], float, float, int, int]]:
    """docs/benchmarks.md's rows: bounds, truth, pentanomial, H1 %, H0 %, median, 90th pct."""
    out = []
    for line in BENCH_DOC.read_text().splitlines():
        m = ROW.match(line)
        if m:
            e0, e1, truth, penta, h1, h0, median, p90 = m.groups()
            out.append(
                (
                    float(e0), float(e1), truth.strip(), [float(p) for p in penta.split()],
                    float(h1), float(h0), int(median.replace(",", "")), int(p90.replace(",", "")),
                )
            )  # fmt: skip
    return out


def _pairs_to_verdict(
    probabilities: list[float], elo0: float, elo1: float, runs: int
) -> tuple[list[Verdict], list[int]]:
    cumulative = list(itertools.accumulate(probabilities))
    verdicts, pairs = [], []
    for run in range(runs):
        rng = random.Random(f"docs-sprt:{elo0}:{elo1}:{probabilities}:{run}")
        state = SprtState(SprtSettings(elo0=elo0, elo1=elo1))
        while state.verdict is None:
            pick = bisect.bisect_right(cumulative, rng.random() * cumulative[-1])
            state.add(*PAIRS[min(pick, len(PAIRS) - 1)])
        verdicts.append(state.verdict)
        pairs.append(state.pairs)
    return verdicts, pairs


def test_the_documented_table_has_both_bounds_and_the_asked_differences() -> None:
    rows = _rows()
    shown = {(e0, e1, truth) for e0, e1, truth, *_ in rows}
    for truth in ("+10 Elo", "+30 Elo", "+100 Elo", "+300 Elo"):
        assert (0, 5, truth) in shown and (0, 50, truth) in shown, truth
    page = DOC.read_text()
    for e0, e1, truth, _p, h1, h0, median, p90 in rows:
        name = "0 (no difference)" if truth == "0" else truth
        assert f"| {name} | {h1:.1f}% | {h0:.1f}% | {median:,} | {p90:,} |" in page, (e0, e1, truth)


def test_the_rows_that_settle_fast_come_back() -> None:
    """Rows whose tests all end the same way in a few hundred pairs at most: 40 runs give that
    verdict every time and a median within 15% of the documented one (the +300 row under
    [0, 5] is about 210 pairs, not a few dozen)."""
    rows = [row for row in _rows() if row[4] == 100.0 and row[6] <= 500 and row[7] <= 2 * row[6]]
    assert {(e0, e1, truth) for e0, e1, truth, *_ in rows} == {
        (0, 5, "+100 Elo"), (0, 5, "+300 Elo"), (0, 50, "+100 Elo"), (0, 50, "+300 Elo"),
    }  # fmt: skip
    for elo0, elo1, truth, penta, _h1, _h0, median, _p90 in rows:
        verdicts, pairs = _pairs_to_verdict(penta, elo0, elo1, 40)
        assert set(verdicts) == {Verdict.H1}, (elo0, elo1, truth)
        assert abs(statistics.median(pairs) - median) <= 0.15 * median, (elo0, elo1, truth)


def test_the_screens_verdict_rates_come_back() -> None:
    """Under the screen [0, 50] the verdicts of the rows at and below elo1 vary from test to
    test: 150 runs each, H1's rate within 4 standard errors of the documented one."""
    rows = [row for row in _rows() if row[1] == 50 and row[4] < 100.0]
    assert len(rows) == 3
    for elo0, elo1, truth, penta, h1, _h0, _median, _p90 in rows:
        verdicts, _pairs = _pairs_to_verdict(penta, elo0, elo1, 150)
        rate = verdicts.count(Verdict.H1) / len(verdicts)
        p = h1 / 100
        assert abs(rate - p) <= 4 * (p * (1 - p) / len(verdicts)) ** 0.5 + 0.01, (truth, rate)


def test_the_help_and_the_page_give_the_same_example_bounds(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["sprt", "--help"])
    help_text = capsys.readouterr().out
    bounds = re.findall(r"--elo0 (-?\d+) --elo1 (-?\d+)", help_text)
    assert ("0", "50") in bounds  # the quick screen
    page = DOC.read_text()
    for e0, e1 in bounds:
        assert f"--elo0 {e0} --elo1 {e1}" in page, (e0, e1)
        assert f"| [{e0}, {e1}]" in page, (e0, e1)
    assert "under the default\n[0, 5]" in help_text and "`[0, 5]`" in page
    assert "a few dozen pairs and a subtle one" not in page
