"""Talks to the referee socket mounted in the sandbox and echoes the reply."""

import socket

with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
    s.connect("/run/arena/referee.sock")
    s.sendall(b"hello referee\n")
    print("REPLY " + s.recv(100).decode().strip())
