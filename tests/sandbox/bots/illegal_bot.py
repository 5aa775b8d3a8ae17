"""Connects and answers its first decision, a draw, from seat 1's discard pile, which is empty
at the start of the game: a well-formed but illegal answer."""

from arboretum import Draw
from arboretum_sdk import Bot


class IllegalBot(Bot):
    def choose(self, view):
        return Draw(1)
