"""Scans its own memory for seat tokens of the form ``zygote-secret-<32 hex digits>`` and prints
the distinct ones it finds: MEMSCAN <json list>. Then sleeps when given ``--stay``."""

import json
import re
import sys
import time

PATTERN = re.compile(rb"zygote-secret-[0-9a-f]{32}")
found = set()
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", buffering=0) as mem:
    for line in maps:
        fields = line.split()
        if not fields[1].startswith("r") or (len(fields) > 5 and fields[5] == "[vvar]"):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except (OSError, ValueError, OverflowError):
            continue
        found.update(m.decode() for m in PATTERN.findall(data))
print("MEMSCAN " + json.dumps(sorted(found)), flush=True)
if "--stay" in sys.argv:
    time.sleep(300)
