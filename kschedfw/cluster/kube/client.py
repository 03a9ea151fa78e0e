"""A small kube-apiserver client: JSON over HTTP(S), client-go's QPS/burst limit, bearer token
refresh on 401, and watch streams read line by line with an inactivity timeout.

Chosen by measurement (benchmarks/kube_client.py, kube_request_cpu.py): requests are plain
HTTP/1.1 on kept-alive sockets (:mod:`.transport`: a third of urllib3's CPU per request, which is
itself cheaper than lightkube's httpx). Each object is decoded from JSON into a dict (pods: only
the fields the scheduler reads, :mod:`.leanpod`) and then into kschedfw's types. Outcomes are
decided by the HTTP status alone (a successful bind answers 201 with a ``Status`` body, which
generated clients choke on).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from functools import partial
from typing import Any, Callable, Iterator, Mapping

import urllib3.exceptions

from kschedfw.cluster.kube.credentials import Connection
from kschedfw.cluster.kube.ratelimit import TokenBucket
from kschedfw.cluster.kube.transport import NotConnected, Transport
from kschedfw.fwk.interface import Conflict, NotFound

__all__ = ["ApiError", "KubeClient", "LeadershipLost", "Reachability", "TransportError", "JSON_PATCH", "MERGE_PATCH",
           "STRATEGIC_MERGE_PATCH"]

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"


class ApiError(RuntimeError):
    """A non-2xx answer other than 404/409 (those raise NotFound / Conflict); ``status`` is the
    HTTP status, ``reason`` the Status reason when the body was one."""

    def __init__(self, status: int, message: str, reason: str = "", body: Any = None) -> None:
        super().__init__(f"{message} (HTTP {status}{', ' + reason if reason else ''})")
        self.status = status
        self.reason = reason
        self.body = body


class LeadershipLost(RuntimeError):
    """A write refused because this process no longer holds its lease."""

    def __init__(self) -> None:
        super().__init__("not sent: this scheduler lost its leader lease")


def _check_fence(fence: Callable[[], bool]) -> None:
    if not fence():
        raise LeadershipLost()


class TransportError(OSError):
    """No HTTP answer: the connection was refused, reset, timed out or cut mid-answer.

    ``maybe_sent`` is true when the request may have reached the server (the fault came after
    it was written), so its outcome is unknown: a bind may have gone through."""

    def __init__(self, method: str, path: str, cause: BaseException, *, maybe_sent: bool) -> None:
        super().__init__(f"{method} {path}: {type(cause).__name__}: {cause}")
        self.method = method
        self.path = path
        self.maybe_sent = maybe_sent
        self.__cause__ = cause


#: what the transport raises when there is no answer (refused, reset, timed out, cut short)
TRANSPORT_FAULTS = (OSError, urllib3.exceptions.HTTPError)


class Reachability:
    """Whether the API server answers: when the run of failed requests (no HTTP answer at all)
    started, so /readyz can fail once the server has been unreachable beyond a threshold."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failing_since: float | None = None

    def answered(self) -> None:
        if self._failing_since is not None:
            with self._lock:
                self._failing_since = None

    def failed(self) -> None:
        if self._failing_since is None:
            with self._lock:
                if self._failing_since is None:
                    self._failing_since = time.monotonic()

    def unreachable_for(self) -> float:
        """Seconds since the first of the failures in a row (0.0 while it answers)."""
        since = self._failing_since
        return 0.0 if since is None else time.monotonic() - since


class _NotFound(NotFound):
    status = 404


class _Conflict(Conflict):
    status = 409


def _error(status: int, body: Any) -> Exception:
    message = body.get("message", "") if isinstance(body, dict) else str(body)[:200]
    reason = body.get("reason", "") if isinstance(body, dict) else ""
    if status == 404:
        return _NotFound(message or "not found")
    if status == 409:
        exc = _Conflict(message or "conflict")
        exc.reason = reason  # type: ignore[attr-defined]
        return exc
    return ApiError(status, message or "request failed", reason, body)


