"""A well-formed submitted bot file: one Bot subclass defined here (it plays at random)."""

from arboretum_sdk.bots.random_bot import RandomBot


class GoodBot(RandomBot):
    pass
