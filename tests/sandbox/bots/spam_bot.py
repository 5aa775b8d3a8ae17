"""A working bot that prints 3 MiB when it is imported."""

import sys

from arboretum_sdk.bots.random_bot import RandomBot

line = "spam " * 200 + "\n"
for _ in range(3 * 1024 * 1024 // len(line)):
    sys.stdout.write(line)
sys.stdout.flush()


class SpamBot(RandomBot):
    pass