class KubeClient:
    """Thread-safe; each thread sends over a kept-alive connection of its own, each watch over
    one of its own (:class:`~kschedfw.cluster.kube.transport.Transport`)."""

    def __init__(self, connection: Connection, *, qps: float = 50.0, burst: int = 100,
                 user_agent: str = "kschedfw", timeout: float = 30.0) -> None:
        self.connection = connection
        self.limiter = TokenBucket(qps, burst)
        self.timeout = timeout
        parsed = urllib.parse.urlsplit(connection.server)
        self._base_path = parsed.path.rstrip("/")
        self._headers = {"Accept": "application/json", "User-Agent": user_agent}
        https = parsed.scheme == "https"
        self._transport = Transport(parsed.hostname or "", parsed.port or (443 if https else 80),
                                    ssl_context=connection.ssl_context, https=https, timeout=timeout,
                                    proxy=connection.proxy)
        self.reachability = Reachability()
        #: False once this process may no longer write (leader election): checked right before a
        #: write goes on the wire, after any wait for the rate limiter, so a thread that was
        #: frozen with the process (SIGSTOP) sends nothing when it thaws
        self.write_fence: Callable[[], bool] | None = None

    def close(self) -> None:
        self._transport.close()

    def _url(self, path: str, params: Mapping[str, Any] | None) -> str:
        url = self._base_path + path
        if params:
            url += "?" + urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        return url

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, body: Any = None,
                content_type: str = "application/json", decode: Callable[[bytes], Any] | None = None) -> Any:
        """One request; the decoded JSON answer on 2xx (through ``decode`` when given), else
        NotFound / Conflict / ApiError."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        url = self._url(path, params)
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = content_type
        auth = self.connection.authorization()
        if auth:
            headers["Authorization"] = auth
        status, answer = self._send(method, path, url, data, headers)
        if status == 401:
            auth = self.connection.refresh_after_unauthorized()
            if auth:
                headers["Authorization"] = auth
            status, answer = self._send(method, path, url, data, headers)
        if 200 <= status < 300:
            return decode(answer) if decode is not None and answer else _decode(answer)
        raise _error(status, _decode(answer))

    def _send(self, method: str, path: str, url: str, data: bytes | None,
              headers: dict[str, str]) -> tuple[int, bytes]:
        """One request, sent again while the server answers 429, or 5xx with Retry-After (it
        did not act on it), at most :data:`MAX_RETRIES` times, as client-go's ``checkWait``; a
        transport fault becomes :class:`TransportError`."""
        for attempt in range(MAX_RETRIES + 1):
            self.limiter.wait()
            fence = self.write_fence if method != "GET" else None
            try:
                response = self._transport.request(method, url, data, headers,
                                                   None if fence is None else partial(_check_fence, fence))
            except TRANSPORT_FAULTS as exc:
                self.reachability.failed()
                raise TransportError(method, path, exc, maybe_sent=not isinstance(exc, NotConnected)) from exc
            self.reachability.answered()
            wait = _retry_wait(response.status, response.retry_after)
            if wait is None or attempt == MAX_RETRIES:
                break
            time.sleep(wait)
        return response.status, response.body

    def get(self, path: str, *, decode: Callable[[bytes], Any] | None = None, **params: Any) -> Any:
        return self.request("GET", path, params=params or None, decode=decode)

    def watch(self, path: str, params: Mapping[str, Any], *, inactivity_timeout: float,
              decode: Callable[[bytes], Any] = json.loads) -> Iterator[dict[str, Any]]:
        """The events of one watch request, as dicts (``decode`` turns one line into one),
        until the server ends it. A silent connection ends it too (``inactivity_timeout``
        seconds without a byte): urllib3's ReadTimeoutError, which the caller treats like a
        closed stream."""
        url = self._url(path, {**params, "watch": "true"})
        headers = dict(self._headers)
        auth = self.connection.authorization()
        for attempt in (1, 2):
            if auth:
                headers["Authorization"] = auth
            self.limiter.wait()
            try:
                status, lines = self._transport.stream(url, headers, inactivity_timeout)
            except TRANSPORT_FAULTS:
                self.reachability.failed()
                raise
            self.reachability.answered()
            if status == 401 and attempt == 1:
                lines.close()
                auth = self.connection.refresh_after_unauthorized()
                continue
            break
        try:
            if status != 200:
                raise _error(status, _decode(b"".join(lines)))
            for line in lines:
                if line.strip():
                    yield decode(line)
        finally:
            lines.close()


MAX_RETRIES = 10  # client-go's default maxRetries for Retry-After answers
MAX_RETRY_WAIT = 10.0  # seconds: a longer Retry-After is shortened so writes stay timely


def _retry_wait(status: int, retry_after: float | None) -> float | None:
    """How long to wait before sending again, or None when the answer is final: 429 always
    asks for another try (1 s when it names no delay), 5xx only with Retry-After."""
    if status == 429:
        return min(retry_after if retry_after is not None else 1.0, MAX_RETRY_WAIT)
    if 500 <= status < 600 and retry_after is not None:
        return min(retry_after, MAX_RETRY_WAIT)
    return None


def _decode(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")
