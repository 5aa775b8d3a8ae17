"""The code in docs/engine.md runs as written, block after block, against the real engine."""

from __future__ import annotations

import random
import re
from pathlib import Path

from arboretum import GameState

DOC = Path(__file__).resolve().parents[2] / "docs" / "engine.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_every_python_block_of_the_engine_guide_runs() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    # The guide's search example is a function: call it on a real position.
    rollout_value = namespace["rollout_value"]
    state = GameState.new(players=2, seed=3)
    view = state.view(0)
    decision = view.legal_decisions()[0]
    value = rollout_value(view, decision, random.Random(2), n=5)  # type: ignore[operator]
    assert isinstance(value, float)
