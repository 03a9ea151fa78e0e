"""How the informer reacts to each way a watch or list ends, against a scripted client: as
client-go's Reflector does (watch again, back off, relist), logging each failure once and
never letting its thread die."""

from __future__ import annotations

import http.server
import json
import logging
import random
import threading
import time
from typing import Any

import pytest
import urllib3.exceptions

from kschedfw.cluster.kube import leanpod
from kschedfw.cluster.kube.client import ApiError, KubeClient
from kschedfw.cluster.kube.informer import Backoff, Informer
from kschedfw.cluster.kube.ratelog import RateLimitedLog
from kschedfw.cluster.kube.resources import BY_KIND
from kschedfw.cluster.kube.transport import NotConnected
from tests.kube.helpers import wait_for
from tests.kube.test_transport import FakeConnection
from tests.kube.test_watch_decoding import EXPIRED, REAL_BOOKMARK

POD = BY_KIND["Pod"]
LOGGER = "kschedfw.cluster.kube.informer"


def pod_line(name: str, rv: str, type_: str = "ADDED") -> bytes:
    return json.dumps({"type": type_, "object": {
        "kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}}).encode()


class ScriptedClient:
    """Answers lists with ``pods`` and each watch with the next step of ``watches``: an
    exception raised when it is opened, or lines then an optional exception (the stream's end)."""

    def __init__(self, watches: list[Any], pods: list[dict] | None = None, list_failures: list[Exception] | None = None):
        self.watches = list(watches)
        self.pods = pods or []
        self.list_failures = list(list_failures or [])
        self.watch_params: list[dict] = []
        self.done = threading.Event()

    def get(self, path, *, decode=None, **params):
        if self.list_failures:
            raise self.list_failures.pop(0)
        return {"kind": "PodList", "metadata": {"resourceVersion": "10"}, "items": self.pods}

    def watch(self, path, params, *, inactivity_timeout, decode):
        self.watch_params.append(dict(params))
        if not self.watches:
            self.done.set()
            time.sleep(0.05)
            raise urllib3.exceptions.ReadTimeoutError(None, path, "silent")  # type: ignore[arg-type]
        step = self.watches.pop(0)
        if isinstance(step, BaseException):
            raise step
        lines, end = step
        for line in lines:
            yield decode(line)
        if end is not None:
            raise end


class Sink:
    def __init__(self, fail_on: str | None = None) -> None:
        self.events: list[tuple[str, str]] = []
        self.fail_on = fail_on

    def __call__(self, type_, kind, old, new) -> None:
        obj = new if new is not None else old
        if obj.name == self.fail_on:
            self.fail_on = None
            raise RuntimeError("the sink broke")
        self.events.append((type_, obj.name))


class ZeroJitter(random.Random):
    def random(self) -> float:
        return 0.0


def run(client: ScriptedClient, sink: Any = None, **options: Any) -> Informer:
    options = {"initial_backoff": 0.01, "max_backoff": 0.04, "rng": ZeroJitter(), "failures": RateLimitedLog(logging.getLogger("kschedfw.cluster.kube.informer")),
               "decode_event": leanpod.pod_event_decoder(), **options}
    informer = Informer(client, POD, sink or Sink(), **options)  # type: ignore[arg-type]
    informer.start()
    try:
        assert client.done.wait(10), "the script did not run to its end"
    finally:
        informer.stop()
        informer.join(5)
    return informer


def test_the_real_pod_bookmark_advances_the_version_without_a_failure(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    client = ScriptedClient([([pod_line("a", "11"), REAL_BOOKMARK], None)])
    informer = run(client)
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "230"]
    assert informer.resource_version == "230" and informer.lists == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("bookmark", [
    b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"231"}}}',
    b'{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"231","labels":null},"spec":null,"status":null}}',
    b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"231",'
    b'"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null,"initContainers":null}}}',
])
@pytest.mark.parametrize("fast", [True, False], ids=["msgspec", "python"])
def test_bookmarks_of_every_shape_advance_the_version(bookmark, fast):
    client = ScriptedClient([([bookmark], None)])
    informer = run(client, decode_event=leanpod.pod_event_decoder(fast))
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "231"]
    assert informer.lists == 1


def test_a_stream_cut_after_events_is_watched_again_at_once_from_the_last_version():
    cut = urllib3.exceptions.ProtocolError("connection broken")
    client = ScriptedClient([([pod_line("a", "11")], cut), ([pod_line("b", "12")], None)])
    informer = run(client)
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "11", "12"]
    assert informer.lists == 1


