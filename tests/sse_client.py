"""A raw server-sent events client for the tests (``GET /api/v1/matches/{id}/live``)."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from typing import Any

__all__ = ["SSE"]


class SSE:
    """A raw server-sent events client on its own thread: every event, with its id and kind."""

    def __init__(
        self,
        base: str,
        path: str,
        last_event_id: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        headers = {"Accept": "text/event-stream", **(headers or {})}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        self.events: list[tuple[str, str | None, Any]] = []
        self.done = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        kind, ident, data = "message", None, []
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                text = line.decode().rstrip("\n")
                if text == "":
                    if data:
                        self.events.append((kind, ident, json.loads("\n".join(data))))
                    kind, ident, data = "message", None, []
                elif text.startswith("data: "):
                    data.append(text[6:])
                elif text.startswith("event: "):
                    kind = text[7:]
                elif text.startswith("id: "):
                    ident = text[4:]
        except Exception:  # the test closed the connection (http.client then fails in many ways)
            pass
        finally:
            self.done.set()

    def wait(self, count: int, timeout: float = 15) -> list[tuple[str, str | None, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.events) < count:
            assert time.monotonic() < deadline, f"got {len(self.events)} events: {self.events}"
            time.sleep(0.02)
        return self.events

    def steps(self) -> list[dict[str, Any]]:
        return [d["step"] for k, _i, d in self.events if k == "message" and d["type"] == "step"]

    def close(self) -> None:
        # (the response holds the socket too: shut it down, so the server sees the viewer go)
        if self.conn.sock is not None:
            with contextlib.suppress(OSError):
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.response.close()
        self.conn.close()
