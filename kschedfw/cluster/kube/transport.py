"""One-shot requests (binds, status patches, events, leases, lists) as plain HTTP/1.1 over a
kept-alive (TLS) socket per thread.

Measured against the same v1.36 server (benchmarks/kube_request_cpu.py, CPU per event POST):
urllib3's pool ~600 us, ``http.client`` ~380 us, this ~180 us; unthrottled, binds and events are
thousands of requests a minute. The requests are the client's own (a method, a path it built, a
few headers, a JSON body), so only what the API server answers needs reading: a status line,
headers, and a body by Content-Length, chunked, or up to the close. A watch is the same GET on
a connection of its own, its chunked body read line by line as it comes, with a read timeout.

Through an HTTP proxy (:mod:`.proxy` decides which, as client-go does), an https server is reached
through a CONNECT tunnel opened before the TLS handshake, an http one with absolute-form requests
to the proxy, as Go's transport does.

A kept-alive connection the server closed while idle is noticed before the request is sent (its
socket polls readable) and a fresh one is opened, as urllib3 does; a request is never sent twice.
Transport faults raise OSError or urllib3's ProtocolError, which the callers already handle.
"""

from __future__ import annotations

import select
import socket
import ssl
import threading
from typing import Any, BinaryIO, Callable, Iterator, NamedTuple

import urllib3.exceptions

from kschedfw.cluster.kube.proxy import Proxy

__all__ = ["NotConnected", "Response", "Transport", "StreamBody"]

_MAX_LINE = 65536
_NO_BODY = (204, 304)


class NotConnected(ConnectionError):
    """No connection could be opened (refused, unreachable, TLS handshake failed): nothing of
    the request was sent."""


class Response(NamedTuple):
    status: int
    body: bytes
    #: the Retry-After header in seconds (429 and 5xx answers may carry it), else None
    retry_after: float | None = None


class _Connection:
    __slots__ = ("sock", "reader")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader: BinaryIO = sock.makefile("rb")

    def close(self) -> None:
        for closeable in (self.reader, self.sock):
            try:
                closeable.close()
            except OSError:
                pass


