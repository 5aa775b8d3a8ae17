"""The modules a worker imports before it forks (``worker.PRELOAD``) all exist: a name that no
longer imports would only log a warning at start-up, and every work horse would pay the import."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from arboretum_worker.worker import PRELOAD


@pytest.mark.parametrize("name", PRELOAD)
def test_every_preloaded_module_imports(name: str) -> None:
    assert importlib.import_module(name).__name__ == name


def test_the_rating_fit_is_preloaded() -> None:
    # The last match of a league and every ladder tick fit the ratings: without the fit loaded
    # before the fork, each of those work horses imports numpy and scipy itself.
    assert "arboretum_worker.fit" in PRELOAD


def test_preloaded_objects_are_frozen_out_of_the_collector() -> None:
    # Each collection of the worker, and of each work horse it forks, would otherwise walk the
    # preloaded modules' objects (about 100,000 with numpy and scipy), and the horse's would
    # copy every page it touched.
    script = (
        "import gc\n"
        "from arboretum_worker.worker import preload\n"
        "assert gc.get_freeze_count() == 0\n"
        "preload()\n"
        "print(gc.get_freeze_count(), len(gc.get_objects()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    frozen, collected = (int(n) for n in done.stdout.split())
    assert frozen > 50_000
    assert collected < frozen / 10
