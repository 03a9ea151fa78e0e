"""findNodesThatPassExtenders against a real HTTP extender (upstream schedule_one.go, extender.go)."""

from __future__ import annotations

import attrs
import pytest

from kschedfw.extenders import EXTENDER_NAME, find_nodes_that_pass_extenders
from kschedfw.fwk.status import Code
from kschedfw.fwk.types import NodeToStatus
from tests.extenders.helpers import extender, make_pod, names, node_infos
from tests.extenders.server import Reply, Trickle


def keep(*kept: str, failed=None, unresolvable=None, by_name=False):
    """A filter handler keeping ``kept`` (as NodeNames or as a NodeList) and failing others."""
    def handler(args):
        answer = {"FailedNodes": failed or {}, "FailedAndUnresolvableNodes": unresolvable or {}}
        if by_name:
            answer["NodeNames"] = list(kept)
        else:
            items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]
            answer["Nodes"] = {"metadata": {}, "items": items}
        return answer
    return handler


def test_request_carries_pod_manifest_and_node_manifests(extender_server):
    server = extender_server({"filter": keep("n1", "n2")})
    ext = extender(server.url, filterVerb="filter")
    pod = make_pod("web", cpu="100m")
    feasible, status = find_nodes_that_pass_extenders([ext], pod, node_infos("n1", "n2"), NodeToStatus())
    assert status is None and names(feasible) == ["n1", "n2"]
    (verb, args), = server.requests
    # upstream's ExtenderArgs has no JSON tags: Go field names, the unused form is null
    assert verb == "filter" and set(args) == {"Pod", "Nodes", "NodeNames"}
    assert args["NodeNames"] is None
    assert args["Pod"]["metadata"]["name"] == "web"
    assert args["Pod"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}
    assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["n1", "n2"]
    assert args["Nodes"]["items"][0]["status"]["allocatable"]["cpu"] == "4"
    assert server.headers[0]["Content-Type"] == "application/json"


def test_returned_node_list_is_taken_as_the_extender_wrote_it(extender_server):
    # kube-scheduler v1.36 (checked against the binary) goes on with fresh NodeInfos built from
    # the returned NodeList: no pods on them, and a node it never sent is kept too
    def answer(args):
        items = args["Nodes"]["items"]
        return {"Nodes": {"items": [items[1], {"metadata": {"name": "ghost"}}]}}
    server = extender_server({"filter": answer})
    sent = node_infos("n1", "n2")
    sent[1].add_pod(make_pod("busy", node_name="n2", cpu="1"))
    feasible, status = find_nodes_that_pass_extenders([extender(server.url, filterVerb="filter")], make_pod(),
                                                      sent, NodeToStatus())
    assert status is None and names(feasible) == ["n2", "ghost"]
    assert feasible[0] is not sent[1] and feasible[0].pods == [] and feasible[0].requested == {}
    assert feasible[0].allocatable == sent[1].allocatable


def test_pod_and_nodes_sent_without_type_meta(extender_server):
    server = extender_server({"filter": keep("n1")})
    find_nodes_that_pass_extenders([extender(server.url, filterVerb="filter")], make_pod(), node_infos("n1"),
                                   NodeToStatus())
    args = server.requests[0][1]
    assert "kind" not in args["Pod"] and "apiVersion" not in args["Pod"]
    assert "kind" not in args["Nodes"]["items"][0]


def test_pod_sent_with_the_identity_the_scheduler_uses(extender_server):
    # a manifest without namespace/uid goes out as the API server would hold it
    server = extender_server({"filter": keep("n1")})
    pod = make_pod("web")
    pod = attrs.evolve(pod, uid="uid-web", raw={**pod.raw, "metadata": {"name": "web"}})
    find_nodes_that_pass_extenders([extender(server.url, filterVerb="filter")], pod, node_infos("n1"),
                                   NodeToStatus())
    assert server.requests[0][1]["Pod"]["metadata"] == {"name": "web", "namespace": "default", "uid": "uid-web"}


def test_node_cache_capable_sends_and_reads_names(extender_server):
    server = extender_server({"filter": keep("n2", by_name=True)})
    ext = extender(server.url + "/", filterVerb="filter", nodeCacheCapable=True)
    feasible, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1", "n2"), NodeToStatus())
    assert status is None and names(feasible) == ["n2"]
    _, args = server.requests[0]
    assert args["Nodes"] is None and args["NodeNames"] == ["n1", "n2"]


