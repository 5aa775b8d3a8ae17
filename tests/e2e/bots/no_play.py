"""Says how to draw and not how to play: ``arena play`` must refuse it, naming choose_play."""

from __future__ import annotations

from arboretum import Draw, SeatView
from arboretum_sdk import Bot


class NoPlay(Bot):
    def choose_draw(self, view: SeatView) -> Draw:
        return Draw()
