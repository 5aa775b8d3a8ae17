"""A bounded fork bomb: up to 200 sleeping children; reports how many it got."""

import os
import time

born = 0
error = None
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as exc:
        error = exc
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    born += 1
print(f"FORKED {born} ERROR {error!r}", flush=True)
time.sleep(60)
