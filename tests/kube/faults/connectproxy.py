"""A loopback HTTP CONNECT proxy for tests: it tunnels to the host and port a client asks for,
after mapping host names through ``hosts`` (so a name nothing else resolves is reachable only
through it), and records what was asked. It listens on 127.0.0.1 and connects only to loopback
addresses.

    with ConnectProxy(hosts={"apiserver.test": "127.0.0.1"}) as proxy:
        ...  # HTTPS_PROXY=proxy.url; proxy.requests lists "apiserver.test:6443", ...
"""

from __future__ import annotations

import ipaddress
import socket
import socketserver
import threading
from typing import Any, Mapping

__all__ = ["ConnectProxy"]


class _Handler(socketserver.StreamRequestHandler):
    server: "_Server"

    def handle(self) -> None:
        request_line = self.rfile.readline(65536).decode("latin-1")
        headers = []
        while (line := self.rfile.readline(65536)) not in (b"\r\n", b"\n", b""):
            headers.append(line.decode("latin-1").strip())
        method, _, rest = request_line.partition(" ")
        authority = rest.split(" ", 1)[0]
        self.server.owner.record(authority, headers)
        host, _, port = authority.rpartition(":")
        address = self.server.owner.hosts.get(host.strip("[]"), host.strip("[]"))
        if method != "CONNECT" or not port.isdigit() or not _loopback(address):
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        try:
            upstream = socket.create_connection((address, int(port)), timeout=10)
        except OSError:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
            return
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        with upstream:
            pump = threading.Thread(target=_copy, args=(upstream, self.connection), daemon=True)
            pump.start()
            _copy(self.connection, upstream)
            pump.join(10)


def _loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        try:
            target.shutdown(socket.SHUT_WR)
        except OSError:
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: "ConnectProxy"


class ConnectProxy:
    def __init__(self, hosts: Mapping[str, str] | None = None) -> None:
        self.hosts = dict(hosts or {})
        #: the authority of each CONNECT asked for, in order, and each request's headers
        self.requests: list[str] = []
        self.headers: list[list[str]] = []
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def record(self, authority: str, headers: list[str]) -> None:
        with self._lock:
            self.requests.append(authority)
            self.headers.append(headers)

    def __enter__(self) -> "ConnectProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
