"""Writes outside its tmp dir (paths in argv), then inside /tmp; reports each result."""

import os
import sys

for target in [*sys.argv[1:], "/escape.txt", "/usr/escape.txt", sys.argv[0] + ".escape"]:
    try:
        with open(target, "w") as fh:
            fh.write("escaped")
        print(f"WROTE {target}")
    except OSError as exc:
        print(f"DENIED {target} {exc.errno} {exc.strerror}")
try:
    with open(sys.argv[0], "a") as fh:
        fh.write("# tampered\n")
    print("TAMPERED")
except OSError as exc:
    print(f"CODE-READONLY {exc.errno}")
with open("/tmp/scratch.txt", "w") as fh:
    fh.write("ok")
print("TMP-OK", os.path.getsize("/tmp/scratch.txt"))
