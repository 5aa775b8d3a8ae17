"""Allocates far more memory than allowed, in 64 MiB steps."""

import sys

hoard = []
try:
    for i in range(64):
        hoard.append(bytearray(64 * 1024 * 1024))
        print(f"ALLOCATED {(i + 1) * 64} MiB", flush=True)
except MemoryError:
    print("MEMORY-ERROR", flush=True)
    sys.exit(3)
print("ALL-ALLOCATED")
