"""A folder bot: bot.py next to a helper module."""

from arboretum_sdk.bots.random_bot import RandomBot

from .helpers import GREETING


class FolderBot(RandomBot):
    greeting = GREETING
