"""The HTTP(S) server: one thread per connection, the TLS handshake done in that thread (a slow
or silent client never holds up the others), each GET answered by ``respond``."""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from kschedfw.serving.endpoints import Reply
from kschedfw.serving.tls import ServingTLS

__all__ = ["Respond", "Server", "parse_address"]

log = logging.getLogger(__name__)

#: (method, target, Authorization header, the client's verified certificate in DER) -> reply
Respond = Callable[[str, str, "str | None", "bytes | None"], Reply]
HANDSHAKE_TIMEOUT = 10.0  # Go's http.Server reads a request head within a bound too
IDLE_TIMEOUT = 90.0


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` means 127.0.0.1); ValueError with a clear message otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    tls: ServingTLS | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        if self.tls is None:
            super().finish_request(request, client_address)
            return
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            wrapped = self.tls.context().wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            log.debug("TLS handshake error from %s: %s", client_address, exc)
            return
        try:
            super().finish_request(wrapped, client_address)
        finally:
            try:
                wrapped.close()
            except OSError:
                pass


class Server:
    """HTTPS when ``tls`` is given, else plain HTTP."""

    def __init__(self, address: tuple[str, int], respond: Respond, tls: ServingTLS | None = None,
                 name: str = "serving") -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = IDLE_TIMEOUT  # a kept-alive connection left silent gives its thread back

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                self._answer("GET")

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer("HEAD")

            def _answer(self, method: str) -> None:
                peer = None
                if isinstance(self.connection, ssl.SSLSocket):
                    peer = self.connection.getpeercert(binary_form=True)
                try:
                    reply = respond(method, self.path, self.headers.get("Authorization"), peer)
                except Exception:  # never a 200, never a dropped connection
                    log.exception("serving %s %s failed", method, self.path)
                    reply = Reply(500, "Internal Server Error\n")
                data = reply.body.encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("X-Content-Type-Options", "nosniff")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if method != "HEAD":
                    self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                pass

        server_class = type("_Server", (_HTTPServer,), {
            "address_family": socket.AF_INET6 if ":" in address[0] else socket.AF_INET, "tls": tls})
        self._httpd: _HTTPServer = server_class(address, Handler)
        host, port = self._httpd.server_address[:2]
        self.address: tuple[str, int] = (host.decode() if isinstance(host, bytes) else str(host), int(port))
        self.scheme = "https" if tls is not None else "http"
        #: called by :meth:`stop` (the review clients' connections)
        self.on_stop: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=name, daemon=True)

    @property
    def url(self) -> str:
        host = f"[{self.address[0]}]" if ":" in self.address[0] else self.address[0]
        return f"{self.scheme}://{host}:{self.address[1]}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        for close in self.on_stop:
            close()
