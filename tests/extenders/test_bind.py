"""extendersBinding: a binding extender binds before the Bind plugins (upstream schedule_one.go)."""

from __future__ import annotations

from kschedfw.extenders import extender_binder, extenders_binding
from kschedfw.fwk.status import Code
from kschedfw.testing.builders import make_pod
from tests.extenders.helpers import extender
from tests.extenders.server import Reply


def test_binder_gets_binding_args_and_binds(extender_server):
    server = extender_server({"bind": lambda args: {"Error": ""}})
    exts = [extender(server.url, bindVerb="bind")]
    assert extenders_binding(exts, make_pod("web", namespace="shop", uid="uid-1"), "n1") == (True, None)
    assert server.requests == [("bind", {"PodName": "web", "PodNamespace": "shop", "PodUID": "uid-1",
                                         "Node": "n1"})]


def test_binder_error_is_the_binding_result(extender_server):
    server = extender_server({"bind": lambda args: {"Error": "node is gone"}})
    handled, status = extenders_binding([extender(server.url, bindVerb="bind")],
                                        make_pod("web", namespace="shop", uid="uid-1"), "n1")
    assert handled and status.code is Code.Error and status.message() == "node is gone"


def test_binder_http_failure(extender_server):
    server = extender_server({"bind": lambda args: Reply(503, b"")})
    handled, status = extenders_binding([extender(server.url, bindVerb="bind")],
                                        make_pod("web", namespace="shop", uid="uid-1"), "n1")
    assert handled and status.message() == f"failed bind with extender at URL {server.url}/bind, code 503"


def test_ignorable_binder_failure_falls_through_to_bind_plugins(extender_server):
    server = extender_server({"bind": lambda args: Reply(500, b"")})
    exts = [extender(server.url, bindVerb="bind", ignorable=True)]
    assert extenders_binding(exts, make_pod("web", namespace="shop", uid="uid-1"), "n1") == (False, None)


def test_no_binder_or_uninterested_binder_leaves_binding_to_plugins(extender_server):
    server = extender_server({"bind": lambda args: {}})
    filter_only = extender(server.url, filterVerb="filter")
    gpu_binder = extender(server.url, bindVerb="bind", managedResources=[{"name": "example.com/gpu"}])
    assert extenders_binding([filter_only, gpu_binder], make_pod("web", namespace="shop", uid="uid-1"),
                             "n1") == (False, None)
    assert extender_binder([filter_only, gpu_binder], make_pod("web", namespace="shop", uid="uid-1")) is None
    assert extender_binder([filter_only, gpu_binder], make_pod(requests={"example.com/gpu": "1"})) is gpu_binder
    assert server.requests == []
