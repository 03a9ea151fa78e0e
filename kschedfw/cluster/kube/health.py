"""/healthz, /livez, /readyz and /metrics over plain HTTP, loopback by default (upstream serves
them on its secure port; put a TLS proxy or a NetworkPolicy in front if exposing them).

Each endpoint runs its named checks as k8s.io/apiserver's healthz handler does: ``ok`` when all
pass (``[+]name ok`` lines with ``?verbose``), else 500 with every check's line, the failed ones
as ``[-]name failed: reason withheld`` (the reason goes to the log only: the endpoint is public);
``?exclude=name`` skips a check and ``/<endpoint>/<name>`` runs one.

A check is a callable returning None when healthy, else the reason. Checks and metrics are read
at request time from the server's threads, so they must only read values the scheduler thread
publishes (no walking its live structures)."""

from __future__ import annotations

import logging
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Mapping

__all__ = ["Check", "HealthServer", "parse_address", "ping"]

log = logging.getLogger(__name__)

Check = Callable[[], "str | None"]


def ping() -> str | None:
    """Upstream's PingHealthz: the server answers."""
    return None


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``:PORT`` means 127.0.0.1); ValueError with a clear message otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    return (host.strip("[]") or "127.0.0.1"), int(port)


class HealthServer:
    """``endpoints`` maps an endpoint name (``healthz``, ``livez``, ``readyz``) to its checks in
    report order."""

    def __init__(self, address: tuple[str, int], endpoints: Mapping[str, Mapping[str, Check]],
                 metrics: Callable[[], str]) -> None:
        self.endpoints = endpoints
        self.metrics = metrics
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                url = urllib.parse.urlsplit(self.path)
                query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
                endpoint, _, check = url.path.strip("/").partition("/")
                checks = server.endpoints.get(endpoint)
                if url.path == "/metrics":
                    server._reply(self, 200, server.metrics(), "text/plain; version=0.0.4; charset=utf-8")
                elif checks is not None and not check:
                    server._reply(self, *server._run(endpoint, checks, query))
                elif checks is not None and check in checks:
                    reason = checks[check]()
                    server._reply(self, *((200, "ok") if reason is None else
                                          (500, f"internal server error: {reason}\n")))
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

    @staticmethod
    def _run(endpoint: str, checks: Mapping[str, Check], query: dict[str, list[str]]) -> tuple[int, str]:
        excluded = {name for value in query.get("exclude", []) for name in value.split(",") if name}
        lines: list[str] = []
        failed: list[str] = []
        for name, check in checks.items():
            if name in excluded:
                lines.append(f"[+]{name} excluded: ok\n")
                continue
            reason = check()
            if reason is None:
                lines.append(f"[+]{name} ok\n")
            else:
                lines.append(f"[-]{name} failed: reason withheld\n")
                failed.append(f"[-]{name} failed: {reason}")
        unknown = sorted(excluded - set(checks))
        if unknown:
            lines.append("warn: some health checks cannot be excluded: no matches for "
                         + ",".join(f'"{n}"' for n in unknown) + "\n")
        if failed:
            log.debug("%s check failed: %s", endpoint, "; ".join(failed))
            return 500, "".join(lines) + f"{endpoint} check failed\n"
        if "verbose" not in query:
            return 200, "ok"
        return 200, "".join(lines) + f"{endpoint} check passed\n"

    @staticmethod
    def _reply(handler: BaseHTTPRequestHandler, status: int, body: str,
               content_type: str = "text/plain; charset=utf-8") -> None:
        data = body.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("X-Content-Type-Options", "nosniff")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
