"""The one-shot request transport (kschedfw's HTTP/1.1 client, a kept-alive connection per thread) against a
loopback HTTP/1.1 server: connections are reused, a connection the server closed while idle is
replaced without sending the request twice, a 401 refreshes the token once, and the outcome is
the HTTP status (client-go's rest client semantics the backend relies on)."""

from __future__ import annotations

import http.server
import json
import threading

import pytest

import urllib3.exceptions

from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.transport import Transport
from kschedfw.fwk.interface import Conflict


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        server.requests.append((self.path, self.headers.get("Authorization"), body, self.client_address[1]))
        status, answer, *extra = server.answer(self)
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in (extra[0] if extra else {}).items():
            self.send_header(name, value)
        if self.path.startswith("/chunked"):  # as the API server sends large answers
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(data), 7):
                piece = data[i:i + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(data)))
            if self.path.startswith("/close"):
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)
        if server.close_after_each:
            self.close_connection = True

    def do_GET(self) -> None:
        if not self.path.startswith("/watch"):
            return self.do_POST()
        self.server.requests.append((self.path, self.headers.get("Authorization"), b"", self.client_address[1]))
        if self.server.need_token and self.headers.get("Authorization") != "Bearer new":
            data = b'{"kind":"Status","code":401,"reason":"Unauthorized"}'
            self.send_response(401)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        stream = b"".join(json.dumps(e).encode() + b"\n" for e in WATCH_EVENTS)
        for i in range(0, len(stream), 5):  # chunks cut lines anywhere, as a server may
            piece = stream[i:i + 5]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.flush()
        if "silent" in self.path:
            self.server.release.wait(5)  # keep the connection open, send nothing
        if "cut" in self.path or "silent" in self.path:
            self.close_connection = True
            return
        self.wfile.write(b"0\r\n\r\n")  # the server ended the watch (its timeoutSeconds)


WATCH_EVENTS = [{"type": "ADDED", "object": {"metadata": {"name": f"p{i}", "resourceVersion": str(i)}}}
                for i in range(6)]


class Server(http.server.ThreadingHTTPServer):
    def shutdown_request(self, request) -> None:
        super().shutdown_request(request)
        self.closed.set()  # the server's end of a connection is closed


@pytest.fixture
def server():
    srv = Server(("127.0.0.1", 0), Handler)
    srv.closed = threading.Event()
    srv.release = threading.Event()
    srv.need_token = False
    srv.requests = []
    srv.close_after_each = False
    srv.answer = lambda h: (201, {"kind": "Status", "status": "Success"})
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.release.set()
    srv.shutdown()
    srv.server_close()


