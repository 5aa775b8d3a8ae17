"""A line-protocol bot (no SDK) that tries to take its seat token from its bridge, then plays.

    python3 memory_probe.py

At its start it does what any process of the bridge's user could do to the bridge, its parent,
which holds the seat token: ``ptrace(PTRACE_ATTACH)``, and read ``/proc/PPID/cmdline`` and
``/proc/PPID/environ``, then ``/proc/PPID/maps`` and every readable mapping of
``/proc/PPID/mem``, searching all it read for the token. The token it looks for is given to it
reversed, in ``PROBE_TOKEN_REVERSED`` (the bridge passes its environment on; the reversed text
is no copy of the token); without it, it looks for ``ARENA_TOKEN=`` followed by a value.
It reports on stderr, one line each, and never prints what it read:

    PROBE attach: refused (<error>) | allowed
    PROBE cmdline: refused (<error>) | read N bytes
    PROBE environ: refused (<error>) | read N bytes
    PROBE mem: refused (<error>) | read N bytes
    PROBE token: found | not found

Then it answers every request with the first legal option.
"""

import ctypes
import json
import os
import re
import sys

PTRACE_ATTACH, PTRACE_DETACH, WALL = 16, 17, 0x40000000
REGION_MAX = 256 * 1024 * 1024  # the bridge's own memory is far less; skip huge reservations

parent = os.getppid()
given = os.environ.get("PROBE_TOKEN_REVERSED")
pattern = re.compile(re.escape(given[::-1].encode()) if given else rb"ARENA_TOKEN=[^\0]")
found = False


def report(text):
    print(f"PROBE {text}", file=sys.stderr, flush=True)


def refused(exc):
    return f"refused ({type(exc).__name__}: {exc.strerror or exc})"


libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(PTRACE_ATTACH, parent, None, None) == 0:
    os.waitpid(parent, WALL)  # the parent stops; let it go at once
    libc.ptrace(PTRACE_DETACH, parent, None, None)
    report("attach: allowed")
else:
    report(f"attach: refused ({os.strerror(ctypes.get_errno())})")

for part in ("cmdline", "environ"):
    try:
        with open(f"/proc/{parent}/{part}", "rb") as fh:
            data = fh.read()
        report(f"{part}: read {len(data)} bytes")
        found = found or pattern.search(data) is not None
    except OSError as exc:
        report(f"{part}: {refused(exc)}")

total = 0
try:
    with open(f"/proc/{parent}/maps") as maps, open(f"/proc/{parent}/mem", "rb", 0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if not fields[1].startswith("r") or end - start > REGION_MAX:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            total += len(data)
            found = found or pattern.search(data) is not None
    report(f"mem: read {total} bytes")
except OSError as exc:
    report(f"mem: {refused(exc)}")
report("token: found" if found else "token: not found")

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "request":
        continue
    if msg["kind"] == "play":
        hand = msg["view"]["hand"]
        answer = {"id": msg["id"], "play": hand[0], "cell": msg["legal_cells"][0]}
        if msg["discard_required"]:
            answer["discard"] = hand[1]
    else:
        answer = {"id": msg["id"], "draw": msg["legal_sources"][0]}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
