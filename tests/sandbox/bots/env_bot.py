"""A submitted bot that prints one known line, then its whole environment, when it is imported
(before the SDK connects), and plays at random."""

import json
import os

from arboretum_sdk.bots.random_bot import RandomBot

print("env_bot: my first line", flush=True)
print("ENV " + json.dumps(dict(os.environ)), flush=True)


class EnvBot(RandomBot):
    pass