@pytest.mark.parametrize("failed, unresolvable, expected", [
    pytest.param({"n2": "no gpu"}, {}, {"n2": (Code.Unschedulable, "no gpu")}, id="failed-is-unschedulable"),
    pytest.param({}, {"n2": "wrong zone"}, {"n2": (Code.UnschedulableAndUnresolvable, "wrong zone")},
                 id="failedAndUnresolvable-is-UAU"),
    pytest.param({"n2": "a", "n3": "b"}, {"n2": "c"},
                 {"n2": (Code.UnschedulableAndUnresolvable, "c"), "n3": (Code.Unschedulable, "b")},
                 id="unresolvable-takes-precedence"),
])
def test_rejections_recorded_in_node_to_status(extender_server, failed, unresolvable, expected):
    server = extender_server({"filter": keep("n1", failed=failed, unresolvable=unresolvable)})
    statuses = NodeToStatus()
    plugins: set[str] = set()
    feasible, status = find_nodes_that_pass_extenders([extender(server.url, filterVerb="filter")], make_pod(),
                                                      node_infos("n1", "n2", "n3"), statuses,
                                                      unschedulable_plugins=plugins)
    assert status is None and names(feasible) == ["n1"]
    got = {name: (s.code, s.message()) for name, s in statuses.items()}
    assert got == expected
    # extenders removed nodes: the pseudo-plugin "Extender" makes any event requeue the pod
    assert plugins == {EXTENDER_NAME}


def test_nothing_removed_adds_no_extender_plugin(extender_server):
    server = extender_server({"filter": keep("n1", "n2")})
    plugins: set[str] = set()
    find_nodes_that_pass_extenders([extender(server.url, filterVerb="filter")], make_pod(),
                                   node_infos("n1", "n2"), NodeToStatus(), unschedulable_plugins=plugins)
    assert plugins == set()


def test_extenders_run_in_order_each_on_what_the_previous_kept(extender_server):
    first = extender_server({"filter": keep("n1", "n2", by_name=True)})
    second = extender_server({"filter": keep("n2")})
    exts = [extender(first.url, filterVerb="filter", nodeCacheCapable=True),
            extender(second.url, filterVerb="filter")]
    feasible, status = find_nodes_that_pass_extenders(exts, make_pod(), node_infos("n1", "n2", "n3"), NodeToStatus())
    assert status is None and names(feasible) == ["n2"]
    assert [n["metadata"]["name"] for n in second.requests[0][1]["Nodes"]["items"]] == ["n1", "n2"]


def test_stops_once_no_node_is_left(extender_server):
    first = extender_server({"filter": keep()})
    second = extender_server({"filter": keep("n1")})
    exts = [extender(first.url, filterVerb="filter"), extender(second.url, filterVerb="filter")]
    feasible, status = find_nodes_that_pass_extenders(exts, make_pod(), node_infos("n1"), NodeToStatus())
    assert feasible == [] and status is None
    assert second.requests == []


def test_extender_without_filter_verb_is_not_called(extender_server):
    server = extender_server({"filter": keep()})
    ext = extender(server.url, prioritizeVerb="prioritize", weight=1)
    feasible, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), NodeToStatus())
    assert names(feasible) == ["n1"] and status is None and server.requests == []


@pytest.mark.parametrize("pod, called", [
    pytest.param(make_pod(requests={"example.com/gpu": "1"}), True, id="requests-managed-resource"),
    pytest.param(make_pod(cpu="1"), False, id="no-managed-resource"),
])
def test_only_interested_extenders_filter(extender_server, pod, called):
    server = extender_server({"filter": keep()})
    ext = extender(server.url, filterVerb="filter", managedResources=[{"name": "example.com/gpu"}])
    feasible, _ = find_nodes_that_pass_extenders([ext], pod, node_infos("n1"), NodeToStatus())
    assert bool(server.requests) is called
    assert names(feasible) == ([] if called else ["n1"])


