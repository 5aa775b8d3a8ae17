"""Says how to draw but not how to play: refused when loaded, naming the missing method."""

from arboretum import Draw, SeatView
from arboretum_sdk import Bot


class NoPlayBot(Bot):
    def choose_draw(self, view: SeatView) -> Draw:
        return Draw()
