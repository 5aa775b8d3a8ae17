"""Writes 4 MiB to stdout and 4 MiB to stderr."""

import sys

line = "x" * 1023 + "\n"
for _ in range(4096):
    sys.stdout.write(line)
    sys.stderr.write(line)
print("SPAM-DONE")
