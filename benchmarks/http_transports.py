"""The HTTP clients kschedfw's transport is measured against, each behind its ``request`` (one
request, answered with status, body and Retry-After), so the benchmarks swap only that: watches
stay on kschedfw's transport. Used by kube_request_cpu.py (in-process) and by
kube_apiserver_throughput.py ``--transports`` (copied into a throwaway tree of kschedfw).

pycurl verifies the server with a CA file rather than an ``ssl.SSLContext``: it reads the path
from ``KSCHEDFW_BENCH_CAFILE``.
"""

from __future__ import annotations

import http.client
import io
import os
from typing import Any

import urllib3

from kschedfw.cluster.kube.transport import Response, Transport

__all__ = ["HttpClientTransport", "Urllib3Transport", "PycurlTransport", "PycurlHttp2Transport", "BY_NAME"]


def _retry_after(value: str | None) -> float | None:
    return float(value) if value and value.strip().isdigit() else None


class HttpClientTransport(Transport):
    """The standard library: a kept-alive ``http.client`` connection per thread."""

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> Response:
        conn: http.client.HTTPConnection | None = getattr(self._local, "http", None)
        if conn is None:
            if self.ssl_context is not None:
                conn = http.client.HTTPSConnection(self.host, self.port, context=self.ssl_context,
                                                   timeout=self.timeout)
            else:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self._local.http = conn
        try:
            conn.request(method, url, body=body, headers=headers)
            answer = conn.getresponse()
            data = answer.read()
        except BaseException:
            conn.close()
            self._local.http = None
            raise
        return Response(answer.status, data, _retry_after(answer.getheader("Retry-After")))


class Urllib3Transport(Transport):
    """urllib3's connection pool (as kschedfw's client used before its own transport)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.ssl_context is not None:
            self._pool: urllib3.HTTPConnectionPool = urllib3.HTTPSConnectionPool(
                self.host, self.port, ssl_context=self.ssl_context, maxsize=64, block=False, retries=False)
        else:
            self._pool = urllib3.HTTPConnectionPool(self.host, self.port, maxsize=64, block=False, retries=False)

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> Response:
        answer = self._pool.urlopen(method, url, body=body, headers=headers, preload_content=True,
                                    timeout=self.timeout, redirect=False, retries=False)
        return Response(answer.status, answer.data, _retry_after(answer.headers.get("Retry-After")))

    def close(self) -> None:
        self._pool.close()
        super().close()


class PycurlTransport(Transport):
    """libcurl through pycurl: a reused easy handle (and so its connection) per thread."""

    http_version = "CURL_HTTP_VERSION_1_1"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._base = ("https" if self.ssl_context is not None else "http") + f"://{self.host}:{self.port}"

    def _handle(self) -> Any:
        import pycurl
        curl = getattr(self._local, "curl", None)
        if curl is None:
            curl = pycurl.Curl()
            curl.setopt(pycurl.NOSIGNAL, 1)
            curl.setopt(pycurl.TCP_NODELAY, 1)
            curl.setopt(pycurl.TIMEOUT_MS, int(self.timeout * 1000))
            curl.setopt(pycurl.HTTP_VERSION, getattr(pycurl, self.http_version))
            if os.environ.get("KSCHEDFW_BENCH_CAFILE"):
                curl.setopt(pycurl.CAINFO, os.environ["KSCHEDFW_BENCH_CAFILE"])
            self._local.curl = curl
        return curl

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> Response:
        import pycurl
        curl = self._handle()
        out = io.BytesIO()
        header_lines: list[bytes] = []
        curl.setopt(pycurl.URL, self._base + url)
        if body is not None:
            curl.setopt(pycurl.POSTFIELDS, body)
        else:
            curl.setopt(pycurl.HTTPGET, 1)
        curl.setopt(pycurl.CUSTOMREQUEST, method)
        # "Expect:" (empty): no 100-continue round trip before a body over 1 KiB
        curl.setopt(pycurl.HTTPHEADER, [f"{name}: {value}" for name, value in headers.items()] + ["Expect:"])
        curl.setopt(pycurl.WRITEDATA, out)
        curl.setopt(pycurl.HEADERFUNCTION, header_lines.append)
        try:
            curl.perform()
        except pycurl.error as exc:
            raise OSError(f"{method} {url}: {exc}") from None
        status = curl.getinfo(pycurl.RESPONSE_CODE)
        retry_after = None
        if status == 429 or status >= 500:
            for line in header_lines:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"retry-after":
                    retry_after = _retry_after(value.decode("latin-1"))
        return Response(status, out.getvalue(), retry_after)


class PycurlHttp2Transport(PycurlTransport):
    """The same, HTTP/2 negotiated over TLS (ALPN), as libcurl does by default."""

    http_version = "CURL_HTTP_VERSION_2TLS"


BY_NAME: dict[str, type[Transport]] = {
    "kschedfw": Transport, "http.client": HttpClientTransport, "urllib3": Urllib3Transport,
    "pycurl": PycurlTransport, "pycurl-h2": PycurlHttp2Transport,
}
