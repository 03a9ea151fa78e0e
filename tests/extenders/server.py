"""A real scheduler extender for the tests: stdlib ``http.server`` on 127.0.0.1, in a thread.

Each verb (the last path segment) has a handler that receives the decoded JSON request and
returns the JSON answer, or a :class:`Reply` for another status code, a raw body or a delay,
or a :class:`Trickle` for a body that arrives byte by byte.
Every request is recorded as ``(verb, body)``. Optional TLS (an ``ssl.SSLContext``).
"""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import attrs


@attrs.frozen
class Reply:
    """An answer other than "200 with this JSON"."""

    status: int = 200
    body: Any = None          # bytes are sent as they are, anything else as JSON
    delay: float = 0.0        # seconds to wait before answering (released early on stop)


Handler = Callable[[dict], Any]


class ExtenderServer:
    def __init__(self, handlers: dict[str, Handler], *, tls: ssl.SSLContext | None = None) -> None:
        self.handlers = handlers
        self.requests: list[tuple[str, dict]] = []
        self.headers: list[dict[str, str]] = []
        self._release = threading.Event()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                verb = self.path.rstrip("/").rsplit("/", 1)[-1]
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                outer.requests.append((verb, body))
                outer.headers.append(dict(self.headers))
                handler = outer.handlers.get(verb)
                reply = Reply(404, b"") if handler is None else handler(body)
                if isinstance(reply, Trickle):
                    self._trickle(reply)
                    return
                if not isinstance(reply, Reply):
                    reply = Reply(200, reply)
                if reply.delay:
                    outer._release.wait(reply.delay)
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def _trickle(self, reply: "Trickle") -> None:
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body[:reply.prefix])
                    self.wfile.flush()
                    for i in range(reply.prefix, len(reply.body)):
                        if outer._release.wait(reply.pause):
                            return
                        self.wfile.write(reply.body[i:i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/scheduler"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> "ExtenderServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._release.is_set():
            return
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def verbs(self) -> list[str]:
        return [verb for verb, _ in self.requests]


class Trickle:
    """A 200 answer whose body arrives slowly: ``prefix`` at once, then one byte per ``pause``."""

    def __init__(self, body: bytes, *, prefix: int = 1, pause: float = 0.2) -> None:
        self.body, self.prefix, self.pause = body, prefix, pause
