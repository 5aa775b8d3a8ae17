# stdio_bot.py
"""A random bot over the line protocol, with nothing but the standard library."""

import json
import random
import sys

rng = random.Random()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello" and msg["version"] != 1:
        sys.exit(f"unknown protocol version {msg['version']}")
    elif msg["type"] == "game_start":
        rng.seed(int(msg["seed"]))
    elif msg["type"] == "fault":
        print(f"fault on {msg['id']}: {msg['reason']}", file=sys.stderr)
    elif msg["type"] == "request":
        if msg["kind"] == "play":
            hand = msg["view"]["hand"]
            card, discard = rng.sample(hand, 2)
            answer = {"id": msg["id"], "play": card, "cell": rng.choice(msg["legal_cells"])}
            if msg["discard_required"]:
                answer["discard"] = discard
        else:
            answer = {"id": msg["id"], "draw": rng.choice(msg["legal_sources"])}
        print(json.dumps(answer), flush=True)