def test_a_refused_watch_backs_off_and_watches_again_without_relisting(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    refused = NotConnected("cannot connect to 127.0.0.1:1: [Errno 111] Connection refused")
    client = ScriptedClient([refused, refused, refused, ([pod_line("a", "11")], None)])
    informer = run(client)
    assert informer.lists == 1
    assert [p["resourceVersion"] for p in client.watch_params] == ["10", "10", "10", "10", "11"]
    failures = [r for r in caplog.records if r.getMessage().startswith("failed to watch pods")]
    assert [r.levelno for r in failures] == [logging.WARNING, logging.DEBUG, logging.DEBUG]  # once, not per step
    assert "retrying in 0.0" in failures[0].getMessage()
    assert any("pods: watch recovered after 3 failures" in r.getMessage() and r.levelno == logging.INFO
               for r in caplog.records)


@pytest.mark.parametrize("expiry", [
    ApiError(410, "too old resource version", "Expired"),  # HTTP 410 when the watch opens
    ([EXPIRED], None),  # HTTP 200, then an ERROR event with code 410
    ([b'{"type":"ERROR","object":{"kind":"Status","reason":"Gone","message":"gone"}}'], None),
])
def test_an_expired_version_relists(expiry, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    client = ScriptedClient([expiry, ([pod_line("a", "11")], None)])
    informer = run(client)
    assert informer.lists == 2
    assert any("expired, relisting" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("bad", [b'{"type":"ADDED","object":{"metadata":', b'[1, 2]', b'{"type":"ADDED","object":7}',
                                 b'\xff\xfe'])
def test_an_undecodable_line_is_reported_and_the_informer_relists(bad, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    client = ScriptedClient([([pod_line("a", "11"), bad], None), ([pod_line("b", "12")], None)])
    informer = run(client)
    assert informer.lists == 2 and informer._thread is not None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("failed to watch pods: ")
    assert client.watch_params[-1]["resourceVersion"] == "12"


def test_an_error_event_and_a_very_short_empty_watch_relist_after_a_backoff(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    internal = b'{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError","message":"boom"}}'
    client = ScriptedClient([([internal], None), ([], None), ([pod_line("a", "11")], None)])
    informer = run(client)
    assert informer.lists == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert "boom (HTTP 500, InternalError)" in warnings[0] and "very short watch" in warnings[1]


def test_any_exception_is_logged_once_with_its_traceback_and_the_informer_carries_on(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    client = ScriptedClient([([pod_line("a", "11"), pod_line("b", "12")], None)] * 2,
                            list_failures=[KeyError("bug")])
    sink = Sink(fail_on="b")
    run(client, sink)
    broken = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.exc_info is not None for r in broken] == [True, True]  # the KeyError, the sink's RuntimeError
    assert ("ADDED", "b") in sink.events  # delivered on the relist after the failure


def test_the_same_failure_of_many_informers_is_logged_once_and_403_names_rbac(caplog):
    caplog.set_level(logging.DEBUG, LOGGER)
    failures = RateLimitedLog(logging.getLogger("kschedfw.cluster.kube.informer"))
    refused = NotConnected("cannot connect to 127.0.0.1:1: [Errno 111] Connection refused")
    clients = [ScriptedClient([], list_failures=[refused, refused]) for _ in range(8)]
    for c in clients:
        run(c, failures=failures)
    failed = [r for r in caplog.records if r.getMessage().startswith("failed to list")]
    assert len(failed) == 16 and len([r for r in failed if r.levelno == logging.WARNING]) == 1
    caplog.clear()
    forbidden = ApiError(403, 'pods is forbidden: User "x" cannot list resource "pods"', "Forbidden")
    run(ScriptedClient([], list_failures=[forbidden]), failures=failures)
    warning = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warning) == 1 and "failed to list pods: forbidden by RBAC" in warning[0]


def test_the_backoff_doubles_to_its_cap_and_starts_over_after_the_reset_interval():
    now = [0.0]
    backoff = Backoff(0.8, 30.0, 120.0, ZeroJitter(), clock=lambda: now[0])
    assert [backoff.delay() for _ in range(8)] == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    now[0] = 121.0  # hours of a healthy watch, then one fault
    assert backoff.delay() == 0.8
    jittered = Backoff(0.8, 30.0, 120.0, random.Random(1), clock=lambda: now[0])
    assert 0.8 <= jittered.delay() <= 1.6 and 1.6 <= jittered.delay() <= 3.2  # up to as much again


# ---------------------------------------------------------------- a hung server (loopback)
class HangingHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        server = self.server
        watch = "watch=true" in self.path
        server.requests.append("watch" if watch else "list")  # type: ignore[attr-defined]
        if server.hung.is_set():  # type: ignore[attr-defined]
            server.release.wait(10)  # type: ignore[attr-defined]
            self.close_connection = True
            return
        if watch:  # an open watch that stays silent
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            server.release.wait(10)  # type: ignore[attr-defined]
            self.close_connection = True
            return
        data = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "5"}, "items": []}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def hanging_server():
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HangingHandler)
    srv.daemon_threads = True
    srv.requests, srv.hung, srv.release = [], threading.Event(), threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.release.set()  # type: ignore[attr-defined]
    srv.shutdown()
    srv.server_close()


def test_a_list_on_a_hung_server_times_out_and_is_retried(hanging_server, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    hanging_server.hung.set()
    client = KubeClient(FakeConnection(f"http://127.0.0.1:{hanging_server.server_address[1]}"),  # type: ignore[arg-type]
                        qps=0, burst=1, timeout=0.5)
    informer = Informer(client, POD, Sink(), initial_backoff=0.05, max_backoff=0.1, inactivity_timeout=0.5,
                        failures=RateLimitedLog(logging.getLogger("kschedfw.cluster.kube.informer")))
    started = time.monotonic()
    informer.start()
    try:
        wait_for(lambda: hanging_server.requests.count("list") >= 2, timeout=5, what="the list tried again")
        assert time.monotonic() - started < 3  # the client timeout, not forever
        assert not informer.synced.is_set()
        warning = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warning and warning[0].startswith("failed to list pods: ")
        hanging_server.hung.clear()  # the server answers again
        assert informer.synced.wait(5)
        # its watches stay silent: each is given up after the inactivity timeout and opened again
        wait_for(lambda: hanging_server.requests.count("watch") >= 3, timeout=5, what="silent watches reopened")
        assert informer.lists == 1
        assert any("pods: list recovered" in r.getMessage() for r in caplog.records)
    finally:
        informer.stop()
        hanging_server.release.set()
        client.close()