class FakeConnection:
    """What KubeClient needs of credentials.Connection: a token that rotates after a 401."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.ssl_context = None
        self.proxy = None
        self.token = "old"

    def authorization(self) -> str:
        return f"Bearer {self.token}"

    def refresh_after_unauthorized(self) -> str:
        self.token = "new"
        return self.authorization()


def transport(srv) -> Transport:
    return Transport("127.0.0.1", srv.server_address[1], ssl_context=None, https=False, timeout=5)


def test_requests_of_one_thread_reuse_one_connection(server):
    t = transport(server)
    for _ in range(3):
        assert t.request("POST", "/x", b"{}", {"Content-Type": "application/json"})[0] == 201
    assert len({r[3] for r in server.requests}) == 1
    t.close()


def test_chunked_and_closing_answers_are_read_whole(server):
    items = [{"name": f"pod-{i}"} for i in range(50)]
    server.answer = lambda h: (200, {"kind": "PodList", "items": items})
    t = transport(server)
    for path in ("/chunked", "/chunked", "/close", "/x"):
        status, data, _ = t.request("GET", path, None, {})
        assert status == 200 and json.loads(data)["items"] == items, path
    ports = [r[3] for r in server.requests]
    assert ports[0] == ports[1] == ports[2] != ports[3]  # kept alive through chunked; closed when told
    t.close()


def test_a_connection_closed_by_the_server_is_replaced_and_nothing_is_sent_twice(server):
    server.close_after_each = True  # the server ends each (idle) connection after answering
    t = transport(server)
    statuses = []
    for i in range(3):
        server.closed.clear()
        statuses.append(t.request("POST", f"/x{i}", b"{}", {})[0])
        assert server.closed.wait(5)
    assert statuses == [201, 201, 201]
    assert len({r[3] for r in server.requests}) == 3  # a new connection each time
    assert [r[0] for r in server.requests] == ["/x0", "/x1", "/x2"]  # each request exactly once
    t.close()


def test_each_thread_has_its_own_connection(server):
    t = transport(server)
    barrier = threading.Barrier(3)

    def work() -> None:
        barrier.wait()
        t.request("POST", "/x", b"{}", {})

    threads = [threading.Thread(target=work) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(server.requests) == 3
    assert len(t._all) == 3
    t.close()
    assert t._all == []


def test_kube_client_refreshes_the_token_once_on_401_and_judges_by_status(server):
    def answer(handler):
        if handler.headers.get("Authorization") != "Bearer new":
            return 401, {"kind": "Status", "reason": "Unauthorized", "code": 401}
        if handler.path.endswith("/conflict"):
            return 409, {"kind": "Status", "reason": "Conflict", "message": "the object has been modified"}
        if handler.path.endswith("/broken"):
            return 500, {"kind": "Status", "reason": "InternalError", "message": "boom"}
        return 201, {"kind": "Status", "status": "Success", "code": 201}
    server.answer = answer
    conn = FakeConnection(f"http://127.0.0.1:{server.server_address[1]}")
    client = KubeClient(conn, qps=0, burst=1)  # type: ignore[arg-type]
    assert client.request("POST", "/api/v1/namespaces/n/pods/p/binding", body={"kind": "Binding"})["code"] == 201
    assert [r[1] for r in server.requests] == ["Bearer old", "Bearer new"]
    assert all(json.loads(r[2]) == {"kind": "Binding"} for r in server.requests)
    with pytest.raises(Conflict):
        client.request("POST", "/conflict", body={})
    with pytest.raises(ApiError) as err:
        client.request("POST", "/broken", body={})
    assert err.value.status == 500 and err.value.reason == "InternalError"
    client.close()


def watch_client(server) -> KubeClient:
    return KubeClient(FakeConnection(f"http://127.0.0.1:{server.server_address[1]}"), qps=0, burst=1)  # type: ignore[arg-type]


def test_a_watch_yields_each_line_as_an_event_until_the_server_ends_it(server):
    server.need_token = True  # and a 401 on the first try refreshes the token once
    client = watch_client(server)
    events = list(client.watch("/watch", {"resourceVersion": "1"}, inactivity_timeout=5))
    assert events == WATCH_EVENTS
    assert [r[1] for r in server.requests] == ["Bearer old", "Bearer new"]
    assert server.requests[-1][0] == "/watch?resourceVersion=1&watch=true"
    client.close()


def test_a_silent_watch_ends_with_urllib3s_read_timeout_and_a_cut_one_with_protocol_error(server):
    """What the informer already handles: watch again (after the inactivity timeout) or back off."""
    client = watch_client(server)
    seen = []
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        for event in client.watch("/watch-silent", {}, inactivity_timeout=0.3):
            seen.append(event)
    assert seen == WATCH_EVENTS  # everything before the silence was delivered
    server.release.set()
    with pytest.raises(urllib3.exceptions.ProtocolError):
        list(client.watch("/watch-cut", {}, inactivity_timeout=5))
    client.close()


def test_kube_client_sends_again_on_429_and_on_5xx_with_retry_after(server, monkeypatch):
    # client-go checkWait: 429 is always tried again (Retry-After or 1 s); a 5xx only with
    # Retry-After (the server did not act on it); a plain 500 is the answer
    import kschedfw.cluster.kube.client as client_module
    waits: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", waits.append)
    answers = iter([(429, {"kind": "Status", "code": 429}, {"Retry-After": "2"}),
                    (429, {"kind": "Status", "code": 429}),
                    (503, {"kind": "Status", "code": 503}, {"Retry-After": "1"}),
                    (201, {"kind": "Status", "code": 201}),
                    (500, {"kind": "Status", "code": 500, "reason": "InternalError"})])
    server.answer = lambda handler: next(answers)
    client = KubeClient(FakeConnection(f"http://127.0.0.1:{server.server_address[1]}"), qps=0, burst=1)  # type: ignore[arg-type]
    assert client.request("POST", "/api/v1/namespaces/n/pods/p/binding", body={})["code"] == 201
    assert waits == [2.0, 1.0, 1.0]
    with pytest.raises(ApiError) as err:
        client.request("POST", "/x", body={})
    assert err.value.status == 500 and waits == [2.0, 1.0, 1.0]
    assert len(server.requests) == 5


def test_kube_client_names_a_transport_fault_and_whether_the_request_was_sent():
    from kschedfw.cluster.kube.client import TransportError
    from kschedfw.testing.controlplane import free_port
    client = KubeClient(FakeConnection(f"http://127.0.0.1:{free_port()}"), qps=0, burst=1, timeout=2)  # type: ignore[arg-type]
    with pytest.raises(TransportError) as err:
        client.request("POST", "/api/v1/namespaces/n/pods/p/binding", body={})
    assert not err.value.maybe_sent and "pods/p/binding" in str(err.value)
    assert client.reachability.unreachable_for() > 0


def test_the_write_fence_is_checked_after_the_rate_limiter_right_before_sending(server):
    # a thread that waited for the limiter (or was frozen with the process) sends no write once
    # the lease is lost; reads still go
    from kschedfw.cluster.kube.client import LeadershipLost
    server.answer = lambda handler: (201, {"kind": "Status", "code": 201})
    client = KubeClient(FakeConnection(f"http://127.0.0.1:{server.server_address[1]}"), qps=0, burst=1)  # type: ignore[arg-type]
    leading = [True]
    client.write_fence = lambda: leading[0]
    client.request("POST", "/api/v1/namespaces/n/pods/p/binding", body={})
    waited: list[bool] = []
    client.limiter.wait = lambda: (waited.append(True), leading.__setitem__(0, False))  # type: ignore[method-assign]
    with pytest.raises(LeadershipLost):
        client.request("POST", "/api/v1/namespaces/n/pods/q/binding", body={})
    assert waited and len(server.requests) == 1
    client.request("GET", "/api/v1/namespaces/n/pods/q")
    assert len(server.requests) == 2


def test_the_write_fence_is_checked_again_once_the_connection_is_open(server):
    # opening (or replacing a dropped) connection lets other threads run and the process may be
    # frozen there past its lease: the last check comes after it, just before the bytes go out
    from kschedfw.cluster.kube.client import LeadershipLost
    server.answer = lambda handler: (201, {"kind": "Status", "code": 201})
    client = KubeClient(FakeConnection(f"http://127.0.0.1:{server.server_address[1]}"), qps=0, burst=1)  # type: ignore[arg-type]
    leading = [True]
    client.write_fence = lambda: leading[0]
    transport = client._transport
    opened = transport._connection

    def connect_then_lose_the_lease():  # type: ignore[no-untyped-def]
        conn = opened()
        leading[0] = False
        return conn
    transport._connection = connect_then_lose_the_lease  # type: ignore[method-assign]
    with pytest.raises(LeadershipLost):
        client.request("POST", "/api/v1/namespaces/n/pods/p/binding", body={})
    assert server.requests == []
