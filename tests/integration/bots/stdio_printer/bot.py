"""A league test bot over the line protocol (standard library only): the first legal option;
on every third request it writes to stderr the decision it takes, in the engine's text, then
a line that looks like a marker with a nonce of its own (the bridge must keep it as text)."""

import json
import sys

count = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "game_start":
        print(f"stdio child: game {msg.get('game', '?')} starts", file=sys.stderr, flush=True)
    if msg["type"] != "request":
        continue
    count += 1
    if msg["kind"] == "play":
        hand = msg["view"]["hand"]
        x, y = msg["legal_cells"][0]
        answer = {"id": msg["id"], "play": hand[0], "cell": [x, y]}
        text = f"play {hand[0]} {x},{y}"
        if msg["discard_required"]:
            answer["discard"] = hand[1]
            text += f" discard {hand[1]}"
    else:
        source = msg["legal_sources"][0]
        answer = {"id": msg["id"], "draw": source}
        text = "draw deck" if source == "deck" else f"draw pile {source}"
    if count % 3 == 0:
        print(f"stdio chose {text}", file=sys.stderr, flush=True)
        print("\x1f0123456789abcdef 1", file=sys.stderr, flush=True)
    print(json.dumps(answer), flush=True)
