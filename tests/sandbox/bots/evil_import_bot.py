"""A submitted 'bot' whose import tries to reach the network and write outside its tmp dir."""

import os
import socket

results = []
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
    results.append("net-ok")
except OSError:
    results.append("net-denied")
for path in ("/escape.txt", "/bot/escape.txt"):
    try:
        with open(path, "w") as fh:
            fh.write("x")
        results.append("write-ok")
    except OSError:
        results.append("write-denied")
print("EVIL " + " ".join(results) + " " + str(sorted(k for k in os.environ if "REDIS" in k)))
raise SystemExit("no bot here")
