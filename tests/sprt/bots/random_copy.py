"""The built-in random bot under another name: a second version for tests of ``arena sprt``."""

from arboretum_sdk.bots.random_bot import RandomBot


class RandomCopy(RandomBot):
    pass
