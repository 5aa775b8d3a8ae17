"""The quick subset of the suite (``scripts/test --quick``, README's "Development"): the tests of
the unit-level parts not marked ``integration`` or ``slow``. The marker expression and the paths
are spelled once, in scripts/test; here they are read from there, the expression is given to
pytest for real on a file of each kind, and the whole suite stays the test command that CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test"


def quick_markers() -> str:
    found = re.findall(r'^QUICK_MARKERS="([^"]+)"$', SCRIPT.read_text(), re.MULTILINE)
    assert len(found) == 1, "scripts/test spells its quick marker expression once"
    return found[0]


def quick_paths() -> list[str]:
    found = re.findall(r"^QUICK_PATHS=\(([^)]*)\)$", SCRIPT.read_text(), re.MULTILINE)
    assert len(found) == 1, "scripts/test spells its quick paths once"
    return found[0].split()


def collected(*args: str) -> tuple[list[str], str]:
    """The test ids pytest collects from the repository's root with ``args``, and its summary."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode in (0, 5), result.stdout + result.stderr  # 5: nothing selected
    lines = result.stdout.splitlines()
    return [line for line in lines if "::" in line], lines[-1] if lines else ""


def test_the_quick_subset_leaves_out_integration_and_slow_tests_only() -> None:
    markers = quick_markers()
    assert markers == "not integration and not slow"
    # Both markers are registered (the suite runs with --strict-markers).
    pyproject = (ROOT / "pyproject.toml").read_text()
    for name in ("integration", "slow"):
        assert re.search(rf'^\s*"{name}: ', pyproject, re.MULTILINE), name
    files = [
        "tests/engine/test_notation.py",  # no marker: in the subset
        "tests/e2e/test_play.py",  # integration (the whole module): left out
        "tests/sdk/test_greedy.py",  # one test marked slow, the others not
    ]
    quick, summary = collected("-m", markers, *files)
    # pytest's "N/M tests collected (K deselected)": what the expression left out
    counts = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", summary)
    assert counts is not None, summary
    selected, total, deselected = map(int, counts.groups())
    assert selected == len(quick) > 0 and selected + deselected == total
    assert any(t.startswith(files[0]) for t in quick), "unmarked tests are in the subset"
    assert not any(t.startswith(files[1]) for t in quick), "integration tests are left out"
    assert f"{files[2]}::test_greedy_plays_legally_with_more_players" in quick
    assert f"{files[2]}::test_greedy_beats_random" not in quick, "a slow test is left out"
    # Left out: the e2e module's tests (some parametrized) and the one slow test.
    e2e = len(re.findall(r"^def test_", (ROOT / files[1]).read_text(), re.MULTILINE))
    assert e2e > 0 and deselected >= e2e + 1


def test_the_quick_paths_are_the_unit_level_parts() -> None:
    paths = quick_paths()
    for path in paths:
        assert (ROOT / path).exists(), path
    assert {"tests/engine", "tests/sdk", "tests/league", "tests/docs"} <= set(paths)
    assert "tests/test_architecture.py" in paths
    assert Path(__file__).relative_to(ROOT).as_posix() in paths, "this test is in the subset"
    for heavy in ("tests/integration", "tests/e2e", "tests/sandbox", "tests/web"):
        assert not any(p == heavy or p.startswith(heavy + "/") for p in paths), heavy


def test_the_whole_suite_stays_the_test_command() -> None:
    script = SCRIPT.read_text()
    # --quick is only ever the first argument, taken off before the rest goes to pytest.
    assert 'if [[ "${1:-}" == "--quick" ]]; then\n    shift\n' in script
    assert 'quick=(-m "$QUICK_MARKERS" "${QUICK_PATHS[@]}")' in script
    assert 'pytest "${quick[@]}" "$@"' in script
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith('exec "$ROOT/scripts/test" "$@"'), "CI runs the whole suite"
    assert "--quick" not in ci
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"^scripts/test +# ", quick_start, re.MULTILINE), "the test command"
    assert "scripts/test --quick" in readme
