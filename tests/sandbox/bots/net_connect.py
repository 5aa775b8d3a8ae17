"""Tries to reach a TCP listener on the host's loopback (port in argv[1])."""

import socket
import sys

port = int(sys.argv[1])
try:
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"escaped")
    print("CONNECTED")
except OSError as exc:
    print(f"CONNECT-FAILED {exc!r}")