def test_interest_counts_limits_and_init_containers():
    ext = extender("http://127.0.0.1:9/x", managedResources=[{"name": "example.com/foo"}])
    init = make_pod(initContainers=[{"name": "i", "image": "x",
                                     "resources": {"limits": {"example.com/foo": "1"}}}])
    assert ext.is_interested(init)
    assert not ext.is_interested(make_pod())
    assert extender("http://127.0.0.1:9/x").is_interested(make_pod())  # no managed resources: all pods


FAILURES = {
    "http-500": (Reply(500, b"boom"), "failed filter with extender at URL {url}/filter, code 500"),
    "error-field": ({"Error": "extender is sad"}, "extender is sad"),
    "unknown-node": ({"NodeNames": ["ghost"]}, 'extender "{url}" claims a filtered node "ghost" '
                                                "which is not found in the input node list"),
    "bad-json-type": ({"FailedNodes": ["n1"]}, "json: cannot unmarshal array into Go struct field "
                                               "ExtenderFilterResult.FailedNodes of type v1.FailedNodesMap"),
    "empty-body": (Reply(200, b""), "EOF"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failure_of_non_ignorable_extender_is_an_error(extender_server, case):
    answer, message = FAILURES[case]
    server = extender_server({"filter": lambda args: answer})
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True)
    statuses = NodeToStatus()
    feasible, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), statuses)
    assert feasible == []
    assert status is not None and status.code is Code.Error
    assert status.message() == message.format(url=server.url)


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failure_of_ignorable_extender_is_skipped(extender_server, case):
    answer, _ = FAILURES[case]
    failing = extender_server({"filter": lambda args: answer})
    after = extender_server({"filter": keep("n2", by_name=True)})
    exts = [extender(failing.url, filterVerb="filter", nodeCacheCapable=True, ignorable=True),
            extender(after.url, filterVerb="filter", nodeCacheCapable=True)]
    feasible, status = find_nodes_that_pass_extenders(exts, make_pod(), node_infos("n1", "n2"), NodeToStatus())
    # the failing extender is skipped; the next one sees every node
    assert status is None and names(feasible) == ["n2"]
    assert after.requests[0][1]["NodeNames"] == ["n1", "n2"]


def test_slow_extender_exceeds_http_timeout(extender_server):
    server = extender_server({"filter": lambda args: Reply(200, {"NodeNames": ["n1"]}, delay=5)})
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True, httpTimeout="200ms")
    feasible, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), NodeToStatus())
    assert feasible == [] and status is not None and status.code is Code.Error
    assert status.message() == (f'Post "{server.url}/filter": context deadline exceeded '
                                "(Client.Timeout exceeded while awaiting headers)")


def test_http_timeout_covers_reading_the_body(extender_server):
    # Go's Client.Timeout bounds the whole exchange, the body included
    server = extender_server({"filter": lambda args: Trickle(b'{"NodeNames": ["n1"]}', pause=0.1)})
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True, httpTimeout="300ms")
    _, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), NodeToStatus())
    assert status.message() == "context deadline exceeded (Client.Timeout or context cancellation while reading body)"


def test_slow_ignorable_extender_is_skipped(extender_server):
    server = extender_server({"filter": lambda args: Reply(200, {"NodeNames": []}, delay=5)})
    ext = extender(server.url, filterVerb="filter", nodeCacheCapable=True, httpTimeout="200ms", ignorable=True)
    feasible, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), NodeToStatus())
    assert status is None and names(feasible) == ["n1"]


def test_unreachable_extender(extender_server):
    server = extender_server({})
    url = server.url
    server.stop()
    ext = extender(url, filterVerb="filter")
    _, status = find_nodes_that_pass_extenders([ext], make_pod(), node_infos("n1"), NodeToStatus())
    port = url.split(":")[2].split("/")[0]
    assert status.message() == f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'


def test_answers_are_read_as_go_reads_them(extender_server):
    # case-insensitive field names, unknown fields ignored, trailing data after the value ignored
    body = b'{"nodenames": ["n1"], "failednodes": {"n2": "busy"}, "extra": 1} trailing'
    server = extender_server({"filter": lambda args: Reply(200, body)})
    statuses = NodeToStatus()
    feasible, status = find_nodes_that_pass_extenders(
        [extender(server.url, filterVerb="filter", nodeCacheCapable=True)], make_pod(), node_infos("n1", "n2"),
        statuses)
    assert status is None and names(feasible) == ["n1"]
    assert statuses.get("n2").message() == "busy"
