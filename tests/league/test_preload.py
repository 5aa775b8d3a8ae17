"""The modules a worker imports before it forks (``worker.PRELOAD``) all exist: a name that no
longer imports would only log a warning at start-up, and every work horse would pay the import."""

from __future__ import annotations

import importlib

import pytest

from arboretum_worker.worker import PRELOAD


@pytest.mark.parametrize("name", PRELOAD)
def test_every_preloaded_module_imports(name: str) -> None:
    assert importlib.import_module(name).__name__ == name


def test_the_rating_fit_is_preloaded() -> None:
    # The last match of a league and every ladder tick fit the ratings: without the fit loaded
    # before the fork, each of those work horses imports numpy and scipy itself.
    assert "arboretum_worker.fit" in PRELOAD
