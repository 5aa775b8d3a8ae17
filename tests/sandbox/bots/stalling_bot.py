"""Connects, then never answers a decision."""

import time

from arboretum_sdk import Bot


class StallingBot(Bot):
    def choose(self, view):
        time.sleep(3600)
