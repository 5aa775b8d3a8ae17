"""Arboretum Arena league worker: rq jobs that schedule and play league matches."""

__all__: list[str] = []
