"""docs/bot-runtime.md's table of limits states the limits the code sets (its defaults)."""

from __future__ import annotations

import re
from pathlib import Path

from arboretum_worker import registry
from arboretum_worker.sandbox import DEFAULT_LIMITS, MiB
from arboretum_worker.settings import WorkerSettings, seat_thinking_s

DOC = Path(__file__).resolve().parents[2] / "docs" / "bot-runtime.md"
KiB = 1024


def _rows() -> dict[str, str]:
    text = DOC.read_text()
    table = text[text.index("| what | default | how | when it is hit |") :]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = " | ".join(cells[1:])
    return rows


def _size(text: str) -> int:
    """The first "N KiB", "N MiB" or "N GiB" in ``text``, in bytes."""
    found = re.search(r"(\d+(?:\.\d+)?) (KiB|MiB|GiB)", text)
    assert found, text
    unit = {"KiB": KiB, "MiB": MiB, "GiB": 1024 * MiB}[found.group(2)]
    return int(float(found.group(1)) * unit)


def test_the_limits_table_states_the_defaults() -> None:
    rows = _rows()
    assert _size(rows["memory"]) == DEFAULT_LIMITS.memory_bytes
    address = re.search(r"`RLIMIT_AS` = ([\d.]+ GiB)", rows["memory"])
    assert address and _size(address.group(1)) == DEFAULT_LIMITS.address_space_bytes
    assert rows["processes / threads"].startswith(f"{DEFAULT_LIMITS.processes} |")
    assert rows["open files"].startswith(f"{DEFAULT_LIMITS.open_files} |")
    assert _size(rows["size of one file"]) == DEFAULT_LIMITS.file_size_bytes
    assert _size(rows["`/tmp`"]) == DEFAULT_LIMITS.tmp_size_bytes
    # what a league match keeps of a bot's output, and the truncation line it ends with
    output = rows["output (stdout + stderr)"]
    assert _size(output) == WorkerSettings().output_cap
    assert "[arena: output truncated at N bytes, M more bytes dropped]" in output
    # code: what the registry refuses, in its own words
    code = rows["code size"]
    assert _size(code) == registry.MAX_TOTAL_BYTES
    assert f"at most {registry.MAX_FILES} files" in code
    assert f"a bot is at most {registry.MAX_TOTAL_BYTES} bytes in all" in code


def test_the_cpu_example_is_what_the_code_computes() -> None:
    row = _rows()["CPU time"]
    # "2 players, 1 s per decision, 10 s bank, one game: ... = 61 s, a limit of 107 s"
    thinking = seat_thinking_s(2, 1, 1000, 10_000)
    assert f"= {thinking:.0f} s" in row
    limit = DEFAULT_LIMITS.for_match(thinking).cpu_seconds
    assert f"a limit of {limit} s" in row
    assert f"{DEFAULT_LIMITS.cpu_seconds} s outside league matches" in row
