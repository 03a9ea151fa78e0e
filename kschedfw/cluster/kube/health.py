"""/healthz, /livez, /readyz and /metrics over plain HTTP, loopback by default (upstream serves
them on its secure port; put a TLS proxy or a NetworkPolicy in front if exposing them).

Checks and metrics are callables read at request time from the server's threads, so they must
only read values the scheduler thread publishes (no walking its live structures)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

__all__ = ["HealthServer", "parse_address"]


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` means 127.0.0.1); ValueError with a clear message otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


class HealthServer:
    def __init__(self, address: tuple[str, int], checks: dict[str, Callable[[], bool]],
                 metrics: Callable[[], str]) -> None:
        self.checks = checks
        self.metrics = metrics
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = self.path.split("?", 1)[0]
                if path in ("/healthz", "/livez"):
                    server._reply(self, *server._check(["ping"]))
                elif path == "/readyz":
                    server._reply(self, *server._check(list(server.checks)))
                elif path == "/metrics":
                    server._reply(self, 200, server.metrics(), "text/plain; version=0.0.4")
                else:
                    server._reply(self, 404, "404 page not found\n")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(address, Handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self.address: tuple[str, int] = (host.decode() if isinstance(host, bytes) else str(host), int(port))
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="health", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _check(self, names: list[str]) -> tuple[int, str]:
        failed = [n for n in names if n != "ping" and not self.checks[n]()]
        if failed:
            return 500, "".join(f"[-]{n} failed\n" for n in failed) + "healthz check failed\n"
        return 200, "ok"

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, body: str, content_type: str = "text/plain") -> None:
        data = body.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