class Transport:
    """Thread-safe: each thread keeps its own connection (bind workers, the event writer and the
    scheduler's thread each send one request at a time)."""

    def __init__(self, host: str, port: int, *, ssl_context: ssl.SSLContext | None, https: bool,
                 timeout: float, proxy: Proxy | None = None) -> None:
        self.host = host
        self.port = port
        self.ssl_context = (ssl_context or ssl.create_default_context()) if https else None
        self.timeout = timeout
        self.proxy = proxy
        self._host_header = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        # plain http through a proxy: the request line names the whole URL, the proxy's credentials ride along
        forwarded = proxy is not None and not https
        self._target_prefix = f"http://{self._host_header}" if forwarded else ""
        self._proxy_headers = (f"Proxy-Authorization: {proxy.authorization}\r\n"
                               if forwarded and proxy is not None and proxy.authorization else "")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[_Connection] = []  # for close()

    # ------------------------------------------------------------------ connections
    def _open(self) -> _Connection:
        proxy = self.proxy
        address = (self.host, self.port) if proxy is None else (proxy.host, proxy.port)
        sock = socket.create_connection(address, timeout=self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if proxy is not None and self.ssl_context is not None:
                _tunnel(sock, self._host_header, proxy)
            if self.ssl_context is not None:
                sock = self.ssl_context.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise
        return _Connection(sock)

    def _connect(self) -> _Connection:
        try:
            conn = self._open()
        except OSError as exc:
            via = f" through proxy {self.proxy}" if self.proxy is not None else ""
            raise NotConnected(f"cannot connect to {self._host_header}{via}: {exc}") from exc
        with self._lock:
            self._all.append(conn)
        self._local.conn = conn
        return conn

    def _connection(self) -> _Connection:
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            return self._connect()
        if _dropped(conn.sock):
            self._discard(conn)
            return self._connect()
        return conn

    def _discard(self, conn: _Connection) -> None:
        conn.close()
        with self._lock:
            if conn in self._all:
                self._all.remove(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None

    def close(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()

    # ------------------------------------------------------------------ a stream (watch)
    def stream(self, url: str, headers: dict[str, str], read_timeout: float) -> tuple[int, "StreamBody"]:
        """A GET on a connection of its own whose body is read as it comes: its status and an
        iterator over the body's lines (the whole body when the status is not 200). A read that
        waits ``read_timeout`` seconds raises urllib3's ReadTimeoutError; a body cut short,
        urllib3's ProtocolError. The connection is closed when the iterator ends or is closed."""
        conn = self._open()
        try:
            conn.sock.sendall(self._message("GET", url, None, headers))
            status, length, chunked, _, _ = _read_head(conn.reader)
            conn.sock.settimeout(read_timeout)
        except ValueError as exc:
            conn.close()
            raise urllib3.exceptions.ProtocolError(f"GET {url}: bad response: {exc}") from None
        except BaseException:
            conn.close()
            raise
        return status, StreamBody(conn, _lines(conn, url, length, chunked))

    # ------------------------------------------------------------------ one request
    def _message(self, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> bytes:
        head = f"{method} {self._target_prefix}{url} HTTP/1.1\r\nHost: {self._host_header}\r\n{self._proxy_headers}"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        if body is not None or method in ("POST", "PUT", "PATCH"):
            head += f"Content-Length: {len(body or b'')}\r\n"
        return head.encode("latin-1") + b"\r\n" + (body or b"")

    def request(self, method: str, url: str, body: bytes | None, headers: dict[str, str],
                before_send: Callable[[], None] | None = None) -> Response:
        """Send one request (``url``: the path and query); its status, body and Retry-After.
        ``before_send`` runs with the connection ready, as the last step before the bytes go out
        (the leader-election fence: reconnecting polls a socket and lets other threads run, and
        a process paused there must not resume into a write its lease no longer covers)."""
        message = self._message(method, url, body, headers)
        conn = self._connection()
        if before_send is not None:
            before_send()
        try:
            conn.sock.sendall(message)
            response, keep = _read_response(conn.reader, method)
        except ValueError as exc:  # a malformed answer
            self._discard(conn)
            raise urllib3.exceptions.ProtocolError(f"{method} {url}: bad response: {exc}") from None
        except BaseException:
            self._discard(conn)
            raise
        if not keep:
            self._discard(conn)
        return response


def _tunnel(sock: socket.socket, authority: str, proxy: Proxy) -> None:
    """Ask the proxy for a tunnel to ``authority``; OSError when it refuses. Its answer is read
    a byte at a time so that nothing the server sends later is taken into a buffer."""
    auth = f"Proxy-Authorization: {proxy.authorization}\r\n" if proxy.authorization else ""
    sock.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n{auth}\r\n".encode("latin-1"))
    raw = sock.makefile("rb", buffering=0)
    try:
        status_line = raw.readline(_MAX_LINE)
        while raw.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
            pass
    finally:
        raw.close()
    version, _, rest = status_line.partition(b" ")
    if not version.startswith(b"HTTP/") or not rest[:1] == b"2":
        answer = status_line.strip().decode("latin-1", "replace")[:120] or "no answer"
        raise OSError(f"proxy {proxy} refused CONNECT {authority}: {answer}")


def _read_response(reader: BinaryIO, method: str) -> tuple[Response, bool]:
    """The answer, and whether the connection can be reused."""
    status, length, chunked, keep, retry_after = _read_head(reader)
    if status in _NO_BODY or method == "HEAD":
        body = b""
    elif chunked:
        body = b"".join(_chunks(reader))
    elif length is not None:
        body = _read_exactly(reader, length)
    else:
        body, keep = reader.read(), False  # delimited by the close
    return Response(status, body, retry_after), keep


def _read_exactly(reader: BinaryIO, length: int) -> bytes:
    data = reader.read(length)
    if len(data) != length:
        raise urllib3.exceptions.ProtocolError(f"body ended after {len(data)} of {length} bytes")
    return data


def _read_head(reader: BinaryIO) -> tuple[int, int | None, bool, bool, float | None]:
    """The status line and headers: (status, Content-Length, chunked, keep-alive, Retry-After)."""
    while True:
        line = reader.readline(_MAX_LINE)
        if not line:
            raise urllib3.exceptions.ProtocolError("the server closed the connection without answering")
        version, _, rest = line.partition(b" ")
        if not version.startswith(b"HTTP/"):
            raise ValueError(f"status line {line[:80]!r}")
        status = int(rest[:3])
        length: int | None = None
        chunked = False
        retry_after: float | None = None
        keep = version != b"HTTP/1.0"
        while True:
            header = reader.readline(_MAX_LINE)
            if header in (b"\r\n", b"\n"):
                break
            if not header:
                raise urllib3.exceptions.ProtocolError("the connection closed in the headers")
            name, _, value = header.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"connection":
                keep = b"close" not in value.lower() and (keep or b"keep-alive" in value.lower())
            elif name == b"retry-after" and value.strip().isdigit():  # seconds (the API server's form)
                retry_after = float(value.strip())
        if 100 <= status < 200:  # an interim answer (none is asked for): the real one follows
            continue
        return status, length, chunked, keep, retry_after


def _chunks(reader: BinaryIO) -> Iterator[bytes]:
    """The chunks of a chunked body, as they arrive."""
    while True:
        size_line = reader.readline(_MAX_LINE)
        if not size_line:
            raise urllib3.exceptions.ProtocolError("the connection closed in a chunked body")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise urllib3.exceptions.ProtocolError(f"bad chunk size {size_line[:40]!r}") from None
        if size == 0:
            while reader.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):  # trailers
                pass
            return
        yield _read_exactly(reader, size)
        reader.readline(_MAX_LINE)  # the CRLF after the chunk


class StreamBody:
    """The lines of a streamed body; :meth:`close` ends the stream (and its connection) whether
    or not it was read."""

    def __init__(self, conn: _Connection, lines: Iterator[bytes]) -> None:
        self._conn = conn
        self._lines = lines

    def __iter__(self) -> Iterator[bytes]:
        return self._lines

    def close(self) -> None:
        self._lines.close()  # type: ignore[attr-defined]
        self._conn.close()


def _lines(conn: _Connection, url: str, length: int | None, chunked: bool) -> Iterator[bytes]:
    """A streamed body's lines (a watch sends one event a line, a chunk holding any number of
    them or part of one); the last line even without its newline."""
    reader = conn.reader
    try:
        if chunked:
            pieces: Iterator[bytes] = _chunks(reader)
        elif length is not None:
            pieces = iter((_read_exactly(reader, length),))
        else:
            pieces = iter(lambda: reader.read1(65536), b"")  # type: ignore[attr-defined]
        pending = b""
        for piece in pieces:
            if pending:
                piece = pending + piece
            *lines, pending = piece.split(b"\n")
            yield from lines
        if pending:
            yield pending
    except (socket.timeout, TimeoutError):
        raise urllib3.exceptions.ReadTimeoutError(None, url, "no data within the read timeout") from None  # type: ignore[arg-type]
    finally:
        conn.close()


def _dropped(sock: Any) -> bool:
    """An idle kept-alive socket that reads as ready was closed by the server (or sent junk)."""
    try:
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True
