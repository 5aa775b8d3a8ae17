"""Writes a file in /tmp bigger than the file size limit, 1 MiB at a time."""

written = 0
try:
    with open("/tmp/big.bin", "wb") as fh:
        for _ in range(64):
            fh.write(b"\0" * (1024 * 1024))
            fh.flush()
            written += 1
    print(f"WROTE-ALL {written}")
except OSError as exc:
    print(f"FILE-LIMIT {written} MiB {exc.errno}")
