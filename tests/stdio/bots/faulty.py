"""A line-protocol bot (no SDK) that misbehaves once, as told by its argument, then plays.

    python3 faulty.py MODE

It answers every request with the first legal option, except its FAULT_AT-th request (the
second), where MODE says what it does instead: ``not_json``, ``list`` (a JSON list),
``no_id``, ``wrong_id``, ``wrong_kind`` (a play for a draw), ``bad_card``, ``unknown_key``,
``overlong`` (a line of 10 000 bytes), ``illegal`` (a card it does not hold), ``out_of_turn``
(an extra line after its answer), ``silent`` (no answer: the clock runs out; it answers late,
after the next request arrives), ``crash`` (exits with status 7), ``close_stdout`` (closes its
stdout and sleeps), ``flood`` (writes 3 MiB to stderr, then answers).
"""

import json
import os
import sys
import time

MODE = sys.argv[1]
FAULT_AT = 2
requests = 0


def first_legal(msg):
    if msg["kind"] == "play":
        hand = msg["view"]["hand"]
        answer = {"id": msg["id"], "play": hand[0], "cell": msg["legal_cells"][0]}
        if msg["discard_required"]:
            answer["discard"] = hand[1]
        return answer
    return {"id": msg["id"], "draw": msg["legal_sources"][0]}


def send(text):
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


held = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "fault":
        print(f"FAULT {msg['kind']}: {msg['reason']}", file=sys.stderr, flush=True)
        continue
    if msg["type"] != "request":
        continue
    if held is not None:  # the late answer to the silent request, then this one
        send(json.dumps(held))
        held = None
    requests += 1
    answer = first_legal(msg)
    if requests != FAULT_AT or MODE == "none":
        send(json.dumps(answer))
        continue
    print(f"MISBEHAVING: {MODE} on request {msg['id']}", file=sys.stderr, flush=True)
    if MODE == "not_json":
        send("draw deck please")
    elif MODE == "list":
        send("[1, 2, 3]")
    elif MODE == "no_id":
        del answer["id"]
        send(json.dumps(answer))
    elif MODE == "wrong_id":
        answer["id"] = msg["id"] + 1000
        send(json.dumps(answer))
    elif MODE == "wrong_kind":
        send(json.dumps({"id": msg["id"], "play": "OA1", "cell": [0, 0], "discard": "OA2"}))
    elif MODE == "bad_card":
        send(json.dumps({"id": msg["id"], "draw": "the deck"}))
    elif MODE == "unknown_key":
        answer["comment"] = "SECRET-TEXT"
        send(json.dumps(answer))
    elif MODE == "overlong":
        send(json.dumps({"id": msg["id"], "draw": "deck", "pad": "x" * 10000}))
    elif MODE == "illegal":
        send(json.dumps({"id": msg["id"], "draw": 5}))
    elif MODE == "out_of_turn":
        send(json.dumps(answer))
        send(json.dumps({"id": msg["id"], "draw": "deck", "note": "SECRET-TEXT"}))
    elif MODE == "silent":
        held = answer
    elif MODE == "crash":
        sys.exit(7)
    elif MODE == "close_stdout":
        os.close(1)
        time.sleep(60)
    elif MODE == "flood":
        chunk = "E" * 65536 + "\n"
        for _ in range(48):
            sys.stderr.write(chunk)
        sys.stderr.flush()
        send(json.dumps(answer))
