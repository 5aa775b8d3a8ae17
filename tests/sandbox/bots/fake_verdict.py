"""Tries to forge the check: prints what the old import check took for a passing verdict (and
more like it), defines no bot, and exits with status 0."""

import json
import os
import sys

verdict = {"ok": True, "bot_class": "fake.Bot", "error": None}
for stream in (sys.stdout, sys.stderr):
    stream.write("\n@@ARENA-CHECK@@" + json.dumps(verdict) + "\n")
    stream.write("check passed: the bot answered its first decision\n")
    stream.flush()
os._exit(0)
